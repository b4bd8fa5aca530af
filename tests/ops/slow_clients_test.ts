/**
 * Slow and heavy clients through the real CLI: a body that does not arrive
 * within --body-timeout is 408 and its request slot is freed; past
 * --max-concurrent, 503 with Retry-After (liveness exempt). Each refusal has
 * its audit line.
 *
 * Not asserted, because it does not hold (measured on Deno 2.9.6): that the
 * socket closes after the 408. While a body read is pending, Deno.serve keeps
 * the connection until the client sends the rest or closes; the README's
 * reverse-proxy notes cover it.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

const guardfile = (upstream: string) =>
  tempGuardfile(
    `wrap ward mcp slow {\n  base-url "${upstream}"\n  auth none\n  can get thing { path "/t/{id}"; }\n}\n`,
  );

/** Send `head` and the first bytes of a body, then wait for whatever comes back. */
async function drip(url: string, head: string, first: string, waitMs: number) {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const started = Date.now();
  try {
    await conn.write(new TextEncoder().encode(head + first));
    const buf = new Uint8Array(4096);
    let text = "";
    let closed = false;
    const until = Date.now() + waitMs;
    while (Date.now() < until) {
      const n = await Promise.race([
        conn.read(buf).catch(() => null),
        new Promise<"wait">((r) => setTimeout(() => r("wait"), until - Date.now())),
      ]);
      if (n === "wait") break;
      if (n === null) {
        closed = true;
        break;
      }
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return { text, closed, ms: Date.now() - started };
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

Deno.test("a body slower than --body-timeout: 408, its slot freed, audit line", async () => {
  const upstream = await startRecorder();
  const server = await serveHttp(await guardfile(upstream.url), {
    extra: ["--body-timeout", "400", "--max-concurrent", "1"],
  });
  const { host } = new URL(server.url);
  try {
    for (
      const head of [
        `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
        `Content-Length: 200000\r\n\r\n`,
        `POST /api/get_thing HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
        `Content-Length: 100\r\n\r\n`,
        `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n`,
        // A small declared body: read in one call, under withinDeadline.
        `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
        `Content-Length: 100\r\n\r\n`,
      ]
    ) {
      const first = head.includes("chunked") ? '5\r\n{"a":\r\n' : '{"jsonrpc":';
      const r = await drip(server.url, head, first, 1500);
      assert.match(r.text, /^HTTP\/1\.1 408/, r.text);
      assert.match(r.text, /did not arrive within 400 ms/);
      assert.match(r.text, /connection: close/i);
      assert.ok(r.ms >= 350, `not before the deadline (${r.ms} ms)`);
      const ok = await fetch(`${server.url}/api/get_thing`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "x" }),
      });
      assert.equal(ok.status, 200, "the slow client no longer holds the only slot");
      await ok.body?.cancel();
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
  const lines = server.stderr().split("\n").filter((l) => l.includes('"rule":"deadline"'));
  assert.equal(lines.length, 4, server.stderr());
  assert.match(lines[0], /"status":408/);
});

Deno.test("past --max-concurrent: 503 with Retry-After; /healthz still answers", async () => {
  const held: (() => void)[] = [];
  const upstream = await startRecorder(() =>
    new Promise<Response>((resolve) => held.push(() => resolve(Response.json({ ok: 1 }))))
  );
  const server = await serveHttp(await guardfile(upstream.url), {
    extra: ["--max-concurrent", "2"],
  });
  const call = () =>
    fetch(`${server.url}/api/get_thing`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "x" }),
    });
  try {
    const first = [call(), call()];
    for (let i = 0; i < 200 && upstream.requests.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const third = await call();
    assert.equal(third.status, 503);
    assert.equal(third.headers.get("retry-after"), "1");
    await third.body?.cancel();
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    held.splice(0).forEach((f) => f());
    for (const r of await Promise.all(first)) {
      assert.equal(r.status, 200);
      await r.body?.cancel();
    }
    const next = call();
    for (let i = 0; i < 200 && upstream.requests.length < 3; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    held.splice(0).forEach((f) => f());
    const after = await next;
    assert.equal(after.status, 200, "a slot frees once a call is answered");
    await after.body?.cancel();
  } finally {
    held.splice(0).forEach((f) => f());
    await server.stop();
    await upstream.close();
  }
  assert.match(server.stderr(), /"rule":"overload","status":503/);
});
