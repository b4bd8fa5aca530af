/**
 * One cold start of a stdio MCP server: spawn, write `initialize`,
 * `notifications/initialized` and `tools/list` at once, stop the clock at the
 * `tools/list` answer that names the expected tool, and read the process's
 * resident set then; optionally send one `tools/call` then and stop a second
 * clock at its answer (spawn to the first call's answer: a start that defers
 * work to the first call pays it there). bench/cold_start.ts (`deno task
 * bench:cold`) and the release workflow's figures for the compiled binary
 * (scripts/binary_figures.ts) measure with it.
 *
 * @module
 */

const REQUESTS = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "cold-start", version: "1" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
].map((m) => JSON.stringify(m)).join("\n") + "\n";

/** Resident set size (`VmRSS`) of a process now, in MiB; NaN once it is gone (or off Linux). */
export function rssMiB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** What one start took. */
export interface FirstList {
  /** Spawn to the tools/list answer, in ms. */
  ms: number;
  /** The server's resident set at that answer, in MiB (NaN where unknown). */
  rssMiB: number;
  /** Spawn to the answer of the `tools/call` sent after the tools/list answer, in ms (when asked). */
  callMs?: number;
}

/** A `tools/call` to send once tools/list has answered: its answer must not be an error. */
export interface FirstCall {
  /** The tool's name. */
  name: string;
  /** Its arguments. */
  arguments: Record<string, unknown>;
}

/**
 * Start `command args` as a stdio MCP server and time it to its first
 * `tools/list` answer; the server is then told the input ended and awaited.
 * @param expect a tool name the answer must list
 * @param env variables added to this process's environment for the server
 *   (e.g. a `TMPDIR` of its own: where a compiled binary keeps its code cache)
 * @param cwd the server's working directory (default this process's; Deno
 *   finds a deno.json from there)
 * @param call a tools/call to send at the tools/list answer, timed to its answer (`callMs`)
 * @throws when the answer lacks `expect`, the call's answer is an error, or the
 *   server ends without one (the message ends with the server's stderr, from
 *   one more start that keeps it)
 */
export async function firstList(
  command: string,
  args: string[],
  expect: string,
  env?: Record<string, string>,
  cwd?: string,
  call?: FirstCall,
): Promise<FirstList> {
  const start = performance.now();
  const child = new Deno.Command(command, {
    args,
    env,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(REQUESTS));
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let found: FirstList | undefined;
  while (!found || (call && found.callMs === undefined)) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += value;
    for (const line of buffered.split("\n").slice(0, -1)) {
      const message = JSON.parse(line);
      if (message.id === 2) {
        const names = (message.result?.tools ?? []).map((t: { name: string }) => t.name);
        if (!names.includes(expect)) {
          child.kill();
          await child.status;
          throw new Error(
            `tools/list without ${expect}: ${line}${await stderrOf(command, args, env, cwd)}`,
          );
        }
        found = { ms: performance.now() - start, rssMiB: rssMiB(child.pid) };
        if (call) {
          const message = { jsonrpc: "2.0", id: 3, method: "tools/call", params: call };
          await writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
        }
      }
      if (message.id === 3 && found) {
        if (message.error || message.result?.isError) {
          child.kill();
          await child.status;
          throw new Error(`tools/call ${call?.name} failed: ${line}`);
        }
        found.callMs = performance.now() - start;
      }
    }
    buffered = buffered.slice(buffered.lastIndexOf("\n") + 1);
  }
  await writer.close().catch(() => {});
  await reader.cancel().catch(() => {});
  const status = await child.status;
  if (!found || (call && found.callMs === undefined)) {
    throw new Error(
      `${command} ${args.join(" ")}: no tools/${found ? "call" : "list"} answer ` +
        `(exit code ${status.code})` +
        await stderrOf(command, args, env, cwd),
    );
  }
  return found;
}

/**
 * Why a start failed: the same start run once more with its stderr kept (the
 * measured starts discard it, so what they measure stays as it was), its input
 * the same requests, then closed; `; its stderr ends: ...`, or "" when it wrote
 * none. Bounded: the server is killed after 30 s.
 */
async function stderrOf(
  command: string,
  args: string[],
  env?: Record<string, string>,
  cwd?: string,
): Promise<string> {
  const child = new Deno.Command(command, {
    args,
    env,
    cwd,
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(REQUESTS)).catch(() => {});
    await writer.close().catch(() => {});
    const text = new TextDecoder().decode((await child.output()).stderr).trimEnd();
    return text ? `; its stderr ends:\n${text.slice(-2000)}` : "";
  } finally {
    clearTimeout(timer);
  }
}
