/**
 * `weir serve` as a process: stdio until end of input, HTTP defaults that are
 * safe (loopback, Host checked against DNS rebinding, no browser origins),
 * optional inbound bearer token, and a clean exit on SIGTERM.
 */
import assert from "node:assert/strict";
import { rawStatus, runCli, serveHttp } from "../support/cli.ts";
import { initializeRequest, MODERN_META } from "../support/mcp.ts";

const MODERN = MODERN_META;

Deno.test("serve --stdio answers each line and exits 0 at end of input", async () => {
  const lines = [
    initializeRequest(1),
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: MODERN } },
  ].map((m) => JSON.stringify(m)).join("\n") + "\n";
  const r = await runCli(["serve", "guardfiles/demo.mcp.kdl", "--stdio"], { stdin: lines });
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(out.length, 3, "one line per request, nothing else on stdout");
  const byId = new Map(out.map((m) => [m.id, m]));
  assert.equal(byId.get(1).result.serverInfo.name, "demo");
  assert.equal(byId.get(2).result.tools.length, 6);
  assert.equal(byId.get(3).result.resultType, "complete", "both revisions on one connection");
  assert.match(r.stderr, /"event":"serving"/, "logs go to stderr");
});

async function post(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: MODERN },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("serve --http: loopback by default, Host and Origin checked", async () => {
  const server = await serveHttp("guardfiles/demo.mcp.kdl");
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(await post(server.url), 200);
    const port = new URL(server.url).port;
    const withHost = (host: string) =>
      rawStatus(
        server.url,
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
    const mcpWithHost = (host: string) =>
      rawStatus(
        server.url,
        `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
          `Content-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
    assert.equal(await withHost(`localhost:${port}`), 200);
    assert.equal(await mcpWithHost(`localhost:${port}`), 400, "reaches JSON-RPC checks");
    assert.equal(await mcpWithHost(`127.0.0.1:${port}`), 400);
    assert.equal(
      await mcpWithHost("evil.example"),
      403,
      "DNS rebinding: a foreign Host is refused",
    );
    assert.equal(await mcpWithHost(`evil.example:${port}`), 403);
    assert.equal(await post(server.url, { origin: "https://evil.example" }), 403);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

Deno.test("serve --allow-origin admits that browser origin only", async () => {
  const server = await serveHttp("guardfiles/demo.mcp.kdl", {
    extra: ["--allow-origin", "https://app.example"],
  });
  try {
    assert.equal(await post(server.url, { origin: "https://app.example" }), 200);
    assert.equal(await post(server.url, { origin: "https://other.example" }), 403);
  } finally {
    await server.stop();
  }
});

Deno.test("serve --inbound-token-env: 401 with a Bearer challenge and a reason on /mcp and /api", async () => {
  const server = await serveHttp("guardfiles/demo.mcp.kdl", {
    env: { WEIR_INBOUND: "in-token-1234567890" },
    extra: ["--inbound-token-env", "WEIR_INBOUND"],
  });
  try {
    assert.equal(await post(server.url), 401);
    assert.equal(await post(server.url, { authorization: "Bearer wrong" }), 401);
    assert.equal(await post(server.url, { authorization: "Bearer in-token-1234567890" }), 200);
    // The whole token, nothing more and nothing less.
    for (
      const wrong of [
        "Bearer in-token-1234567890x",
        "Bearer in-token-12345678901",
        "Bearer in-token-123456789",
        "Bearer in-token-1234567890 extra",
        "bearer in-token-1234567890x",
      ]
    ) {
      assert.equal(await post(server.url, { authorization: wrong }), 401, wrong);
    }
    // RFC 6750 section 3.1: no error code without a bearer credential (none, another scheme),
    // invalid_token with a wrong one (every case: tests/e2e/auth_challenge_test.ts).
    for (
      const [path, authorization, challenge] of [
        ["/mcp", undefined, /^Bearer realm="weir"$/],
        [
          "/mcp",
          "Bearer wrong",
          /^Bearer realm="weir", error="invalid_token", error_description="/,
        ],
        ["/api/weir_info", undefined, /^Bearer realm="weir"$/],
        ["/api/weir_info", "Basic d2VpcjpwdwUU", /^Bearer realm="weir"$/],
      ] as const
    ) {
      const res = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(authorization ? { authorization } : {}),
        },
        body: "{}",
      });
      const body = await res.json();
      assert.equal(res.status, 401, path);
      assert.match(res.headers.get("www-authenticate") ?? "", challenge, path);
      assert.equal(res.headers.get("cache-control"), "no-store");
      // The MCP endpoint answers a JSON-RPC error object; the tool API its one error shape.
      const error = path === "/mcp" ? body.error.data : body.error;
      assert.equal(error.status, 401);
      assert.equal(path === "/mcp" ? error.rule : error.code, "auth");
      assert.match(body.error.message, /^Unauthorized: .*Authorization: Bearer <token>/);
    }
    const health = await fetch(`${server.url}/healthz`);
    await health.body?.cancel();
    assert.equal(health.status, 200, "liveness needs no token");
  } finally {
    await server.stop();
  }
  assert.ok(!server.stderr().includes("in-token-1234567890"));
});

Deno.test("serve --inbound-token-env with the variable unset refuses to start", async () => {
  const r = await runCli([
    "serve",
    "guardfiles/demo.mcp.kdl",
    "--http",
    "127.0.0.1:0",
    "--inbound-token-env",
    "NOPE_UNSET",
  ]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /NOPE_UNSET: the variable is not set/);
});

Deno.test("the info tool describes the server and reaches nothing", async () => {
  const r = await runCli(["serve", "guardfiles/demo.mcp.kdl", "--stdio"], {
    stdin: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "weir_info", arguments: {}, _meta: MODERN },
    }) + "\n",
  });
  const reply = JSON.parse(r.stdout);
  assert.deepEqual(reply.result.structuredContent, {
    status: "ok",
    server: "demo",
    mode: "spec",
    toolCount: 6,
    tools: [
      "close_ticket",
      "create_ticket",
      "delete_ticket",
      "get_ticket",
      "list_ticket",
      "weir_info",
    ],
    withheld: ["delete_ticket"],
    resourceCount: 0,
    promptCount: 0,
  });
});

Deno.test("serve --stdio: invalid UTF-8 is a parse error, never silently replaced", async () => {
  const bad = new TextEncoder().encode(
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: MODERN } }),
  );
  const withJunk = new Uint8Array([...bad.subarray(0, 10), 0xff, 0xfe, ...bad.subarray(10), 0x0a]);
  const r = await runCli(["serve", "guardfiles/demo.mcp.kdl", "--stdio"], { stdin: withJunk });
  assert.equal(r.code, 0);
  const reply = JSON.parse(r.stdout);
  assert.equal(reply.error.code, -32700);
  assert.match(reply.error.message, /not valid UTF-8/);
});

Deno.test("serve --http: a Host the URL parser rejects is a 400, not a crash", async () => {
  const server = await serveHttp("guardfiles/demo.mcp.kdl");
  try {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}:80`, "[", "127.0.0.1:99999"]) {
      const status = await rawStatus(
        server.url,
        `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
          `Content-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
      assert.equal(status, 400, host);
    }
    const status = await rawStatus(
      server.url,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(status, 200, "still serving");
  } finally {
    await server.stop();
  }
  assert.doesNotMatch(server.stderr(), /TypeError|at Object/, "no stack trace in the log");
});

Deno.test("serve --http: the loopback Host check follows the bound address, however spelled", async () => {
  // 127.1 is 127.0.0.1 spelled short; the text is not "127.0.0.1" but the socket is loopback.
  const server = await serveHttp("guardfiles/demo.mcp.kdl", { extra: ["--http", "127.1:0"] });
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:/);
    const status = await rawStatus(
      server.url,
      `POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n` +
        `Content-Length: 2\r\nConnection: close\r\n\r\n{}`,
    );
    assert.equal(status, 403);
  } finally {
    await server.stop();
  }
  assert.doesNotMatch(server.stderr(), /no_inbound_auth/, "no beyond-loopback warning");
});

Deno.test("serve --http on a port another process holds: exit 1 naming the address and the way out", async () => {
  const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (holder.addr as Deno.NetAddr).port;
  try {
    const r = await runCli(["serve", "guardfiles/demo.mcp.kdl", "--http", `127.0.0.1:${port}`]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: another process is using that port`),
    );
    assert.match(r.stderr, /--http 127\.0\.0\.1:0 takes any free one/);
  } finally {
    holder.close();
  }
});
