/**
 * serve-upstream keeps its connection to an HTTP upstream alive between
 * calls (the short path of `tools/call`, src/mcp_upstream/fast_call.ts over
 * weir's HTTP/1.1 client), and reuse never costs the at-most-once rule.
 * Through the shipped CLI with default flags, against an upstream on the
 * official SDK (both revisions, JSON and event-stream answers) behind a raw
 * HTTP/1.1 front that records which connection each request came on:
 *
 * - calls one after another share one kept-alive connection, each request
 *   framed by `Content-Length`;
 * - the upstream closing a kept-alive connection between calls (as a server
 *   ending an idle connection does) costs nothing: the next call goes out on
 *   a new connection, succeeds, and the upstream receives it once;
 * - a reused connection closed after the upstream read the request: the call
 *   fails saying it may have run, and it is never sent again (one receipt);
 *   the next call is served.
 */
import assert from "node:assert/strict";
import { callApi } from "../support/cli.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { type FrontRequest, startClosingFront } from "../support/hop_front.ts";

const ECHO = {
  name: "echo",
  description: "Echo the message.",
  inputSchema: {
    type: "object",
    properties: { message: { type: "string" } },
    required: ["message"],
  },
};

const isCall = (req: FrontRequest) => req.method === "POST" && req.body.includes('"tools/call"');

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  for (const framing of ["json", "sse"] as const) {
    Deno.test(`serve-upstream (${revision}, ${framing}): calls reuse a kept-alive connection; the upstream closing it between calls costs nothing`, async () => {
      const inner = await startSdkUpstream({
        revision,
        framing,
        tools: [ECHO],
        onCall: (input) => ({
          content: [{ type: "text", text: `echo: ${input.arguments?.message}` }],
        }),
      });
      let closeAfterCalls = false;
      const front = startClosingFront(
        inner.url,
        () => false,
        (req) => closeAfterCalls && isCall(req),
      );
      const weir = await startWrapper(["--tool", "echo", "--upstream", front.url]);
      try {
        for (let i = 0; i < 5; i++) {
          const r = await callApi(weir.url, "echo", { message: `kept ${i}` });
          assert.equal(r.status, 200, r.text);
          assert.match(r.text, new RegExp(`echo: kept ${i}`));
        }
        const kept = front.requests.filter(isCall);
        assert.equal(kept.length, 5);
        assert.equal(new Set(kept.map((r) => r.connection)).size, 1, "one kept-alive connection");
        for (const r of kept) {
          assert.equal(
            r.headers.get("content-length"),
            String(new TextEncoder().encode(r.body).length),
          );
          assert.equal(r.headers.get("transfer-encoding"), null);
        }
        // Now the upstream ends each connection right after the call's answer.
        closeAfterCalls = true;
        for (let i = 0; i < 5; i++) {
          const r = await callApi(weir.url, "echo", { message: `closed ${i}` });
          assert.equal(r.status, 200, r.text);
          assert.match(r.text, new RegExp(`echo: closed ${i}`));
          // The close reaches weir while its connection is idle (generously: a busy machine).
          await pause(500);
        }
        const all = front.requests.filter(isCall);
        assert.equal(all.length, 10, "each call received once by the front");
        assert.equal(inner.calls().length, 10, "each call run once upstream");
        const closedOnes = all.slice(5).map((r) => r.connection);
        assert.equal(new Set(closedOnes).size, 5, "a new connection after each close");
        const outcomes = auditOutcomes(weir.stderr());
        assert.deepEqual(outcomes, Array(10).fill("ok"));
      } finally {
        await weir.stop();
        await front.stop();
        await inner.stop();
      }
    });
  }

  Deno.test(`serve-upstream (${revision}): a reused connection closed after the request was read fails the call once, never re-sent`, async () => {
    const inner = await startSdkUpstream({ revision, framing: "json", tools: [ECHO] });
    let closeCalls = false;
    const front = startClosingFront(inner.url, (req) => closeCalls && isCall(req));
    const weir = await startWrapper(["--tool", "echo", "--upstream", front.url]);
    try {
      const first = await callApi(weir.url, "echo", { message: "first" });
      assert.equal(first.status, 200, first.text);
      closeCalls = true;
      const r = await callApi(weir.url, "echo", { message: "read, then closed" });
      assert.equal(r.status, 502, r.text);
      assert.match(r.text, /^upstream_unavailable: calling the tool: /);
      assert.match(r.text, /not retried: it may or may not have run upstream/);
      // Wait for any re-send that might still come (there must be none).
      await pause(1500);
      const calls = front.requests.filter(isCall);
      assert.equal(calls.length, 2, "the second call reached the front once");
      assert.equal(
        calls[1].connection,
        calls[0].connection,
        "it went out on the reused connection",
      );
      assert.equal(inner.calls().length, 1, "the front closed it: the upstream never ran it");
      closeCalls = false;
      const next = await callApi(weir.url, "echo", { message: "next" });
      assert.equal(next.status, 200, next.text);
      assert.equal(front.requests.filter(isCall).length, 3);
      assert.equal(inner.calls().length, 2);
    } finally {
      await weir.stop();
      await front.stop();
      await inner.stop();
    }
  });
}

/** The outcomes of weir's `tool_call` audit lines, in order. */
function auditOutcomes(stderr: string): string[] {
  return stderr.split("\n").flatMap((line) => {
    try {
      const v = JSON.parse(line);
      return v?.event === "tool_call" ? [String(v.outcome)] : [];
    } catch {
      return [];
    }
  });
}
