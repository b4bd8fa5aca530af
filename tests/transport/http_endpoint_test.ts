/**
 * The MCP HTTP endpoint as a client meets it: POST only (405 for GET and
 * DELETE), 202 with no body for notifications, JSON answers with the status
 * each revision gives an error, no sessions, and media types checked.
 */
import assert from "node:assert/strict";
import {
  initializeRequest,
  makeServer,
  MODERN_META,
  modernHeaders,
  modernRequest,
  openHandler,
  post,
} from "../support/mcp.ts";
import { assertValidResponse, LEGACY, MODERN } from "../support/schemas.ts";

function endpoint() {
  const { server } = makeServer({
    catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
    dispatch: () => ({ content: [{ type: "text", text: "hi" }] }),
  });
  return openHandler(server);
}

Deno.test("GET, DELETE and every other non-POST method is 405 with Allow: POST", async () => {
  const handler = endpoint();
  for (const method of ["GET", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"]) {
    const response = await handler(
      new Request("http://127.0.0.1/mcp", {
        method,
        headers: { accept: "text/event-stream", "mcp-session-id": "abc" },
      }),
    );
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get("allow"), "POST");
    const text = await response.text();
    if (method !== "HEAD") {
      assertValidResponse([LEGACY, MODERN], text);
      assert.equal(JSON.parse(text).error.code, -32600);
    }
  }
});

Deno.test("a notification is answered 202 with an empty body", async () => {
  const handler = endpoint();
  for (
    const message of [
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } },
    ]
  ) {
    const response = await post(handler, message);
    assert.equal(response.status, 202);
    assert.equal(response.text, "");
  }
});

Deno.test("a 2026-07-28 request is answered 200 with one JSON object and no session", async () => {
  const handler = endpoint();
  const response = await post(
    handler,
    modernRequest("tools/list"),
    modernHeaders("tools/list", undefined, { "mcp-session-id": "legacy-session" }),
  );
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.equal(response.headers.get("cache-control"), null, "one header: Deno's fast path");
  assert.equal(response.headers.get("mcp-session-id"), null);
  assertValidResponse(MODERN, response.text, "tools/list");
});

Deno.test("a 2025-11-25 client works without sessions: initialize, then the version header", async () => {
  const handler = endpoint();
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const init = await post(handler, initializeRequest(1), headers);
  assert.equal(init.status, 200);
  assert.equal(init.headers.get("mcp-session-id"), null, "no session is minted");
  assertValidResponse(LEGACY, init.text, "initialize");
  const list = await post(
    handler,
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { ...headers, "mcp-protocol-version": "2025-11-25" },
  );
  assert.equal(list.status, 200);
  const body = assertValidResponse(LEGACY, list.text, "tools/list");
  assert.equal((body.result as Record<string, unknown>).resultType, undefined);
  const unknown = await post(handler, { jsonrpc: "2.0", id: 3, method: "tools/list" }, {
    ...headers,
    "mcp-protocol-version": "1999-01-01",
  });
  assert.equal(unknown.status, 400, "an unknown version header is refused");
  assertValidResponse(MODERN, unknown.text);
});

Deno.test("errors carry the HTTP status of their revision", async () => {
  const handler = endpoint();
  const cases: [unknown, Record<string, string>, number, number][] = [
    ["{not json", modernHeaders("tools/list"), 400, -32700],
    [[modernRequest("tools/list")], modernHeaders("tools/list"), 400, -32600],
    [{ jsonrpc: "2.0", id: 1, method: "tools/list" }, modernHeaders("tools/list"), 400, -32602],
    [modernRequest("nope/nothing"), modernHeaders("nope/nothing"), 404, -32601],
    [
      modernRequest("tools/call", { name: "missing" }),
      modernHeaders("tools/call", "missing"),
      200,
      -32602,
    ],
    [
      {
        jsonrpc: "2.0",
        id: 9,
        method: "tools/list",
        params: {
          _meta: { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
        },
      },
      { ...modernHeaders("tools/list"), "mcp-protocol-version": "2099-01-01" },
      400,
      -32022,
    ],
  ];
  for (const [body, headers, status, code] of cases) {
    const response = await post(handler, body, headers);
    assert.equal(response.status, status, JSON.stringify(body));
    const parsed = assertValidResponse<{ error: { code: number } }>(
      [LEGACY, MODERN].filter((r) => code === -32700 || code === -32600 || r === MODERN),
      response.text,
    );
    assert.equal(parsed.error.code, code);
  }
});

Deno.test("a body that is not UTF-8 JSON is a parse error", async () => {
  const handler = endpoint();
  const response = await handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: modernHeaders("tools/list"),
      body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    }),
  );
  assert.equal(response.status, 400);
  assert.equal(
    assertValidResponse<{ error: { code: number } }>([LEGACY, MODERN], await response.text()).error
      .code,
    -32700,
  );
});

Deno.test("media types: JSON in (415 otherwise), JSON out (406 when the client takes none)", async () => {
  const handler = endpoint();
  const body = modernRequest("tools/list");
  for (const type of ["text/plain", "application/x-www-form-urlencoded", ""]) {
    const response = await post(handler, body, {
      ...modernHeaders("tools/list"),
      "content-type": type,
    });
    assert.equal(response.status, 415, type);
    assertValidResponse([LEGACY, MODERN], response.text);
  }
  const charset = await post(handler, body, {
    ...modernHeaders("tools/list"),
    "content-type": "application/json; charset=utf-8",
  });
  assert.equal(charset.status, 200);
  assertValidResponse(MODERN, charset.text, "tools/list");
  const sseOnly = await post(handler, body, {
    ...modernHeaders("tools/list"),
    accept: "text/event-stream",
  });
  assert.equal(sseOnly.status, 406);
  assertValidResponse([LEGACY, MODERN], sseOnly.text);
  for (const accept of ["application/json", "*/*", "application/*;q=0.5"]) {
    const response = await post(handler, body, { ...modernHeaders("tools/list"), accept });
    assert.equal(response.status, 200, accept);
    assertValidResponse(MODERN, response.text, "tools/list");
  }
});
