/**
 * `put_object` of a 1 MiB image through `weir serve-s3` (issue 12): upload
 * throughput and weir's memory, against a baseline in the same run.
 *
 * One s3rver (npm, real S3 protocol) on 127.0.0.1 takes every upload. The
 * rows, each COUNT sequential uploads of the same 1 MiB image after 3
 * warm-up uploads:
 *
 * - `direct`: the baseline, `bench/servers/s3_direct.ts`: a plain Deno
 *   process signing each PUT with aws4fetch and sending the raw bytes (run
 *   before and after weir; the faster run is the baseline);
 * - `weir /api`: `weir serve-s3 --http`, `POST /api/put_object` with the
 *   image base64-encoded in JSON (what an HTTP tool client sends);
 * - `weir /mcp`: the same through MCP `tools/call` (2026-07-28, stateless).
 *
 * For each: uploads per second, MiB/s of image bytes, and the process's peak
 * RSS (`VmHWM`, /proc) and its RSS before the first upload; then weir's
 * ratios to the baseline. Usage: `deno task bench:s3 [--count 40]`. Linux only.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { benchArgs, killAllOnInterrupt, scratchDir, track } from "./common.ts";
import S3rver from "s3rver";
import { peakRssBytes } from "./proc.ts";

const { values: flags } = benchArgs("usage: see the comment at the top of bench/s3_put.ts", {
  args: Deno.args,
  options: { count: { type: "string", default: "40" } },
});
const COUNT = Number(flags.count);
if (!Number.isInteger(COUNT) || COUNT < 1) {
  console.error(`--count must be a positive integer, got ${flags.count}`);
  Deno.exit(2);
}
const HERE = fileURLToPath(new URL(".", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MIB = 1024 * 1024;
const BUCKET = "bench-assets";
// s3rver knows one access key id, S3RVER, and does not check the signature.
const ENV = {
  AWS_ACCESS_KEY_ID: "S3RVER",
  AWS_SECRET_ACCESS_KEY: "weir-bench-secret-not-checked-by-s3rver",
};

killAllOnInterrupt();
const scratch = await scratchDir("weir-bench-s3-");
const directory = `${scratch}/s3rver`;
await Deno.mkdir(directory);
const s3 = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: BUCKET }],
});
const { port } = await s3.run() as { port: number };
const endpoint = `http://127.0.0.1:${port}`;
const policy = `${scratch}/policy.mcp.kdl`;
await Deno.writeTextFile(
  policy,
  `wrap ward mcp aws s3 {
    bucket "${BUCKET}"
    base-url "https://files.example.com"
    prefix "bench"
    max-bytes ${MIB}
    content-type "image/png"
    can put object
}`,
);

/** `size` bytes that start with the PNG signature (the publisher checks it). */
function pngLike(size: number): Uint8Array {
  const bytes = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

interface Row {
  name: string;
  seconds: number;
  idleRss: number;
  peakRss: number;
}

const rssNow = (pid: number) => {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) * 1024 : NaN;
};

async function direct(): Promise<Row> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      `${ROOT}deno.json`,
      `${HERE}servers/s3_direct.ts`,
      endpoint,
      BUCKET,
      String(MIB),
      String(COUNT),
    ],
    env: ENV,
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  track(child);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    out += value;
  }
  const peak = peakRssBytes(child.pid);
  await child.stdin.close();
  reader.releaseLock();
  await child.stdout.cancel().catch(() => {});
  await child.status;
  return {
    name: "direct (aws4fetch)",
    seconds: JSON.parse(out).seconds,
    idleRss: NaN,
    peakRss: peak,
  };
}

async function weir(): Promise<Row[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}cli.ts`,
      "serve-s3",
      policy,
      "--http",
      "127.0.0.1:0",
      "--log-level",
      "warn",
    ],
    env: { ...ENV, AWS_ENDPOINT_URL_S3: endpoint },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  track(child);
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let err = "";
  let url = "";
  for (let i = 0; i < 400 && !url; i++) {
    const { done, value } = await reader.read();
    if (done) break;
    err += value;
    url = /"mcp":"(http:\/\/[^"]+)\/mcp"/.exec(err)?.[1] ?? "";
  }
  if (!url) throw new Error(`weir serve-s3 did not start:\n${err}`);
  const drain = (async () => {
    while (!(await reader.read()).done) { /* keep stderr flowing */ }
  })();
  const image = pngLike(MIB).toBase64();
  const args = (i: number) => ({
    key: `img/${i}.png`,
    content_base64: image,
    content_type: "image/png",
  });
  const viaApi = async (i: number) => {
    const res = await fetch(`${url}/api/put_object`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args(i)),
    });
    const text = await res.text();
    if (res.status !== 200) {
      throw new Error(`/api/put_object answered ${res.status}: ${text.slice(0, 200)}`);
    }
  };
  const viaMcp = async (i: number) => {
    const res = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "put_object",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: {
          name: "put_object",
          arguments: args(i),
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    const body = await res.json();
    if (res.status !== 200 || body.result?.isError) {
      throw new Error(`tools/call answered ${res.status}: ${JSON.stringify(body).slice(0, 200)}`);
    }
  };
  const rows: Row[] = [];
  const idle = rssNow(child.pid);
  for (
    const [name, call] of [["weir /api/put_object", viaApi], [
      "weir /mcp tools/call",
      viaMcp,
    ]] as const
  ) {
    for (let i = 0; i < 3; i++) await call(i);
    const started = performance.now();
    for (let i = 0; i < COUNT; i++) await call(i);
    rows.push({
      name,
      seconds: (performance.now() - started) / 1000,
      idleRss: idle,
      peakRss: peakRssBytes(child.pid),
    });
  }
  child.kill("SIGTERM");
  await child.status;
  await drain;
  return rows;
}

try {
  // The baseline runs before and after weir (s3rver warms up over the run);
  // the faster of the two is the one weir is compared with.
  const first = await direct();
  const weirRows = await weir();
  const last = await direct();
  last.name = "direct, again";
  const rows = [first, ...weirRows, last];
  const mib = (n: number) => Number.isFinite(n) ? `${(n / MIB).toFixed(1)} MiB` : "-";
  console.log(
    `put_object of a 1 MiB image, ${COUNT} sequential uploads per row, s3rver on 127.0.0.1\n`,
  );
  console.log("row                       uploads/s   MiB/s   RSS before   peak RSS");
  for (const r of rows) {
    const rate = COUNT / r.seconds;
    console.log(
      `${r.name.padEnd(24)} ${rate.toFixed(1).padStart(9)} ${rate.toFixed(1).padStart(7)} ` +
        `${mib(r.idleRss).padStart(12)} ${mib(r.peakRss).padStart(10)}`,
    );
  }
  const base = first.seconds <= last.seconds ? first : last;
  console.log("");
  for (const r of weirRows) {
    console.log(
      `${r.name}: throughput ${(base.seconds / r.seconds).toFixed(2)}x the direct baseline, ` +
        `peak RSS ${(r.peakRss / base.peakRss).toFixed(2)}x`,
    );
  }
} finally {
  await s3.close();
}
