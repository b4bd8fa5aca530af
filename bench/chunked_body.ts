/**
 * Fragmented-body benchmark (issue 22, kind 18): what one client sending a
 * valid JSON body as HTTP/1.1 chunks of 1 byte, in small socket writes, costs
 * the server, while a legitimate client measures `/healthz` and `tools/call`.
 *
 * Targets, each a fresh process:
 * - `weir`: the shipped CLI, `weir serve FILE --http 127.0.0.1:0` with
 *   default flags, a local upstream behind its one tool;
 * - `array-buffer`, `iterate`, `weir-reader`: a bare `Deno.serve` reading the
 *   body with `request.arrayBuffer()`, with `for await` over `request.body`,
 *   or with weir's `readBody` (bench/servers/chunked_reader.ts), for what the
 *   runtime itself costs.
 *
 * Per target (a fresh process for the baseline and for each run): a baseline
 * of the legitimate client alone (`--probes` probes,
 * `/healthz` and, on weir, `tools/call` in turn, one every `--probe-every`
 * ms), then for each size in `--sizes` (KiB) one attacking connection sends a
 * `tools/call` padded to that size in 1-byte chunks, `--per-write` chunks per
 * socket write, while the legitimate client keeps probing. Printed per run:
 * the attacker's answer (status, rule) and how long after its last byte it
 * came (or that none came within `--timeout` s), the CPU the server spent, and
 * the probes' p50 / p99 / max latency beside the baseline's. Then one
 * legitimate fragmented body: `--legit-kib` KiB in `--legit-chunk`-byte chunks.
 * Once a size gets no answer, the larger ones of that target are skipped.
 *
 * Usage: `deno run -A bench/chunked_body.ts [--targets weir,array-buffer,iterate,weir-reader]
 * [--sizes 64,256,1024] [--per-write 16] [--probe-every 5] [--probes 100]
 * [--timeout 30] [--legit-kib 1024] [--legit-chunk 128] [--weir-dir DIR]`, where
 * `--weir-dir` runs the `weir` target from another checkout (e.g. a worktree of
 * an older commit, for a before/after comparison). Linux only (`/proc`).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { clockTicks, cpuSeconds } from "./proc.ts";
import {
  benchArgs,
  killAll,
  killAllOnInterrupt,
  positiveFlag,
  scratchDir,
  track,
} from "./common.ts";

const { values: flags } = benchArgs("usage: see the comment at the top of bench/chunked_body.ts", {
  args: Deno.args,
  options: {
    targets: { type: "string", default: "weir,array-buffer,iterate,weir-reader" },
    sizes: { type: "string", default: "64,256,1024" },
    "per-write": { type: "string", default: "16" },
    "probe-every": { type: "string", default: "5" },
    probes: { type: "string", default: "100" },
    timeout: { type: "string", default: "30" },
    "legit-kib": { type: "string", default: "1024" },
    "legit-chunk": { type: "string", default: "128" },
    "weir-dir": { type: "string" },
  },
});
const TARGETS = flags.targets.split(",");
const SIZES = flags.sizes.split(",").map(Number);
const PER_WRITE = positiveFlag(flags, "per-write");
const PROBE_EVERY = positiveFlag(flags, "probe-every");
const PROBES = positiveFlag(flags, "probes");
const TIMEOUT_MS = positiveFlag(flags, "timeout") * 1000;
const LEGIT_KIB = positiveFlag(flags, "legit-kib");
const LEGIT_CHUNK = positiveFlag(flags, "legit-chunk");
const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** The checkout whose `cli.ts` the `weir` target runs (another one: a before/after comparison). */
const WEIR_DIR = flags["weir-dir"] ? `${flags["weir-dir"].replace(/\/$/, "")}/` : ROOT;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
killAllOnInterrupt();
const ticks = await clockTicks();

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A `tools/call` of get_thing, padded with spaces to exactly `size` bytes. */
export function paddedCall(size: number): Uint8Array {
  const text = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "get_thing", arguments: { id: "t-1" }, _meta: META },
  });
  const bytes = new Uint8Array(Math.max(size, text.length)).fill(0x20);
  bytes.set(encoder.encode(text.slice(0, -1)));
  bytes[bytes.length - 1] = 0x7d; // the closing brace last
  return bytes;
}

interface Target {
  name: string;
  port: number;
  pid: number;
  mcp: boolean;
  stop(): Promise<void>;
}

/** Read a child's stderr (or stdout) until `pattern` matches; the match's first group. */
async function waitFor(stream: ReadableStream<Uint8Array>, pattern: RegExp): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (true) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`exited before ${pattern}: ${text}`);
    text += decoder.decode(value);
    const m = pattern.exec(text);
    if (m) {
      reader.releaseLock();
      stream.pipeTo(new WritableStream()).catch(() => {});
      return m[1];
    }
  }
}

async function start(name: string, upstreamPort: number, guardfile: string): Promise<Target> {
  const weir = name === "weir";
  const args = weir
    ? ["run", "--quiet", "-A", `${WEIR_DIR}cli.ts`, "serve", guardfile, "--http", "127.0.0.1:0"]
    : [
      "run",
      "--quiet",
      "-A",
      `${ROOT}bench/servers/chunked_reader.ts`,
      name === "weir-reader" ? "weir" : name,
    ];
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: weir ? { WEIR_LOG_LEVEL: "error" } : {},
  }).spawn();
  track(child);
  const port = Number(
    weir
      ? await waitFor(child.stderr, /"addr":"127\.0\.0\.1:(\d+)"/)
      : await waitFor(child.stdout, /listening (\d+)/),
  );
  if (weir) child.stdout.pipeTo(new WritableStream()).catch(() => {});
  else child.stderr.pipeTo(new WritableStream()).catch(() => {});
  void upstreamPort;
  return {
    name,
    port,
    pid: child.pid,
    mcp: weir,
    stop: async () => {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}

/** One probe: GET /healthz or a small tools/call on a fresh connection; ms, or NaN on failure. */
async function probe(target: Target, kind: "healthz" | "call"): Promise<number> {
  const started = performance.now();
  try {
    const response = kind === "healthz"
      ? await fetch(`http://127.0.0.1:${target.port}/healthz`, {
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
      : await fetch(`http://127.0.0.1:${target.port}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "get_thing",
        },
        body: decoder.decode(paddedCall(0)),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    const text = await response.text();
    if (response.status !== 200 || (kind === "call" && !text.includes("a thing"))) return NaN;
    return performance.now() - started;
  } catch {
    return NaN;
  }
}

/** Probe until `stop` resolves (or `count` probes when given); latencies in ms. */
async function probing(target: Target, stop: Promise<unknown>, count = Infinity) {
  let done = false;
  stop.then(() => (done = true));
  const healthz: number[] = [];
  const call: number[] = [];
  for (let i = 0; !done && i < count; i++) {
    const kind = target.mcp && i % 2 === 1 ? "call" : "healthz";
    (kind === "call" ? call : healthz).push(await probe(target, kind));
    await new Promise((r) => setTimeout(r, PROBE_EVERY));
  }
  return { healthz, call };
}

/** What the attacking connection saw (bench/chunked_attacker.ts). */
interface Sent {
  status: number;
  rule: string;
  /** ms from the first byte sent to the answer (NaN: none). */
  answeredMs: number;
  /** ms from the last byte written (or the write that failed) to the answer. */
  afterSendMs: number;
  bytesSent: number;
}

/**
 * Send `kib` KiB as `chunk`-byte chunks from a worker: its own thread and
 * event loop, so the attacker's many small writes never delay the probes.
 */
function sendChunked(port: number, kib: number, chunk: number): Promise<Sent> {
  const worker = new Worker(new URL("./chunked_attacker.ts", import.meta.url), { type: "module" });
  return new Promise<Sent>((resolve, reject) => {
    worker.onmessage = (event) => {
      worker.terminate();
      resolve(event.data as Sent);
    };
    worker.onerror = (event) => {
      worker.terminate();
      reject(new Error(event.message));
    };
    worker.postMessage({ port, kib, chunk, perWrite: PER_WRITE, timeoutMs: TIMEOUT_MS });
  });
}

const pct = (xs: number[], p: number) => {
  const ok = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return ok.length ? ok[Math.min(ok.length - 1, Math.floor(ok.length * p))] : NaN;
};
const fmt = (n: number) => (Number.isNaN(n) ? "-" : n < 10 ? n.toFixed(1) : n.toFixed(0));
const failed = (xs: number[]) => xs.filter(Number.isNaN).length;
const line = (label: string, xs: number[], base: number[]) =>
  `${label} p50 ${fmt(pct(xs, 0.5))} p99 ${fmt(pct(xs, 0.99))} max ${fmt(pct(xs, 1))} ms` +
  ` (baseline p99 ${fmt(pct(base, 0.99))}; x${(pct(xs, 0.99) / pct(base, 0.99)).toFixed(1)})` +
  (failed(xs) ? `, ${failed(xs)} unanswered` : "");

const upstream = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  () => Response.json({ id: "t-1", title: "a thing" }),
);
const guardfile = `${await scratchDir("weir-bench-chunked-")}/bench.mcp.kdl`;
await Deno.writeTextFile(
  guardfile,
  `wrap ward mcp bench {\n  base-url "http://127.0.0.1:${upstream.addr.port}"\n  auth none\n` +
    `  can get thing { path "/things/{id}"; }\n}\n`,
);

console.log(
  `weir fragmented-body benchmark (Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} ` +
    `CPUs): 1-byte chunks, ${PER_WRITE} per socket write; a probe every ${PROBE_EVERY} ms`,
);
try {
  for (const name of TARGETS) {
    // Each run gets a fresh server process: a run that stalls one cannot slow the next.
    let target = await start(name, upstream.addr.port, guardfile);
    await probing(target, new Promise(() => {}), 10); // warm-up
    const base = await probing(target, new Promise(() => {}), PROBES);
    await target.stop();
    console.log(
      `\n${name}: baseline ${line("/healthz", base.healthz, base.healthz)}` +
        (target.mcp ? `; ${line("tools/call", base.call, base.call)}` : ""),
    );
    const runs: [string, number, number][] = [
      ...SIZES.map((kib) => [`${kib} KiB in 1-byte chunks`, kib, 1] as [string, number, number]),
      [`${LEGIT_KIB} KiB in ${LEGIT_CHUNK}-byte chunks`, LEGIT_KIB, LEGIT_CHUNK],
    ];
    let unanswered = false;
    for (const [label, kib, chunk] of runs) {
      if (unanswered && chunk === 1) {
        console.log(`  ${label}: skipped (a smaller body got no answer)`);
        continue;
      }
      target = await start(name, upstream.addr.port, guardfile);
      try {
        await probing(target, new Promise(() => {}), 10); // warm-up
        const cpuBefore = cpuSeconds(target.pid, ticks);
        const attack = sendChunked(target.port, kib, chunk);
        const meanwhile = await probing(target, attack);
        const sent = await attack;
        const cpu = cpuSeconds(target.pid, ticks) - cpuBefore;
        if (sent.status === 0) unanswered = true;
        const outcome = sent.status === 0
          ? `no answer within ${TIMEOUT_MS / 1000} s (${
            (sent.bytesSent / 1024).toFixed(0)
          } KiB sent)`
          : `${sent.status}${sent.rule ? ` ${sent.rule}` : ""} ${fmt(sent.afterSendMs)} ms after ` +
            `its last byte (${fmt(sent.answeredMs)} ms from its first; ` +
            `${(sent.bytesSent / 1024).toFixed(0)} KiB sent)`;
        console.log(`  ${label}: ${outcome}; server CPU ${cpu.toFixed(2)} s`);
        console.log(`    meanwhile ${line("/healthz", meanwhile.healthz, base.healthz)}`);
        if (target.mcp) {
          console.log(`    meanwhile ${line("tools/call", meanwhile.call, base.call)}`);
        }
      } finally {
        await target.stop();
      }
    }
  }
} finally {
  killAll();
  await upstream.shutdown();
}
