/**
 * The hop from serve-upstream to an HTTP upstream, through the shipped CLI
 * and an upstream built on the official SDK (both revisions), with a front
 * that misbehaves on purpose:
 *
 * - no redirect is followed: every 3xx status, to the same path, another
 *   path or another host, for the POST of a call and the GET of the
 *   standalone stream, fails with an error naming the status and the
 *   location's origin, and nothing at all reaches the target;
 * - a call is delivered at most once: a connection closed after the request
 *   was read is one receipt upstream and an error to the caller, not a retry;
 * - the size cap holds on every framing: one big event, many small events,
 *   a line with no end, a gzip bomb inside an event stream, each refused as
 *   the cap is passed (the request timeout is set far beyond the test's own
 *   wait, so a timeout could not pass for it), with weir's memory bounded.
 *
 * Each outcome leaves its audit line, asserted here.
 */
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { callApi } from "../support/cli.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { type FrontRequest, startClosingFront, startFront } from "../support/hop_front.ts";
import { until } from "../support/wait.ts";

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

/**
 * The `tool_call` audit lines weir wrote, once there are `count` of them
 * (stderr is read as it comes: a line may trail the answer a moment; waits
 * at most 10 s).
 */
async function toolCallLines(
  weir: { stderr(): string },
  count: number,
): Promise<Record<string, unknown>[]> {
  let lines: Record<string, unknown>[] = [];
  await until(() =>
    (lines = auditLines(weir.stderr()).filter((l) => l.event === "tool_call")).length >= count
  );
  return lines;
}

/** The audit lines weir wrote, parsed. */
function auditLines(stderr: string): Record<string, unknown>[] {
  return stderr.split("\n").flatMap((line) => {
    try {
      const v = JSON.parse(line);
      return v && typeof v === "object" ? [v] : [];
    } catch {
      return [];
    }
  });
}

Deno.test("serve-upstream follows no redirect: every status, same path, other path, other host", async (t) => {
  const inner = await startSdkUpstream({ revision: "2025-11-25", framing: "json", tools: [ECHO] });
  // Another host (another listener) that must never be reached.
  const elsewhere: string[] = [];
  const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    elsewhere.push(`${req.method} ${new URL(req.url).pathname}`);
    return new Response("elsewhere", { status: 200 });
  });
  let redirect: { status: number; location: string } | undefined;
  const front = await startFront(inner.url, (req) => {
    if (!redirect) return undefined;
    if (isCall(req) || req.method === "GET") {
      return new Response(null, {
        status: redirect.status,
        headers: { location: redirect.location },
      });
    }
    return undefined;
  });
  const frontOrigin = `http://127.0.0.1:${front.port}`;
  const otherOrigin = `http://127.0.0.1:${other.addr.port}`;
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--upstream",
    front.url,
    "--upstream-header",
    "Authorization=Bearer {env:HOP_TOKEN}",
    "--request-timeout",
    "10m",
  ], { env: { HOP_TOKEN: "hop-secret-token-1234" } });
  try {
    const targets = [
      ["the same path", front.url, frontOrigin],
      ["another path", `${frontOrigin}/elsewhere?x=1`, frontOrigin],
      ["another host", `${otherOrigin}/mcp`, otherOrigin],
    ] as const;
    for (const status of [301, 302, 303, 307, 308]) {
      for (const [where, location, origin] of targets) {
        await t.step(`${status} to ${where}`, async () => {
          redirect = { status, location };
          const before = front.requests.length;
          const r = await callApi(weir.url, "echo", { message: "once" });
          redirect = undefined;
          assert.equal(r.status, 502, r.text);
          // The status, never the target (tests/e2e/redirect_target_test.ts: the log's).
          assert.match(r.text, new RegExp(`^upstream_redirect: .*answered ${status}, a redirect`));
          assert.ok(!r.text.includes(origin), r.text);
          assert.ok(!r.text.includes("hop-secret-token-1234"));
          const seen = front.requests.slice(before);
          // One POST of the call, at the configured path only; nothing at the target.
          assert.equal(seen.filter(isCall).length, 1, JSON.stringify(seen.map((x) => x.path)));
          assert.ok(seen.every((x) => x.path === "/mcp"), JSON.stringify(seen.map((x) => x.path)));
          assert.deepEqual(elsewhere, []);
        });
      }
    }
    await t.step("the GET of the standalone stream was redirected too, and not followed", () => {
      const gets = front.requests.filter((r) => r.method === "GET");
      assert.ok(gets.length > 0, "the client never opened its standalone stream");
      assert.ok(gets.every((r) => r.path === "/mcp"));
      assert.deepEqual(elsewhere, []);
    });
    await t.step("with no redirect the call goes through, once", async () => {
      const before = inner.calls().length;
      const r = await callApi(weir.url, "echo", { message: "fine" });
      assert.equal(r.status, 200, r.text);
      assert.equal(inner.calls().length, before + 1);
    });
    await t.step("each redirect left an audit line", async () => {
      const lines = (await toolCallLines(weir, 16)).filter((l) =>
        l.outcome === "upstream_redirect"
      );
      assert.equal(lines.length, 15);
      assert.ok(lines.every((l) => l.status === 502 && l.decision === "allow"));
    });
  } finally {
    await weir.stop();
    await front.stop();
    await other.shutdown();
    await inner.stop();
  }
});

Deno.test("serve-upstream: a redirect at start-up stops it, naming the status and the target", async () => {
  const inner = await startSdkUpstream({ revision: "2025-11-25", framing: "json", tools: [ECHO] });
  const front = await startFront(
    inner.url,
    () => new Response(null, { status: 307, headers: { location: "http://127.0.0.2:9/mcp" } }),
  );
  try {
    await assert.rejects(
      startWrapper(["--tool", "echo", "--upstream", front.url]),
      /307, a redirect; weir follows no redirect.*\(it pointed to http:\/\/127\.0\.0\.2:9\/mcp\)/,
    );
    assert.ok(front.requests.every((r) => r.path === "/mcp"));
  } finally {
    await front.stop();
    await inner.stop();
  }
});

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`serve-upstream (${revision}): a connection closed after the request is read is one receipt`, async () => {
    const inner = await startSdkUpstream({ revision, framing: "json", tools: [ECHO] });
    let closeCalls = true;
    const front = startClosingFront(inner.url, (req) => closeCalls && isCall(req));
    const weir = await startWrapper(["--tool", "echo", "--upstream", front.url]);
    try {
      const r = await callApi(weir.url, "echo", { message: "write once" });
      assert.equal(r.status, 502, r.text);
      assert.match(r.text, /^upstream_unavailable: calling the tool: .*not retried/);
      // Wait a moment for any retry that might still come (there must be none).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(front.requests.filter(isCall).length, 1);
      assert.equal(inner.calls().length, 0, "the front closed it: the upstream never answered");
      // The next call reconnects before sending, and is delivered once.
      closeCalls = false;
      const ok = await callApi(weir.url, "echo", { message: "next" });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(front.requests.filter(isCall).length, 2);
      const outcomes = (await toolCallLines(weir, 2)).map((l) => l.outcome);
      assert.deepEqual(outcomes, ["upstream_unavailable", "ok"]);
    } finally {
      await weir.stop();
      await front.stop();
      await inner.stop();
    }
  });
}

/** The answers a hostile front gives `tools/call`, each over a 1 MiB cap. */
function hostile(kind: string, req: FrontRequest): Response {
  const id = JSON.parse(req.body).id;
  const sse = { "content-type": "text/event-stream" };
  const event = (message: unknown) => `data: ${JSON.stringify(message)}\n\n`;
  const encoder = new TextEncoder();
  switch (kind) {
    case "one big event":
      return new Response(
        event({
          jsonrpc: "2.0",
          id,
          result: { content: [{ type: "text", text: "x".repeat(3 * 1024 * 1024) }] },
        }),
        { headers: sse },
      );
    case "many small events": {
      let sent = 0;
      const note = encoder.encode(
        event({
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: "x" },
        }),
      );
      return new Response(
        new ReadableStream({
          pull(c) {
            // 40 000 events of about 90 bytes: about 3.4 MiB, then (never reached) the answer.
            if (sent++ < 40_000) c.enqueue(note);
            else c.close();
          },
        }),
        { headers: sse },
      );
    }
    case "a line with no end":
      return new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(encoder.encode("data: "));
          },
          pull(c) {
            // Never a newline, never an end: only the cap stops it.
            c.enqueue(encoder.encode("y".repeat(64 * 1024)));
          },
        }),
        { headers: sse },
      );
    default: { // a gzip bomb: 512 MiB of one event line, about 0.5 MiB coded
      const line = encoder.encode(`data: ${"z".repeat(1024)}`);
      const raw = new Uint8Array(512 * 1024 * 1024);
      raw.set(line);
      return new Response(gzipSync(raw) as Uint8Array<ArrayBuffer>, {
        headers: { ...sse, "content-encoding": "gzip" },
      });
    }
  }
}

/** weir's peak resident memory (VmHWM) in MiB, from /proc. */
function peakMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

Deno.test("serve-upstream holds the size cap on every framing of an event stream", async (t) => {
  const inner = await startSdkUpstream({ revision: "2025-11-25", framing: "sse", tools: [ECHO] });
  let kind = "";
  const front = await startFront(
    inner.url,
    (req) => isCall(req) && kind ? hostile(kind, req) : undefined,
  );
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--upstream",
    front.url,
    "--max-response-bytes",
    String(1024 * 1024),
    "--request-timeout",
    "10m",
  ]);
  try {
    // Warm up: one ordinary call, then the baseline of weir's memory.
    assert.equal((await callApi(weir.url, "echo", { message: "warm" })).status, 200);
    const baseline = peakMiB(weir.pid);
    for (const k of ["a gzip bomb", "one big event", "many small events", "a line with no end"]) {
      await t.step(k, async () => {
        kind = k;
        const r = await callApi(weir.url, "echo", { message: "big" }, { timeoutMs: 60_000 });
        kind = "";
        assert.equal(r.status, 502, r.text);
        assert.match(r.text, /^upstream_too_large: calling the tool: .*over the 1048576-byte cap/);
        if (k === "a gzip bomb") {
          // 512 MiB once decoded: read whole, it would take weir's memory past that.
          const grown = peakMiB(weir.pid) - baseline;
          assert.ok(grown < 128, `peak resident memory grew by ${grown.toFixed(0)} MiB`);
        }
      });
    }
    await t.step("the next call is served", async () => {
      assert.equal((await callApi(weir.url, "echo", { message: "after" })).status, 200);
    });
    await t.step("each refusal left an audit line", async () => {
      const outcomes = (await toolCallLines(weir, 6)).map((l) => l.outcome);
      assert.deepEqual(outcomes, [
        "ok",
        "upstream_too_large",
        "upstream_too_large",
        "upstream_too_large",
        "upstream_too_large",
        "ok",
      ]);
    });
  } finally {
    await weir.stop();
    await front.stop();
    await inner.stop();
  }
});

Deno.test("serve-upstream: a timeout, a stream cut off before the answer and a pin refusal, each audited", async () => {
  const inner = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "sse",
    tools: [ECHO, { name: "sleepy", inputSchema: { type: "object" } }],
    onCall: async (input) => {
      if (input.name === "sleepy") {
        await new Promise((r) => setTimeout(r, 3000));
      }
      return { content: [{ type: "text", text: `${input.name} ran` }] };
    },
  });
  let cut = false;
  const front = await startFront(inner.url, (req) => {
    if (!cut || !isCall(req)) return undefined;
    // An event stream that ends before the answer to the call.
    return new Response(
      `data: ${
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: {} })
      }\n\n`,
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--tool",
    "sleepy",
    "--pin",
    "echo.message=fixed-value",
    "--upstream",
    front.url,
    "--request-timeout",
    "500ms",
  ]);
  try {
    const slow = await callApi(weir.url, "sleepy", {});
    assert.equal(slow.status, 504, slow.text);
    assert.match(slow.text, /^upstream_timeout: calling the tool: .*within 500 ms/);
    cut = true;
    const broken = await callApi(weir.url, "echo", {});
    cut = false;
    assert.equal(broken.status, 502, broken.text);
    assert.match(broken.text, /^upstream_cut_off: calling the tool: .*ended before the answer/);
    const pinned = await callApi(weir.url, "echo", { message: "other" });
    assert.equal(pinned.status, 403, pinned.text);
    assert.match(
      pinned.text,
      /^policy_denied: argument "message" of tool "echo" is set by the server/,
    );
    const ok = await callApi(weir.url, "echo", {});
    assert.equal(ok.status, 200, ok.text);
    const outcomes = (await toolCallLines(weir, 3)).map((l) => [l.tool, l.outcome, l.status]);
    assert.deepEqual(outcomes, [
      ["sleepy", "upstream_timeout", 504],
      ["echo", "upstream_cut_off", 502],
      ["echo", "ok", 200],
    ]);
    const refused = auditLines(weir.stderr()).filter((l) =>
      l.event === "refused" && l.tool !== undefined
    );
    assert.deepEqual(refused.map((l) => [l.tool, l.rule, l.status]), [["echo", "pin", 403]]);
  } finally {
    await weir.stop();
    await front.stop();
    await inner.stop();
  }
});
