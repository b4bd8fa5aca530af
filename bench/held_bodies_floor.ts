/**
 * What `Deno.serve` itself holds per unfinished request body, for the
 * slow-client benchmark's RSS-per-held-body figure (`bench/slow_clients.ts`)
 * to be read against: `bench/servers/held_bodies.ts` (a bare handler reading
 * each body into one buffer of its declared length, nothing else) while
 * `--slow` clients each declare a 1 MiB body, send all but its last byte and
 * hold. Prints the server's RSS growth per held body.
 *
 * Usage: `deno run -A bench/held_bodies_floor.ts [--slow 500]`. Linux only (`/proc`).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { benchArgs, freePort, killAllOnInterrupt, track } from "./common.ts";

const { values } = benchArgs("usage: see the comment at the top of bench/held_bodies_floor.ts", {
  args: Deno.args,
  options: { slow: { type: "string", default: "500" } },
});
const SLOW = Number(values.slow);
const CAP = 1024 * 1024;
const ROOT = fileURLToPath(new URL("../", import.meta.url));

const rssMiB = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1]) / 1024;

const port = freePort();
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "--quiet", "--allow-net", `${ROOT}bench/servers/held_bodies.ts`, String(port)],
  stdout: "piped",
  stderr: "inherit",
}).spawn();
track(child);
killAllOnInterrupt();
const out = child.stdout.getReader();
let announced = "";
while (!announced.includes("listening")) {
  const { done, value } = await out.read();
  if (done) throw new Error("the floor server did not start");
  announced += new TextDecoder().decode(value);
}
out.releaseLock();
child.stdout.cancel().catch(() => {});

const before = rssMiB(child.pid);
const head = new TextEncoder().encode(
  `POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: ${CAP}\r\n\r\n`,
);
const body = new Uint8Array(CAP - 1).fill(0x20);
const conns: Deno.Conn[] = [];
try {
  for (let i = 0; i < SLOW; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conns.push(conn);
    await conn.write(head);
    for (let o = 0; o < body.length;) o += await conn.write(body.subarray(o));
  }
  // Let the server take in what was sent (bounded wait, then read RSS).
  let last = 0;
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const now = rssMiB(child.pid);
    if (i > 5 && Math.abs(now - last) < 1) break;
    last = now;
  }
  const held = rssMiB(child.pid);
  console.log(
    `bare Deno.serve (bench/servers/held_bodies.ts), ${SLOW} clients each holding ` +
      `${CAP - 1} of ${CAP} declared body bytes:`,
  );
  console.log(`  RSS ${before.toFixed(1)} MiB before, ${held.toFixed(1)} MiB held`);
  console.log(`  RSS per held body: ${((held - before) / SLOW).toFixed(2)} MiB`);
} finally {
  for (const conn of conns) {
    try {
      conn.close();
    } catch { /* closed */ }
  }
  child.kill();
  await child.status;
}
