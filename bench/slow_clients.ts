/**
 * Slow-client benchmark (issue 10, item 3): how `weir serve --http` holds up
 * while many clients hold unfinished request bodies.
 *
 * In one run it starts a local upstream and `weir serve` (the real CLI, with
 * `--max-concurrent` raised past the slow-client count and `--body-timeout`
 * past the run, so every slow client is held for the whole measurement), then:
 *
 * 1. baseline: a legitimate client sends `--calls` sequential `tools/call`
 *    requests over one keep-alive connection; p50/p99 latency and weir's RSS;
 * 2. opens `--slow` connections, each declaring a `Content-Length` of 1 MiB
 *    (the body cap) and sending all but the last byte, then holding; weir's RSS
 *    once they are all in (RSS per held body = the growth / `--slow`);
 * 3. the legitimate client again, with the slow clients held; p50/p99 and the
 *    ratio to the baseline of the same run.
 *
 * With `--drip`, step 2 is a drip instead: each slow client declares 1 MiB
 * and sends `--drip-bytes` (1000) every `--drip-every` ms (50) for
 * `--drip-seconds` (10), then holds; RSS per client is printed beside the
 * bytes it sent (the amplification a reader that keeps one buffer per read
 * suffers; `--body-timeout` is raised past the run as for held bodies).
 *
 * Usage: `deno run -A bench/slow_clients.ts [--slow 2000] [--calls 400]
 * [--held-bytes 1048575] [--drip [--drip-bytes 1000] [--drip-every 50]
 * [--drip-seconds 10]]`. Linux only (`/proc`). Memory: about `--slow` x
 * 1.2 MiB for weir, briefly.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { benchArgs, killAllOnInterrupt, scratchDir, track } from "./common.ts";

const { values: flags } = benchArgs("usage: see the comment at the top of bench/slow_clients.ts", {
  args: Deno.args,
  options: {
    slow: { type: "string", default: "2000" },
    calls: { type: "string", default: "400" },
    "held-bytes": { type: "string", default: String(1024 * 1024 - 1) },
    drip: { type: "boolean", default: false },
    "drip-bytes": { type: "string", default: "1000" },
    "drip-every": { type: "string", default: "50" },
    "drip-seconds": { type: "string", default: "10" },
  },
});
const DRIP = flags.drip
  ? {
    bytes: Number(flags["drip-bytes"]),
    every: Number(flags["drip-every"]),
    seconds: Number(flags["drip-seconds"]),
  }
  : undefined;
const SLOW = Number(flags.slow);
const CALLS = Number(flags.calls);
const HELD = Number(flags["held-bytes"]);
const CAP = 1024 * 1024;
const ROOT = fileURLToPath(new URL("../", import.meta.url));

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) * 1024 : NaN;
}

const upstream = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  () => Response.json({ id: "t-1", title: "a thing" }),
);
killAllOnInterrupt();
const guardfile = `${await scratchDir("weir-bench-slow-")}/bench.mcp.kdl`;
await Deno.writeTextFile(
  guardfile,
  `wrap ward mcp bench {\n  base-url "http://127.0.0.1:${upstream.addr.port}"\n  auth none\n` +
    `  can get thing { path "/things/{id}"; }\n}\n`,
);
const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--quiet",
    "-A",
    `${ROOT}cli.ts`,
    "serve",
    guardfile,
    "--http",
    "127.0.0.1:0",
    "--max-concurrent",
    String(SLOW + 100),
    "--body-timeout",
    "0",
    "--log-level",
    "error",
  ],
  stdout: "null",
  stderr: "piped",
}).spawn();
track(child);
const reader = child.stderr.getReader();
let err = "";
let port = 0;
while (!port) {
  const { done, value } = await reader.read();
  if (done) throw new Error(`weir did not start: ${err}`);
  err += new TextDecoder().decode(value);
  port = Number(/"addr":"127\.0\.0\.1:(\d+)"/.exec(err)?.[1] ?? 0);
}
reader.releaseLock();
child.stderr.cancel().catch(() => {});

const encoder = new TextEncoder();
const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: {
    name: "get_thing",
    arguments: { id: "t-1" },
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});
const legitRequest = encoder.encode(
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n` +
    `Mcp-Name: get_thing\r\nContent-Length: ${encoder.encode(body).length}\r\n\r\n${body}`,
);

/** `CALLS` sequential tools/call over one keep-alive connection; latencies in ms, sorted. */
async function legit(): Promise<number[]> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const buf = new Uint8Array(65536);
  const times: number[] = [];
  try {
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      await conn.write(legitRequest);
      let text = "";
      while (true) {
        const n = await conn.read(buf);
        if (n === null) throw new Error("weir closed the legitimate connection");
        text += new TextDecoder().decode(buf.subarray(0, n));
        const end = text.indexOf("\r\n\r\n");
        const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? -1);
        if (end !== -1 && length >= 0 && text.length >= end + 4 + length) break;
      }
      if (!text.startsWith("HTTP/1.1 200") || !text.includes("a thing")) {
        throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
      }
      times.push(performance.now() - start);
    }
  } finally {
    conn.close();
  }
  return times.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const settle = () => new Promise((r) => setTimeout(r, 1500));

await legit(); // warm-up
const base = await legit();
await settle();
const rssBase = rssBytes(child.pid);

const held: Deno.Conn[] = [];
const filler = new Uint8Array(HELD).fill(0x20);
const head = encoder.encode(
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${CAP}\r\n\r\n`,
);
const openedAt = performance.now();
let sentEach = HELD;
for (let i = 0; i < SLOW; i++) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(head);
  if (!DRIP) {
    for (let o = 0; o < filler.length; o += 65536) {
      await conn.write(filler.subarray(o, Math.min(o + 65536, filler.length)));
    }
  }
  held.push(conn);
}
if (DRIP) {
  // Every client sends a piece each period, in turn, for the drip's duration.
  const piece = filler.subarray(0, DRIP.bytes);
  const until = performance.now() + DRIP.seconds * 1000;
  sentEach = 0;
  while (performance.now() < until && sentEach + DRIP.bytes < CAP) {
    const round = performance.now();
    for (const conn of held) await conn.write(piece);
    sentEach += DRIP.bytes;
    await new Promise((r) => setTimeout(r, Math.max(0, DRIP.every - (performance.now() - round))));
  }
}
const openMs = performance.now() - openedAt;
// weir may still be reading what was sent: wait until its RSS stops growing
// (three samples 1 s apart within 1 %, at most 120 s).
let rssHeld = rssBytes(child.pid);
for (let stable = 0, i = 0; stable < 3 && i < 120; i++) {
  await new Promise((r) => setTimeout(r, 1000));
  const now = rssBytes(child.pid);
  stable = Math.abs(now - rssHeld) < rssHeld * 0.01 ? stable + 1 : 0;
  rssHeld = now;
}
const loaded = await legit();
const rssAfter = rssBytes(child.pid);

for (const conn of held) conn.close();
child.kill("SIGTERM");
await child.status;
await upstream.shutdown();

const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
const ms = (n: number) => n.toFixed(2);
console.log(
  `weir slow-client benchmark (Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} CPUs)`,
);
console.log(
  `legit tools/call, ${CALLS} sequential calls on one connection:`,
);
console.log(
  `  baseline:               p50 ${ms(pct(base, 0.5))} ms  p99 ${ms(pct(base, 0.99))} ms`,
);
console.log(
  `  with ${SLOW} slow held: p50 ${ms(pct(loaded, 0.5))} ms  p99 ${ms(pct(loaded, 0.99))} ms` +
    `  (p99 x${(pct(loaded, 0.99) / pct(base, 0.99)).toFixed(2)} of baseline)`,
);
console.log(
  `slow clients: ${SLOW}, each ${sentEach} of ${CAP} declared body bytes sent` +
    (DRIP ? ` (${DRIP.bytes} every ${DRIP.every} ms)` : "") +
    `, then held (opened${DRIP ? " and dripped" : ""} in ${(openMs / 1000).toFixed(1)} s)`,
);
console.log(
  `weir RSS: ${mib(rssBase)} MiB before, ${mib(rssHeld)} MiB held, ${
    mib(rssAfter)
  } MiB after the ` +
    `loaded run`,
);
const perBody = (rss: number) => ((rss - rssBase) / SLOW / 1024 / 1024).toFixed(2);
if (DRIP) {
  const each = Math.max(rssHeld, rssAfter) - rssBase;
  console.log(
    `RSS per dripping client: ${perBody(Math.max(rssHeld, rssAfter))} MiB for ${
      (sentEach / 1024).toFixed(0)
    } KiB sent (x${(each / SLOW / sentEach).toFixed(1)} the bytes sent)`,
  );
} else {
  console.log(
    `RSS per held body: ${perBody(Math.max(rssHeld, rssAfter))} MiB (${
      perBody(rssHeld)
    } at the first stable reading; goal <= 1.10 MiB at the 1 MiB cap)`,
  );
}
