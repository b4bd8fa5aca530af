/**
 * Multi round-trip requests on every method that may ask (2026-07-28:
 * `tools/call`, `resources/read`, `prompts/get`): a host's reader that throws
 * `InputRequiredError` gets an `InputRequiredResult` (schema-valid, no cache
 * hints), sees the client's answers and echoed state on the retry, and under
 * 2025-11-25 (no multi round-trip) its request is refused naming why.
 */
import assert from "node:assert/strict";
import { InputRequiredError, McpServer } from "../../mod.ts";
import { assertValidResponse, LEGACY, MODERN } from "../support/schemas.ts";
import { MODERN_META } from "../support/mcp.ts";

const ASK = {
  context: {
    method: "elicitation/create",
    params: { message: "Which?", requestedSchema: { type: "object", properties: {} } },
  },
};

function server(): McpServer {
  const answerOf = (
    ctx: { input?: { responses: Record<string, unknown>; requestState?: string } },
  ) => {
    const answer = ctx.input?.responses.context as { action?: string } | undefined;
    if (answer?.action === "accept" && ctx.input?.requestState === "s-1") return "answered";
    throw new InputRequiredError(ASK, "s-1");
  };
  return new McpServer({
    name: "asking",
    catalog: {
      tools: [{ name: "ask" }],
      resources: [{ uri: "demo://ask", name: "ask" }],
      prompts: [{ name: "ask" }],
    },
    dispatch: (_n, _a, ctx) => ({ content: [{ type: "text", text: answerOf(ctx) }] }),
    readResource: (uri, ctx) => [{ uri, text: answerOf(ctx) }],
    getPrompt: (_n, _a, ctx) => ({
      messages: [{ role: "user", content: { type: "text", text: answerOf(ctx) } }],
    }),
    log: () => {},
  });
}

const CALLS: [string, Record<string, unknown>][] = [
  ["tools/call", { name: "ask" }],
  ["resources/read", { uri: "demo://ask" }],
  ["prompts/get", { name: "ask" }],
];

Deno.test("tools/call, resources/read and prompts/get ask through InputRequiredError and finish on the retry (2026-07-28)", async () => {
  const srv = server();
  for (const [method, params] of CALLS) {
    const first = await srv.handle({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: { ...params, _meta: MODERN_META },
    });
    const asked =
      assertValidResponse<{ result: Record<string, unknown> }>(MODERN, first.body, method).result;
    assert.equal(asked.resultType, "input_required", method);
    assert.deepEqual(asked.inputRequests, ASK);
    assert.equal(asked.requestState, "s-1");
    assert.equal("ttlMs" in asked, false, `${method}: no cache hints on input_required`);
    const retry = await srv.handle({
      jsonrpc: "2.0",
      id: 2,
      method,
      params: {
        ...params,
        _meta: MODERN_META,
        inputResponses: { context: { action: "accept", content: {} } },
        requestState: "s-1",
      },
    });
    const done =
      assertValidResponse<{ result: Record<string, unknown> }>(MODERN, retry.body, method).result;
    assert.equal(done.resultType, "complete", method);
    assert.match(JSON.stringify(done), /answered/, method);
  }
});

Deno.test("under 2025-11-25 a reader that asks is refused, naming why (no multi round-trip there)", async () => {
  const srv = server();
  for (const [method, params] of CALLS) {
    const reply = await srv.handle(
      { jsonrpc: "2.0", id: 3, method, params },
      { headers: new Headers({ "mcp-protocol-version": LEGACY }) },
    );
    const body = JSON.parse(reply.body!);
    if (method === "tools/call") {
      assert.equal(body.result.isError, true);
      assert.match(body.result.content[0].text, /needs input from the client/);
    } else {
      assert.equal(body.error.code, -32602, method);
      assert.match(body.error.message, /needs input from the client .* use 2026-07-28/, method);
    }
  }
});
