/**
 * 2026-07-28 over HTTP: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
 * `Mcp-Param-*` must agree with the body they describe; a missing, malformed
 * or disagreeing header is -32020 HeaderMismatch with HTTP 400. The body is
 * the truth; 2025-11-25 requests are not held to these headers.
 */
import assert from "node:assert/strict";
import {
  makeServer,
  MODERN_META,
  modernHeaders,
  modernRequest,
  openHandler,
  post,
} from "../support/mcp.ts";
import { assertValidResponse, LEGACY, MODERN } from "../support/schemas.ts";

const calls: Record<string, unknown>[] = [];
const { server } = makeServer({
  catalog: {
    tools: [{
      name: "create_issue",
      inputSchema: {
        type: "object",
        properties: {
          owner: { type: "string", "x-mcp-header": "Owner" },
          count: { type: "integer", "x-mcp-header": "Count" },
          draft: { type: "boolean", "x-mcp-header": "Draft" },
          note: { type: ["string", "null"] },
          meta: {
            type: "object",
            properties: { kind: { type: "string", "x-mcp-header": "Kind" } },
          },
        },
      },
    }],
    resources: [{ uri: "demo://caf%C3%A9", name: "cafe" }],
    prompts: [{ name: "hello" }, { name: "caf\u00e9" }],
  },
  dispatch: (_name, args) => {
    calls.push(args);
    return { content: [{ type: "text", text: "ok" }] };
  },
  readResource: (uri) => [{ uri, text: "menu" }],
  getPrompt: () => ({ messages: [] }),
});
const handler = openHandler(server);

async function send(body: Record<string, unknown>, headers: Record<string, string>) {
  const response = await post(handler, body, headers);
  const parsed = assertValidResponse<{ error?: { code: number; message: string } }>(
    MODERN,
    response.text,
    body.method as string,
  );
  return { status: response.status, error: parsed.error };
}

async function mismatch(
  body: Record<string, unknown>,
  headers: Record<string, string>,
  message: RegExp,
) {
  const reply = await send(body, headers);
  assert.equal(reply.status, 400, message.source);
  assert.equal(reply.error?.code, -32020, message.source);
  assert.match(reply.error!.message, /^Header mismatch: /);
  assert.match(reply.error!.message, message);
}

const without = (headers: Record<string, string>, name: string) => {
  const copy = { ...headers };
  delete copy[name];
  return copy;
};

function call(args: Record<string, unknown>) {
  return modernRequest("tools/call", { name: "create_issue", arguments: args });
}

Deno.test("MCP-Protocol-Version must be present and equal the body's version", async () => {
  const body = modernRequest("tools/list");
  const headers = modernHeaders("tools/list");
  await mismatch(
    body,
    without(headers, "mcp-protocol-version"),
    /MCP-Protocol-Version header is missing/,
  );
  await mismatch(
    body,
    { ...headers, "mcp-protocol-version": "2025-11-25" },
    /MCP-Protocol-Version header does not match/,
  );
  assert.equal((await send(body, headers)).status, 200);
});

Deno.test("Mcp-Method must be present and equal the body's method", async () => {
  const body = modernRequest("tools/list");
  const headers = modernHeaders("tools/list");
  await mismatch(body, without(headers, "mcp-method"), /Mcp-Method header is missing/);
  await mismatch(
    body,
    { ...headers, "mcp-method": "prompts/list" },
    /Mcp-Method header does not match/,
  );
  await mismatch(
    body,
    { ...headers, "mcp-method": "TOOLS/LIST" },
    /Mcp-Method header does not match/,
  );
});

Deno.test("Mcp-Name mirrors params.name of tools/call and prompts/get, and params.uri of resources/read", async () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [call({}), "tools/call", "create_issue"],
    [modernRequest("prompts/get", { name: "hello" }), "prompts/get", "hello"],
    [
      modernRequest("resources/read", { uri: "demo://caf%C3%A9" }),
      "resources/read",
      "demo://caf%C3%A9",
    ],
    [modernRequest("prompts/get", { name: "caf\u00e9" }), "prompts/get", "=?base64?Y2Fmw6k=?="],
  ];
  for (const [body, method, name] of cases) {
    const headers = modernHeaders(method, name);
    assert.equal((await send(body, headers)).status, 200, method);
    await mismatch(body, without(headers, "mcp-name"), /Mcp-Name header is missing/);
    await mismatch(
      body,
      { ...headers, "mcp-name": "something_else" },
      /Mcp-Name header does not match/,
    );
  }
});

Deno.test("a header value outside visible ASCII must use the base64 sentinel", async () => {
  const body = modernRequest("prompts/get", { name: "caf\u00e9" });
  await mismatch(
    body,
    modernHeaders("prompts/get", "caf\u00e9"),
    /Mcp-Name header is not a valid header value/,
  );
  await mismatch(body, modernHeaders("prompts/get", "=?base64?not base64?="), /Mcp-Name header/);
  await mismatch(
    body,
    modernHeaders("prompts/get", "=?base64?/w==?="),
    /Mcp-Name header is not a valid header value/,
  );
});

Deno.test("Mcp-Param-* headers mirror the x-mcp-header arguments of tools/call", async () => {
  const base = modernHeaders("tools/call", "create_issue");
  const good = {
    ...base,
    "mcp-param-owner": "acme",
    "mcp-param-count": "42",
    "mcp-param-draft": "true",
  };
  const args = { owner: "acme", count: 42, draft: true };
  calls.length = 0;
  assert.equal((await send(call(args), good)).status, 200);
  assert.equal(
    (await send(call(args), { ...good, "mcp-param-count": "42.0" })).status,
    200,
    "numeric comparison",
  );
  assert.equal(
    (await send(call(args), { ...without(good, "mcp-param-owner"), "MCP-PARAM-OWNER": "acme" }))
      .status,
    200,
    "names ignore case",
  );
  assert.equal((await send(call({ note: null }), base)).status, 200, "no argument, no header");
  assert.equal(
    (await send(call({ owner: null }), base)).status,
    200,
    "a null argument needs no header",
  );
  assert.equal(
    (await send(call({ owner: "Z\u00fcrich" }), {
      ...base,
      "mcp-param-owner": "=?base64?WsO8cmljaA==?=",
    })).status,
    200,
  );
  assert.equal(calls.length, 5, "all but the null owner (refused by the schema, not the headers)");

  await mismatch(
    call(args),
    without(good, "mcp-param-owner"),
    /Mcp-Param-Owner is missing for argument "owner"/,
  );
  await mismatch(
    call(args),
    { ...good, "mcp-param-owner": "evil" },
    /Mcp-Param-Owner does not match argument "owner"/,
  );
  await mismatch(
    call(args),
    { ...good, "mcp-param-count": "43" },
    /Mcp-Param-Count does not match/,
  );
  await mismatch(
    call(args),
    { ...good, "mcp-param-count": "4.2e1" },
    /Mcp-Param-Count does not match/,
  );
  await mismatch(
    call(args),
    { ...good, "mcp-param-draft": "True" },
    /Mcp-Param-Draft does not match/,
  );
  await mismatch(
    call({}),
    { ...base, "mcp-param-owner": "acme" },
    /Mcp-Param-Owner is sent but argument "owner" is absent/,
  );
  await mismatch(
    call({ owner: "Z\u00fcrich" }),
    { ...base, "mcp-param-owner": "Z\u00fcrich" },
    /Mcp-Param-Owner is not a valid header value/,
  );
  assert.equal(calls.length, 5, "no mismatched call was dispatched");
});

Deno.test("headers are checked before the version: -32020 wins over -32022", async () => {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: { _meta: { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
  };
  await mismatch(body, modernHeaders("tools/list"), /MCP-Protocol-Version header does not match/);
  const unsupported = await send(body, {
    ...modernHeaders("tools/list"),
    "mcp-protocol-version": "2099-01-01",
  });
  assert.equal(unsupported.status, 400);
  assert.equal(unsupported.error?.code, -32022);
});

Deno.test("2025-11-25 requests are not held to the 2026-07-28 headers", async () => {
  const response = await post(handler, { jsonrpc: "2.0", id: 5, method: "tools/list" }, {
    "content-type": "application/json",
    accept: "application/json",
    "mcp-protocol-version": "2025-11-25",
    "mcp-method": "prompts/list",
  });
  assert.equal(response.status, 200);
  assertValidResponse(LEGACY, response.text, "tools/list");
});

Deno.test("an x-mcp-header deeper in the properties chain is mirrored too", async () => {
  const base = modernHeaders("tools/call", "create_issue");
  const args = { meta: { kind: "bug" } };
  assert.equal((await send(call(args), { ...base, "mcp-param-kind": "bug" })).status, 200);
  await mismatch(call(args), base, /Mcp-Param-Kind is missing for argument "meta\.kind"/);
  await mismatch(
    call(args),
    { ...base, "mcp-param-kind": "feature" },
    /Mcp-Param-Kind does not match argument "meta\.kind"/,
  );
  await mismatch(
    call({ meta: {} }),
    { ...base, "mcp-param-kind": "bug" },
    /is sent but argument "meta\.kind" is absent/,
  );
});
