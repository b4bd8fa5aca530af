/**
 * The guarded-call benchmark (issues 14 and 30): the product's hot path, one
 * agent call through `weir serve`, against the least a proxy must do, and
 * against other revisions of weir. In one run it:
 *
 * 1. starts a local upstream (`servers/upstream.ts`: `GET /things/<id>`);
 * 2. starts, one at a time and each in its own process pinned to CPU 1, the
 *    shipped CLI `weir serve bench/guardfiles/things.mcp.kdl --http` with its
 *    default flags (stderr, where its log lines go, drained to nowhere) and a
 *    raw `Deno.serve` MCP handler doing the same `fetch` and wrapping the JSON
 *    (`servers/raw_proxy.ts`, the baseline, no checks at all), and the same
 *    handler answering weir's exact bytes (`--same-bytes`: coverage envelope
 *    and `serverInfo`; checked equal to this tree's answer), an informative
 *    row that tells the cost of the checks from the cost of a larger answer;
 * 3. checks that each answers the exact request with the upstream's record,
 *    then drives each with wrk (pinned to CPU 0 with the upstream) and reads
 *    the server's CPU time and resident set after the load from `/proc`;
 * 4. measures cold start: spawn to the first correct `tools/list` answer of
 *    `weir serve` against a bare `Deno.serve` script (`servers/bare.ts`);
 * 5. prints the table, the ratios of each weir side by side, and PASS/FAIL
 *    lines for this tree against the goals of issue 30.
 *
 * `--against REV` (repeatable) also measures revision REV's `weir serve`
 * (checked out into a temporary worktree, `bench/against.ts`) in the same
 * rounds and spawns, alternating with this tree's: how the table of issue 30
 * was made. Run it against the last release before a release
 * (docs/performance.md).
 *
 * Usage: `deno task bench:guard [--duration 5] [--warmup 2] [--connections 32]
 * [--rounds 3] [--spawns 11] [--against REV]...`. Linux only (`/proc`); needs
 * `wrk`.
 *
 * @module
 */
import { clockTicks, cpuSeconds } from "./proc.ts";
import { ratio, revisionHint, ROOT, weirArgs, weirsUnderTest } from "./against.ts";
import { checkWithWrk, locateWrk, luaScript, runWrk } from "./wrk.ts";
import { callWorkload, WORKLOADS } from "./catalog.ts";
import {
  abort,
  drain,
  freePort,
  killAllOnInterrupt,
  live,
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
  against: AGAINST,
} = wrkFlags(Deno.args, 11);

const CALL = callWorkload("get_thing", { id: "abc-123" });
const LIST = WORKLOADS.find((w) => w.name === "tools/list")!;

/** How to start one server: the command after `deno`, given its port. */
interface Spec {
  /** `weir`, `weir@<rev>`, `raw`, `bare` or `upstream`. */
  name: string;
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
    if (!live.has(child)) {
      abort(`${spec.name} exited before answering:\n${stderr()}${revisionHint(spec.name)}`);
    }
    if (performance.now() > deadline) {
      abort(`${spec.name} did not answer within 60 s:\n${stderr()}${revisionHint(spec.name)}`);
    }
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

/** The goals of issue 30 for this tree, each against the baseline of the same rounds. */
const GOALS = {
  rps: 0.95,
  cpu: 1.15,
  p99: 1.0,
  rss: 1.3,
  cold: 2.5,
};

/** One row of the ratio table: a figure of each weir against the baseline's. */
interface Metric {
  what: string;
  of: (name: string) => number;
  base: number;
  goal: [">=" | "<=", number];
}

/**
 * Print each metric's ratio for every weir side by side, each other revision
 * against this tree, then PASS/FAIL for this tree (the first name).
 */
function printRatios(names: string[], metrics: Metric[]): void {
  const col = Math.max(14, ...names.map((n) => n.length + 2));
  const goalText = ([sign, x]: Metric["goal"]) => `${sign} ${x.toFixed(2)}x`;
  console.log(
    `\n${"ratios, same run".padEnd(24)}${names.map((n) => n.padStart(col)).join("")}` +
      "goal".padStart(12),
  );
  for (const m of metrics) {
    const cells = names.map((n) => ratio(m.of(n), m.base).padStart(col)).join("");
    console.log(`${m.what.padEnd(24)}${cells}${goalText(m.goal).padStart(12)}`);
  }
  for (const other of names.slice(1)) {
    const parts = metrics.map((m) =>
      `${m.what.replace(/ \/ .*/, "")} ${ratio(m.of(names[0]), m.of(other))}`
    );
    console.log(`\n${names[0]} / ${other}: ${parts.join(", ")}`);
  }
  console.log("");
  for (const m of metrics) {
    const r = m.of(names[0]) / m.base;
    const ok = m.goal[0] === ">=" ? r >= m.goal[1] : r <= m.goal[1];
    console.log(
      `${ok ? "PASS" : "FAIL"}  ${`${names[0]} ${m.what}`.padEnd(32)} ${r.toFixed(2)}x  ` +
        `(goal ${goalText(m.goal)})`,
    );
  }
}

async function main(): Promise<void> {
  const wrk = await locateWrk();
  if (!wrk) Deno.exit(1);
  const canPin = navigator.hardwareConcurrency >= 2 &&
    (await new Deno.Command("taskset", { args: ["-V"], stdout: "null", stderr: "null" })
      .output().then((o) => o.success, () => false));
  const pins = canPin ? { server: "1", client: "0" } : { server: undefined, client: undefined };
  const ticks = await clockTicks();

  console.log(`weir guarded-call benchmark: Deno ${Deno.version.deno}`);
  const weirs = await weirsUnderTest(AGAINST).catch((error) => abort(error.message));
  const dir = await scratchDir("weir-bench-guard-");
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
  const weirSpecs: Spec[] = weirs.map((weir) => ({
    name: weir.label,
    args: (p) => [
      ...weirArgs(weir, ["--allow-net", "--allow-env", "--allow-read"]),
      "serve",
      "bench/guardfiles/things.mcp.kdl",
      "--http",
      `127.0.0.1:${p}`,
    ],
    env: { THINGS_URL: `http://127.0.0.1:${upstream.port}` },
  }));
  const raw: Spec = {
    name: "raw",
    args: (p) => [
      "run",
      "--allow-net=127.0.0.1",
      "bench/servers/raw_proxy.ts",
      String(p),
      String(upstream.port),
    ],
  };
  const rawSame: Spec = {
    name: "raw-same",
    args: (p) => [...raw.args(p), "--same-bytes"],
  };
  const servers = [...weirSpecs, raw, rawSame];

  console.log(
    `${navigator.hardwareConcurrency} CPUs; ${
      canPin ? "server pinned to CPU 1, wrk and the upstream to CPU 0" : "NOT pinned"
    }; wrk -t1 -c${CONNECTIONS}, ${DURATION} s per run after ${WARMUP} s warm-up, ` +
      `${ROUNDS} round(s), fresh server process per run, order alternating`,
  );
  console.log(
    "  weir  the shipped CLI: weir serve bench/guardfiles/things.mcp.kdl --http (default flags)",
  );
  console.log("  raw   bench/servers/raw_proxy.ts: parse, fetch, wrap; no checks, no log");
  console.log(
    "  raw-same  the same with --same-bytes: answers weir's exact bytes (informative; goals use raw)",
  );
  console.log('  every request: tools/call get_thing {id: "abc-123"}, 2026-07-28 shape\n');

  const runs = new Map<string, Cell[]>();
  /** This tree's answer, which raw-same must repeat byte for byte. */
  let mine: string | undefined;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const spec of order) {
        const server = await start(spec, pins.server, answersList(!spec.name.startsWith("raw")));
        try {
          const base = {
            wrk,
            url: `http://127.0.0.1:${server.port}/mcp`,
            connections: CONNECTIONS,
            pin: pins.client,
          };
          const first = await checkWithWrk({ ...base, script: scripts.check, seconds: 1 });
          const problem = first ? wrongAnswer(first.status, first.body) : "no answer";
          if (problem) {
            abort(
              `${spec.name} answers wrongly (${problem}); ${server.stderr()}` +
                revisionHint(spec.name),
            );
          }
          if (spec === weirSpecs[0]) mine = first!.body;
          if (spec === rawSame && mine !== undefined && mine !== first!.body) {
            abort(
              `raw-same no longer answers weir's bytes: update bench/servers/raw_proxy.ts ` +
                `--same-bytes to answer\n${mine}\n(it answers\n${first!.body})`,
            );
          }
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
    const widths = [14, 8, 7, 7, 11, 18];
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

    // Cold start: spawn to the first correct tools/list, unpinned, alternating.
    const bare: Spec = {
      name: "bare",
      args: (p) => ["run", "--allow-net=127.0.0.1", "bench/servers/bare.ts", String(p)],
    };
    const spawnTime = async (spec: Spec): Promise<number> => {
      const t0 = performance.now();
      const server = await start(spec, undefined, answersList(spec !== bare));
      const ms = performance.now() - t0;
      await stop(server);
      return ms;
    };
    const spawned = [...weirSpecs, bare];
    for (const spec of spawned) await spawnTime(spec); // warm Deno's module and code caches
    const cold = new Map<string, number[]>(spawned.map((s) => [s.name, []]));
    for (let i = 0; i < SPAWNS; i++) {
      const order = i % 2 === 0 ? spawned : [...spawned].reverse();
      for (const spec of order) cold.get(spec.name)!.push(await spawnTime(spec));
    }
    const coldMs = (name: string) => median(cold.get(name)!);
    console.log(
      `\ncold start, spawn to first correct tools/list over HTTP (median of ${SPAWNS}): ` +
        [
          ...weirSpecs.map((s) => `${s.name} serve ${coldMs(s.name).toFixed(1)} ms`),
          `bare Deno.serve ${coldMs("bare").toFixed(1)} ms`,
        ].join(", "),
    );

    const rawCell = cell("raw");
    const metrics: Metric[] = [
      { what: "req/s / raw", of: (n) => cell(n).rps, base: rawCell.rps, goal: [">=", GOALS.rps] },
      {
        what: "CPU per call / raw",
        of: (n) => cell(n).cpuUs,
        base: rawCell.cpuUs,
        goal: ["<=", GOALS.cpu],
      },
      { what: "p99 / raw", of: (n) => cell(n).p99Ms, base: rawCell.p99Ms, goal: ["<=", GOALS.p99] },
      {
        what: "RSS after load / raw",
        of: (n) => cell(n).rssMiB,
        base: rawCell.rssMiB,
        goal: ["<=", GOALS.rss],
      },
      {
        what: "cold start / bare Deno",
        of: coldMs,
        base: coldMs("bare"),
        goal: ["<=", GOALS.cold],
      },
    ];
    printRatios(weirSpecs.map((s) => s.name), metrics);
    const same = cell("raw-same");
    console.log(
      `\ninformative, the same answer bytes: raw-same / raw: req/s ${
        ratio(same.rps, rawCell.rps)
      }, ` +
        `CPU ${ratio(same.cpuUs, rawCell.cpuUs)}; ` +
        weirSpecs.map((s) =>
          `${s.name} / raw-same: req/s ${ratio(cell(s.name).rps, same.rps)}, ` +
          `CPU ${ratio(cell(s.name).cpuUs, same.cpuUs)}, p99 ${
            ratio(cell(s.name).p99Ms, same.p99Ms)
          }`
        ).join("; "),
    );
    const extra = Deno.args.length ? ` ${Deno.args.join(" ")}` : "";
    const load = Deno.loadavg().map((l) => l.toFixed(1)).join(" ");
    console.log(`\nload average at the end: ${load}`);
    console.log(`reproduce: cd ${ROOT.replace(/\/$/, "")} && deno task bench:guard${extra}`);
  } finally {
    await stop(upstream);
  }
}

await main();
