/**
 * Which revision answers a request: a modern `params._meta` selects
 * 2026-07-28 per request; `initialize` selects 2025-11-25 for the connection
 * and only ever negotiates a handshake version; anything else is told what is
 * missing. An unsupported version is -32022 with `{supported, requested}`.
 */
import assert from "node:assert/strict";
import type { Session } from "../../mod.ts";
import { LEGACY, legacySession, makeServer, MODERN, modern } from "../support/mcp.ts";
import { assertValidResponse } from "../support/schemas.ts";

const { server } = makeServer({
  catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
  dispatch: () => ({ content: [{ type: "text", text: "hi" }] }),
});

async function raw(message: unknown, session?: Session) {
  const reply = await server.handle(message, { session });
  return { status: reply.status, body: JSON.parse(reply.body!) };
}

function initialize(protocolVersion: unknown) {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "c", version: "1" } },
  };
}

Deno.test("initialize echoes a handshake version and answers any other with 2025-11-25", async () => {
  const cases: [string, string][] = [
    ["2025-11-25", "2025-11-25"],
    ["2025-06-18", "2025-06-18"],
    ["2025-03-26", "2025-03-26"],
    ["2024-11-05", "2024-11-05"],
    ["2026-07-28", "2025-11-25"],
    ["2099-01-01", "2025-11-25"],
  ];
  for (const [requested, answered] of cases) {
    const { status, body } = await raw(initialize(requested));
    assertValidResponse(LEGACY, body, "initialize");
    assert.equal(status, 200);
    assert.equal(body.result.protocolVersion, answered, requested);
    assert.deepEqual(body.result.serverInfo, { name: "test-server", version: "0.0.0" });
  }
  const missing = await raw(initialize(undefined));
  assertValidResponse(LEGACY, missing.body);
  assert.equal(missing.body.error.code, -32602);
  assert.equal(missing.body.error.message, "initialize needs params.protocolVersion");
});

Deno.test("an unsupported modern version is -32022 with {supported, requested}, HTTP 400", async () => {
  for (const requested of ["2099-01-01", "2025-11-25", ""]) {
    const message = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": requested,
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    };
    const { status, body } = await raw(message);
    assertValidResponse(MODERN, body);
    assert.equal(status, 400);
    assert.deepEqual(body, {
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32022,
        message: `Unsupported protocol version: ${requested}`,
        data: { supported: ["2026-07-28", "2025-11-25"], requested },
      },
    });
  }
});

Deno.test("a request with no way to tell its revision is told what is missing (-32602, HTTP 400)", async () => {
  const { status, body } = await raw({ jsonrpc: "2.0", id: 3, method: "tools/list" });
  assertValidResponse(MODERN, body);
  assert.equal(status, 400);
  assert.deepEqual(body.error, {
    code: -32602,
    message: 'Missing params._meta["io.modelcontextprotocol/protocolVersion"]: send it ' +
      "(2026-07-28) or start with initialize (2025-11-25)",
    data: { supported: ["2026-07-28", "2025-11-25"] },
  });
});

Deno.test("malformed modern _meta is -32602 with HTTP 400", async () => {
  const cases: [unknown, RegExp][] = [
    [
      { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
      /Missing _meta\["io\.modelcontextprotocol\/clientCapabilities"\]/,
    ],
    [{
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": [],
    }, /clientCapabilities/],
    [{
      "io.modelcontextprotocol/protocolVersion": 2026,
      "io.modelcontextprotocol/clientCapabilities": {},
    }, /protocolVersion"\] must be a string/],
    [
      {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/logLevel": "loud",
      },
      /Unknown log level "loud": params\._meta\["io\.modelcontextprotocol\/logLevel"\] must be one of debug/,
    ],
    ["not an object", /params\._meta must be an object/],
  ];
  for (const [meta, message] of cases) {
    const { status, body } = await raw({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: meta },
    });
    assertValidResponse(MODERN, body);
    assert.equal(status, 400);
    assert.equal(body.error.code, -32602);
    assert.match(body.error.message, message);
  }
  const debug = await modern(server, "tools/list", {
    _meta: { ...modernMeta(), "io.modelcontextprotocol/logLevel": "debug" },
  });
  assert.equal(debug.error, undefined);
});

function modernMeta() {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
}

Deno.test("after initialize a connection answers plain requests under 2025-11-25, and modern ones still as 2026-07-28", async () => {
  const legacy = await legacySession(server);
  const list = await legacy.call("tools/list");
  assert.equal(list.result?.resultType, undefined);
  const pong = await legacy.call("ping");
  assert.deepEqual(pong.result, {});
  const reply = await server.handle(
    { jsonrpc: "2.0", id: 99, method: "tools/list", params: { _meta: modernMeta() } },
    { session: legacy.session },
  );
  const body = assertValidResponse(MODERN, reply.body, "tools/list");
  assert.equal((body.result as Record<string, unknown>).resultType, "complete");
  const discover = await server.handle(
    { jsonrpc: "2.0", id: 100, method: "server/discover", params: { _meta: modernMeta() } },
    { session: legacy.session },
  );
  assertValidResponse(MODERN, discover.body, "server/discover");
});

Deno.test("handshake-only methods do not exist under 2026-07-28 (-32601, HTTP 404)", async () => {
  for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe"]) {
    const reply = await modern(server, method, { protocolVersion: "2025-11-25" });
    assert.equal(reply.status, 404, method);
    assert.deepEqual(reply.error, { code: -32601, message: `Method not found: ${method}` });
  }
  const legacy = await legacySession(server);
  const discover = await legacy.call("server/discover");
  assert.equal(discover.error?.code, -32601);
});
