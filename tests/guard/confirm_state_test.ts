/**
 * ConfirmGate.confirm() and the core, on what a retry's `requestState` makes
 * of a gated call (issue 22, kind 6): a state that does not verify is a
 * JSON-RPC `-32602` naming why (never a new question), an expired one or a
 * valid one without an answer is asked again, and the core passes a host's
 * `McpError` through as the JSON-RPC error (a 400 `invalid_params` on the
 * tool API). The clock is moved, not waited for.
 */
import assert from "node:assert/strict";
import { CONFIRM_INPUT, CONFIRM_TTL_MS, ConfirmGate } from "../../src/guard/confirm.ts";
import {
  createToolApiHandler,
  ErrorCode,
  InputRequiredError,
  McpError,
  McpServer,
} from "../../mod.ts";
import type { CallContext } from "../../src/mcp/options.ts";
import { MODERN_META } from "../support/mcp.ts";

function ctx(requestState?: string, answer?: unknown): CallContext {
  return {
    signal: new AbortController().signal,
    era: "modern",
    protocolVersion: "2026-07-28",
    input: {
      responses: answer === undefined ? {} : { [CONFIRM_INPUT]: answer as never },
      clientCapabilities: { elicitation: {} },
      requestState,
    },
  } as CallContext;
}

async function asked(gate: ConfirmGate, args: Record<string, unknown>, c: CallContext) {
  try {
    await gate.confirm("delete_ticket", args, c);
  } catch (error) {
    return error;
  }
  return "ran";
}

Deno.test("ConfirmGate.confirm(): expired or unanswered asks again; every other refusal is -32602 with its reason", async () => {
  const gate = new ConfirmGate({ delete_ticket: "Delete it?" });
  const args = { id: "7" };
  const first = await asked(gate, args, ctx());
  assert.ok(first instanceof InputRequiredError);
  const state = first.requestState!;

  // A valid state without an answer: asked again.
  assert.ok(await asked(gate, args, ctx(state, undefined)) instanceof InputRequiredError);
  assert.ok(await asked(gate, args, ctx(state, { action: "maybe" })) instanceof InputRequiredError);

  // Expired: asked again, with a fresh state (the clock moved past the question's life).
  const realNow = Date.now;
  try {
    Date.now = () => realNow() + CONFIRM_TTL_MS + 1000;
    const again = await asked(gate, args, ctx(state, { action: "accept" }));
    assert.ok(again instanceof InputRequiredError, String(again));
    assert.notEqual(again.requestState, state);
  } finally {
    Date.now = realNow;
  }

  // Refused as invalid params, each with its reason.
  const cases: [string, CallContext, Record<string, unknown>][] = [
    ["malformed", ctx("not-a-state", { action: "accept" }), args],
    ["unsigned", ctx(state.slice(0, -3) + "AAA", { action: "accept" }), args],
    ["other_call", ctx(state, { action: "accept" }), { id: "8" }],
  ];
  const otherGate = new ConfirmGate({ delete_ticket: "Delete it?" });
  const foreign = (await asked(otherGate, args, ctx())) as InputRequiredError;
  cases.push(["unsigned", ctx(foreign.requestState, { action: "accept" }), args]);
  for (const [reason, c, a] of cases) {
    const error = await asked(gate, a, c);
    assert.ok(error instanceof McpError, `${reason}: ${error}`);
    assert.equal(error.code, ErrorCode.InvalidParams);
    assert.deepEqual(error.data, { reason });
    assert.match(error.message, /Call the tool again without requestState/);
  }

  // Accepted once, then spent.
  assert.equal(await asked(gate, args, ctx(state, { action: "accept" })), "ran");
  const replay = await asked(gate, args, ctx(state, { action: "accept" }));
  assert.ok(replay instanceof McpError);
  assert.deepEqual(replay.data, { reason: "spent" });
});

Deno.test("a host's McpError from dispatch is the JSON-RPC error over MCP, and a 400 invalid_params over the tool API", async () => {
  const server = new McpServer({
    name: "host",
    catalog: { tools: [{ name: "strict" }], resources: [], prompts: [] },
    dispatch: () => {
      throw new McpError(ErrorCode.InvalidParams, "that state is not one of mine", { why: "x" });
    },
    log: () => {},
  });
  for (const protocolVersion of ["2025-11-25", "2026-07-28"]) {
    const reply = await server.handle(
      protocolVersion === "2026-07-28"
        ? {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "strict", _meta: MODERN_META },
        }
        : { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "strict" } },
      protocolVersion === "2025-11-25"
        ? { headers: new Headers({ "mcp-protocol-version": "2025-11-25" }) }
        : {},
    );
    const body = JSON.parse(reply.body!);
    assert.equal(body.id, 3);
    assert.deepEqual(body.error, {
      code: -32602,
      message: "that state is not one of mine",
      data: { why: "x" },
    }, protocolVersion);
  }
  const api = createToolApiHandler(server, { authorize: () => true, allowedOrigins: [] });
  const response = await api(
    new Request("http://127.0.0.1/api/strict", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    }),
  );
  assert.equal(response.status, 400);
  const body = await response.json();
  assert.equal(body.isError, true);
  assert.deepEqual(body.error, {
    code: "invalid_params",
    message: "that state is not one of mine",
    status: 400,
  });
});

Deno.test("ConfirmGate.confirm(): a confirmation's state is its caller's: another caller cannot answer it", async () => {
  // issue 34 item 10: a state opened without its caller let one caller's
  // confirmation run another's call.
  const gate = new ConfirmGate({ delete_ticket: "Delete it?" });
  const args = { id: "7" };
  const as = (caller: string | undefined, requestState?: string, answer?: unknown) => ({
    ...ctx(requestState, answer),
    ...(caller === undefined ? {} : { caller }),
  } as CallContext);
  const question = await asked(gate, args, as("token:alice"));
  assert.ok(question instanceof InputRequiredError);
  for (const other of ["token:mallory", undefined]) {
    const error = await asked(gate, args, as(other, question.requestState, { action: "accept" }));
    assert.ok(error instanceof McpError, `${other}: ${error}`);
    assert.deepEqual(error.data, { reason: "unsigned" });
  }
  assert.equal(
    await asked(gate, args, as("token:alice", question.requestState, { action: "accept" })),
    "ran",
  );
});
