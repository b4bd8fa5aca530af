/**
 * The serve-upstream benchmark: `tools/call echo` on the official SDK's MCP
 * server called directly, and through `weir serve-upstream` with its default
 * settings, in the same round, for both protocol revisions:
 *
 * - 2025-11-25: `servers/sdk_v1.ts` (the v1 SDK, stateless Streamable HTTP,
 *   JSON answers); callers send 2025-11-25 requests (`MCP-Protocol-Version`);
 * - 2026-07-28: `servers/sdk.ts` (the v2 SDK's `createMcpHandler`); callers
 *   send stateless 2026-07-28 requests.
 *
 * Per revision it starts the SDK server, then the shipped CLI
 * `weir serve-upstream --tool echo --http 127.0.0.1:0 --upstream <it>` (no
 * other flag) and the hop floor (`servers/hop_floor.ts`: `Deno.serve`
 * forwarding each body with weir's HTTP/1.1 client, no checks: what any
 * Deno proxy must add at least), checks all three answer the echo, and
 * measures each with wrk
 * (`-t1`): the median latency of calls one at a time (`-c1`) and the
 * throughput of `--connections` concurrent callers, alternating which goes
 * first each round; the figures are the medians over `--rounds`. It prints
 * the table, the ratios (through weir / direct) and PASS/FAIL against the
 * goals of issue 20: throughput at least 0.6x direct, p50 at most 1.5x.
 *
 * `--against REV` (repeatable) also starts revision REV's
 * `weir serve-upstream` (checked out into a temporary worktree,
 * `bench/against.ts`) in front of the same SDK server, measured in the same
 * rounds, alternating, and prints its rows and this tree's ratios to it.
 *
 * Usage: `deno task bench:upstream [--duration 5] [--warmup 2]
 * [--connections 8] [--rounds 3] [--against REV]...`. Needs `wrk` (installed
 * with apt-get when run as root).
 *
 * @module
 */
import { ratio, revisionHint, ROOT, type Weir, weirArgs, weirsUnderTest } from "./against.ts";
import { checkWithWrk, locateWrk, luaScript, runWrk } from "./wrk.ts";
import { callWorkload, type Workload } from "./catalog.ts";
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
  against: AGAINST,
} = wrkFlags(Deno.args, 1, { connections: 8 });

const MESSAGE = "hello, bench";
/** Throughput at least this share of direct. */
const THROUGHPUT_GOAL = 0.6;
/** Median latency at most this multiple of direct. */
const P50_GOAL = 1.5;

killAllOnInterrupt();

/** One revision's setup: the SDK server and the request callers send. */
interface Revision {
  version: "2025-11-25" | "2026-07-28";
  server: string;
  call: Workload;
}

const LEGACY_CALL: Workload = {
  name: "tools/call",
  body: JSON.stringify({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "echo", arguments: { message: MESSAGE } },
  }),
  headers: {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
  },
};

const REVISIONS: Revision[] = [
  { version: "2025-11-25", server: "bench/servers/sdk_v1.ts", call: LEGACY_CALL },
  {
    version: "2026-07-28",
    server: "bench/servers/sdk.ts",
    call: callWorkload("echo", { message: MESSAGE }),
  },
];

interface Running {
  url: string;
  child: Deno.ChildProcess;
  stderr: () => string;
}

/** Start a process and wait (bounded) until `ready` finds its URL in its output. */
async function start(
  name: string,
  args: string[],
  ready: (out: string) => string | undefined,
  from: "stdout" | "stderr",
): Promise<Running> {
  const child = spawnDeno(args, undefined, { cwd: ROOT });
  const stdout = drain(child.stdout);
  const stderr = drain(child.stderr);
  const deadline = performance.now() + 120_000;
  let url: string | undefined;
  while (!(url = ready(from === "stdout" ? stdout() : stderr()))) {
    if (!live.has(child)) {
      abort(`${name} exited before listening:\n${stderr()}${revisionHint(name)}`);
    }
    if (performance.now() > deadline) {
      abort(`${name} did not listen within 120 s:\n${stderr()}${revisionHint(name)}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return { url, child, stderr };
}

interface Cell {
  p50Ms: number;
  rps: number;
}

async function main(): Promise<void> {
  const wrk = await locateWrk();
  if (!wrk) Deno.exit(1);
  console.log(
    `serve-upstream benchmark: tools/call echo on the official SDK server, direct and through ` +
      `weir serve-upstream (default flags); Deno ${Deno.version.deno}, ` +
      `${navigator.hardwareConcurrency} CPUs (not pinned)`,
  );
  const weirs: Weir[] = await weirsUnderTest(AGAINST).catch((error) => abort(error.message));
  const dir = await scratchDir("weir-bench-upstream-");
  console.log(
    `  wrk -t1: p50 of calls one at a time (-c1), throughput with -c${CONNECTIONS}; ` +
      `${DURATION} s per run after ${WARMUP} s warm-up; ${ROUNDS} round(s), medians\n`,
  );
  const lines: string[] = [];
  const floorLines: string[] = [];
  const notes: string[] = [];
  let failed = false;
  for (const revision of REVISIONS) {
    const scripts = {
      check: `${dir}/${revision.version}-check.lua`,
      load: `${dir}/${revision.version}.lua`,
    };
    await Deno.writeTextFile(scripts.check, luaScript(revision.call, true));
    await Deno.writeTextFile(scripts.load, luaScript(revision.call, false));
    const port = freePort();
    const sdk = await start(
      `the SDK server (${revision.server})`,
      [
        "run",
        "--quiet",
        "--allow-net",
        "--allow-env",
        "--allow-read",
        revision.server,
        String(port),
      ],
      (out) => /listening (\d+)/.test(out) ? `http://127.0.0.1:${port}/mcp` : undefined,
      "stdout",
    );
    const throughWeir: [string, Running][] = [];
    for (const w of weirs) {
      throughWeir.push([
        w.label,
        await start(
          `${w.label} serve-upstream`,
          [
            ...weirArgs(w, ["--quiet", "-A"]),
            "serve-upstream",
            "--tool",
            "echo",
            "--http",
            "127.0.0.1:0",
            "--upstream",
            sdk.url,
          ],
          (out) => /"mcp":"(http:\/\/[^"]+\/mcp)"/.exec(out)?.[1],
          "stderr",
        ),
      ]);
    }
    const floorPort = freePort();
    const floor = await start(
      "the hop floor (bench/servers/hop_floor.ts)",
      ["run", "--quiet", "--allow-net", "bench/servers/hop_floor.ts", String(floorPort), sdk.url],
      (out) => /listening (\d+)/.test(out) ? `http://127.0.0.1:${floorPort}/mcp` : undefined,
      "stdout",
    );
    const targets: [string, Running][] = [["direct", sdk], ...throughWeir, ["floor", floor]];
    const cells = new Map<string, Cell[]>();
    const socketErrors = new Map<string, number>();
    try {
      for (const [name, target] of targets) {
        const first = await checkWithWrk({
          wrk,
          url: target.url,
          script: scripts.check,
          seconds: 1,
          connections: 1,
        });
        if (!first || first.status !== 200 || !first.body.includes(MESSAGE)) {
          abort(
            `${name} (${revision.version}) answered ${first?.status} ${first?.body}\n` +
              target.stderr() + revisionHint(name),
          );
        }
      }
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? targets : [...targets].reverse();
        for (const [name, target] of order) {
          const base = { wrk, url: target.url, script: scripts.load };
          await runWrk({ ...base, seconds: WARMUP, connections: CONNECTIONS });
          const one = await runWrk({ ...base, seconds: DURATION, connections: 1 });
          const many = await runWrk({ ...base, seconds: DURATION, connections: CONNECTIONS });
          for (const r of [one, many]) {
            // A wrong answer stops the run; a rare socket error (a reset under load) is counted.
            if (r.badStatus > 0 || r.requests === 0 || r.errors > r.requests / 1000) {
              abort(`${name} (${revision.version}): ${r.errors} errors in ${r.requests} requests`);
            }
            socketErrors.set(name, (socketErrors.get(name) ?? 0) + r.errors);
          }
          cells.set(name, [
            ...(cells.get(name) ?? []),
            { p50Ms: one.p50Us / 1000, rps: many.requests / (many.durationUs / 1e6) },
          ]);
        }
      }
    } finally {
      await stop(floor);
      for (const [, weir] of throughWeir) await stop(weir);
      await stop(sdk);
    }
    const cell = (name: string): Cell => {
      const all = cells.get(name)!;
      return { p50Ms: median(all.map((c) => c.p50Ms)), rps: median(all.map((c) => c.rps)) };
    };
    for (const [name, n] of socketErrors) {
      if (n > 0) {
        notes.push(`${revision.version} ${name}: ${n} socket error(s) (under 0.1% of calls)`);
      }
    }
    const direct = cell("direct");
    const bare = cell("floor");
    for (const w of weirs) {
      const through = cell(w.label);
      const rpsRatio = through.rps / direct.rps;
      const p50Ratio = through.p50Ms / direct.p50Ms;
      const ok = rpsRatio >= THROUGHPUT_GOAL && p50Ratio <= P50_GOAL;
      if (w === weirs[0]) failed ||= !ok;
      lines.push(
        `| ${revision.version} | ${w.label} | ${direct.rps.toFixed(0)} | ` +
          `${through.rps.toFixed(0)} | ${rpsRatio.toFixed(2)}x | ${direct.p50Ms.toFixed(2)} | ` +
          `${through.p50Ms.toFixed(2)} | ${p50Ratio.toFixed(2)}x | ${ok ? "PASS" : "FAIL"} |`,
      );
      floorLines.push(
        `| ${revision.version} | ${w.label} | ${bare.rps.toFixed(0)} | ` +
          `${(bare.rps / direct.rps).toFixed(2)}x | ${bare.p50Ms.toFixed(2)} | ` +
          `${(bare.p50Ms / direct.p50Ms).toFixed(2)}x | ${
            (through.rps / bare.rps).toFixed(2)
          }x | ` +
          `${(through.p50Ms / bare.p50Ms).toFixed(2)}x |`,
      );
      if (w !== weirs[0]) {
        const mine = cell(weirs[0].label);
        notes.push(
          `${revision.version}: weir / ${w.label}: calls/s ${ratio(mine.rps, through.rps)}, ` +
            `p50 ${ratio(mine.p50Ms, through.p50Ms)}`,
        );
      }
    }
  }
  console.log(
    "| revision | weir | direct calls/s | weir calls/s | throughput | direct p50 ms | weir p50 ms | p50 | goals |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---|");
  for (const line of lines) console.log(line);
  console.log(
    "\nthe hop floor (bench/servers/hop_floor.ts: Deno.serve forwarding with weir's HTTP/1.1 " +
      "client, no checks), same rounds:",
  );
  console.log(
    "| revision | weir | floor calls/s | floor throughput | floor p50 ms | floor p50 | weir/floor calls/s | weir/floor p50 |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|");
  for (const line of floorLines) console.log(line);
  console.log(
    `goals (issue 20): throughput >= ${THROUGHPUT_GOAL}x direct and p50 <= ${P50_GOAL}x direct; ` +
      `published figures for other gateways in front of an MCP server: about 0.37-0.40x direct`,
  );
  for (const note of notes) console.log(note);
  if (failed) Deno.exitCode = 1;
}

await main();
