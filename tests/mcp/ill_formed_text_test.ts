/**
 * Text that is not well-formed Unicode is never passed on or written:
 * generated strings with every class of ill-formed UTF-16 (a lone high or low
 * surrogate, a reversed pair, a high one at the end or before a non-surrogate,
 * two highs, a low after a complete pair), as JSON escapes in argument values
 * and names at any depth, are refused naming where they are, over the tool
 * API and MCP in both revisions, and the host's dispatch never runs (so no
 * mode, spec, serve-upstream, serve-ssm, serve-s3 or sql, can forward them);
 * bytes that are not UTF-8 are refused before parsing; the log writes
 * well-formed lines whatever it is given. Then through the shipped CLI:
 * spec mode over HTTP and stdio, and serve-upstream, reach nothing upstream.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { createHttpHandler, createToolApiHandler, McpServer } from "../../mod.ts";
import { formatLogLine } from "../../src/ops/log.ts";
import { ask, REVISIONS } from "../support/mcp.ts";
import { serveHttp, spawnServeStdio, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { postMcp } from "../support/raw_upstream.ts";
import { startWrapper, textOf, v2Http } from "../support/upstream_cli.ts";

const hex = (n: number) => n.toString(16).padStart(4, "0");
const high = fc.integer({ min: 0xd800, max: 0xdbff });
const low = fc.integer({ min: 0xdc00, max: 0xdfff });
const plain = fc.string({ maxLength: 4, unit: fc.constantFrom(..."ab \u00e9\u4e2d") });

/** An ill-formed string, as the JSON text of its escapes, in each class. */
const illFormed = fc.oneof(
  fc.tuple(plain, high, plain).map(([a, h, b]) => `${a}\\u${hex(h)}${b.replace(/^/, "x")}`), // lone high
  fc.tuple(plain, low, plain).map(([a, l, b]) => `${a}\\u${hex(l)}${b}`), // lone low
  fc.tuple(low, high).map(([l, h]) => `\\u${hex(l)}\\u${hex(h)}`), // reversed pair
  fc.tuple(plain, high).map(([a, h]) => `${a}\\u${hex(h)}`), // high at the end
  fc.tuple(low, plain).map(([l, b]) => `\\u${hex(l)}${b}`), // low at the start
  fc.tuple(high, high).map(([a, b]) => `\\u${hex(a)}\\u${hex(b)}`), // two highs
  fc.tuple(high, low, low).map(([h, l, m]) => `\\u${hex(h)}\\u${hex(l)}\\u${hex(m)}`), // pair + low
);

/** Arguments JSON text holding the ill-formed string at a generated place (value or name). */
const argumentsText = fc.tuple(
  illFormed,
  fc.boolean(),
  fc.array(fc.constantFrom("object", "array"), { maxLength: 5 }),
).map(([text, asName, path]) => {
  let inner = asName ? `{"${text}":1}` : `"${text}"`;
  for (const kind of path.reverse()) inner = kind === "object" ? `{"k":${inner}}` : `[1,${inner}]`;
  return { json: `{"ok":"fine","x":${inner}}`, asName };
});

let dispatched = 0;
const server = new McpServer({
  name: "t",
  log: () => {},
  catalog: {
    tools: [{ name: "take", inputSchema: { type: "object" } }],
    resources: [],
    prompts: [{ name: "greet", arguments: [{ name: "who" }] }],
  },
  dispatch: () => {
    dispatched++;
    return { content: [{ type: "text", text: "ran" }] };
  },
  getPrompt: () => {
    dispatched++;
    return { messages: [] };
  },
});
const api = createToolApiHandler(server, { authorize: () => true, allowedOrigins: [] });
const mcp = createHttpHandler(server, { authorize: () => true, allowedOrigins: [] });

Deno.test("tools/call and the tool API refuse every class of ill-formed text by where it is; dispatch never runs", async () => {
  await fc.assert(
    fc.asyncProperty(argumentsText, async ({ json, asName }) => {
      const before = dispatched;
      const viaApi = await api(
        new Request("http://127.0.0.1/api/take", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: json,
        }),
      );
      const apiText = await viaApi.text();
      assert.equal(viaApi.status, 400, apiText);
      assert.match(
        apiText,
        asName
          ? /argument name is not well-formed Unicode/
          : /the text at x.* is not well-formed Unicode/,
      );
      for (const revision of REVISIONS) {
        const r = await ask<{ isError?: boolean; content: { text: string }[] }>(
          server,
          revision,
          "tools/call",
          { name: "take", arguments: JSON.parse(json) },
        );
        assert.equal(r.result?.isError, true, JSON.stringify(r));
        assert.match(r.result!.content[0].text, /not well-formed Unicode/);
      }
      // The raw MCP wire (the text parsed by weir, not by the test).
      const raw = await mcp(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "take",
          },
          body:
            `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"take","arguments":${json},` +
            `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
        }),
      );
      assert.match(await raw.text(), /not well-formed Unicode/);
      assert.equal(dispatched, before, "the host never saw it");
    }),
    { numRuns: 150 },
  );
  // Well-formed text, surrogate pairs included, still runs.
  const ok = await api(
    new Request("http://127.0.0.1/api/take", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"x":"\\ud83d\\ude00 caf\\u00e9","\\ud83d\\udc1f":1}',
    }),
  );
  assert.equal(ok.status, 200, await ok.text());
});

Deno.test("prompts/get refuses ill-formed argument text in both revisions; the reader never runs", async () => {
  await fc.assert(
    fc.asyncProperty(illFormed, async (text) => {
      const before = dispatched;
      for (const revision of REVISIONS) {
        const r = await ask(server, revision, "prompts/get", {
          name: "greet",
          arguments: { who: JSON.parse(`"${text}"`) },
        });
        assert.equal(r.error?.code, -32602, JSON.stringify(r));
        assert.match(r.error!.message, /the text at who is not well-formed Unicode/);
      }
      assert.equal(dispatched, before);
    }),
    { numRuns: 50 },
  );
});

Deno.test("bytes that are not UTF-8 (surrogates encoded as UTF-8, overlong, cut short) never reach dispatch", async () => {
  const bad = [[0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xc0, 0xae], [0xe0, 0x80, 0xae], [
    0xe2,
    0x82,
  ], [0xff]];
  for (const bytes of bad) {
    const before = dispatched;
    const body = new Uint8Array([
      ...new TextEncoder().encode('{"x":"a'),
      ...bytes,
      ...new TextEncoder().encode('"}'),
    ]);
    const r = await api(
      new Request("http://127.0.0.1/api/take", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
    assert.equal(r.status, 400, `${bytes}: ${await r.text()}`);
    assert.equal(dispatched, before);
  }
});

Deno.test("formatLogLine(): every line is well-formed whatever strings and keys an event holds", () => {
  fc.assert(
    fc.property(illFormed, illFormed, (a, b) => {
      const event = {
        level: "warn",
        event: "refused",
        tool: JSON.parse(`"${a}"`),
        [JSON.parse(`"${b}"`)]: 1,
      };
      const line = formatLogLine(event as never, 0);
      const decoded = JSON.parse(line);
      for (const [k, v] of Object.entries(decoded)) {
        assert.ok(k.isWellFormed(), line);
        if (typeof v === "string") assert.ok(v.isWellFormed(), line);
      }
    }),
    { numRuns: 200 },
  );
});

Deno.test("weir serve and serve-upstream: ill-formed argument text reaches no upstream, over HTTP and stdio", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(`wrap ward mcp t {
    base-url "${upstream.url}"
    auth none
    can create note { path "/notes/{id}"; body { field "title" type="string"; object "meta" raw=#true; }; }
}
`);
  const server = await serveHttp(file);
  const cases = [
    '{"id":"a","title":"x\\udc00"}',
    '{"id":"a\\ud800","title":"t"}',
    '{"id":"a","meta":{"\\udfff\\ud800":1}}',
  ];
  try {
    for (const args of cases) {
      const r = await fetch(`${server.url}/api/create_note`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: args,
      });
      assert.equal(r.status, 400);
      assert.match(await r.text(), /not well-formed Unicode/);
      const m = JSON.parse(
        await postMcp(
          server.url,
          `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_note","arguments":${args}}}`,
        ),
      );
      assert.equal(m.result.isError, true);
    }
  } finally {
    await server.stop();
  }
  const child = spawnServeStdio(file, { PATH: Deno.env.get("PATH") ?? "" });
  try {
    const w = child.stdin.getWriter();
    const lines = [
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
      `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
      ...cases.map((a, i) =>
        `{"jsonrpc":"2.0","id":${
          10 + i
        },"method":"tools/call","params":{"name":"create_note","arguments":${a}}}`
      ),
    ];
    await w.write(new TextEncoder().encode(lines.join("\n") + "\n"));
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes(`"id":12`)) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    for (let i = 0; i < cases.length; i++) {
      assert.match(
        out,
        new RegExp(
          `"id":${10 + i},"result":\\{"content":\\[\\{"type":"text","text":"Invalid arguments`,
        ),
      );
    }
    await w.close();
    reader.releaseLock();
  } finally {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
    await child.stderr.cancel().catch(() => {});
  }
  assert.equal(upstream.requests.length, 0, "spec mode sent nothing");
  // serve-upstream: the wrapped MCP server receives no call.
  let calls = 0;
  const inner = new McpServer({
    name: "inner",
    log: () => {},
    catalog: {
      tools: [{ name: "echo", inputSchema: { type: "object" } }],
      resources: [],
      prompts: [],
    },
    dispatch: () => {
      calls++;
      return { content: [{ type: "text", text: "echo" }] };
    },
  });
  const innerHandler = createHttpHandler(inner, { authorize: () => true, allowedOrigins: [] });
  const innerServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    innerHandler,
  );
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--upstream",
    `http://127.0.0.1:${innerServer.addr.port}/mcp`,
  ]);
  const client = await v2Http(weir.url);
  try {
    for (const text of ["x\udc00", "\ud800", "\udfff\ud800"]) {
      const r = await client.callTool({ name: "echo", arguments: { message: text } });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /not well-formed Unicode/);
    }
    assert.equal(calls, 0, "serve-upstream forwarded nothing");
  } finally {
    await client.close();
    await weir.stop();
    await innerServer.shutdown();
    await upstream.close();
    await Deno.remove(file);
  }
});
