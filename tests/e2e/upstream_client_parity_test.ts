/**
 * weir sends upstream requests with its own HTTP/1.1 client
 * (src/outbound/http1_client.ts), or with `fetch` when a proxy variable is
 * set (or `WEIR_UPSTREAM_CLIENT=fetch`). Both must give the caller the same
 * answer for every kind of upstream answer: the real CLI serves one guardfile
 * twice, once each way, and every call's status and result are compared.
 */
import assert from "node:assert/strict";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";

/** Written as text: the number has more digits than a double holds, and weir keeps them. */
const RECORD = '{"id":"t-1","title":"thing ü 🐟","tags":["a","b"],"n":12345678901234567890}';

async function gzip(text: string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(
    await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer(),
  );
}

Deno.test("the HTTP/1.1 client and fetch give the caller the same answers", async () => {
  const encodings: string[] = [];
  const zipped = await gzip(RECORD);
  // /things/slow answers only when the test ends: its 504 is an event, not a race with a timer.
  const slow = Promise.withResolvers<void>();
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (r) => {
    const path = new URL(r.url).pathname;
    encodings.push(`${path} ${r.headers.get("accept-encoding")}`);
    const json = { "content-type": "application/json" };
    switch (path) {
      case "/things/plain":
        return new Response(RECORD, { headers: json });
      case "/things/chunked": {
        const text = RECORD;
        const parts = [text.slice(0, 7), text.slice(7, 20), text.slice(20)];
        return new Response(
          new ReadableStream({
            async pull(c) {
              const next = parts.shift();
              if (next === undefined) return c.close();
              await new Promise((res) => setTimeout(res, 2));
              c.enqueue(new TextEncoder().encode(next));
            },
          }),
          { headers: json },
        );
      }
      case "/things/gzip":
        return new Response(zipped, {
          headers: { ...json, "content-encoding": "gzip", "content-length": `${zipped.length}` },
        });
      case "/things/missing":
        return new Response(JSON.stringify({ message: "no such thing" }), {
          status: 404,
          headers: json,
        });
      case "/things/broken":
        return new Response("internal error", { status: 500 });
      case "/things/empty":
        return new Response(null, { status: 204 });
      case "/things/moved":
        return new Response(null, { status: 301, headers: { location: "http://evil.test/x" } });
      case "/things/huge":
        return new Response(JSON.stringify({ blob: "x".repeat(300_000) }), { headers: json });
      case "/things/slow":
        await slow.promise;
        return new Response("{}", { headers: json });
      case "/things":
        return new Response(JSON.stringify({ created: await r.json() }), {
          status: 201,
          headers: json,
        });
    }
    return new Response("not found", { status: 404 });
  });
  const file = await tempGuardfile(
    `wrap ward mcp parity {\n  base-url "http://127.0.0.1:${upstream.addr.port}"\n  auth none\n` +
      `  can get thing { path "/things/{id}" }\n` +
      `  can create thing { path "/things"; body "title" }\n}\n`,
  );
  // 3 s: room for the answers that must arrive on a loaded machine; /things/slow never does.
  const extra = ["--max-response-bytes", "200000", "--upstream-timeout", "3000"];
  const own = await serveHttp(file, { extra });
  const viaFetch = await serveHttp(file, { extra, env: { WEIR_UPSTREAM_CLIENT: "fetch" } });
  try {
    const calls: [string, Record<string, unknown>][] = [
      ...["plain", "chunked", "gzip", "missing", "broken", "empty", "moved", "huge", "slow"].map(
        (id) => ["get_thing", { id }] as [string, Record<string, unknown>],
      ),
      ["create_thing", { title: "née \u2028 line" }],
    ];
    for (const [tool, args] of calls) {
      const a = await callApi(own.url, tool, args);
      const b = await callApi(viaFetch.url, tool, args);
      assert.equal(a.status, b.status, `${tool} ${JSON.stringify(args)}: ${a.text} / ${b.text}`);
      assert.deepEqual(a.body, b.body, `${tool} ${JSON.stringify(args)}`);
    }
    const plain = await callApi(own.url, "get_thing", { id: "plain" });
    assert.equal(plain.status, 200);
    assert.match(plain.text, /12345678901234567890/, "the upstream's digits kept");
    assert.equal((await callApi(own.url, "get_thing", { id: "huge" })).status, 502);
    assert.equal((await callApi(own.url, "get_thing", { id: "slow" })).status, 504);
    // Both paths were really taken: the two clients advertise different codings.
    assert.ok(encodings.includes("/things/plain gzip, deflate, br"), encodings.join("\n"));
    assert.ok(
      encodings.some((e) =>
        e.startsWith("/things/plain ") && e !== "/things/plain gzip, deflate, br"
      ),
    );
  } finally {
    slow.resolve();
    await own.stop();
    await viaFetch.stop();
    await upstream.shutdown();
  }
});

const TLS = new URL("../fixtures/tls/", import.meta.url).pathname;

Deno.test("an https upstream: both clients verify its certificate against the trusted roots", async () => {
  const upstream = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: Deno.readTextFileSync(`${TLS}server.pem`),
    key: Deno.readTextFileSync(`${TLS}server.key`),
    onListen() {},
  }, () => new Response(RECORD, { headers: { "content-type": "application/json" } }));
  const file = await tempGuardfile(
    `wrap ward mcp tls {\n  base-url "https://localhost:${upstream.addr.port}"\n  auth none\n` +
      `  can get thing { path "/things/{id}" }\n}\n`,
  );
  // DENO_CERT adds the test CA to the roots Deno trusts (fetch and Deno.connectTls alike).
  const trusted = { DENO_CERT: `${TLS}ca.pem` };
  const servers = [
    await serveHttp(file, { env: trusted }),
    await serveHttp(file, { env: { ...trusted, WEIR_UPSTREAM_CLIENT: "fetch" } }),
    await serveHttp(file),
    await serveHttp(file, { env: { WEIR_UPSTREAM_CLIENT: "fetch" } }),
  ];
  try {
    const [own, viaFetch, ownUntrusted, fetchUntrusted] = await Promise.all(
      servers.map((s) => callApi(s.url, "get_thing", { id: "x" })),
    );
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.body, viaFetch.body);
    for (const refused of [ownUntrusted, fetchUntrusted]) {
      assert.equal(refused.status, 502, refused.text);
      assert.match(refused.text, /upstream_unreachable: GET \/things\/\{id\} could not be sent/);
    }
  } finally {
    for (const s of servers) await s.stop();
    await upstream.shutdown();
  }
});

Deno.test("a proxy or client setting weir cannot use stops serve at start; a dead proxy is named; nothing reaches the upstream", async () => {
  let reached = 0;
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    reached++;
    return new Response(RECORD, { headers: { "content-type": "application/json" } });
  });
  const dead = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = (dead.addr as Deno.NetAddr).port;
  dead.close();
  const file = await tempGuardfile(
    `wrap ward mcp proxied {\n  base-url "http://127.0.0.1:${upstream.addr.port}"\n  auth none\n` +
      `  can get thing { path "/things/{id}" }\n}\n`,
  );
  const refusedAtStart: [Record<string, string>, RegExp][] = [
    [{ HTTP_PROXY: "not a url" }, /HTTP_PROXY is set but is not a proxy URL/],
    [{ https_proxy: "ftp://proxy.example" }, /https_proxy is set but is not a proxy URL/],
    [{ WEIR_UPSTREAM_CLIENT: "bogus" }, /WEIR_UPSTREAM_CLIENT is "bogus"; use fetch or http1/],
  ];
  const served: [Record<string, string>, number, RegExp][] = [
    [
      { HTTP_PROXY: `http://user:s3cret-proxy-pass@127.0.0.1:${deadPort}` },
      502,
      /upstream_unreachable: .* and that the proxy in HTTP_PROXY is reachable/,
    ],
    [{ WEIR_UPSTREAM_CLIENT: "http1" }, 200, /thing/],
  ];
  try {
    for (const [env, message] of refusedAtStart) {
      const r = await runCli(["serve", file, "--http", "127.0.0.1:0"], { env });
      assert.equal(r.code, 2, `${JSON.stringify(env)}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /not a url|ftp:/, "the value is not repeated");
    }
    // Every other mode that sends through fetch refuses the same way at start:
    // the AWS modes, serve-upstream and lint-upstream over HTTP.
    const bad = { HTTP_PROXY: "not a url" };
    const upstreamUrl = `http://127.0.0.1:${upstream.addr.port}/mcp`;
    for (
      const args of [
        ["serve-ssm", "guardfiles/ssm-forgejo-token.mcp.kdl", "--http", "127.0.0.1:0"],
        ["serve", "guardfiles/s3-assets.mcp.kdl", "--stdio"],
        ["serve-upstream", "--tool", "echo", "--upstream", upstreamUrl, "--stdio"],
        ["lint-upstream", "--tool", "echo", "--upstream", upstreamUrl],
      ]
    ) {
      const r = await runCli(args, { env: bad });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /HTTP_PROXY is set but is not a proxy URL/, args.join(" "));
    }
    for (const [env, status, message] of served) {
      const server = await serveHttp(file, { env });
      try {
        const before = reached;
        const r = await callApi(server.url, "get_thing", { id: "x" });
        assert.equal(r.status, status, `${JSON.stringify(env)}: ${r.text}`);
        assert.match(r.text, message);
        assert.doesNotMatch(r.text + server.stderr(), /s3cret-proxy-pass/);
        assert.equal(reached - before, status === 200 ? 1 : 0, "the upstream was reached");
      } finally {
        await server.stop();
      }
    }
    assert.equal(reached, 1, "only the served http1 call reached the upstream");
  } finally {
    await upstream.shutdown();
  }
});
