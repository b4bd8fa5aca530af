/**
 * Slow and heavy clients through the real CLI: a body that does not arrive
 * within --body-timeout is 408 and its request slot is freed; past
 * --max-concurrent, 503 with Retry-After (liveness exempt). Each refusal has
 * its audit line.
 *
 * The connection after a refusal, with a raw TCP client: a 413 closes it at
 * once; after a 408 it is closed (never kept alive for another request) when
 * the client sends more: at the next piece of a body over 64 KiB or chunked,
 * at the end of a smaller declared one; whether the client's bytes come at
 * once or long after the answer. Not asserted, because it does not hold
 * (measured on Deno 2.9.6): that a client going silent after the 408 loses
 * its socket. While a read of the body is pending Deno.serve offers no way to
 * drop the connection (and an erroring response then leaves it open for
 * good); the reverse-proxy notes in docs/operating.md cover it.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { GENEROUS_MS, sleep, until } from "../support/wait.ts";

const guardfile = (upstream: string) =>
  tempGuardfile(
    `wrap ward mcp slow {\n  base-url "${upstream}"\n  auth none\n  can get thing { path "/t/{id}"; }\n}\n`,
  );

/** The body of an HTTP/1.1 answer read so far: Content-Length or chunked (whole chunks only). */
function bodySoFar(text: string): string | undefined {
  const headEnd = text.indexOf("\r\n\r\n");
  if (headEnd < 0) return undefined;
  const answerHead = text.slice(0, headEnd);
  let rest = text.slice(headEnd + 4);
  if (!/\r\ntransfer-encoding: *chunked/i.test(answerHead)) return rest;
  let body = "";
  for (let m; (m = /^([0-9a-f]+)\r\n/i.exec(rest)) !== null;) {
    const size = parseInt(m[1], 16);
    const chunk = rest.slice(m[0].length, m[0].length + size);
    if (size === 0 || chunk.length < size) break;
    body += chunk;
    rest = rest.slice(m[0].length + size + 2);
  }
  return body;
}

/**
 * Send `head` and the first bytes of a body, then read until the answer's JSON body is whole,
 * the connection closes, or `waitMs` passes (a bound against a hang, not a timing assertion;
 * weir may keep the connection while the client's body is unfinished, so the read ends on the
 * answer itself). `ms`: from before the write to the answer.
 */
async function drip(url: string, head: string, first: string, waitMs = GENEROUS_MS) {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const started = Date.now();
  try {
    await conn.write(new TextEncoder().encode(head + first));
    const buf = new Uint8Array(4096);
    let text = "";
    let closed = false;
    const end = Date.now() + waitMs;
    const complete = () => {
      try {
        JSON.parse(bodySoFar(text) ?? "");
        return true;
      } catch {
        return false;
      }
    };
    while (Date.now() < end && !complete()) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const n = await Promise.race([
        conn.read(buf).catch(() => null),
        new Promise<"wait">((r) => timer = setTimeout(() => r("wait"), end - Date.now())),
      ]);
      clearTimeout(timer);
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
      const r = await drip(server.url, head, first);
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
    await until(() => upstream.requests.length >= 2);
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
    await until(() => upstream.requests.length >= 3);
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

/**
 * Write `head` + `first`, then (once the answer's head is in, and `pauseMs`
 * later) `rest`; read until EOF or `waitMs`. Bounded in time; 127.0.0.1 only.
 */
async function exchangeRaw(
  url: string,
  head: string,
  first: Uint8Array,
  rest: Uint8Array | null,
  pauseMs = 0,
  waitMs = GENEROUS_MS, // a bound against a hang: the read ends at the close
) {
  const { port } = new URL(url);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  const encoder = new TextEncoder();
  const started = Date.now();
  let text = "";
  let eofMs = -1;
  let answeredMs = -1;
  try {
    await conn.write(encoder.encode(head));
    await conn.write(first).catch(() => {}); // weir may close before taking it all
    const buf = new Uint8Array(65536);
    const end = started + waitMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    while (Date.now() < end) {
      const n = await Promise.race([
        conn.read(buf).catch(() => null),
        new Promise<"wait">((r) => timer = setTimeout(() => r("wait"), end - Date.now())),
      ]);
      clearTimeout(timer);
      if (n === "wait") break;
      if (n === null) {
        eofMs = Date.now() - started;
        break;
      }
      text += new TextDecoder().decode(buf.subarray(0, n));
      if (answeredMs < 0 && text.includes("\r\n\r\n")) {
        answeredMs = Date.now() - started;
        if (pauseMs > 0) await sleep(pauseMs);
        if (rest) await conn.write(rest).catch(() => {});
      }
    }
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
  return { text, eofMs, answeredMs };
}

Deno.test("after a 408 the connection ends with the client's body; a 413 ends it at once", async () => {
  const upstream = await startRecorder();
  const server = await serveHttp(await guardfile(upstream.url), {
    extra: ["--body-timeout", "400"],
  });
  const { host } = new URL(server.url);
  const encoder = new TextEncoder();
  const head = (framing: string, path = "/mcp") =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json\r\n${framing}\r\n\r\n`;
  // A well-formed request the client could try to slip in after its body:
  // the connection must not be kept alive to answer it.
  const another = `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
  let deadlines = 0;
  try {
    const late = [
      { framing: "Content-Length: 200000", first: "{", rest: " ".repeat(199_999) },
      { framing: "Content-Length: 100", first: "{", rest: " ".repeat(99) },
      { framing: "Content-Length: 100", first: "{", rest: " ".repeat(99), path: "/api/get_thing" },
      { framing: "Transfer-Encoding: chunked", first: "1\r\n{\r\n", rest: "0\r\n\r\n" },
      // The next piece but not the end: a body read in pieces ends the connection there.
      { framing: "Content-Length: 200000", first: "{", rest: " ".repeat(10), piece: true },
      {
        framing: "Transfer-Encoding: chunked",
        first: "1\r\n{\r\n",
        rest: "1\r\n \r\n",
        piece: true,
      },
    ];
    // The rest comes as soon as the answer's head is in, or well after it: the pause only
    // orders the client's bytes after whatever weir does once it has answered (a dropped
    // answer used to error 20 ms on, and a connection whose body came after that was never
    // closed); every order must end the connection. No time is asserted.
    for (const pauseMs of [0, 300]) {
      for (const { framing, first, rest, path, piece } of late) {
        const what = `${path ?? "/mcp"} ${framing}${
          piece ? " (one more piece)" : ""
        }, ${pauseMs} ms`;
        const r = await exchangeRaw(
          server.url,
          head(framing, path),
          encoder.encode(first),
          encoder.encode(piece ? rest : rest + another),
          pauseMs,
        );
        deadlines++;
        assert.match(r.text, /^HTTP\/1\.1 408/, `${what}: ${r.text}`);
        assert.match(r.text, /connection: close/i);
        // The close is an event: the read above ends with it (or, if it never comes, after
        // GENEROUS_MS and this fails). How soon it came is the machine's business.
        assert.ok(r.eofMs >= 0, `${what}: the socket stayed open after the body ended`);
        assert.equal(
          r.text.match(/HTTP\/1\.1 /g)?.length,
          1,
          `${what}: a second request was served`,
        );
      }
    }

    const over = new Uint8Array(1024 * 1024 + 4096).fill(0x20);
    const refused = [
      // declared over the cap: refused before a byte of body is read, nothing more sent
      { framing: `Content-Length: ${2 * 1024 * 1024}`, first: encoder.encode("{") },
      // chunked, passing the cap while being read
      {
        framing: "Transfer-Encoding: chunked",
        first: new Uint8Array([
          ...encoder.encode(`${over.length.toString(16)}\r\n`),
          ...over,
          ...encoder.encode("\r\n"),
        ]),
      },
    ];
    for (const { framing, first } of refused) {
      const r = await exchangeRaw(server.url, head(framing), first, null);
      assert.match(r.text, /^HTTP\/1\.1 413/, `${framing}: ${r.text.slice(0, 200)}`);
      // The client sends nothing more, so only weir can have closed the socket.
      assert.ok(r.eofMs >= 0, `${framing}: the socket stayed open after the 413`);
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
  const lines = server.stderr().split("\n");
  assert.equal(lines.filter((l) => l.includes('"rule":"deadline"')).length, deadlines);
  assert.equal(lines.filter((l) => l.includes('"rule":"size"')).length, 2);
});
