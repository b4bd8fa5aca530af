/**
 * The serve-upstream benchmark: `tools/call` of `echo` through
 * `weir serve-upstream` against calling the same upstream directly, in one run.
 *
 * 1. starts the upstream (`servers/weir.ts`: weir's core with the 50-tool
 *    benchmark catalog, stateless Streamable HTTP) in its own process;
 * 2. starts the shipped CLI, `weir serve-upstream --tool echo --http
 *    127.0.0.1:0 --upstream <it>` with default flags (stderr drained);
 * 3. checks both answer the request with the echoed text;
 * 4. per target: sequential latency (median and p99 of `--calls` calls, one at
 *    a time) and throughput (`--concurrency` callers for `--duration` s),
 *    after a warm-up;
 * 5. prints the table and the ratios (through weir / direct).
 *
 * A call through weir costs the wrapper's own work plus two upstream round
 * trips: the drift check (`tools/list`, every page) and the call itself.
 *
 * Usage: `deno task bench:upstream [--calls 500] [--duration 5] [--concurrency 8]`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { WORKLOADS } from "./catalog.ts";
import { freePort, positiveFlag } from "./common.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    calls: { type: "string", default: "500" },
    duration: { type: "string", default: "5" },
    concurrency: { type: "string", default: "8" },
  },
});
const CALLS = positiveFlag(flags, "calls");
const DURATION = positiveFlag(flags, "duration");
const CONCURRENCY = positiveFlag(flags, "concurrency");

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DENO = Deno.execPath();
const CALL = WORKLOADS.find((w) => w.name === "tools/call")!;

/** Spawn a process and wait until a line of `stream` matches `pattern`. */
async function spawnUntil(
  args: string[],
  stream: "stdout" | "stderr",
  pattern: RegExp,
): Promise<{ child: Deno.ChildProcess; match: RegExpExecArray }> {
  const child = new Deno.Command(DENO, {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const other = stream === "stdout" ? child.stderr : child.stdout;
  other.pipeTo(new WritableStream()).catch(() => {});
  const reader = child[stream].pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
    const match = pattern.exec(text);
    if (match) {
      // Keep draining so the process never blocks on a full pipe.
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      return { child, match };
    }
  }
  child.kill("SIGKILL");
  throw new Error(`${args.join(" ")} did not start:\n${text}`);
}

async function call(url: string): Promise<string> {
  const response = await fetch(url, { method: "POST", headers: CALL.headers, body: CALL.body });
  return await response.text();
}

async function latency(url: string): Promise<{ median: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const start = performance.now();
    await call(url);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return {
    median: times[Math.floor(times.length / 2)],
    p99: times[Math.floor(times.length * 0.99)],
  };
}

async function throughput(url: string): Promise<number> {
  const end = performance.now() + DURATION * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await call(url);
        done++;
      }
    }),
  );
  return done / DURATION;
}

const upstreamPort = freePort();
const upstream = await spawnUntil(
  ["run", "--quiet", "--allow-net", "bench/servers/weir.ts", String(upstreamPort)],
  "stdout",
  /listening (\d+)/,
);
const direct = `http://127.0.0.1:${upstreamPort}/mcp`;
const weir = await spawnUntil(
  [
    "run",
    "--quiet",
    "-A",
    "cli.ts",
    "serve-upstream",
    "--tool",
    "echo",
    "--http",
    "127.0.0.1:0",
    "--upstream",
    direct,
  ],
  "stderr",
  /"mcp":"(http:\/\/[^"]+\/mcp)"/,
);
const wrapped = weir.match[1];
try {
  for (const [label, url] of [["direct", direct], ["weir", wrapped]]) {
    const answer = await call(url);
    if (!answer.includes("hello, bench")) throw new Error(`${label} answered ${answer}`);
  }
  const rows: { target: string; median: number; p99: number; rps: number }[] = [];
  for (
    const [target, url] of [["upstream directly", direct], ["through serve-upstream", wrapped]]
  ) {
    for (let i = 0; i < 100; i++) await call(url); // warm-up
    const { median, p99 } = await latency(url);
    const rps = await throughput(url);
    rows.push({ target, median, p99, rps });
  }
  console.log(
    `serve-upstream benchmark: tools/call echo, ${CALLS} sequential calls, ` +
      `${CONCURRENCY} concurrent callers for ${DURATION} s (Deno ${Deno.version.deno})`,
  );
  console.log("| target | median ms | p99 ms | calls/s |");
  console.log("|---|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.target} | ${r.median.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.rps.toFixed(0)} |`,
    );
  }
  const [d, w] = rows;
  console.log(
    `ratio (through weir / direct): median latency ${(w.median / d.median).toFixed(2)}x, ` +
      `throughput ${(w.rps / d.rps).toFixed(2)}x`,
  );
} finally {
  for (const p of [weir.child, upstream.child]) {
    try {
      p.kill("SIGTERM");
    } catch { /* gone */ }
    await p.status;
  }
}
