/**
 * The HTTP benchmark of weir's core (issue 3, item 9). In one run it:
 *
 * 1. starts, one at a time and each in its own process, weir
 *    (`servers/weir.ts`), a naive raw `Deno.serve` handler doing the same JSON
 *    work (`servers/naive.ts`, the baseline), that handler plus only the reads
 *    weir's checks need (`servers/floor.ts`: the most weir's ratio to the
 *    baseline could be) and the official SDK v2 stateless server
 *    (`servers/sdk.ts`);
 * 2. sends each workload's exact request once through wrk and aborts unless
 *    every server answers 200 with the right result;
 * 3. drives each server with wrk (server pinned to one CPU, wrk to the other)
 *    and reads the server's CPU time and peak RSS from `/proc`;
 * 4. measures cold start: spawn to first answered `tools/list` over HTTP, weir
 *    against a bare `Deno.serve` script (`servers/bare.ts`);
 * 5. prints a table, weir's ratios and PASS/FAIL lines for the goals.
 *
 * Usage: `deno task bench [--duration 5] [--warmup 2] [--connections 32]
 * [--rounds 3] [--spawns 15]`. Linux only (`/proc`); needs `wrk` (installed
 * with apt-get when missing and running as root).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { TOOLS, type Workload, WORKLOADS } from "./catalog.ts";
import { clockTicks, cpuBusyTicks, cpuSeconds, peakRssBytes } from "./proc.ts";
import { checkWithWrk, locateWrk, luaScript, runWrk, type WrkResult } from "./wrk.ts";
import {
  abort,
  drain,
  freePort,
  killAllOnInterrupt,
  median,
  scratchDir,
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
} = wrkFlags(Deno.args, 15);

const HERE = fileURLToPath(new URL(".", import.meta.url));

/** One server under test. */
interface ServerSpec {
  name: "weir" | "naive" | "floor" | "sdk" | "bare";
  script: string;
  label: string;
}

const SERVERS: ServerSpec[] = [
  { name: "weir", script: "servers/weir.ts", label: "weir (McpServer + createHttpHandler)" },
  { name: "naive", script: "servers/naive.ts", label: "naive Deno.serve + cfworker (baseline)" },
  {
    name: "floor",
    script: "servers/floor.ts",
    label: "naive + only the reads weir's checks need (8 headers, body bytes, strict UTF-8)",
  },
  { name: "sdk", script: "servers/sdk.ts", label: "SDK v2 createMcpHandler, stateless" },
];
const BARE: ServerSpec = { name: "bare", script: "servers/bare.ts", label: "bare Deno.serve" };

/** A running server process. */
interface Running {
  spec: ServerSpec;
  port: number;
  child: Deno.ChildProcess;
  stderr: () => string;
}

killAllOnInterrupt();

/** Spawn a server script and wait for its `listening <port>` line. */
async function start(spec: ServerSpec, pin: string | undefined): Promise<Running> {
  const port = freePort();
  const denoArgs = ["run", "--allow-net=127.0.0.1", `${HERE}${spec.script}`, String(port)];
  const child = spawnDeno(denoArgs, pin);
  const errText = drain(child.stderr);
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    while (!out.includes(`listening ${port}`)) {
      const { done, value } = await lines.read();
      if (done) {
        throw new Error(`${spec.name} exited before listening:\n${out}${errText()}`);
      }
      out += value;
    }
  } finally {
    clearTimeout(deadline);
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  (async () => {
    while (!(await lines.read()).done);
  })();
  return { spec, port, child, stderr: errText };
}

/** Why an answer is not the correct result of the workload, or `null` when it is. */
function wrongAnswer(workload: Workload, status: number, body: string): string | null {
  if (status !== 200) return `HTTP ${status}`;
  let text = body.trim();
  if (text.startsWith("event:") || text.startsWith("data:")) {
    // An SSE answer: the JSON-RPC message is the data of its last event.
    const data = text.split("\n").filter((l) => l.startsWith("data:"));
    text = data.at(-1)?.slice(5).trim() ?? "";
  }
  let message: { result?: Record<string, unknown>; error?: unknown };
  try {
    message = JSON.parse(text);
  } catch {
    return "the body is not JSON";
  }
  if (message.error) return `JSON-RPC error ${JSON.stringify(message.error)}`;
  const result = message.result;
  if (!result) return "no result";
  if (workload.name === "tools/list") {
    const names = Array.isArray(result.tools)
      ? (result.tools as { name: string }[]).map((t) => t.name).sort().join(",")
      : "";
    return names === TOOLS.map((t) => t.name).sort().join(",")
      ? null
      : `tools/list did not list the ${TOOLS.length} tools`;
  }
  const content = result.content as { type: string; text: string }[] | undefined;
  if (result.isError) return `isError result: ${JSON.stringify(content)}`;
  return content?.[0]?.text === "hello, bench" ? null : "echo did not echo the message";
}

/** One measured cell: a server under one workload. */
interface Cell {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerReq: number;
  peakMiB: number;
  /** Share of the server's CPU that other processes used during the measured run (0-1). */
  foreign: number;
}

async function measure(
  wrk: string,
  spec: ServerSpec,
  workload: Workload,
  scripts: { check: string; load: string },
  pins: { server?: string; wrk?: string },
  ticks: number,
): Promise<Cell> {
  const server = await start(spec, pins.server);
  try {
    const url = `http://127.0.0.1:${server.port}/mcp`;
    const base = { wrk, url, connections: CONNECTIONS, pin: pins.wrk };
    const first = await checkWithWrk({ ...base, script: scripts.check, seconds: 1 });
    const problem = first ? wrongAnswer(workload, first.status, first.body) : "no answer at all";
    if (problem) {
      abort(
        `${spec.name} does not answer ${workload.name} correctly (${problem}); ` +
          `a benchmark of error responses is worthless.\nbody: ${first?.body.slice(0, 500)}\n` +
          `server stderr: ${server.stderr()}`,
      );
    }
    await runWrk({ ...base, script: scripts.load, seconds: WARMUP });
    const core = pins.server === undefined ? NaN : Number(pins.server);
    const busyBefore = cpuBusyTicks(core);
    const cpuBefore = cpuSeconds(server.child.pid, ticks);
    const r: WrkResult = await runWrk({ ...base, script: scripts.load, seconds: DURATION });
    const cpuAfter = cpuSeconds(server.child.pid, ticks);
    const busy = (cpuBusyTicks(core) - busyBefore) / ticks;
    const peak = peakRssBytes(server.child.pid);
    if (r.errors > 0 || r.requests === 0) {
      abort(
        `${spec.name} ${workload.name}: ${r.errors} errors (${r.badStatus} non-2xx answers) ` +
          `in ${r.requests} requests`,
      );
    }
    return {
      rps: r.requests / (r.durationUs / 1e6),
      p50Ms: r.p50Us / 1000,
      p99Ms: r.p99Us / 1000,
      cpuUsPerReq: ((cpuAfter - cpuBefore) * 1e6) / r.requests,
      peakMiB: peak / 1024 / 1024,
      foreign: Math.max(0, busy - (cpuAfter - cpuBefore)) / (r.durationUs / 1e6),
    };
  } finally {
    await stop(server);
  }
}

/** Spawn to first answered `tools/list`, in milliseconds. */
async function coldStart(spec: ServerSpec, workload: Workload): Promise<number> {
  const t0 = performance.now();
  const server = await start(spec, undefined);
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/mcp`, {
      method: "POST",
      headers: workload.headers,
      body: workload.body,
    });
    const body = await res.text();
    const elapsed = performance.now() - t0;
    if (res.status !== 200) abort(`${spec.name} cold start answered HTTP ${res.status}: ${body}`);
    if (spec.name === "weir") {
      const problem = wrongAnswer(workload, res.status, body);
      if (problem) abort(`weir cold start: ${problem}`);
    }
    return elapsed;
  } finally {
    await stop(server);
  }
}

/** A one-line progress note on stderr, only when it is a terminal. */
function progress(text: string): void {
  if (!Deno.stderr.isTerminal()) return;
  Deno.stderr.writeSync(new TextEncoder().encode(`\r\x1b[K${text ? `  ${text}` : ""}`));
}

async function versionOf(cmd: string, args: string[]): Promise<string> {
  try {
    const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    return text.split("\n")[0].replace(/\s*Copyright.*$/, "").trim();
  } catch {
    return "?";
  }
}

async function main(): Promise<void> {
  const wrk = await locateWrk();
  if (!wrk) Deno.exit(1);
  const cpus = navigator.hardwareConcurrency;
  const canPin = cpus >= 2 && (await versionOf("taskset", ["-V"])) !== "?";
  const pins = canPin ? { server: "1", wrk: "0" } : {};
  const ticks = await clockTicks();

  const dir = await scratchDir("weir-bench-");
  const scripts = new Map<Workload, { check: string; load: string }>();
  for (const [i, w] of WORKLOADS.entries()) {
    const paths = { check: `${dir}/check-${i}.lua`, load: `${dir}/load-${i}.lua` };
    await Deno.writeTextFile(paths.check, luaScript(w, true));
    await Deno.writeTextFile(paths.load, luaScript(w, false));
    scripts.set(w, paths);
  }

  console.log(
    `weir HTTP benchmark: Deno ${Deno.version.deno}, ${await versionOf(wrk, ["-v"])}`,
  );
  console.log(
    `${cpus} CPUs; ${
      canPin ? "server pinned to CPU 1, wrk to CPU 0" : "NOT pinned (taskset missing or 1 CPU)"
    }; ` +
      `wrk -t1 -c${CONNECTIONS}, ${DURATION} s per run after ${WARMUP} s warm-up, ` +
      `${ROUNDS} round(s), fresh server process per run`,
  );
  for (const s of SERVERS) console.log(`  ${s.name.padEnd(6)} ${s.label} (bench/${s.script})`);
  console.log(
    `  every request: the 2026-07-28 shape (params._meta protocolVersion + clientCapabilities;` +
      ` MCP-Protocol-Version, Mcp-Method, Mcp-Name headers)\n`,
  );

  const runs = new Map<string, Cell[]>();
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order each round so no server always runs first (or last).
    const order = SERVERS.map((_, i) => SERVERS[(i + round) % SERVERS.length]);
    for (const w of WORKLOADS) {
      for (const s of order) {
        progress(`round ${round + 1}/${ROUNDS}: ${w.name} ${s.name} ...`);
        const cell = await measure(wrk, s, w, scripts.get(w)!, pins, ticks);
        const key = `${w.name}|${s.name}`;
        runs.set(key, [...(runs.get(key) ?? []), cell]);
      }
    }
  }
  progress("");

  const cell = (w: string, s: string): Cell => {
    const all = runs.get(`${w}|${s}`)!;
    return {
      rps: median(all.map((c) => c.rps)),
      p50Ms: median(all.map((c) => c.p50Ms)),
      p99Ms: median(all.map((c) => c.p99Ms)),
      cpuUsPerReq: median(all.map((c) => c.cpuUsPerReq)),
      peakMiB: Math.max(...all.map((c) => c.peakMiB)),
      foreign: Math.max(...all.map((c) => c.foreign)),
    };
  };
  const spread = (w: string, s: string): string => {
    const rps = runs.get(`${w}|${s}`)!.map((c) => c.rps);
    const m = median(rps);
    return `±${((50 * (Math.max(...rps) - Math.min(...rps))) / m).toFixed(0)}%`;
  };

  const header = [
    "workload",
    "server",
    "req/s",
    "spread",
    "p50 ms",
    "p99 ms",
    "CPU µs/req",
    "peak RSS MiB",
    "other load",
  ];
  const widths = [11, 7, 8, 7, 7, 7, 11, 13, 11];
  const row = (cols: string[]) =>
    cols.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" ");
  console.log(row(header));
  for (const w of WORKLOADS) {
    for (const s of SERVERS) {
      const c = cell(w.name, s.name);
      console.log(row([
        w.name,
        s.name,
        c.rps.toFixed(0),
        spread(w.name, s.name),
        c.p50Ms.toFixed(2),
        c.p99Ms.toFixed(2),
        c.cpuUsPerReq.toFixed(1),
        c.peakMiB.toFixed(1),
        Number.isNaN(c.foreign) ? "?" : `${(100 * c.foreign).toFixed(0)}%`,
      ]));
    }
  }
  console.log(
    `(medians of ${ROUNDS} run(s); spread = half the min-max range of req/s; peak RSS = VmHWM, ` +
      `max over runs; other load = share of the server's CPU other processes took, max over runs)`,
  );
  const worst = Math.max(...[...runs.values()].flat().map((c) => c.foreign));
  if (worst > 0.1) {
    console.log(
      `WARNING: other processes took up to ${(100 * worst).toFixed(0)}% of the server's CPU; ` +
        `numbers are noisy, run again on a quiet machine`,
    );
  }

  console.log(
    "\nweir's ratios (req/s: weir / other; CPU per request: other / weir; higher = weir better)",
  );
  for (const w of WORKLOADS) {
    const me = cell(w.name, "weir");
    const parts = SERVERS.filter((s) => s.name !== "weir").map((s) => {
      const o = cell(w.name, s.name);
      return `vs ${s.name}: req/s ${(me.rps / o.rps).toFixed(2)}x, CPU ${
        (o.cpuUsPerReq / me.cpuUsPerReq).toFixed(2)
      }x`;
    });
    console.log(`  ${w.name.padEnd(11)} ${parts.join("; ")}`);
  }

  // What the checks' reads alone cost: the most any handler doing weir's
  // checks could reach against the naive baseline (bench/servers/floor.ts).
  for (const w of WORKLOADS) {
    const floor = cell(w.name, "floor");
    const naive = cell(w.name, "naive");
    console.log(
      `  ${w.name.padEnd(11)} ceiling (floor / naive): req/s ${
        (floor.rps / naive.rps).toFixed(2)
      }x, ` +
        `CPU ${(naive.cpuUsPerReq / floor.cpuUsPerReq).toFixed(2)}x`,
    );
  }

  const list = WORKLOADS[0];
  await coldStart(SERVERS[0], list); // first spawns warm Deno's module and emit caches
  await coldStart(BARE, list);
  const cold = { weir: [] as number[], bare: [] as number[] };
  for (let i = 0; i < SPAWNS; i++) {
    progress(`cold start ${i + 1}/${SPAWNS} ...`);
    cold.weir.push(await coldStart(SERVERS[0], list));
    cold.bare.push(await coldStart(BARE, list));
  }
  progress("");
  const coldWeir = median(cold.weir);
  const coldBare = median(cold.bare);
  console.log(
    `\ncold start, spawn to first answered tools/list (median of ${SPAWNS}, unpinned): ` +
      `weir ${coldWeir.toFixed(1)} ms (min ${Math.min(...cold.weir).toFixed(1)}), ` +
      `bare Deno.serve ${coldBare.toFixed(1)} ms (min ${Math.min(...cold.bare).toFixed(1)}; ` +
      `bench/servers/bare.ts), ratio ${(coldWeir / coldBare).toFixed(2)}x`,
  );

  const listRatio = cell("tools/list", "weir").rps / cell("tools/list", "naive").rps;
  const callNaive = cell("tools/call", "weir").rps / cell("tools/call", "naive").rps;
  const callSdk = cell("tools/call", "weir").rps / cell("tools/call", "sdk").rps;
  const coldRatio = coldWeir / coldBare;
  // Requests per CPU-second of the server: less sensitive than req/s to other load.
  const perCpu = (w: string, other: string) =>
    `; per server CPU-second ${
      (cell(w, other).cpuUsPerReq / cell(w, "weir").cpuUsPerReq).toFixed(2)
    }x`;
  const goal = (ok: boolean, what: string, ratio: number, target: string, extra = "") =>
    console.log(
      `${ok ? "PASS" : "FAIL"}  ${what.padEnd(34)} ${ratio.toFixed(2)}x  (goal ${target}${extra})`,
    );
  console.log("");
  goal(
    listRatio >= 1.5,
    "tools/list req/s, weir / naive",
    listRatio,
    ">= 1.5x",
    perCpu("tools/list", "naive"),
  );
  goal(
    callNaive >= 0.85,
    "tools/call req/s, weir / naive",
    callNaive,
    ">= 0.85x",
    perCpu("tools/call", "naive"),
  );
  goal(
    callSdk >= 20,
    "tools/call req/s, weir / sdk",
    callSdk,
    ">= 20x",
    perCpu("tools/call", "sdk"),
  );
  goal(coldRatio <= 1.3, "cold start, weir / bare Deno.serve", coldRatio, "<= 1.3x");

  console.log(
    "\nSDK: @modelcontextprotocol/server 2.4.0 serves these 2026-07-28 requests statelessly " +
      "through createMcpHandler (a new McpServer per request, validator: its default, Ajv).",
  );
  const extra = Deno.args.length ? ` ${Deno.args.join(" ")}` : "";
  const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
  console.log(`reproduce: cd ${root} && deno task bench${extra}`);
  await Deno.remove(dir, { recursive: true });
}

await main();
