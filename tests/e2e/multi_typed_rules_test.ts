/**
 * Issue 34 item 5 and its siblings: a rule on an argument the MCP server types
 * several ways, `null` among them, holds every value. `restrict`, `pattern=`,
 * `min-length=`, `max-length=`, `minimum=`, `maximum=` and `enum` each on an
 * argument typed `["string", "null"]`, `["integer", "null"]`, `anyOf` with a
 * null branch, or not typed at all: the listed schema takes no null, and a
 * null (or another type) sent anyway is refused over both revisions and the
 * tool API with nothing sent, through the shipped CLI in front of a recording
 * MCP server on the official SDK. Spec mode's sibling: an optional input sent
 * as null is "not given", so nothing is sent for it.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";
import { startRecorder } from "../support/upstream.ts";
import { callToolAs as call, rpcAs } from "../support/revision_http.ts";
import { compileSchema } from "../../src/mcp/schema.ts";

/** How an MCP server may type an argument that also takes null. */
const NULLABLE_STRING: Record<string, Record<string, unknown>> = {
  union: { type: ["string", "null"] },
  anyOf: { anyOf: [{ type: "string" }, { type: "null" }] },
  untyped: {},
};
const NULLABLE_NUMBER: Record<string, Record<string, unknown>> = {
  union: { type: ["integer", "null"] },
  anyOf: { anyOf: [{ type: "number" }, { type: "null" }] },
  untyped: {},
};

/** Each rule: its guardfile text, a value it admits, and values it must refuse. */
const RULES: { arg: string; text: string; number: boolean; ok: unknown; bad: unknown[] }[] = [
  {
    arg: "glob",
    text: `argument "glob" { restrict "/data/*"; }`,
    number: false,
    ok: "/data/a",
    bad: [null, "/etc"],
  },
  {
    arg: "pat",
    text: `argument "pat" pattern="^[a-z]+$"`,
    number: false,
    ok: "abc",
    bad: [null, "A1"],
  },
  {
    arg: "short",
    text: `argument "short" max-length=3`,
    number: false,
    ok: "abc",
    bad: [null, "abcd"],
  },
  { arg: "long", text: `argument "long" min-length=2`, number: false, ok: "ab", bad: [null, "a"] },
  { arg: "low", text: `argument "low" minimum=1`, number: true, ok: 2, bad: [null, 0] },
  { arg: "high", text: `argument "high" maximum=10`, number: true, ok: 3, bad: [null, 11] },
  {
    arg: "pick",
    text: `argument "pick" { enum "a" "b"; }`,
    number: false,
    ok: "a",
    bad: [null, "c"],
  },
];

Deno.test("a rule on an argument typed with null holds every value: null is refused, listed and enforced", async () => {
  const tools: ListedTool[] = Object.keys(NULLABLE_STRING).map((shape) => ({
    name: `t_${shape}`,
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        RULES.map((r) => [r.arg, (r.number ? NULLABLE_NUMBER : NULLABLE_STRING)[shape]]),
      ),
    },
  }));
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools });
  const file = await tempGuardfile(`wrap ward mcp typed {
    mcp-server http "${up.url}"
${
    tools.map((t) =>
      `    proxy ${t.name} {\n${RULES.map((r) => `        ${r.text}`).join("\n")}\n    }`
    )
      .join("\n")
  }
}
`);
  const weir = await serveHttp(file);
  try {
    const listed = await rpcAs<
      { result: { tools: { name: string; inputSchema: Record<string, never> }[] } }
    >(weir.url, "2025-11-25", "tools/list", {});
    for (const tool of listed.result.tools) {
      if (!tool.name.startsWith("t_")) continue;
      const admits = compileSchema(tool.inputSchema);
      for (const rule of RULES) {
        assert.ok(
          admits({ [rule.arg]: null }).length > 0,
          `${tool.name}.${rule.arg} is listed as taking null: ${
            JSON.stringify(tool.inputSchema.properties[rule.arg])
          }`,
        );
      }
    }
    for (const tool of tools) {
      for (const rule of RULES) {
        for (const bad of rule.bad) {
          const args = { [rule.arg]: bad };
          for (const revision of ["2025-11-25", "2026-07-28"] as const) {
            const answer = await call(weir.url, revision, tool.name, args);
            assert.ok(
              answer.error || answer.result?.isError === true,
              `${revision} ${tool.name} ${JSON.stringify(args)} was let through`,
            );
          }
          const api = await fetch(`${weir.url}/api/${tool.name}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(args),
          });
          assert.ok(api.status === 400 || api.status === 403, `/api ${JSON.stringify(args)}`);
          await api.body?.cancel();
        }
      }
    }
    assert.equal(up.calls().length, 0, "nothing refused reached the MCP server");
    const good = Object.fromEntries(RULES.map((r) => [r.arg, r.ok]));
    const ok = await call(weir.url, "2026-07-28", "t_union", good);
    assert.equal(ok.result?.isError, undefined, JSON.stringify(ok));
    assert.deepEqual(JSON.parse(up.calls().at(-1)!).params.arguments, good);
  } finally {
    await weir.stop();
    await up.stop();
  }
});

Deno.test("spec mode: an optional input sent as null is not given, so nothing is sent for it", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(`wrap ward mcp spec {
    base-url "${upstream.url}"
    auth none
    can list item {
        path "/items"
        query { field "tag" type="string" pattern="^[a-z]+$" max-length=5; field "limit" type="integer" maximum=10; }
    }
}
`);
  const server = await serveHttp(file);
  try {
    const r = await fetch(`${server.url}/api/list_item`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tag: null, limit: null }),
    });
    assert.equal(r.status, 200, await r.text());
    assert.equal(upstream.requests.at(-1)!.query, "");
  } finally {
    await server.stop();
    await upstream.close();
  }
});
