/**
 * Tools: the schema a tool advertises is the schema it is held to; the
 * arguments that validated reach dispatch whole, with their values unchanged; a
 * refusal of arguments is an `isError` result naming the argument.
 */
import assert from "node:assert/strict";
import type { CallToolResult, Dispatch, ToolSpec } from "../../mod.ts";
import { McpServer, spelledArguments, ToolError } from "../../mod.ts";
import { parseArguments, parseMessage } from "../../src/mcp/jsonrpc.ts";
import { ask, LEGACY, makeServer, MODERN, modern, REVISIONS } from "../support/mcp.ts";
import { problemsAgainst } from "../support/schemas.ts";

interface Call {
  name: string;
  args: Record<string, unknown>;
}

function recordingServer(tools: ToolSpec[], answer?: Dispatch) {
  const calls: Call[] = [];
  const { server, events } = makeServer({
    catalog: { tools, resources: [], prompts: [] },
    dispatch: (name, args, ctx) => {
      calls.push({ name, args });
      return answer ? answer(name, args, ctx) : { content: [{ type: "text", text: "done" }] };
    },
  });
  return { server, calls, events };
}

const OPEN_SCHEMA = {
  type: "object",
  properties: {
    owner: { type: "string" },
    count: { type: "integer" },
    labels: { type: "array", items: { type: "string" } },
    meta: { type: "object" },
  },
  required: ["owner"],
};

type ListToolsResult = { tools: ToolSpec[] };

Deno.test("tools/list advertises each inputSchema exactly as written", async () => {
  const { server } = recordingServer([{ name: "issue", inputSchema: OPEN_SCHEMA }]);
  for (const revision of REVISIONS) {
    const reply = await ask<ListToolsResult>(server, revision, "tools/list");
    assert.deepEqual(reply.result?.tools, [{ name: "issue", inputSchema: OPEN_SCHEMA }]);
  }
});

Deno.test("the arguments that validated reach dispatch whole, values unchanged", async () => {
  const { server, calls } = recordingServer([{ name: "issue", inputSchema: OPEN_SCHEMA }]);
  const args = {
    owner: "  Åsa \u{1F600} ",
    count: 3,
    labels: ["b", "a", "b"],
    meta: { nested: { deep: [1, null, true] }, "": "empty key" },
    // The schema does not close the object: these validate, so they pass.
    undeclared: "kept",
    another: { also: "kept" },
  };
  for (const revision of REVISIONS) {
    calls.length = 0;
    const reply = await ask<CallToolResult>(server, revision, "tools/call", {
      name: "issue",
      arguments: args,
    });
    assert.equal(reply.result?.isError, undefined);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0], { name: "issue", args });
  }
});

Deno.test("keys admitted by additionalProperties, patternProperties, $ref or composition reach dispatch", async () => {
  const cases: [ToolSpec["inputSchema"], Record<string, unknown>][] = [
    [{ type: "object", additionalProperties: { type: "string" } }, { env: "prod", team: "a" }],
    [
      {
        type: "object",
        $ref: "#/$defs/filter",
        $defs: {
          filter: {
            type: "object",
            properties: { where: { type: "string" } },
            required: ["where"],
          },
        },
      },
      { where: "id = 5" },
    ],
    [
      {
        type: "object",
        patternProperties: { "^f_": { type: "string" } },
        additionalProperties: false,
      },
      { f_name: "x", f_other: "y" },
    ],
    [
      {
        type: "object",
        allOf: [{ properties: { a: { type: "integer" } } }, {
          properties: { b: { type: "string" } },
        }],
        unevaluatedProperties: false,
      },
      { a: 1, b: "two" },
    ],
    [
      {
        type: "object",
        properties: { kind: { type: "string" } },
        dependentSchemas: { kind: { properties: { detail: { type: "object" } } } },
        unevaluatedProperties: { type: "boolean" },
      },
      { kind: "k", detail: { x: [1] }, flag: true },
    ],
  ];
  const tools = cases.map(([inputSchema], i) => ({ name: `t${i}`, inputSchema }));
  const { server, calls } = recordingServer(tools);
  for (const revision of REVISIONS) {
    for (const [i, [, args]] of cases.entries()) {
      calls.length = 0;
      const reply = await ask<CallToolResult>(server, revision, "tools/call", {
        name: `t${i}`,
        arguments: args,
      });
      assert.equal(reply.result?.isError, undefined, JSON.stringify(reply));
      assert.deepEqual(calls, [{ name: `t${i}`, args }]);
    }
  }
  // The tool API (POST /api/<tool>) hands on the same object.
  calls.length = 0;
  const outcome = await server.callTool("t0", { env: "prod", team: "a" });
  assert.equal(outcome.status, 200);
  assert.deepEqual(calls[0].args, { env: "prod", team: "a" });
});

Deno.test("spelledArguments: numbers as the caller wrote them, for hosts that forward", async () => {
  const { server, calls } = recordingServer([{ name: "n", inputSchema: { type: "object" } }]);
  const text = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n",' +
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' +
    '"io.modelcontextprotocol/clientCapabilities":{}},' +
    '"arguments":{"big":1e21,"one":1.0,"neg":-0,"tiny":0.0000001,"e":1E5,"plain":2.5,' +
    '"list":[1.50,3],"deep":{"x":[0.10]},"s":"1.0"}}}';
  const reply = await server.handle(parseMessage(text));
  assert.equal(reply.status, 200, reply.body ?? "");
  const args = calls[0].args;
  assert.equal(args.big, 1e21);
  assert.equal(args.one, 1);
  const spelled = spelledArguments(args);
  assert.ok(spelled);
  assert.equal(
    JSON.stringify(spelled),
    '{"big":1e21,"one":1.0,"neg":-0,"tiny":0.0000001,"e":1E5,"plain":2.5,' +
      '"list":[1.50,3],"deep":{"x":[0.10]},"s":"1.0"}',
  );
  // Numbers JSON.stringify writes as they came need no twin.
  calls.length = 0;
  await server.handle(
    parseMessage(text.replace(/"arguments":.*$/, '"arguments":{"a":2.5,"b":7}}}')),
  );
  assert.equal(spelledArguments(calls[0].args), undefined);
  // The tool API's parser keeps them too.
  const api = parseArguments('{"one":1.0,"s":"x"}') as Record<string, unknown>;
  assert.equal(JSON.stringify(spelledArguments(api)), '{"one":1.0,"s":"x"}');
});

Deno.test("__proto__ and constructor keys pollute nothing", async () => {
  const { server, calls } = recordingServer([
    {
      name: "declared",
      // Parsed, so "__proto__" is a property name rather than a prototype.
      inputSchema: JSON.parse(
        '{"type":"object","properties":{"constructor":{"type":"object"},"__proto__":{"type":"object"}}}',
      ),
    },
    { name: "undeclared", inputSchema: { type: "object", properties: { a: { type: "string" } } } },
  ]);
  const raw =
    '{"a":"x","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}';
  for (const name of ["declared", "undeclared"]) {
    calls.length = 0;
    const reply = await modern<CallToolResult>(server, "tools/call", {
      name,
      arguments: JSON.parse(raw),
    });
    assert.equal(reply.result?.isError, undefined, JSON.stringify(reply));
    const got = calls[0].args;
    assert.equal(Object.getPrototypeOf(got), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
    // Neither schema closes the object: every key validates and passes, as
    // an own data property.
    assert.deepEqual(Object.keys(got).sort(), ["__proto__", "a", "constructor"]);
    assert.deepEqual(Object.getOwnPropertyDescriptor(got, "__proto__")?.value, {
      polluted: true,
    });
    assert.deepEqual(got.constructor, { prototype: { polluted: true } });
  }
});

Deno.test("a tool with no inputSchema advertises an open empty object and dispatch gets {}", async () => {
  const { server, calls } = recordingServer([{ name: "ping_upstream" }]);
  for (const revision of REVISIONS) {
    calls.length = 0;
    const list = await ask<ListToolsResult>(server, revision, "tools/list");
    assert.deepEqual(list.result?.tools, [{
      name: "ping_upstream",
      inputSchema: { type: "object" },
    }]);
    for (const params of [{}, { arguments: {} }, { arguments: { anything: [1, 2], goes: true } }]) {
      const reply = await ask<CallToolResult>(server, revision, "tools/call", {
        name: "ping_upstream",
        ...params,
      });
      assert.equal(reply.result?.isError, undefined);
    }
    assert.deepEqual(calls.map((c) => c.args), [{}, {}, {}]);
  }
});

Deno.test("invalid arguments are an isError result naming the argument; dispatch never runs", async () => {
  const { server, calls } = recordingServer([{
    name: "issue",
    inputSchema: { ...OPEN_SCHEMA, additionalProperties: false },
  }]);
  const cases: [Record<string, unknown>, RegExp][] = [
    [{}, /missing required argument "owner"/],
    [{ owner: "a", count: "three" }, /argument "count"/],
    [{ owner: "a", count: 1.5 }, /argument "count"/],
    [{ owner: "a", labels: ["ok", 7] }, /argument "labels\[1\]"/],
    [{ owner: "a", extra: 1 }, /unexpected argument "extra"/],
  ];
  for (const revision of REVISIONS) {
    for (const [args, message] of cases) {
      const reply = await ask<CallToolResult>(server, revision, "tools/call", {
        name: "issue",
        arguments: args,
      });
      assert.equal(reply.result?.isError, true);
      const text = (reply.result?.content[0] as { text: string }).text;
      assert.match(text, /^Invalid arguments for tool "issue": /);
      assert.match(text, message);
    }
  }
  assert.equal(calls.length, 0);
});

Deno.test("an unknown tool or a malformed tools/call is a -32602 protocol error", async () => {
  const { server, calls } = recordingServer([{ name: "known" }]);
  for (const revision of REVISIONS) {
    const unknown = await ask(server, revision, "tools/call", { name: "nope" });
    assert.equal(unknown.error?.code, -32602);
    assert.deepEqual(unknown.error?.data, { name: "nope" });
    const noName = await ask(server, revision, "tools/call", { arguments: {} });
    assert.equal(noName.error?.code, -32602);
    assert.match(noName.error!.message, /needs params\.name/);
    const badArgs = await ask(server, revision, "tools/call", { name: "known", arguments: [1] });
    assert.equal(badArgs.error?.code, -32602);
    assert.match(badArgs.error!.message, /arguments must be an object/);
  }
  assert.equal(calls.length, 0);
});

Deno.test("a ToolError is shown to the model; any other throw is an isError result that leaks nothing", async () => {
  const { server, events } = recordingServer(
    [{ name: "refuses" }, { name: "crashes" }],
    (name) => {
      if (name === "refuses") throw new ToolError("quota exhausted, retry tomorrow");
      throw new Error("secret database password is hunter2");
    },
  );
  for (const revision of REVISIONS) {
    const refused = await ask<CallToolResult>(server, revision, "tools/call", { name: "refuses" });
    assert.deepEqual(refused.result?.content, [{
      type: "text",
      text: "quota exhausted, retry tomorrow",
    }]);
    assert.equal(refused.result?.isError, true);
    const crashed = await ask<CallToolResult>(server, revision, "tools/call", { name: "crashes" });
    assert.equal(crashed.result?.isError, true);
    assert.doesNotMatch(JSON.stringify(crashed), /hunter2/);
    assert.match(JSON.stringify(crashed.result?.content), /failed with an internal error/);
  }
  assert.match(JSON.stringify(events), /hunter2/, "the reason goes to the log");
});

Deno.test("a success must match the tool's outputSchema, else the caller gets isError", async () => {
  const outputSchema = {
    type: "object",
    properties: { total: { type: "integer" } },
    required: ["total"],
  };
  let structured: unknown = { total: 3 };
  const { server, events } = recordingServer(
    [{ name: "count", outputSchema }],
    () => ({
      content: [{ type: "text", text: JSON.stringify(structured) }],
      structuredContent: structured as Record<string, number>,
    }),
  );
  for (const revision of REVISIONS) {
    structured = { total: 3 };
    const ok = await ask<CallToolResult>(server, revision, "tools/call", { name: "count" });
    assert.deepEqual(ok.result?.structuredContent, { total: 3 });
    structured = { total: "three" };
    const bad = await ask<CallToolResult>(server, revision, "tools/call", { name: "count" });
    assert.equal(bad.result?.isError, true);
    assert.equal(bad.result?.structuredContent, undefined);
    assert.match(JSON.stringify(bad.result?.content), /does not match its outputSchema/);
  }
  assert.ok(events.some((e) => e.event === "malformed_tool_result"));
});

Deno.test("structuredContent that is not an object reaches 2026-07-28 only", async () => {
  const { server } = recordingServer([{ name: "list" }], () => ({
    content: [{ type: "text", text: "[1,2,3]" }],
    structuredContent: [1, 2, 3],
  }));
  const legacy = await ask<CallToolResult>(server, LEGACY, "tools/call", { name: "list" });
  assert.equal(Object.hasOwn(legacy.result!, "structuredContent"), false);
  assert.deepEqual(legacy.result?.content, [{ type: "text", text: "[1,2,3]" }]);
  const current = await ask<CallToolResult>(server, MODERN, "tools/call", { name: "list" });
  assert.deepEqual(current.result?.structuredContent, [1, 2, 3]);
});

Deno.test("the tool API calls through the same validation and dispatch", async () => {
  const { server: core, calls } = recordingServer([{
    name: "issue",
    inputSchema: { ...OPEN_SCHEMA, additionalProperties: false },
  }]);
  // The tool API is plain HTTP, not an MCP exchange: it answers a bare
  // CallToolResult (no 2026-07-28 envelope), held to the plain definition.
  const server = {
    callTool: async (name: string, args: unknown) => {
      const outcome = await core.callTool(name, args);
      assert.deepEqual(problemsAgainst(LEGACY, "CallToolResult", outcome.result), []);
      return outcome;
    },
  };
  const refused = await server.callTool("issue", { owner: 1 });
  assert.equal(refused.status, 400);
  assert.match((refused.result.content[0] as { text: string }).text, /argument "owner"/);
  const unknown = await server.callTool("nope", {});
  assert.equal(unknown.status, 404);
  const ok = await server.callTool("issue", { owner: "me", count: 2 });
  assert.equal(ok.status, 200);
  assert.deepEqual(calls.map((c) => c.args), [{ owner: "me", count: 2 }]);
});

Deno.test("arguments nested past the limit are refused before validation and dispatch", async () => {
  let called = 0;
  const s = new McpServer({
    name: "deep",
    catalog: {
      tools: [{ name: "take", inputSchema: { type: "object", properties: { v: {} } } }],
      resources: [],
      prompts: [],
    },
    dispatch: () => (called++, { content: [] }),
    log: () => {},
  });
  let deep: unknown = 1;
  for (let i = 0; i < 20_000; i++) deep = [deep];
  const outcome = await s.callTool("take", { v: deep });
  assert.equal(outcome.status, 400);
  assert.match(JSON.stringify(outcome.result), /nest deeper than 64 levels/);
  assert.equal(called, 0);
});

/**
 * A tool that answers synchronously is run without a promise in between; it
 * must be indistinguishable from the same tool answering asynchronously, for
 * every way a tool can end (over MCP, under `around`, and over the tool API).
 */
Deno.test("a synchronous tool answers exactly as its asynchronous twin, however it ends", async () => {
  const schema = {
    type: "object",
    properties: { n: { type: "integer" } },
    additionalProperties: false,
  };
  const endings: Record<string, () => unknown> = {
    ok: () => ({ content: [{ type: "text", text: "fine \u001b[2J" }] }),
    toolError: () => {
      throw new ToolError("nope", { status: 409, structuredContent: { why: "x" } });
    },
    plainError: () => {
      throw new Error("boom");
    },
    malformed: () => ({ content: "not a list" }),
    wrongOutput: () => ({ content: [], structuredContent: { n: "string" } }),
    isError: () => ({ content: [{ type: "text", text: "bad" }], isError: true }),
  };
  const outcomes = async (mode: "sync" | "async" | "thenable", around: boolean) => {
    const { server, events } = makeServer({
      catalog: {
        tools: Object.keys(endings).map((name) => ({
          name,
          inputSchema: schema,
          ...(name === "wrongOutput"
            ? { outputSchema: { type: "object", properties: { n: { type: "integer" } } } }
            : {}),
        })),
        resources: [],
        prompts: [],
      },
      dispatch: ((name: string) => {
        const end = endings[name];
        if (mode === "sync") return end();
        if (mode === "async") return Promise.resolve().then(end);
        return {
          then: (ok: (v: unknown) => void, no: (e: unknown) => void) => {
            try {
              ok(end());
            } catch (error) {
              no(error);
            }
          },
        };
      }) as Dispatch,
      ...(around ? { around: (_info, run) => run() } : {}),
    });
    const seen: unknown[] = [];
    for (const name of Object.keys(endings)) {
      const mcp = await modern(server, "tools/call", { name, arguments: { n: 1 } });
      const api = await server.callTool(name, { n: 1 });
      const bad = await modern(server, "tools/call", { name, arguments: { n: "x" } });
      seen.push([name, mcp.status, mcp.result, mcp.error, api, bad.result]);
    }
    return { seen, events: events.map((e) => JSON.stringify(e)) };
  };
  const reference = await outcomes("async", false);
  assert.ok(JSON.stringify(reference.seen).includes("nope"));
  for (const mode of ["sync", "thenable"] as const) {
    for (const around of [false, true]) {
      assert.deepEqual(await outcomes(mode, around), reference, `${mode}, around ${around}`);
    }
  }
});
