/**
 * weir's HTTP/1.1 upstream client (src/outbound/http1_client.ts) against
 * real sockets: a `Deno.serve` upstream for the ordinary cases, and a raw TCP
 * server that writes answers byte by byte for framing, malformed answers,
 * connection reuse and cancellation.
 */
import assert from "node:assert/strict";
import { Http1Client, Http1Error } from "../../src/outbound/http1_client.ts";
import { until, within } from "../support/wait.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A raw TCP server: each connection runs `script`; requests are the heads it read. */
function rawServer(
  script: (conn: Deno.Conn, read: () => Promise<string>, index: number) => Promise<void>,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const heads: string[] = [];
  const open = new Set<Deno.Conn>();
  const served: Promise<void>[] = [];
  const loop = (async () => {
    for await (const conn of listener) {
      const index = connections++;
      open.add(conn);
      let pending = "";
      // Reads one request head (and a Content-Length body) from the connection.
      const read = async (): Promise<string> => {
        const buf = new Uint8Array(65536);
        while (!pending.includes("\r\n\r\n")) {
          const n = await conn.read(buf);
          if (n === null) throw new Error("client closed");
          pending += dec.decode(buf.subarray(0, n));
        }
        const end = pending.indexOf("\r\n\r\n") + 4;
        const head = pending.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        while (pending.length < end + length) {
          const n = await conn.read(buf);
          if (n === null) throw new Error("client closed");
          pending += dec.decode(buf.subarray(0, n));
        }
        const request = pending.slice(0, end + length);
        pending = pending.slice(end + length);
        heads.push(request);
        return request;
      };
      served.push(
        script(conn, read, index).catch(() => {}).finally(() => {
          open.delete(conn);
          try {
            conn.close();
          } catch { /* closed by the script */ }
        }),
      );
    }
  })();
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    url: (path = "/x") => new URL(`http://127.0.0.1:${port}${path}`),
    heads,
    get connections() {
      return connections;
    },
    async close() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* gone */ }
      }
      await loop.catch(() => {});
      await Promise.all(served);
    },
  };
}

const write = (conn: Deno.Conn, text: string | Uint8Array) =>
  conn.write(typeof text === "string" ? enc.encode(text) : text);

const get = (url: URL, extra: Partial<Parameters<Http1Client["request"]>[0]> = {}) => ({
  method: "GET",
  url,
  headers: [["accept", "application/json"]] as [string, string][],
  maxBodyBytes: 1 << 20,
  ...extra,
});

Deno.test("http1: a JSON answer from Deno.serve, the request as sent, one connection reused", async () => {
  const seen: { method: string; path: string; ua: string | null; body: string }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (r) => {
    const u = new URL(r.url);
    seen.push({
      method: r.method,
      path: u.pathname + u.search,
      ua: r.headers.get("user-agent"),
      body: await r.text(),
    });
    return Response.json({ ok: true, n: seen.length }, { headers: { "x-one": "1" } });
  });
  const client = new Http1Client();
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const a = await client.request(get(new URL(`${base}/things/a%2Fb?q=1&r=%20`)));
    assert.equal(a.status, 200);
    assert.equal(a.statusText, "OK");
    assert.equal(a.headers.get("x-one"), "1");
    assert.deepEqual(JSON.parse(dec.decode(a.body!)), { ok: true, n: 1 });
    const b = await client.request({
      method: "POST",
      url: new URL(`${base}/things`),
      headers: [["user-agent", "weir-test"], ["content-type", "application/json"]],
      body: enc.encode('{"title":"ü"}'),
      maxBodyBytes: 1024,
    });
    assert.equal(b.status, 200);
    assert.deepEqual(seen, [
      { method: "GET", path: "/things/a%2Fb?q=1&r=%20", ua: null, body: "" },
      { method: "POST", path: "/things", ua: "weir-test", body: '{"title":"ü"}' },
    ]);
    assert.equal(client.idleCount, 1, "the connection went back to the pool");
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("http1: keep-alive reuses one connection; Connection: close and HTTP/1.0 are not reused", async () => {
  const server = rawServer(async (conn, read, index) => {
    for (let i = 0;; i++) {
      await read();
      const close = index === 0 && i === 2;
      await write(
        conn,
        `HTTP/1.1 200 OK\r\ncontent-length: 2\r\n${close ? "connection: close\r\n" : ""}\r\nok`,
      );
      if (close) return;
    }
  });
  const client = new Http1Client();
  try {
    for (let i = 0; i < 3; i++) {
      const r = await client.request(get(server.url()));
      assert.equal(dec.decode(r.body!), "ok");
    }
    assert.equal(server.connections, 1, "three requests on one connection");
    assert.ok(
      server.heads.every((h) => /^GET \/x HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\n/.test(h)),
    );
    assert.equal(client.idleCount, 0, "the answer with Connection: close was not pooled");
    await client.request(get(server.url()));
    assert.equal(server.connections, 2);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: chunked bodies split anywhere, with extensions and trailers, read exactly", async () => {
  const body = "0123456789abcdefghij".repeat(50);
  const server = rawServer(async (conn, read) => {
    for (;;) {
      await read();
      const wire = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n` +
        `a;ext=1\r\n${body.slice(0, 10)}\r\n` +
        `${(body.length - 10).toString(16)}\r\n${body.slice(10)}\r\n` +
        `0\r\nx-trailer: yes\r\n\r\n`;
      // One byte at a time for the first 200 bytes, then the rest.
      for (let i = 0; i < 200; i++) await write(conn, wire[i]);
      await write(conn, wire.slice(200));
    }
  });
  const client = new Http1Client();
  try {
    for (let i = 0; i < 2; i++) {
      const r = await client.request(get(server.url()));
      assert.equal(dec.decode(r.body!), body);
    }
    assert.equal(
      server.connections,
      1,
      "a chunked answer read to its end leaves the connection reusable",
    );
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: a body delimited by the connection's end; 1xx answers skipped; HEAD and 204 carry none", async () => {
  const server = rawServer(async (conn, read, index) => {
    const head = await read();
    if (index === 0) {
      await write(conn, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nuntil the end");
      return; // closing delimits the body
    }
    if (head.startsWith("HEAD")) {
      await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 999\r\n\r\n");
      await read();
      await write(conn, "HTTP/1.1 204 No Content\r\n\r\n");
      await read();
    }
  });
  const client = new Http1Client();
  try {
    const r = await client.request(get(server.url()));
    assert.equal(r.status, 200);
    assert.equal(dec.decode(r.body!), "until the end");
    const h = await client.request({ ...get(server.url()), method: "HEAD" });
    assert.equal(h.status, 200);
    assert.equal(h.body!.byteLength, 0);
    const n = await client.request(get(server.url()));
    assert.equal(n.status, 204);
    assert.equal(n.body!.byteLength, 0);
    assert.equal(server.connections, 2, "HEAD and 204 reused the second connection");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: the size cap by Content-Length, chunked and close-delimited: null, not read on", async () => {
  const server = rawServer(async (conn, read, index) => {
    await read();
    if (index === 0) {
      await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n");
      for (let i = 0; i < 100; i++) {
        await write(conn, new Uint8Array(1000));
      }
    } else if (index === 1) {
      await write(conn, "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
      for (let i = 0; i < 100; i++) await write(conn, `3e8\r\n${"x".repeat(1000)}\r\n`);
      await write(conn, "0\r\n\r\n");
    } else {
      await write(conn, "HTTP/1.1 200 OK\r\n\r\n");
      for (let i = 0; i < 100; i++) await write(conn, "y".repeat(1000));
    }
  });
  const client = new Http1Client();
  try {
    for (let i = 0; i < 3; i++) {
      const r = await client.request(get(server.url(), { maxBodyBytes: 5000 }));
      assert.equal(r.status, 200);
      assert.equal(r.body, null, `answer ${i} passed the cap`);
    }
    assert.equal(client.idleCount, 0, "a connection left mid-body is never pooled");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: malformed answers are errors that say what is wrong", async () => {
  const answers = [
    [
      "HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\ncontent-length: 0\r\n\r\n",
      /obsolete header line folding/,
      "send",
    ],
    [
      "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello!",
      /Content-Length is not one number/,
      "body",
    ],
    ["HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", /Content-Length is not one number/, "body"],
    ["SPDY/3 200 OK\r\n\r\n", /HTTP\/1\.x status line/, "send"],
    ["HTTP/1.1 200 OK\r\nbad header\r\n\r\n", /malformed header field/, "send"],
    [
      "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
      /ended before its Content-Length/,
      "body",
    ],
    ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", /malformed chunk size/, "body"],
    [
      "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
      /unsupported transfer-coding/,
      "body",
    ],
    [
      "HTTP/1.1 200 OK\r\ncontent-encoding: compress\r\ncontent-length: 0\r\n\r\n",
      /unsupported content-coding/,
      "body",
    ],
    ["", /closed before a complete answer head/, "send"],
    ["HTTP/1.1 100 Continue\r\n\r\n".repeat(20), /interim answers only/, "send"],
  ] as const;
  const server = rawServer(async (conn, read, index) => {
    await read();
    await write(conn, answers[index][0]);
  });
  const client = new Http1Client();
  try {
    for (const [, message, phase] of answers) {
      await assert.rejects(client.request(get(server.url())), (error: unknown) => {
        assert.ok(error instanceof Http1Error, String(error));
        assert.match(error.message, message);
        assert.equal(error.phase, phase, error.message);
        if (phase === "body") assert.equal(error.status, 200);
        return true;
      });
    }
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: a header value with CR or LF is refused before anything is sent", async () => {
  const server = rawServer(async (_conn, read) => void await read());
  const client = new Http1Client();
  try {
    await assert.rejects(
      client.request({ ...get(server.url()), headers: [["x-token", "a\r\nx-evil: 1"]] }),
      TypeError,
    );
    await assert.rejects(
      client.request({ ...get(server.url()), headers: [["bad name", "v"]] }),
      TypeError,
    );
    await assert.rejects(client.request({ ...get(server.url()), method: "GE T" }), TypeError);
    assert.equal(server.connections, 0, "no connection was opened");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: gzip, deflate and br answers decoded; the cap applies to the decoded bytes", async () => {
  const plain = enc.encode(JSON.stringify({ text: "weir ".repeat(2000) }));
  const coded: Record<string, Uint8Array> = {};
  for (const [coding, format] of [["gzip", "gzip"], ["deflate", "deflate"], ["br", "brotli"]]) {
    coded[coding] = new Uint8Array(
      await new Response(
        new Blob([plain]).stream().pipeThrough(new CompressionStream(format as CompressionFormat)),
      ).arrayBuffer(),
    );
  }
  const order = ["gzip", "deflate", "br", "gzip"];
  const server = rawServer(async (conn, read) => {
    for (const coding of order) {
      const head = await read();
      assert.match(head, /accept-encoding: gzip, deflate, br/);
      await write(
        conn,
        `HTTP/1.1 200 OK\r\ncontent-encoding: ${coding}\r\ncontent-length: ${
          coded[coding].byteLength
        }\r\n\r\n`,
      );
      await write(conn, coded[coding]);
    }
  });
  const client = new Http1Client();
  try {
    for (const coding of order.slice(0, 3)) {
      const r = await client.request(get(server.url()));
      assert.deepEqual(r.body, plain, coding);
    }
    const capped = await client.request(get(server.url(), { maxBodyBytes: 1000 }));
    assert.equal(capped.body, null, "a 10 KB decoded body over a 1000-byte cap");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: a server closing an idle connection is noticed; the next request opens a new one", async () => {
  const server = rawServer(async (conn, read) => {
    await read();
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n1");
    // Close while the client holds the connection idle.
  });
  const client = new Http1Client();
  try {
    assert.equal(dec.decode((await client.request(get(server.url()))).body!), "1");
    await until(() => client.idleCount === 0);
    assert.equal(client.idleCount, 0, "the closed connection left the pool");
    const post = await client.request({ ...get(server.url()), method: "POST" });
    assert.equal(post.status, 200, "a POST after the close went on a new connection");
    assert.equal(server.connections, 2);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: aborting mid-answer closes the connection and throws the signal's reason", async () => {
  // The server sends part of an answer, then holds the rest until the test ends: the request
  // can only settle before that through the abort. Ordering, not a duration: the abort fires
  // once the part is written, and the request must reject while the server still holds.
  const wrote = Promise.withResolvers<void>();
  const hold = Promise.withResolvers<void>();
  let serverDone = false;
  const server = rawServer(async (conn, read) => {
    await read();
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart");
    wrote.resolve();
    await hold.promise;
    serverDone = true;
  });
  const client = new Http1Client();
  try {
    const controller = new AbortController();
    const reason = new DOMException("deadline passed", "TimeoutError");
    const request = client.request(get(server.url(), { signal: controller.signal }));
    request.catch(() => {}); // asserted below
    await wrote.promise;
    controller.abort(reason);
    // Bounded so a client that waits for the server fails here instead of hanging.
    await assert.rejects(within(request, "the aborted request settling"), (e) => e === reason);
    assert.equal(serverDone, false, "the abort did not wait for the server");
    assert.equal(client.idleCount, 0);
  } finally {
    hold.resolve();
    client.close();
    await server.close();
  }
});

Deno.test("http1: nothing listening is a send-phase error", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const client = new Http1Client();
  await assert.rejects(
    client.request(get(new URL(`http://127.0.0.1:${port}/x`))),
    (e: unknown) =>
      e instanceof Http1Error && e.phase === "send" && /could not connect/.test(e.message),
  );
  client.close();
});

Deno.test("http1: Transfer-Encoding beside Content-Length is read as chunked and the connection not reused", async () => {
  const server = rawServer(async (conn, read) => {
    await read();
    await write(
      conn,
      "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    );
    await read().catch(() => {});
  });
  const client = new Http1Client();
  try {
    const r = await client.request(get(server.url()));
    assert.equal(dec.decode(r.body!), "hello");
    assert.equal(client.idleCount, 0);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("http1: until ends the read at the awaited piece; a chunked body that then ends keeps its connection, one left open loses it", async () => {
  const event = (text: string) => {
    const data = `data: ${text}\n\n`;
    return `${enc.encode(data).length.toString(16)}\r\n${data}\r\n`;
  };
  const sse = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" +
    "transfer-encoding: chunked\r\n\r\n";
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  let closedByClient = false;
  const server = rawServer(async (conn, read, index) => {
    if (index === 0) {
      // Ends the stream right after the answer, then serves the next request.
      await read();
      await write(conn, sse + event("note") + event("answer"));
      await new Promise((r) => setTimeout(r, 50));
      await write(conn, "0\r\n\r\n");
      await read();
      await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
      await read().catch(() => {});
    } else {
      // Keeps the stream open after the answer, until the client closes it.
      await read();
      await write(conn, sse + event("answer"));
      await Promise.race([held, read().catch(() => closedByClient = true)]);
    }
  });
  const client = new Http1Client();
  const until = (piece: Uint8Array) => dec.decode(piece).includes("answer");
  try {
    const first = await client.request({ ...get(server.url()), method: "POST", until });
    assert.match(dec.decode(first.body!), /data: answer/);
    for (let i = 0; i < 200 && client.idleCount === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(client.idleCount, 1, "the drained connection is idle for reuse");
    const second = await client.request({ ...get(server.url()), method: "POST" });
    assert.equal(dec.decode(second.body!), "ok");
    assert.equal(server.connections, 1, "the second request reused the first connection");
    client.close();
    // The open stream: its answer is returned at once; its connection is not kept.
    const third = await client.request({ ...get(server.url()), method: "POST", until });
    assert.match(dec.decode(third.body!), /data: answer/);
    assert.equal(server.connections, 2);
    for (let i = 0; i < 500 && !closedByClient; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(closedByClient, "a stream left open is closed by the client, not pooled");
    assert.equal(client.idleCount, 0);
  } finally {
    release();
    client.close();
    await server.close();
  }
});

Deno.test("http1: a reused connection closed after a request was written: a POST is not sent again, a GET is, once", async () => {
  // issue 34 item 10: at most once. A server may have read (and acted on) a
  // request whose connection then closed before any answer byte; only a safe
  // method may be sent again.
  const server = rawServer(async (conn, read, index) => {
    if (index === 0) {
      await read();
      await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n1");
      await read(); // the second request, read whole; then the connection drops, unanswered
      return;
    }
    await read();
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
  });
  const client = new Http1Client();
  try {
    await client.request(get(server.url()));
    await assert.rejects(
      client.request({ ...get(server.url("/pay")), method: "POST", body: enc.encode("{}") }),
      (e: unknown) =>
        e instanceof Http1Error && /may have been read and was not sent again/.test(e.message),
    );
    assert.equal(server.heads.filter((h) => h.startsWith("POST /pay")).length, 1);
    assert.equal(server.connections, 1, "no new connection was opened for the POST");
  } finally {
    client.close();
    await server.close();
  }
  const again = rawServer(async (conn, read, index) => {
    if (index === 0) {
      await read();
      await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n1");
      await read();
      return;
    }
    await read();
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
  });
  const safe = new Http1Client();
  try {
    await safe.request(get(again.url()));
    const answer = await safe.request(get(again.url("/list")));
    assert.equal(dec.decode(answer.body!), "ok");
    assert.equal(again.heads.filter((h) => h.startsWith("GET /list")).length, 2);
  } finally {
    safe.close();
    await again.close();
  }
});
