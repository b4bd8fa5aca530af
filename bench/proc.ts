/**
 * What the kernel knows about a server process (Linux `/proc`, see proc(5)):
 * CPU time used so far by all its threads, and its peak resident set.
 *
 * @module
 */

/** Clock ticks per second of `utime`/`stime` (`getconf CLK_TCK`; 100 on Linux). */
export async function clockTicks(): Promise<number> {
  try {
    const out = await new Deno.Command("getconf", { args: ["CLK_TCK"], stdout: "piped" }).output();
    const n = Number(new TextDecoder().decode(out.stdout).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

/**
 * CPU seconds (user + system, all threads) the process has used, from fields
 * 14 and 15 of `/proc/<pid>/stat`.
 */
export function cpuSeconds(pid: number, ticks: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Field 2 (comm) may contain spaces: count fields after its closing ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state), so utime (14) is fields[11] and stime (15) fields[12].
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

/** Peak resident set size (`VmHWM`) of the process, in bytes. */
export function peakRssBytes(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const m = /^VmHWM:\s+(\d+) kB/m.exec(status) ?? /^VmRSS:\s+(\d+) kB/m.exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}

/**
 * Busy clock ticks of one CPU so far (user + nice + system + irq + softirq +
 * steal, from its `cpuN` line of `/proc/stat`), or `NaN` when unknown.
 */
export function cpuBusyTicks(cpu: number): number {
  const line = Deno.readTextFileSync("/proc/stat").split("\n").find((l) =>
    l.startsWith(`cpu${cpu} `)
  );
  if (!line) return NaN;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(
    Number,
  );
  return user + nice + system + irq + softirq + (steal || 0);
}
