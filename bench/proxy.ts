/**
 * The guarded-proxy benchmark (issue 14): the product's hot path, one agent
 * call through `weir serve`, against the least a proxy must do. In one run it:
 *
 * 1. starts a local upstream (`servers/upstream.ts`: `GET /things/<id>`);
 * 2. starts, one at a time and each in its own process pinned to CPU 1, the
 *    shipped CLI `weir serve bench/guardfiles/things.mcp.kdl --http` with its
 *    default flags (stderr, where its log lines go, drained to nowhere) and a
 *    raw `Deno.serve` MCP handler doing the same `fetch` and wrapping the JSON
 *    (`servers/raw_proxy.ts`, the baseline, no checks at all);
 * 3. checks that each answers the exact request with the upstream's record,
 *    then drives each with wrk (pinned to CPU 0 with the upstream) and reads
 *    the server's CPU time and resident set after the load from `/proc`;
 * 4. measures cold start: spawn to the first correct `tools/list` answer of
 *    `weir serve` against a bare `Deno.serve` script (`servers/bare.ts`);
 * 5. prints the table and PASS/FAIL lines against the goals, with the ratios.
 *
 * Usage: `deno task bench:proxy [--duration 5] [--warmup 2] [--connections 32]
 * [--rounds 3] [--spawns 11]`. Linux only (`/proc`); needs `wrk`.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { clockTicks, cpuSeconds } from "./proc.ts";
import { checkWithWrk, locateWrk, luaScript, runWrk } from "./wrk.ts";
import { callWorkload, WORKLOADS } from "./catalog.ts";
import {
  abort,
  drain,
  freePort,
  killAllOnInterrupt,
  live,
  median,
  spawnDeno,
  stop,
  wrkFlags,
} from "./common.ts";

const {
  duration: DURATION,
  warmup: WARMUP,
  connections: CONNECTIONS,
  rounds: ROUNDS,
  spawns: SPAWNS,
} = wrkFlags(Deno.args, 11);

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CALL = callWorkload("get_thing", { id: "abc-123" });
const LIST = WORKLOADS.find((w) => w.name === "tools/list")!;

/** How to start one server: the command after `deno`, given its port. */
interface Spec {
  name: "weir" | "raw" | "bare" | "upstream";
  args: (port: number) => string[];
  env?: Record<string, string>;
}

killAllOnInterrupt();

interface Running {
  port: number;
  child: Deno.ChildProcess;
  stderr: () => string;
}

/** Spawn a server and wait (bounded) until `ready` says it answers. */
async function start(
  spec: Spec,
  pin: string | undefined,
  ready: (port: number) => Promise<boolean>,
): Promise<Running> {
  const port = freePort();
  const denoArgs = spec.args(port);
  const child = spawnDeno(denoArgs, pin, { cwd: ROOT, env: spec.env });
  drain(child.stdout);
  const stderr = drain(child.stderr);
  const deadline = performance.now() + 60_000;
  while (!(await ready(port))) {
    if (!live.has(child)) abort(`${spec.name} exited before answering:\n${stderr()}`);
    if (performance.now() > deadline) abort(`${spec.name} did not answer within 60 s`);
    await new Promise((r) => setTimeout(r, 2));
  }
  return { port, child, stderr };
}

/** Whether `port` answers a 2026-07-28 `tools/list` listing `get_thing` (or, for bare, anything). */
function answersList(expectTool: boolean) {
  return async (port: number): Promise<boolean> => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: "POST",
        headers: LIST.headers,
        body: LIST.body,
      });
      const text = await res.text();
      if (res.status !== 200) return false;
      return !expectTool || text.includes('"get_thing"');
    } catch {
      return false;
    }
  };
}

/** Whether the TCP port accepts a connection. */
async function accepts(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

/** Why an answer is not the upstream's record for `abc-123`, or null when it is. */
function wrongAnswer(status: number, body: string): string | null {
  if (status !== 200) return `HTTP ${status}`;
  let message: { result?: { structuredContent?: Record<string, unknown>; isError?: boolean } };
  try {
    message = JSON.parse(body);
  } catch {
    return "not JSON";
  }
  const structured = message.result?.structuredContent;
  if (!structured || message.result?.isError) return `not a result: ${body.slice(0, 300)}`;
  // weir wraps the record in its coverage envelope; the raw proxy does not.
  const record = (structured.result ?? structured) as Record<string, unknown>;
  return record.id === "abc-123" && record.count === 42 ? null : `wrong record: ${body}`;
}

/** Resident set size (`VmRSS`) of a process now, in bytes. */
function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) * 1024 : NaN;
}

interface Cell {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuUs: number;
  rssMiB: number;
}

async function main(): Promise<void> {
  const wrk = await locateWrk();
  if (!wrk) Deno.exit(1);
  const canPin = navigator.hardwareConcurrency >= 2 &&
    (await new Deno.Command("taskset", { args: ["-V"], stdout: "null", stderr: "null" })
      .output().then((o) => o.success, () => false));
  const pins = canPin ? { server: "1", client: "0" } : { server: undefined, client: undefined };
  const ticks = await clockTicks();
  const dir = await Deno.makeTempDir({ prefix: "weir-bench-proxy-" });
  const scripts = { check: `${dir}/check.lua`, load: `${dir}/load.lua` };
  await Deno.writeTextFile(scripts.check, luaScript(CALL, true));
  await Deno.writeTextFile(scripts.load, luaScript(CALL, false));

  const upstream = await start(
    {
      name: "upstream",
      args: (p) => ["run", "--allow-net=127.0.0.1", "bench/servers/upstream.ts", String(p)],
    },
    pins.client,
    accepts,
  );
  const servers: Spec[] = [
    {
      name: "weir",
      args: (p) => [
        "run",
        "--allow-net",
        "--allow-env",
        "--allow-read",
        "cli.ts",
        "serve",
        "bench/guardfiles/things.mcp.kdl",
        "--http",
        `127.0.0.1:${p}`,
      ],
      env: { THINGS_URL: `http://127.0.0.1:${upstream.port}` },
    },
    {
      name: "raw",
      args: (p) => [
        "run",
        "--allow-net=127.0.0.1",
        "bench/servers/raw_proxy.ts",
        String(p),
        String(upstream.port),
      ],
    },
  ];

  console.log(`weir guarded-proxy benchmark: Deno ${Deno.version.deno}`);
  console.log(
    `${navigator.hardwareConcurrency} CPUs; ${
      canPin ? "server pinned to CPU 1, wrk and the upstream to CPU 0" : "NOT pinned"
    }; wrk -t1 -c${CONNECTIONS}, ${DURATION} s per run after ${WARMUP} s warm-up, ` +
      `${ROUNDS} round(s), fresh server process per run`,
  );
  console.log(
    "  weir  the shipped CLI: weir serve bench/guardfiles/things.mcp.kdl --http (default flags)",
  );
  console.log("  raw   bench/servers/raw_proxy.ts: parse, fetch, wrap; no checks, no log");
  console.log('  every request: tools/call get_thing {id: "abc-123"}, 2026-07-28 shape\n');

  const runs = new Map<string, Cell[]>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const spec of order) {
        const server = await start(spec, pins.server, answersList(spec.name === "weir"));
        try {
          const base = {
            wrk,
            url: `http://127.0.0.1:${server.port}/mcp`,
            connections: CONNECTIONS,
            pin: pins.client,
          };
          const first = await checkWithWrk({ ...base, script: scripts.check, seconds: 1 });
          const problem = first ? wrongAnswer(first.status, first.body) : "no answer";
          if (problem) abort(`${spec.name} answers wrongly (${problem}); ${server.stderr()}`);
          await runWrk({ ...base, script: scripts.load, seconds: WARMUP });
          const before = cpuSeconds(server.child.pid, ticks);
          const r = await runWrk({ ...base, script: scripts.load, seconds: DURATION });
          const after = cpuSeconds(server.child.pid, ticks);
          if (r.errors > 0 || r.requests === 0) {
            abort(`${spec.name}: ${r.errors} errors in ${r.requests} requests`);
          }
          const cell: Cell = {
            rps: r.requests / (r.durationUs / 1e6),
            p50Ms: r.p50Us / 1000,
            p99Ms: r.p99Us / 1000,
            cpuUs: ((after - before) * 1e6) / r.requests,
            rssMiB: rssBytes(server.child.pid) / 1024 / 1024,
          };
          runs.set(spec.name, [...(runs.get(spec.name) ?? []), cell]);
        } finally {
          await stop(server);
        }
      }
    }

    const cell = (name: string): Cell => {
      const all = runs.get(name)!;
      return {
        rps: median(all.map((c) => c.rps)),
        p50Ms: median(all.map((c) => c.p50Ms)),
        p99Ms: median(all.map((c) => c.p99Ms)),
        cpuUs: median(all.map((c) => c.cpuUs)),
        rssMiB: median(all.map((c) => c.rssMiB)),
      };
    };
    const widths = [8, 8, 7, 7, 11, 18];
    const row = (cols: string[]) =>
      cols.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" ");
    console.log(row(["server", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "RSS after load MiB"]));
    for (const spec of servers) {
      const c = cell(spec.name);
      console.log(row([
        spec.name,
        c.rps.toFixed(0),
        c.p50Ms.toFixed(2),
        c.p99Ms.toFixed(2),
        c.cpuUs.toFixed(1),
        c.rssMiB.toFixed(1),
      ]));
    }
    console.log(`(medians of ${ROUNDS} run(s))`);

    // Cold start: spawn to the first correct tools/list, unpinned.
    const bare: Spec = {
      name: "bare",
      args: (p) => ["run", "--allow-net=127.0.0.1", "bench/servers/bare.ts", String(p)],
    };
    const spawnTime = async (spec: Spec): Promise<number> => {
      const t0 = performance.now();
      const server = await start(spec, undefined, answersList(spec.name === "weir"));
      const ms = performance.now() - t0;
      await stop(server);
      return ms;
    };
    await spawnTime(servers[0]); // warm Deno's module and code caches
    await spawnTime(bare);
    const cold = { weir: [] as number[], bare: [] as number[] };
    for (let i = 0; i < SPAWNS; i++) {
      cold.weir.push(await spawnTime(servers[0]));
      cold.bare.push(await spawnTime(bare));
    }
    const coldWeir = median(cold.weir);
    const coldBare = median(cold.bare);
    console.log(
      `\ncold start, spawn to first correct tools/list (median of ${SPAWNS}): ` +
        `weir serve ${coldWeir.toFixed(1)} ms, bare Deno.serve ${coldBare.toFixed(1)} ms`,
    );

    const w = cell("weir");
    const raw = cell("raw");
    const goal = (ok: boolean, what: string, ratio: number, target: string) =>
      console.log(
        `${ok ? "PASS" : "FAIL"}  ${what.padEnd(40)} ${ratio.toFixed(2)}x  (goal ${target})`,
      );
    console.log("");
    goal(
      w.rps / raw.rps >= 0.7,
      "guarded tools/call req/s, weir / raw",
      w.rps / raw.rps,
      ">= 0.7x",
    );
    goal(w.cpuUs / raw.cpuUs <= 1.6, "CPU per call, weir / raw", w.cpuUs / raw.cpuUs, "<= 1.6x");
    goal(
      w.rssMiB / raw.rssMiB <= 1.3,
      "RSS after load, weir / raw",
      w.rssMiB / raw.rssMiB,
      "<= 1.3x",
    );
    goal(
      coldWeir / coldBare <= 1.5,
      "cold start, weir serve / bare Deno",
      coldWeir / coldBare,
      "<= 1.5x",
    );
    const extra = Deno.args.length ? ` ${Deno.args.join(" ")}` : "";
    console.log(`\nreproduce: cd ${ROOT.replace(/\/$/, "")} && deno task bench:proxy${extra}`);
  } finally {
    await stop(upstream);
    await Deno.remove(dir, { recursive: true });
  }
}

await main();
