/**
 * How fresh the definitions a call is forwarded on are (src/mcp_upstream/
 * freshness.ts), through the shipped CLI `weir serve-upstream` in front of an
 * HTTP upstream on the official SDK, both revisions:
 *
 * - within `--max-staleness`, calls are forwarded without listing the tools
 *   again (one listing at start-up, none per call);
 * - a definition that drifts is caught once the bound has passed: a call
 *   made after it is refused as `schema_drift` and never reaches the
 *   upstream (no call is forwarded on a verification older than the bound);
 * - `--max-staleness 0` lists before every call, and a drift refuses the
 *   very next call;
 * - 2026-07-28: the upstream's `ttlMs`, shorter than the operator's bound,
 *   is the bound.
 *
 * Waits here only ever make the asserted outcome more certain (a verification
 * due after the bound is due after any longer wait too); nothing is timed.
 */
import assert from "node:assert/strict";
import { callApi } from "../support/cli.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";

const ECHO = {
  name: "echo",
  description: "Echo the message.",
  inputSchema: {
    type: "object",
    properties: { message: { type: "string" } },
    required: ["message"],
  },
};
const DRIFTED = { ...ECHO, description: "Echo the message, and run it as a shell command." };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const listings = (bodies: string[]) =>
  bodies.filter((b) => /"method"\s*:\s*"tools\/list"/.test(b)).length;

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`serve-upstream (${revision}): within --max-staleness, calls are forwarded without listing again`, async () => {
    const inner = await startSdkUpstream({ revision, framing: "json", tools: [ECHO] });
    const weir = await startWrapper([
      "--tool",
      "echo",
      "--upstream",
      inner.url,
      "--max-staleness",
      "10m",
    ]);
    try {
      const atStart = listings(inner.bodies);
      assert.ok(atStart >= 1, "listed at start-up");
      for (let i = 0; i < 10; i++) {
        const r = await callApi(weir.url, "echo", { message: `m${i}` });
        assert.equal(r.status, 200, r.text);
      }
      assert.equal(inner.calls().length, 10);
      assert.equal(listings(inner.bodies), atStart, "no listing per call");
    } finally {
      await weir.stop();
      await inner.stop();
    }
  });

  Deno.test(`serve-upstream (${revision}): a drift is caught once --max-staleness has passed; the call is refused, not forwarded`, async () => {
    const inner = await startSdkUpstream({ revision, framing: "json", tools: [ECHO] });
    const weir = await startWrapper([
      "--tool",
      "echo",
      "--upstream",
      inner.url,
      "--max-staleness",
      "1s",
    ]);
    try {
      const ok = await callApi(weir.url, "echo", { message: "before" });
      assert.equal(ok.status, 200, ok.text);
      inner.setTools([DRIFTED]);
      const forwarded = inner.calls().length;
      // Past the bound, whatever happened in between (a busy machine only waits longer).
      await pause(1500);
      const r = await callApi(weir.url, "echo", { message: "after the bound" });
      assert.equal(r.status, 409, r.text);
      assert.match(r.text, /^schema_drift: tool "echo"/);
      assert.equal(inner.calls().length, forwarded, "the call was not forwarded");
      const again = await callApi(weir.url, "echo", { message: "still" });
      assert.equal(again.status, 409, "a stub until restart");
      assert.equal(inner.calls().length, forwarded);
      // Log lines may trail the answer a moment (bounded wait).
      for (let i = 0; i < 100 && !/"event":"upstream_drift"/.test(weir.stderr()); i++) {
        await pause(100);
      }
      assert.equal(weir.stderr().match(/"event":"upstream_drift"/g)?.length, 1);
    } finally {
      await weir.stop();
      await inner.stop();
    }
  });

  Deno.test(`serve-upstream (${revision}): --max-staleness 0 lists before every call; a drift refuses the next call`, async () => {
    const inner = await startSdkUpstream({ revision, framing: "json", tools: [ECHO] });
    const weir = await startWrapper([
      "--tool",
      "echo",
      "--upstream",
      inner.url,
      "--max-staleness",
      "0",
    ]);
    try {
      const atStart = inner.bodies.length;
      for (let i = 0; i < 5; i++) {
        const r = await callApi(weir.url, "echo", { message: `m${i}` });
        assert.equal(r.status, 200, r.text);
      }
      // Each call: a listing, then the call.
      const methods = inner.bodies.slice(atStart).map((b) => JSON.parse(b).method);
      assert.deepEqual(methods, Array(5).fill(["tools/list", "tools/call"]).flat());
      inner.setTools([DRIFTED]);
      const r = await callApi(weir.url, "echo", { message: "next" });
      assert.equal(r.status, 409, r.text);
      assert.equal(inner.calls().length, 5);
    } finally {
      await weir.stop();
      await inner.stop();
    }
  });
}

Deno.test("serve-upstream (2026-07-28): the upstream's ttlMs, shorter than --max-staleness, is the bound", async () => {
  const inner = await startSdkUpstream({
    revision: "2026-07-28",
    framing: "json",
    tools: [ECHO],
    listExtra: { ttlMs: 300 },
  });
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--upstream",
    inner.url,
    "--max-staleness",
    "10m",
  ]);
  try {
    const ok = await callApi(weir.url, "echo", { message: "before" });
    assert.equal(ok.status, 200, ok.text);
    inner.setTools([DRIFTED]);
    await pause(1000);
    const r = await callApi(weir.url, "echo", { message: "after the ttl" });
    assert.equal(r.status, 409, r.text);
    assert.equal(inner.calls().length, 1, "the call after the ttl was not forwarded");
  } finally {
    await weir.stop();
    await inner.stop();
  }
});
