/**
 * The control pipeline's own holds (src/guard/pipeline.ts), with a mode that
 * records what reaches it, where the core or a mode would otherwise stand in
 * front (issue 34 item 10: three stage mutations survived the table of
 * tests/guard/pipeline_table_test.ts):
 *
 * - (b) a caller the core's tool access does not allow is refused by the
 *   pipeline too (a host may call dispatch itself), before any person,
 *   budget or request;
 * - (d) before a cached answer: a tool a person confirms is confirmed on
 *   every call, the cached ones included;
 * - the cache is each caller's own when the caller's identity goes upstream
 *   (`perCaller`, token exchange): one caller's answer is never another's.
 */
import assert from "node:assert/strict";
import type { CallContext, ToolAccess } from "../../mod.ts";
import type { JsonObject } from "../../src/mcp/jsonrpc.ts";
import {
  type CallMode,
  type CallState,
  createPipeline,
  runCall,
  UnboundedCall,
} from "../../src/guard/pipeline.ts";
import { ruleOfError, WeirError } from "../../src/errors/kinds.ts";

/** A mode that checks nothing and answers with the caller and the number of the send. */
function recordingMode() {
  const sent: { tool: string; caller?: string }[] = [];
  const mode: CallMode<CallState & { caller?: string }> = {
    begin: (name, args, ctx, started) => {
      const call = new UnboundedCall(name, args, ctx, started, 0) as CallState & {
        caller?: string;
      };
      call.caller = ctx.caller;
      return call;
    },
    check: (call) => {
      call.args = { ...call.args };
    },
    shown: () => ({ request: "GET /tickets/{id}", identifying: [] }),
    send: (call) => {
      sent.push({ tool: call.tool, caller: call.caller });
      return Promise.resolve();
    },
    answer: (call) => ({
      content: [{ type: "text", text: `answer ${sent.length} for ${call.caller ?? "anyone"}` }],
    }),
  };
  return { mode, sent };
}

/** A 2025-11-25 stdio-like context whose person answers `action`, counting the questions. */
function context(
  asked: { count: number },
  extra: Partial<CallContext> = {},
  action = "accept",
): CallContext {
  return {
    signal: new AbortController().signal,
    era: "legacy",
    elicit: (_params: JsonObject) => {
      asked.count++;
      return Promise.resolve({ action });
    },
    ...extra,
  } as CallContext;
}

const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

function pipeline(perCaller = false) {
  const { mode, sent } = recordingMode();
  const built = createPipeline({
    mode,
    controls: {
      confirm: { close_ticket: "Close this ticket?" },
      cache: { close_ticket: 60_000, get_ticket: 60_000 },
      rejectEmptyArguments: {},
    },
    server: "tickets",
    resolver: { env: () => undefined, readFile: () => Promise.reject(new Error("none")) },
    log: () => {},
    perCaller,
  });
  return { built, sent };
}

Deno.test("(b) a caller its tool access does not allow is refused by the pipeline, before a person or a send", async () => {
  const { built, sent } = pipeline();
  const asked = { count: 0 };
  const only: ToolAccess = { key: "only get_ticket", allows: (name) => name === "get_ticket" };
  for (const tool of ["close_ticket", "get_ticket"]) {
    const ctx = context(asked, { tools: only, caller: "token:bob" });
    if (tool === "get_ticket") {
      assert.equal(text(await runCall(built, tool, { id: "7" }, ctx)), "answer 1 for token:bob");
      continue;
    }
    await assert.rejects(
      runCall(built, tool, { id: "7" }, ctx),
      (e: unknown) => e instanceof WeirError && ruleOfError(e) === "auth",
    );
  }
  assert.equal(asked.count, 0, "no person was asked for the refused call");
  assert.deepEqual(sent.map((s) => s.tool), ["get_ticket"]);
});

Deno.test("(d) a confirmed tool is confirmed on every call, the answer from the cache included", async () => {
  const { built, sent } = pipeline();
  const asked = { count: 0 };
  assert.equal(
    text(await runCall(built, "close_ticket", { id: "7" }, context(asked))),
    "answer 1 for anyone",
  );
  assert.equal(
    text(await runCall(built, "close_ticket", { id: "7" }, context(asked))),
    "answer 1 for anyone",
  );
  assert.equal(asked.count, 2, "the cached answer was handed out without asking");
  assert.equal(sent.length, 1, "the second call came from the cache");
  // A person who declines gets nothing, not even the cached answer.
  await assert.rejects(
    runCall(built, "close_ticket", { id: "7" }, context(asked, {}, "decline")),
    (e: unknown) => e instanceof WeirError && e.kind === "confirmation_declined",
  );
  assert.equal(asked.count, 3);
});

Deno.test("perCaller: one caller's cached answer is never another caller's", async () => {
  const { built, sent } = pipeline(true);
  const asked = { count: 0 };
  const call = async (caller: string) =>
    text(await runCall(built, "get_ticket", { id: "7" }, context(asked, { caller })));
  assert.equal(await call("token:alice"), "answer 1 for token:alice");
  assert.equal(await call("token:bob"), "answer 2 for token:bob");
  assert.equal(await call("token:alice"), "answer 1 for token:alice");
  assert.equal(sent.length, 2);
  // Without perCaller the answer is shared (one upstream credential for every caller).
  const shared = pipeline(false);
  for (const caller of ["token:alice", "token:bob"]) {
    await runCall(shared.built, "get_ticket", { id: "7" }, context(asked, { caller }));
  }
  assert.equal(shared.sent.length, 1);
});
