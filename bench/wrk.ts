/**
 * Driving `wrk` (https://github.com/wg/wrk): find or install it, write the Lua
 * script that makes every request carry one workload's exact body and
 * headers, run it, and read back the numbers its `done` hook prints.
 *
 * @module
 */
import type { Workload } from "./catalog.ts";

/** What one wrk run measured. Latencies in microseconds. */
export interface WrkResult {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  /** Socket errors (connect, read, write, timeout) plus non-2xx/3xx answers. */
  errors: number;
  /** Non-2xx/3xx answers alone. */
  badStatus: number;
}

/** The first answer a check run got. */
export interface WrkCheck {
  status: number;
  body: string;
}

/**
 * Where wrk is: `wrk` on PATH, else installed with apt-get when we are root.
 * @returns the command name, or `null` with the reason printed to stderr
 */
export async function locateWrk(): Promise<string | null> {
  if (await runs("wrk", ["-v"])) return "wrk";
  console.error("wrk is not on PATH; trying `apt-get install -y wrk` ...");
  if (Deno.uid?.() === 0 && await runs("apt-get", ["install", "-y", "-q", "wrk"])) {
    if (await runs("wrk", ["-v"])) return "wrk";
  }
  console.error(
    "MISSING: wrk (the HTTP load generator) is not installed and could not be installed.\n" +
      "Install it (Debian/Ubuntu: `sudo apt-get install -y wrk`; macOS: `brew install wrk`) " +
      "and run the benchmark again.",
  );
  return null;
}

async function runs(cmd: string, args: string[]): Promise<boolean> {
  try {
    // wrk -v exits 1 after printing its version; what matters is that it ran.
    const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    return out.success || /wrk/i.test(text);
  } catch {
    return false;
  }
}

function luaString(text: string): string {
  if (text.includes("]==]")) {
    throw new Error("request text cannot be embedded in a Lua long string");
  }
  return `[==[${text}]==]`;
}

/**
 * The Lua script for one workload. `check` mode records the first response of
 * the first thread and stops; otherwise no `response` hook is defined (it would
 * make wrk parse every body) and `done` prints the summary as one JSON line.
 */
export function luaScript(workload: Workload, check: boolean): string {
  const lines = [
    `wrk.method = "POST"`,
    `wrk.body = ${luaString(workload.body)}`,
    ...Object.entries(workload.headers).map(([k, v]) =>
      `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`
    ),
  ];
  if (check) {
    lines.push(
      `local threads = {}`,
      `function setup(thread) table.insert(threads, thread) end`,
      `function response(status, headers, body)`,
      `  if first_status == nil then first_status = status; first_body = body end`,
      `  wrk.thread:stop()`,
      `end`,
      `function done(summary, latency, requests)`,
      `  for _, t in ipairs(threads) do`,
      `    local s = t:get("first_status")`,
      `    if s ~= nil then`,
      `      io.write("WRK-CHECK " .. s .. "\\n" .. t:get("first_body") .. "\\n")`,
      `      return`,
      `    end`,
      `  end`,
      `end`,
    );
  } else {
    lines.push(
      `function done(summary, latency, requests)`,
      `  local e = summary.errors`,
      `  io.write(string.format('WRK-RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,` +
        `"errors":%d,"badStatus":%d}\\n', summary.requests, summary.duration,` +
        ` latency:percentile(50), latency:percentile(99),` +
        ` e.connect + e.read + e.write + e.timeout + e.status, e.status))`,
      `end`,
    );
  }
  return lines.join("\n") + "\n";
}

/** Options of one wrk run. */
export interface WrkRun {
  wrk: string;
  url: string;
  script: string;
  seconds: number;
  connections: number;
  /** `taskset -c <cpu>` prefix, when pinning. */
  pin?: string;
}

async function execWrk(run: WrkRun, connections: number): Promise<string> {
  const args = [
    "-t1",
    `-c${connections}`,
    `-d${run.seconds}s`,
    "--timeout",
    "10s",
    "-s",
    run.script,
    run.url,
  ];
  const [cmd, ...rest] = run.pin
    ? ["taskset", "-c", run.pin, run.wrk, ...args]
    : [run.wrk, ...args];
  const out = await new Deno.Command(cmd, { args: rest, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`wrk failed (${out.code}): ${text}${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

/** Run wrk once and return its summary. */
export async function runWrk(run: WrkRun): Promise<WrkResult> {
  const text = await execWrk(run, run.connections);
  const line = text.split("\n").find((l) => l.startsWith("WRK-RESULT "));
  if (!line) throw new Error(`wrk printed no result line:\n${text}`);
  return JSON.parse(line.slice("WRK-RESULT ".length)) as WrkResult;
}

/** Send the workload's exact request with wrk (one connection) and return the first answer. */
export async function checkWithWrk(run: WrkRun): Promise<WrkCheck | null> {
  const text = await execWrk({ ...run, seconds: 1 }, 1);
  const at = text.indexOf("WRK-CHECK ");
  if (at < 0) return null;
  const rest = text.slice(at + "WRK-CHECK ".length);
  const nl = rest.indexOf("\n");
  return { status: Number(rest.slice(0, nl)), body: rest.slice(nl + 1) };
}
