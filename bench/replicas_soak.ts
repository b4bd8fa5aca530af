/**
 * Soak behind a load balancer: three `weir serve` replicas (the CLI) behind a
 * real HAProxy that health-checks `GET /readyz`, with one redis-server and the
 * same state keys, under many distinct clients (each its own bearer token, so
 * its own caller identity, and its own connections).
 *
 * Prints:
 * 1. each replica's resident memory (VmRSS, from /proc) at start, middle and
 *    end of `--duration` seconds of load (stateless replicas stay flat; the
 *    ratio end/start is the figure);
 * 2. requests lost during a rolling restart under that load (SIGTERM each
 *    replica in turn, start it again), with `--shutdown-grace` as shipped in
 *    the chart against the baseline of no grace (what SIGTERM did before:
 *    the listener closed while the balancer still routed to it).
 *
 * The clients mix a guarded `tools/call` (each with new arguments), `tools/list`
 * paged with per-caller cursors, a confirmation asked (no answer: nothing is
 * kept for it) and a confirmation asked and answered on the next request
 * (its nonce spent in Redis).
 *
 * Usage: `deno run -A bench/replicas_soak.ts [--duration 60] [--warmup 20]
 * [--clients 64] [--grace 3000]`. Linux (/proc), haproxy and redis-server
 * (Debian packages).
 *
 * @module
 */
import { benchArgs, positiveFlag } from "./common.ts";
import { tempGuardfile } from "../tests/support/cli.ts";
import { startRecorder } from "../tests/support/upstream.ts";
import { haproxyBinary } from "../tests/support/haproxy.ts";
import { redisMissing, startRedis } from "../tests/support/redis.ts";
import { type Cluster, startCluster } from "../tests/support/replicas.ts";
import { ACCEPT, modernPost } from "../tests/support/modern_http.ts";

const { values } = benchArgs("usage: see the comment at the top of bench/replicas_soak.ts", {
  args: Deno.args,
  options: {
    duration: { type: "string", default: "60" },
    warmup: { type: "string", default: "20" },
    clients: { type: "string", default: "64" },
    grace: { type: "string", default: "3000" },
  },
});
const DURATION_S = positiveFlag(values, "duration");
const WARMUP_S = positiveFlag(values, "warmup");
const CLIENTS = positiveFlag(values, "clients");
const GRACE_MS = positiveFlag(values, "grace");

const haproxy = haproxyBinary();
const missing = "missing" in haproxy ? haproxy.missing : redisMissing();
if (missing) {
  console.error(`replicas_soak: cannot run: ${missing}`);
  Deno.exit(1);
}

const rssMiB = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1]) / 1024;

const TOKENS = Array.from({ length: CLIENTS }, (_, i) => `soak-client-${i}-${crypto.randomUUID()}`);
const KEYS = `soak-state-key-${crypto.randomUUID()}`;
const PAGED = 60;

/** Counts of one load phase. */
interface Tally {
  sent: number;
  failed: number;
  examples: string[];
}

/**
 * Run every client until `stop()` says so (bounded by a request cap too).
 * Each client has its own token and its own HTTP client (its own connections).
 */
function load(url: string, stop: () => boolean): { tally: Tally; done: Promise<void> } {
  const tally: Tally = { sent: 0, failed: 0, examples: [] };
  const fail = (what: string) => {
    tally.failed++;
    if (tally.examples.length < 5) tally.examples.push(what);
  };
  const client = async (c: number) => {
    const token = TOKENS[c];
    const http = Deno.createHttpClient({});
    const post = (method: string, params: Record<string, unknown>) =>
      modernPost(url, method, params, { token, client: http });
    let cursor: string | undefined;
    try {
      for (let i = 0; !stop() && i < 1_000_000; i++) {
        tally.sent++;
        try {
          const kind = i % 10;
          if (kind < 6) {
            const r = await post("tools/call", {
              name: "get_ticket",
              arguments: { id: `${c}-${i}` },
            });
            if (r.status !== 200 || r.error || r.result?.isError) fail(`call ${r.status}`);
          } else if (kind < 8) {
            const r = await post("tools/list", cursor ? { cursor } : {});
            if (r.status !== 200 || r.error) fail(`list ${r.status} ${r.error?.message}`);
            cursor = r.result?.nextCursor as string | undefined;
          } else {
            const id = `${c}-${i}`;
            const asked = await post("tools/call", { name: "delete_ticket", arguments: { id } });
            if (asked.result?.resultType !== "input_required") {
              fail(`ask ${asked.status}`);
              continue;
            }
            if (kind === 9) {
              tally.sent++;
              const ran = await post("tools/call", {
                name: "delete_ticket",
                arguments: { id },
                requestState: asked.result.requestState,
                inputResponses: ACCEPT,
              });
              if (ran.result?.resultType !== "complete" || ran.result.isError) {
                fail(
                  `answer ${ran.status} ${
                    JSON.stringify(ran.result ?? ran.error ?? null).slice(0, 100)
                  }`,
                );
              }
            }
          }
        } catch (error) {
          fail(`error: ${(error as Error).message.slice(0, 100)}`);
        }
      }
    } finally {
      http.close();
    }
  };
  return { tally, done: Promise.all(TOKENS.map((_, c) => client(c))).then(() => {}) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withCluster<T>(grace: number, run: (cluster: Cluster) => Promise<T>): Promise<T> {
  const redis = await startRedis();
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const file = await tempGuardfile(`confirm "delete_ticket" message="Delete it?"
wrap ward mcp soak {
    base-url "${upstream.url}"
    auth none
    can delete ticket { path "/tickets/{id}" }
    can get ticket { path "/tickets/{id}" }
${
    Array.from({ length: PAGED }, (_, i) =>
      `    can get item${String(i).padStart(3, "0")} { path "/items/${i}" }`)
      .join("\n")
  }
}
`);
  let cluster: Cluster | undefined;
  try {
    cluster = await startCluster({
      file,
      count: 3,
      env: { WEIR_STATE_KEYS: KEYS, REDIS_URL: redis.url, WEIR_TOKENS: TOKENS.join(",") },
      extra: [
        "--inbound-token-env",
        "WEIR_TOKENS",
        "--state-keys-env",
        "WEIR_STATE_KEYS",
        "--state-store-env",
        "REDIS_URL",
        "--shutdown-grace",
        String(grace),
        "--log-level",
        "warn",
      ],
    });
    return await run(cluster);
  } finally {
    await cluster?.close();
    await upstream.close();
    await redis.close();
    await Deno.remove(file);
  }
}

const mib = (n: number) => n.toFixed(1).padStart(6);

console.log(
  `soak: 3 replicas behind HAProxy, ${CLIENTS} clients (distinct tokens and connections), ` +
    `${DURATION_S} s of load, --shutdown-grace ${GRACE_MS}\n`,
);

// 1. Memory under sustained load.
await withCluster(GRACE_MS, async (cluster) => {
  // Warm-up: the same load, so the start figure is after the JIT, the caches and V8's heap
  // have grown to what this load needs (it grows for the first tens of thousands of requests,
  // with or without weir's signed state: measured against the code before it).
  let stopped = false;
  const warm = load(cluster.proxy.url, () => stopped);
  await sleep(WARMUP_S * 1000);
  stopped = true;
  await warm.done;
  const pids = cluster.replicas.map((r) => r.pid());
  const start = pids.map(rssMiB);
  let end = false;
  const started = performance.now();
  const run = load(cluster.proxy.url, () => end);
  await sleep((DURATION_S * 1000) / 2);
  const middle = pids.map(rssMiB);
  const middleSent = run.tally.sent;
  await sleep((DURATION_S * 1000) / 2);
  const last = pids.map(rssMiB);
  end = true;
  await run.done;
  const seconds = (performance.now() - started) / 1000;
  console.log("resident memory per replica (MiB, VmRSS) under load:");
  console.log(`(after ${WARMUP_S} s of the same load)`);
  console.log("replica   start  middle     end  end/start  end/middle");
  cluster.replicas.forEach((r, i) => {
    console.log(
      `${r.name.padEnd(7)} ${mib(start[i])}  ${mib(middle[i])}  ${mib(last[i])}  ${
        (last[i] / start[i]).toFixed(2).padStart(9)
      }  ${(last[i] / middle[i]).toFixed(2).padStart(10)}`,
    );
  });
  console.log(
    `requests: ${run.tally.sent} in ${seconds.toFixed(1)} s (${
      Math.round(run.tally.sent / seconds)
    }/s; ${middleSent} by the middle reading), ${run.tally.failed} failed` +
      (run.tally.examples.length ? ` e.g. ${run.tally.examples.join("; ")}` : ""),
  );
  const sessions = await cluster.proxy.sessions();
  console.log(`sent to each replica by HAProxy: ${JSON.stringify(sessions)}\n`);
});

// 2. Requests lost during a rolling restart under load: no grace (baseline) against the grace.
console.log(
  "requests lost during a rolling restart under load (SIGTERM each replica, start it again):",
);
for (const grace of [0, GRACE_MS]) {
  await withCluster(grace, async (cluster) => {
    let end = false;
    const run = load(cluster.proxy.url, () => end);
    await sleep(2_000);
    const codes: number[] = [];
    try {
      for (let i = 0; i < cluster.replicas.length; i++) codes.push(await cluster.restart(i));
      await sleep(1_000);
    } finally {
      end = true;
      await run.done;
    }
    console.log(
      `  --shutdown-grace ${
        String(grace).padStart(5)
      }: ${run.tally.failed} lost of ${run.tally.sent}` +
        ` (exit codes ${codes.join(",")})` +
        (run.tally.examples.length ? `; e.g. ${run.tally.examples.slice(0, 2).join("; ")}` : ""),
    );
  });
}
