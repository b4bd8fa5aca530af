/**
 * JSON-RPC errors, exactly per revision: unknown methods (-32601; HTTP 404
 * under 2026-07-28), batches and malformed envelopes (-32600, no element
 * processed), parse errors (-32700, no id), and notifications never answered.
 */
import assert from "node:assert/strict";
import { ask, LEGACY, makeServer, MODERN, MODERN_META, REVISIONS } from "../support/mcp.ts";
import { assertValidResponse } from "../support/schemas.ts";

function server() {
  let dispatched = 0;
  const made = makeServer({
    catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
    dispatch: () => {
      dispatched++;
      return { content: [{ type: "text", text: "hi" }] };
    },
  });
  return { ...made, dispatched: () => dispatched };
}

Deno.test("an unknown method is -32601 naming it: HTTP 200 under 2025-11-25, 404 under 2026-07-28", async () => {
  const { server: s, events } = server();
  const names = [
    "tools/delete",
    "constructor",
    "__proto__",
    "toString",
    "hasOwnProperty",
    "valueOf",
    "",
  ];
  for (const revision of REVISIONS) {
    for (const method of names) {
      const reply = await ask(s, revision, method);
      assert.deepEqual(reply.error, { code: -32601, message: `Method not found: ${method}` });
      assert.equal(reply.status, revision === MODERN ? 404 : 200, `${revision} ${method}`);
    }
  }
  assert.deepEqual(events.filter((e) => e.event === "internal_error"), []);
});

Deno.test("a method whose capability is not advertised is -32601", async () => {
  const { server: toolsOnly } = server();
  for (const revision of REVISIONS) {
    for (const method of ["resources/list", "resources/read", "prompts/list", "prompts/get"]) {
      const reply = await ask(toolsOnly, revision, method, { name: "x", uri: "demo://x" });
      assert.equal(reply.error?.code, -32601, `${revision} ${method}`);
    }
  }
  const { server: none } = makeServer({ catalog: { tools: [], resources: [], prompts: [] } });
  assert.equal((await ask(none, MODERN, "tools/list")).error?.code, -32601);
});

Deno.test("features this server does not offer are -32601", async () => {
  const { server: s } = server();
  for (const revision of REVISIONS) {
    for (
      const method of [
        "completion/complete",
        "subscriptions/listen",
        "tasks/get",
        "logging/setLevel",
      ]
    ) {
      assert.equal((await ask(s, revision, method)).error?.code, -32601, `${revision} ${method}`);
    }
  }
});

Deno.test("a batch is refused whole: -32600 without id, HTTP 400, no element processed", async () => {
  const { server: s, dispatched } = server();
  const call = (id: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", _meta: MODERN_META },
  });
  for (const batch of [[call(1), call(2)], [call(3)], []]) {
    const reply = await s.handle(batch);
    assert.equal(reply.status, 400);
    const body = assertValidResponse([LEGACY, MODERN], reply.body);
    assert.deepEqual(body, {
      jsonrpc: "2.0",
      error: {
        code: -32600,
        message: "JSON-RPC batches are not supported; send one message per request",
      },
    });
  }
  assert.equal(dispatched(), 0);
});

Deno.test("a parse error is -32700 without id, HTTP 400", () => {
  const { server: s } = server();
  const reply = s.parseError();
  assert.equal(reply.status, 400);
  assert.deepEqual(assertValidResponse([LEGACY, MODERN], reply.body), {
    jsonrpc: "2.0",
    error: { code: -32700, message: "Parse error: the message is not valid JSON" },
  });
});

Deno.test("a malformed envelope is -32600, keeping the id when it can be read", async () => {
  const { server: s, dispatched } = server();
  const cases: [unknown, string | number | undefined, string][] = [
    [{ jsonrpc: "1.0", id: 4, method: "tools/list" }, 4, 'jsonrpc must be "2.0"'],
    [{ id: 5, method: "tools/list" }, 5, 'jsonrpc must be "2.0"'],
    [
      { jsonrpc: "2.0", id: null, method: "tools/list" },
      undefined,
      "id must be a string or an integer",
    ],
    [
      { jsonrpc: "2.0", id: 1.5, method: "tools/list" },
      undefined,
      "id must be a string or an integer",
    ],
    [
      { jsonrpc: "2.0", id: { a: 1 }, method: "tools/list" },
      undefined,
      "id must be a string or an integer",
    ],
    [{ jsonrpc: "2.0", id: "s", method: 42 }, "s", "method must be a string"],
    [{ jsonrpc: "2.0", id: 6, method: "tools/list", params: [1] }, 6, "params must be an object"],
    [{ jsonrpc: "2.0", id: 7 }, 7, "a JSON-RPC message needs a method"],
    [
      { jsonrpc: "2.0", id: 8, method: "tools/list", _meta: MODERN_META },
      8,
      "_meta belongs in params._meta, not at the top level",
    ],
    [
      { jsonrpc: "2.0", id: 9, method: "tools/call", result: {} },
      9,
      "a message is a request or a response, not both (method with result/error)",
    ],
    ["tools/list", undefined, "a JSON-RPC message must be a JSON object"],
    [null, undefined, "a JSON-RPC message must be a JSON object"],
  ];
  for (const [message, id, text] of cases) {
    const reply = await s.handle(message);
    assert.equal(reply.status, 400, JSON.stringify(message));
    const body = assertValidResponse<Record<string, unknown>>([LEGACY, MODERN], reply.body);
    const expected: Record<string, unknown> = {
      jsonrpc: "2.0",
      error: { code: -32600, message: text },
    };
    if (id !== undefined) expected.id = id;
    assert.deepEqual(body, expected);
  }
  assert.equal(dispatched(), 0);
});

Deno.test("notifications and client responses are never answered (HTTP 202, no body)", async () => {
  const { server: s } = server();
  const silent = [
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
    { jsonrpc: "2.0", method: "notifications/unknown/thing", params: { _meta: MODERN_META } },
    { jsonrpc: "2.0", id: 3, result: {} },
    { jsonrpc: "2.0", id: 4, error: { code: -1, message: "no" } },
  ];
  for (const message of silent) {
    assert.deepEqual(await s.handle(message), { status: 202, body: null });
  }
});

Deno.test("a string id comes back unchanged", async () => {
  const { server: s } = server();
  const reply = await s.handle({
    jsonrpc: "2.0",
    id: "req-\u00e9-1",
    method: "tools/list",
    params: { _meta: MODERN_META },
  });
  assert.equal(assertValidResponse(MODERN, reply.body, "tools/list").id, "req-\u00e9-1");
});
