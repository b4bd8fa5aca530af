/**
 * The MCP handler is a plain `(Request) => Promise<Response>`: another
 * router can mount it under any path prefix, next to its own routes, and the
 * official clients work through it unchanged. Its refusals (and the tool
 * API's) are ordinary `Response`s a host can read, clone or compress; the
 * connection drop after a refused body is the listener's, opt-in with
 * `withConnectionDrop`.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import {
  createHttpHandler,
  createToolApiHandler,
  loopbackHosts,
  withConnectionDrop,
} from "../../mod.ts";
import { dropsConnection } from "../../src/inbound/refusal.ts";
import { createFixtureServer } from "../fixtures/catalog_server.ts";
import { listen } from "../support/listen.ts";
import { tapHandler, type WireLog } from "../support/wire.ts";

/** Another application's router, with MCP mounted under /tenants/acme/mcp. */
function appRouter(
  port: number,
): { router: (request: Request) => Promise<Response>; log: WireLog } {
  const tap = tapHandler(createHttpHandler(createFixtureServer("mounted"), {
    authorize: () => true,
    allowedOrigins: [],
    allowedHosts: loopbackHosts(port),
  }));
  const router = (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (pathname === "/tenants/acme/mcp" || pathname.startsWith("/tenants/acme/mcp/")) {
      return tap.handler(request);
    }
    if (pathname === "/status") return Promise.resolve(Response.json({ app: "ok" }));
    return Promise.resolve(new Response("not here", { status: 404 }));
  };
  return { router, log: tap.log };
}

Deno.test("mounted under a path prefix, the endpoint serves both official clients", async () => {
  let log: WireLog | undefined;
  const app = listen((port) => {
    const made = appRouter(port);
    log = made.log;
    return made.router;
  });
  const url = new URL(`${app.origin}/tenants/acme/mcp`);
  const v1 = new ClientV1({ name: "mounted-v1", version: "1.0.0" });
  const v2 = new ClientV2({ name: "mounted-v2", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  try {
    await v1.connect(new HttpV1(url));
    const v1Tools = await v1.listTools();
    assert.deepEqual(v1Tools.tools.map((t: { name: string }) => t.name), [
      "add",
      "churn",
      "echo",
      "tag",
    ]);
    const v1Call = await v1.callTool({ name: "add", arguments: { a: 1, b: 2 } });
    assert.deepEqual(v1Call.structuredContent, { sum: 3 });

    await v2.connect(new HttpV2(url));
    const note = await v2.readResource({ uri: "fixture://notes/mounted" });
    assert.deepEqual(note.contents, [
      { uri: "fixture://notes/mounted", mimeType: "text/plain", text: "note mounted" },
    ]);

    const status = await fetch(`${app.origin}/status`);
    assert.deepEqual(await status.json(), { app: "ok" });
    const elsewhere = await fetch(`${app.origin}/mcp`, { method: "POST", body: "{}" });
    assert.equal(elsewhere.status, 404, "the router, not MCP, owns other paths");
    await elsewhere.body?.cancel();

    assert.deepEqual(log!.problems, []);
    assert.ok((log!.checked.get("tools/call") ?? 0) >= 1);
    assert.ok((log!.checked.get("resources/read") ?? 0) >= 1);
  } finally {
    await v1.close();
    await v2.close();
    await app.close();
  }
});

/**
 * Every refusal the two mountable handlers can issue, each one a request
 * built in code as a host or a test would send it.
 */
function refusedRequests(path: string): [string, number, () => Request][] {
  const url = `http://127.0.0.1${path}`;
  const json = {
    host: "127.0.0.1",
    "content-type": "application/json",
    accept: "application/json",
  };
  const big = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 40; i++) controller.enqueue(new Uint8Array(65536).fill(0x20));
        controller.close();
      },
    });
  const dribble = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 3000; i++) controller.enqueue(new Uint8Array([0x20]));
        controller.close();
      },
    });
  return [
    ["host", 403, () => new Request(url, { method: "POST", headers: { ...json, host: "evil" } })],
    [
      "origin",
      403,
      () =>
        new Request(url, {
          method: "POST",
          headers: { ...json, origin: "https://evil.example" },
          body: "{}",
        }),
    ],
    ["method", 405, () => new Request(url, { method: "GET", headers: { host: "127.0.0.1" } })],
    ["auth", 401, () => new Request(url, { method: "POST", headers: json, body: "{}" })],
    [
      "media_type",
      415,
      () =>
        new Request(url, {
          method: "POST",
          headers: { ...json, "content-type": "text/plain", authorization: "Bearer ok" },
          body: "{}",
        }),
    ],
    [
      "not_acceptable",
      406,
      () =>
        new Request(url, {
          method: "POST",
          headers: { ...json, accept: "*/*;q=0", authorization: "Bearer ok" },
          body: "{}",
        }),
    ],
    [
      "size (declared)",
      413,
      () =>
        new Request(url, {
          method: "POST",
          headers: { ...json, authorization: "Bearer ok", "content-length": "2000000" },
          body: big(),
        }),
    ],
    [
      "size (streamed)",
      413,
      () =>
        new Request(url, {
          method: "POST",
          headers: { ...json, authorization: "Bearer ok" },
          body: big(),
        }),
    ],
    [
      "framing",
      400,
      () =>
        new Request(url, {
          method: "POST",
          headers: { ...json, authorization: "Bearer ok" },
          body: dribble(),
        }),
    ],
  ];
}

Deno.test("the mountable handlers' refusals are ordinary Responses: read, cloned, compressed", async () => {
  const errors: unknown[] = [];
  const onError = (event: Event) => {
    errors.push((event as ErrorEvent).error ?? (event as PromiseRejectionEvent).reason);
    event.preventDefault();
  };
  globalThis.addEventListener("error", onError);
  globalThis.addEventListener("unhandledrejection", onError);
  try {
    const options = {
      authorize: (request: Request) =>
        request.headers.get("authorization") === "Bearer ok"
          ? true
          : { allow: false as const, status: 401 as const, challenge: 'Bearer realm="t"' },
      allowedOrigins: [] as string[],
      allowedHosts: ["127.0.0.1"],
      maxBodyBytes: 1024 * 1024,
    };
    const server = createFixtureServer("refusals");
    for (
      const [path, handler] of [
        ["/mcp", createHttpHandler(server, options)],
        ["/api/echo", createToolApiHandler(server, options)],
      ] as const
    ) {
      for (const [what, status, make] of refusedRequests(path)) {
        const response = await handler(make());
        assert.equal(response.status, status, `${path} ${what}`);
        if (what.startsWith("size") || what === "framing") {
          assert.ok(dropsConnection(response), `${path} ${what}: marked for the listener`);
        }
        const copy = response.clone();
        const gzipped = await new Response(
          response.body!.pipeThrough(new CompressionStream("gzip")),
        ).arrayBuffer();
        const text = await new Response(
          new Blob([gzipped]).stream().pipeThrough(new DecompressionStream("gzip")),
        ).text();
        assert.equal(text, await copy.text(), `${path} ${what}: the clone and the body agree`);
        const body = JSON.parse(text);
        const rule = path === "/mcp" ? body.error.data.rule : body.error.code;
        assert.equal(rule, what.replace(/ \(.*\)$/, ""), `${path} ${what}: ${text}`);
        assert.equal(response.headers.get("cache-control"), "no-store");
      }
    }
    // A dropped body used to error on its own some 20 ms later: wait past that.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(errors, [], "nothing errors after the refusals were read");
  } finally {
    globalThis.removeEventListener("error", onError);
    globalThis.removeEventListener("unhandledrejection", onError);
  }
});

Deno.test("withConnectionDrop() ends a marked refusal's body with an error after it, and passes others", async () => {
  const { server } = { server: createFixtureServer("drop") };
  const handler = withConnectionDrop(createHttpHandler(server, {
    authorize: () => true,
    allowedOrigins: [],
    maxBodyBytes: 100,
  }));
  const ok = await handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    }),
  );
  assert.equal(ok.status, 400);
  assert.match(await ok.text(), /Parse error/);
  const over = await handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(c) {
          c.enqueue(new Uint8Array(200));
          c.close();
        },
      }),
    }),
  );
  assert.equal(over.status, 413);
  const reader = over.body!.getReader();
  const first = await reader.read();
  assert.match(new TextDecoder().decode(first.value), /exceeds 100 bytes/);
  await assert.rejects(
    () => reader.read(),
    (e) => typeof e === "string" && JSON.parse(e).event === "connection_dropped",
  );
});
