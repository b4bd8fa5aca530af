/**
 * Protocol fields holding text that is not well-formed Unicode (a lone UTF-16
 * surrogate, which JSON can spell as `"\ud800"` but UTF-8 cannot carry), sent
 * to the shipped CLI over every transport: a request `id` is refused `-32600`
 * and never echoed (the error goes out without the id it could not read); a
 * `progressToken`, any other `_meta` string, a tool name or a cursor is
 * refused `-32602` naming the field, and nothing is called. Spec mode over
 * stdio and HTTP (both revisions), serve-upstream over HTTP with an official
 * SDK upstream (which must receive nothing). Strings are generated (fixed
 * seed) with the lone surrogate anywhere in them.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { serveHttp, spawnServeStdio } from "../support/cli.ts";
import { MODERN_META } from "../support/mcp.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { illFormedAt } from "../../src/mcp/text.ts";

const SEED = 22_003;
const FIXTURE = "tests/fixtures/conformance.mcp.kdl";

/** Strings with one lone surrogate (high or low) between ASCII text. */
const ILL_FORMED = fc.sample(
  fc.tuple(
    fc.string({ maxLength: 8 }),
    fc.integer({ min: 0xd800, max: 0xdfff }),
    fc.string({ maxLength: 8 }),
  ).map(([a, unit, b]) => a + String.fromCharCode(unit) + b),
  { seed: SEED, numRuns: 12 },
);

type Answer = { id?: unknown; error?: { code: number; message: string; data?: { path?: string } } };

/** What each generated string is sent as, and the answer it must get. */
function cases(bad: string): { message: Record<string, unknown>; code: number; path?: string }[] {
  return [
    { message: { jsonrpc: "2.0", id: bad, method: "ping" }, code: -32600 },
    {
      message: {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "get_ticket", arguments: { id: "1" }, _meta: { progressToken: bad } },
      },
      code: -32602,
      path: "params._meta.progressToken",
    },
    {
      message: {
        jsonrpc: "2.0",
        id: 8,
        method: "tools/list",
        params: { _meta: { "x-trace": [bad] } },
      },
      code: -32602,
      path: "params._meta.x-trace[0]",
    },
    {
      message: {
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: bad, arguments: {} },
      },
      code: -32602,
      path: "params.name",
    },
    {
      message: { jsonrpc: "2.0", id: 10, method: "tools/list", params: { cursor: bad } },
      code: -32602,
      path: "params.cursor",
    },
  ];
}

function check(answer: Answer, expected: { code: number; path?: string }, sent: string): void {
  assert.equal(illFormedAt(answer), null, `the answer to ${sent} echoes ill-formed text`);
  assert.equal(answer.error?.code, expected.code, `${sent} -> ${JSON.stringify(answer)}`);
  assert.match(answer.error!.message, /not well-formed Unicode/);
  if (expected.code === -32600) assert.ok(answer.id === undefined || answer.id === null);
  if (expected.path) assert.equal(answer.error!.data?.path, expected.path);
}

Deno.test("weir serve --stdio: an ill-formed id is -32600 without an id; ill-formed params -32602 naming the field", async () => {
  const child = spawnServeStdio(FIXTURE);
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const next = async (): Promise<Answer> => {
    const deadline = AbortSignal.timeout(30_000);
    while (!buffered.includes("\n")) {
      if (deadline.aborted) throw new Error("no answer within 30 s");
      const { value, done } = await lines.read();
      if (done) throw new Error("weir closed its output");
      buffered += value;
    }
    const at = buffered.indexOf("\n");
    const line = buffered.slice(0, at);
    buffered = buffered.slice(at + 1);
    return JSON.parse(line);
  };
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    });
    assert.ok(((await next()) as { result?: unknown }).result);
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    for (const bad of ILL_FORMED) {
      for (const c of cases(bad)) {
        await send(c.message);
        check(await next(), c, JSON.stringify(c.message));
      }
    }
    // The session still serves a well-formed request.
    await send({ jsonrpc: "2.0", id: "fine", method: "ping" });
    assert.deepEqual(await next(), { jsonrpc: "2.0", id: "fine", result: {} });
  } finally {
    await writer.close();
    await lines.cancel();
    await child.status;
    await child.stderr.cancel();
  }
});

/** POST one message to `${url}/mcp` as a client of `revision` would. */
async function postAs(
  url: string,
  revision: "2025-11-25" | "2026-07-28",
  message: Record<string, unknown>,
): Promise<{ status: number; answer: Answer }> {
  const method = message.method as string;
  const params = (message.params ?? {}) as Record<string, unknown>;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": revision,
  };
  let body = message;
  if (revision === "2026-07-28") {
    headers["mcp-method"] = method;
    // Mcp-Name must match the body's name (a header cannot carry a lone surrogate: omitted).
    if (typeof params.name === "string" && params.name.isWellFormed()) {
      headers["mcp-name"] = params.name;
    }
    body = {
      ...message,
      params: { ...params, _meta: { ...MODERN_META, ...(params._meta as object | undefined) } },
    };
  }
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, answer: JSON.parse(await res.text()) };
}

Deno.test("weir serve --http: ill-formed ids and params are refused on both revisions", async () => {
  const server = await serveHttp(FIXTURE);
  try {
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      for (const bad of ILL_FORMED.slice(0, 4)) {
        for (const c of cases(bad)) {
          const { status, answer } = await postAs(server.url, revision, c.message);
          check(answer, c, `${revision} ${JSON.stringify(c.message)}`);
          assert.ok(status >= 200 && status < 500, `status ${status}`);
        }
      }
    }
  } finally {
    await server.stop();
  }
});

Deno.test("weir serve-upstream: an ill-formed progressToken or id is refused before the upstream hears of it", async () => {
  const up = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "json",
    tools: [{ name: "get_ticket", inputSchema: { type: "object" } }],
  });
  const weir = await startWrapper(["--tool", "get_ticket", "--upstream", up.url]);
  try {
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      for (const bad of ILL_FORMED.slice(0, 4)) {
        for (const c of cases(bad).slice(0, 3)) {
          const { answer } = await postAs(weir.url, revision, c.message);
          check(answer, c, `${revision} ${JSON.stringify(c.message)}`);
        }
      }
    }
    assert.deepEqual(up.calls(), [], "the upstream was called");
  } finally {
    await weir.stop();
    await up.stop();
  }
});
