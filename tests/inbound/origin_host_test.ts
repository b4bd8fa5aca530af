/**
 * DNS rebinding: a browser-borne request (`Origin`) is served only from an
 * allowed origin, and a server bound to loopback answers only requests whose
 * `Host` names loopback. Both refusals are 403 before anything else runs.
 */
import assert from "node:assert/strict";
import { createHttpHandler, isLoopback, type LogEvent, loopbackHosts } from "../../mod.ts";
import { listen } from "../support/listen.ts";
import { rawRequest as raw } from "../support/raw_http.ts";
import { makeServer, modernHeaders, modernRequest } from "../support/mcp.ts";
import { assertValidResponse, LEGACY, MODERN } from "../support/schemas.ts";

const { server } = makeServer({
  catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
  dispatch: () => ({ content: [{ type: "text", text: "hi" }] }),
});

async function status(
  handler: (request: Request) => Promise<Response>,
  headers: Record<string, string>,
  method = "POST",
): Promise<number> {
  const body = JSON.stringify(modernRequest("tools/list"));
  const response = await handler(
    new Request("http://127.0.0.1:8080/mcp", {
      method,
      headers: {
        ...modernHeaders("tools/list"),
        "content-length": String(body.length),
        ...headers,
      },
      body: method === "POST" ? body : undefined,
    }),
  );
  const text = await response.text();
  if (response.status === 200) assertValidResponse(MODERN, text, "tools/list");
  else if (text !== "") assertValidResponse([LEGACY, MODERN], text);
  return response.status;
}

Deno.test("Origin: absent passes, listed passes, anything else is 403", async () => {
  const events: LogEvent[] = [];
  const handler = createHttpHandler(server, {
    authorize: () => true,
    allowedOrigins: ["https://app.example.com"],
    log: (e) => events.push(e),
  });
  assert.equal(await status(handler, {}), 200, "no Origin: not a browser");
  assert.equal(await status(handler, { origin: "https://app.example.com" }), 200);
  for (
    const origin of [
      "https://evil.example.com",
      "https://app.example.com:8443",
      "http://app.example.com",
      "https://APP.example.com.evil.net",
      "null",
    ]
  ) {
    assert.equal(await status(handler, { origin }), 403, origin);
  }
  assert.equal(
    await status(handler, { origin: "https://evil.example.com" }, "GET"),
    403,
    "before 405",
  );
  assert.ok(events.every((e) => e.reason === "origin not allowed"));
});

Deno.test('allowedOrigins "any" admits every origin; [] admits none', async () => {
  const any = createHttpHandler(server, { authorize: () => true, allowedOrigins: "any" });
  assert.equal(await status(any, { origin: "https://whatever.example" }), 200);
  const none = createHttpHandler(server, { authorize: () => true, allowedOrigins: [] });
  assert.equal(await status(none, { origin: "https://whatever.example" }), 403);
  assert.equal(await status(none, {}), 200);
});

Deno.test("Host: a loopback server answers only loopback names (with or without its port)", async () => {
  const handler = createHttpHandler(server, {
    authorize: () => true,
    allowedOrigins: [],
    allowedHosts: loopbackHosts(8080),
  });
  for (
    const host of ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080", "127.0.0.1"]
  ) {
    assert.equal(await status(handler, { host }), 200, host);
  }
  for (
    const host of [
      "evil.example.com",
      "evil.example.com:8080",
      "127.0.0.1:9999",
      "127.0.0.1.evil.net",
    ]
  ) {
    assert.equal(await status(handler, { host }), 403, host);
  }
  assert.deepEqual(loopbackHosts(3000), [
    "localhost",
    "localhost:3000",
    "127.0.0.1",
    "127.0.0.1:3000",
    "[::1]",
    "[::1]:3000",
  ]);
  for (const name of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) {
    assert.ok(isLoopback(name));
  }
  for (const name of ["0.0.0.0", "10.0.0.1", "example.com"]) assert.ok(!isLoopback(name), name);
});

Deno.test("a rebinding attempt over a real socket is refused, the same host name accepted", async () => {
  const local = listen((port) =>
    createHttpHandler(server, {
      authorize: () => true,
      allowedOrigins: [`http://127.0.0.1:${port}`, `http://localhost:${port}`],
      allowedHosts: loopbackHosts(port),
    })
  );
  try {
    const rawRequest = async (host: string, origin: string) => {
      const body = JSON.stringify(modernRequest("tools/list"));
      const response = await raw(local.port, "POST /mcp HTTP/1.1", {
        ...modernHeaders("tools/list"),
        host,
        origin,
      }, body);
      if (response.status === 200) assertValidResponse(MODERN, response.body, "tools/list");
      else assertValidResponse([LEGACY, MODERN], response.body);
      return response.status;
    };
    assert.equal(await rawRequest("evil.example.com", "http://evil.example.com"), 403);
    assert.equal(
      await rawRequest(`127.0.0.1:${local.port}`, `http://127.0.0.1:${local.port}`),
      200,
    );
  } finally {
    await local.close();
  }
});

Deno.test("same origin: only http:// or https:// and the very Host the server vouched for", async () => {
  // issue 34 item 10: a same-origin check that looked for the Host inside the
  // Origin admitted any page whose origin merely contains it.
  const handler = createHttpHandler(server, {
    authorize: () => true,
    allowedOrigins: [],
    allowedHosts: loopbackHosts(8080),
  });
  const host = { host: "127.0.0.1:8080" };
  for (
    const origin of ["http://127.0.0.1:8080", "https://127.0.0.1:8080", "HTTP://127.0.0.1:8080"]
  ) {
    assert.equal(await status(handler, { ...host, origin }), 200, origin);
  }
  for (
    const origin of [
      "http://127.0.0.1:8080.evil.example",
      "https://evil.example/127.0.0.1:8080",
      "http://evil.example?127.0.0.1:8080",
      "ws://127.0.0.1:8080",
      "http://127.0.0.1:80801",
      "http://localhost:8080",
    ]
  ) {
    assert.equal(await status(handler, { ...host, origin }), 403, origin);
  }
});
