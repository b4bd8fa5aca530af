/**
 * An untyped input (a path parameter without `param type=`, a bare `query`
 * or `body` name) takes a string or an integer, the integer sent as its
 * decimal text and held to the input's string rules: generated rules and
 * integers through the public module API (the tool API and `tools/call` in
 * both revisions), checked against the schema the tool advertises (Ajv,
 * JSON Schema 2020-12); and `{"id": 7}` through the shipped CLI over the
 * tool API, MCP over HTTP (both revisions) and stdio.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import Ajv2020 from "ajv/dist/2020.js";
import { createToolApiHandler, McpServer } from "../../mod.ts";
import { createGuard, parseGuardfile } from "../../src/guard/mod.ts";
import { type Recorder, startRecorder } from "../support/upstream.ts";
import { ask, REVISIONS } from "../support/mcp.ts";
import { serveHttp, spawnServeStdio, tempGuardfile } from "../support/cli.ts";
import { postMcp } from "../support/raw_upstream.ts";

/** String rules an author may put on an untyped input, as KDL properties and enum nodes. */
const RULES: { kdl: string; enumBlock?: string; holds: (text: string) => boolean }[] = [
  { kdl: "", holds: () => true },
  { kdl: 'pattern="^[0-9]+$"', holds: (t) => /^[0-9]+$/.test(t) },
  { kdl: 'pattern="^-?[0-9]+$"', holds: (t) => /^-?[0-9]+$/.test(t) },
  { kdl: 'pattern="^[a-z]+$"', holds: (t) => /^[a-z]+$/.test(t) },
  { kdl: 'pattern="^[0-9a-f]+$"', holds: (t) => /^[0-9a-f]+$/.test(t) },
  { kdl: "max-length=3", holds: (t) => t.length <= 3 },
  { kdl: "min-length=2", holds: (t) => t.length >= 2 },
  { kdl: "min-length=2 max-length=5", holds: (t) => t.length >= 2 && t.length <= 5 },
  { kdl: "max-length=16", holds: (t) => t.length <= 16 },
  {
    kdl: "",
    enumBlock: '{ enum "7" "42" "-1" "open" "007"; }',
    holds: (t) => ["7", "42", "-1", "open", "007"].includes(t),
  },
];

const integers = fc.oneof(
  fc.integer({ min: -1000, max: 100_000 }),
  fc.maxSafeInteger(),
  fc.constantFrom(0, -0, 7, 42, -1, 99, 100, 999, 1000, 99999, 100000, 2 ** 53 - 1, -(2 ** 53 - 1)),
);

const ajv = new Ajv2020.default({ strict: false });

async function guardServer(upstream: Recorder, rules: (typeof RULES)[number]) {
  const text = `wrap ward mcp t {
    base-url "${upstream.url}"
    auth none
    can get item {
        path "/items/{id}"
        param "id" ${rules.kdl} ${rules.enumBlock ?? ""}
    }
    can list item {
        path "/items"
        query "page"
    }
    can create note {
        path "/notes"
        body "title"
    }
}
`;
  const { guardfile, diagnostics } = parseGuardfile(text, "t.mcp.kdl");
  assert.ok(guardfile, JSON.stringify(diagnostics));
  const server = new McpServer({
    ...createGuard(guardfile, {
      resolver: { env: () => undefined, readFile: () => Promise.reject(new Error("none")) },
      log: () => {},
    }),
    log: () => {},
  });
  const listed = await ask<{ tools: { name: string; inputSchema: object }[] }>(
    server,
    REVISIONS[1],
    "tools/list",
  );
  const schemaOf = (tool: string) =>
    ajv.compile(listed.result!.tools.find((t) => t.name === tool)!.inputSchema);
  return {
    server,
    api: createToolApiHandler(server, { authorize: () => true, allowedOrigins: [] }),
    validGet: schemaOf("get_item"),
  };
}

Deno.test("an untyped path parameter: an integer passes exactly when its decimal text keeps the rules, and is sent so", async () => {
  const upstream = await startRecorder();
  try {
    for (const rules of RULES) {
      const { api, validGet } = await guardServer(upstream, rules);
      await fc.assert(
        fc.asyncProperty(integers, async (n) => {
          const text = BigInt(n).toString();
          const before = upstream.requests.length;
          const r = await api(
            new Request("http://127.0.0.1/api/get_item", {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ id: n }),
            }),
          );
          const body = await r.text();
          const advertised = validGet({ id: n });
          if (r.status === 200) {
            // Sent as its decimal text, and only when the text keeps every rule.
            assert.equal(upstream.requests.length, before + 1);
            assert.equal(upstream.requests.at(-1)!.path, `/items/${text}`);
            assert.ok(rules.holds(text), `${rules.kdl} ${rules.enumBlock}: ${text} passed`);
            assert.ok(advertised, `${text} passed but the advertised schema refuses it`);
          } else {
            assert.equal(upstream.requests.length, before, `${text}: refused yet sent`);
            assert.ok(r.status === 400 || r.status === 403, body);
            // One schema, one source: what the schema admits, the guard serves
            // (with these rules the schema can say everything).
            assert.ok(!advertised, `${text} refused (${body}) though the schema admits it`);
          }
          // No rule at all: every integer passes.
          if (rules.kdl === "" && !rules.enumBlock) assert.equal(r.status, 200, body);
        }),
        { numRuns: 60 },
      );
    }
  } finally {
    await upstream.close();
  }
});

Deno.test("untyped query and body names: an integer is sent as its decimal text, in both revisions", async () => {
  const upstream = await startRecorder();
  try {
    const { server } = await guardServer(upstream, RULES[0]);
    for (const revision of REVISIONS) {
      await fc.assert(
        fc.asyncProperty(integers, async (n) => {
          const text = BigInt(n).toString();
          const page = await ask<{ isError?: boolean }>(server, revision, "tools/call", {
            name: "list_item",
            arguments: { page: n },
          });
          assert.equal(page.result?.isError, undefined, JSON.stringify(page));
          assert.equal(upstream.requests.at(-1)!.query, `page=${encodeURIComponent(text)}`);
          const note = await ask<{ isError?: boolean }>(server, revision, "tools/call", {
            name: "create_note",
            arguments: { title: n },
          });
          assert.equal(note.result?.isError, undefined, JSON.stringify(note));
          assert.equal(upstream.requests.at(-1)!.body, JSON.stringify({ title: text }));
          const item = await ask<{ isError?: boolean }>(server, revision, "tools/call", {
            name: "get_item",
            arguments: { id: n },
          });
          assert.equal(item.result?.isError, undefined, JSON.stringify(item));
          assert.equal(upstream.requests.at(-1)!.path, `/items/${text}`);
        }),
        { numRuns: 25 },
      );
      // A fraction is not an id: refused by the schema, nothing sent.
      const before = upstream.requests.length;
      const half = await ask<{ isError?: boolean }>(server, revision, "tools/call", {
        name: "get_item",
        arguments: { id: 1.5 },
      });
      assert.equal(half.result?.isError, true);
      assert.equal(upstream.requests.length, before);
    }
  } finally {
    await upstream.close();
  }
});

Deno.test('weir serve: {"id": 7} reaches /items/7 over the tool API, MCP over HTTP (both revisions) and stdio', async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(`wrap ward mcp t {
    base-url "${upstream.url}"
    auth none
    can get item { path "/items/{id}"; }
}
`);
  const server = await serveHttp(file);
  try {
    const api = await fetch(`${server.url}/api/get_item`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"id": 7}',
    });
    assert.equal(api.status, 200, await api.text());
    assert.equal(upstream.requests.at(-1)!.path, "/items/7");
    const legacy = JSON.parse(
      await postMcp(server.url, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "get_item", arguments: { id: 8 } },
      }),
    );
    assert.equal(legacy.result?.isError, undefined, JSON.stringify(legacy));
    assert.equal(upstream.requests.at(-1)!.path, "/items/8");
    const modern = JSON.parse(
      await postMcp(server.url, {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "get_item",
          arguments: { id: 9 },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }, {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "get_item",
      }),
    );
    assert.equal(modern.result?.isError, undefined, JSON.stringify(modern));
    assert.equal(upstream.requests.at(-1)!.path, "/items/9");
    const listed = JSON.parse(
      await postMcp(server.url, { jsonrpc: "2.0", id: 3, method: "tools/list" }),
    );
    const schema = listed.result.tools.find((t: { name: string }) => t.name === "get_item")
      .inputSchema;
    assert.deepEqual(schema.properties.id.type, ["string", "integer"]);
  } finally {
    await server.stop();
  }
  const child = spawnServeStdio(file, { PATH: Deno.env.get("PATH") ?? "" });
  try {
    const writer = child.stdin.getWriter();
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "get_item", arguments: { id: 10 } },
      },
    ];
    await writer.write(
      new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n"),
    );
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes('"id":2')) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    assert.match(out, /"id":2,"result"/);
    assert.equal(upstream.requests.at(-1)!.path, "/items/10");
    await writer.close();
    reader.releaseLock();
  } finally {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
    await child.stderr.cancel().catch(() => {});
    await Deno.remove(file);
    await upstream.close();
  }
});
