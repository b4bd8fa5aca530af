/**
 * Calls in flight to an HTTP upstream, through the shipped CLI:
 *
 * - one request failing (a 500, a connection closed after the request was
 *   read, an answer over the cap) fails that call only: the calls already
 *   sent on the same connection get their answers, and every call reaches
 *   the upstream exactly once (before, weir's reconnect aborted every call
 *   in flight, reporting calls the upstream had run as failed, so a caller
 *   would send them again);
 * - a call the upstream never answers gives its socket back when the
 *   request timeout passes (before, each such call kept a socket open for
 *   as long as the upstream held it: a wedged upstream could exhaust
 *   weir's file descriptors), and the upstream is told
 *   `notifications/cancelled`.
 *
 * Both revisions (2025-11-25 on the v1 SDK server, 2026-07-28 on the v2).
 */
import assert from "node:assert/strict";
import { callApi } from "../support/cli.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { type FrontRequest, startClosingFront, startFront } from "../support/hop_front.ts";

const WORK = {
  name: "work",
  inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
};

/** The `n` of a front's `tools/call` request, if it is one. */
function callNumber(req: FrontRequest): number | undefined {
  if (req.method !== "POST" || !req.body.includes('"tools/call"')) return undefined;
  return JSON.parse(req.body).params.arguments.n;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How often each `n` arrived among the front's requests. */
function receipts(requests: FrontRequest[]): Map<number, number> {
  const seen = new Map<number, number>();
  for (const req of requests) {
    const n = callNumber(req);
    if (n !== undefined) seen.set(n, (seen.get(n) ?? 0) + 1);
  }
  return seen;
}

const CALLS = 24;
/** The call the front fails. */
const FAILED = 4;

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  for (const how of ["500", "closed after reading", "over the cap"] as const) {
    Deno.test(`serve-upstream (${revision}): one call failing (${how}) fails no other call in flight`, async () => {
      // Each call takes 1.5 s upstream: the failure comes while the others are in flight.
      const inner = await startSdkUpstream({
        revision,
        framing: "json",
        tools: [WORK],
        onCall: async (input) => {
          await sleep(1500);
          return { content: [{ type: "text", text: `ran ${input.arguments?.n}` }] };
        },
      });
      const front = how === "closed after reading"
        ? startClosingFront(inner.url, (req) => callNumber(req) === FAILED)
        : await startFront(inner.url, async (req) => {
          if (callNumber(req) !== FAILED) return undefined;
          await sleep(300);
          return how === "500"
            ? new Response("boom", { status: 500 })
            : new Response(`{"pad":"${"x".repeat(40_000)}"}`, {
              headers: { "content-type": "application/json" },
            });
        });
      const weir = await startWrapper([
        "--tool",
        "work",
        "--upstream",
        front.url,
        "--max-response-bytes",
        "32768",
      ]);
      try {
        // Staggered, so that calls keep arriving after the failure (each one re-verifies first).
        const answers = await Promise.all(
          Array.from({ length: CALLS }, async (_, n) => {
            await sleep(n * 60);
            return await callApi(weir.url, "work", { n }, { timeoutMs: 60_000 });
          }),
        );
        const wrong = answers.flatMap((r, n) =>
          n === FAILED
            ? []
            : r.status === 200 && r.text === `ran ${n}`
            ? []
            : [`${n}: ${r.status} ${r.text}`]
        );
        assert.deepEqual(wrong, [], "calls other than the failed one failed");
        assert.equal(answers[FAILED].status, 502, answers[FAILED].text);
        await sleep(500);
        const seen = receipts(front.requests);
        assert.equal(seen.size, CALLS);
        assert.deepEqual([...seen].filter(([, k]) => k !== 1), [], "a call arrived twice");
      } finally {
        await weir.stop();
        await front.stop();
        await inner.stop();
      }
    });
  }
}

/**
 * An HTTP upstream that reads every request, answers the handshake and
 * `tools/list`, and never answers a `tools/call` (nor closes its socket).
 */
function silentUpstream() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const bodies: string[] = [];
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const serve = async (conn: Deno.Conn) => {
    conns.add(conn);
    let text = "";
    const chunk = new Uint8Array(65536);
    /** The next whole request in `text` (taken out of it), if one has arrived. */
    const nextRequest = (): string | undefined => {
      const headEnd = text.indexOf("\r\n\r\n");
      if (headEnd < 0) return undefined;
      const head = text.slice(0, headEnd);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      let end: number;
      if (length) {
        end = headEnd + 4 + Number(length[1]);
        if (text.length < end) return undefined;
      } else {
        const last = text.indexOf("\r\n0\r\n\r\n", headEnd);
        if (last < 0) return undefined;
        end = last + 7;
      }
      const request = text.slice(0, end);
      text = text.slice(end);
      return request;
    };
    try {
      for (;;) {
        const n = await conn.read(chunk);
        if (n === null) return;
        text += decoder.decode(chunk.subarray(0, n));
        // Requests come chunked (the official client's, through fetch) or with a
        // Content-Length (the short path's): read each whole.
        let request: string | undefined;
        while ((request = nextRequest()) !== undefined) {
          const json = request.slice(request.indexOf("{"), request.lastIndexOf("}") + 1);
          bodies.push(json);
          const message = JSON.parse(json);
          if (message.id === undefined) {
            await conn.write(encoder.encode("HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"));
            continue;
          }
          if (message.method === "tools/call") continue; // never answered
          const result = message.method === "initialize"
            ? {
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "silent", version: "1" },
            }
            : { tools: [WORK] };
          const body = encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
          await conn.write(encoder.encode(
            `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
          ));
          await conn.write(body);
        }
      }
    } catch {
      // weir went away.
    } finally {
      conns.delete(conn);
    }
  };
  (async () => {
    for await (const conn of listener) serve(conn);
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/mcp`,
    bodies,
    /** Sockets the upstream still holds open. */
    open: () => conns.size,
    stop() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    },
  };
}

Deno.test("serve-upstream: a call the upstream never answers gives its socket back at the timeout", async () => {
  const up = silentUpstream();
  const weir = await startWrapper([
    "--tool",
    "work",
    "--upstream",
    up.url,
    "--request-timeout",
    "300ms",
  ]);
  try {
    assert.equal((await callApi(weir.url, "work", { n: 0 })).status, 504);
    const before = up.open();
    for (let n = 1; n <= 12; n++) {
      const r = await callApi(weir.url, "work", { n });
      assert.equal(r.status, 504, r.text);
      assert.match(r.text, /^upstream_timeout: calling the tool: .*within 300 ms/);
    }
    // weir hangs up on each call it gave up on, and cancels it upstream (waits up to 30 s).
    const cancelled = () => up.bodies.filter((b) => b.includes('"notifications/cancelled"'));
    for (let i = 0; i < 300 && (up.open() > before || cancelled().length < 13); i++) {
      await sleep(100);
    }
    const more = up.open() - before;
    assert.ok(more <= 0, `weir still holds ${more} more sockets to the upstream than at first`);
    assert.equal(cancelled().length, 13, "each timed-out call is cancelled upstream");
  } finally {
    await weir.stop();
    up.stop();
  }
});
