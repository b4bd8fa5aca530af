/**
 * Issue 34 item 6: the arguments a guardfile's override hides, pins or
 * renames away are not named in the advertised schema (no `propertyNames`
 * listing them), and a caller who sends one anyway is told the server sets
 * it (or which name serves it), not that it is undeclared, over both
 * revisions and the tool API, whether the MCP server's schema is open to
 * extra keys or closed; nothing is sent. Through the shipped CLI in front of
 * a recording MCP server on the official SDK.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";
import { rpcAs as post } from "../support/revision_http.ts";

const properties = {
  owner: { type: "string" },
  note: { type: "string" },
  a: { type: "number" },
  b: { type: "number" },
};
const TOOLS: ListedTool[] = [
  { name: "open_sum", inputSchema: { type: "object", properties, required: ["owner", "a"] } },
  {
    name: "closed_sum",
    inputSchema: {
      type: "object",
      properties,
      required: ["owner", "a"],
      additionalProperties: false,
    },
  },
];

Deno.test("hidden, pinned and renamed-away arguments are not named, and a caller who sends one is told the server sets it", async () => {
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools: TOOLS });
  const file = await tempGuardfile(`pin "open_sum" {
    argument "owner" literal "acme"
}
pin "closed_sum" {
    argument "owner" literal "acme"
}
wrap ward mcp sums {
    mcp-server http "${up.url}"
${
    TOOLS.map((t) =>
      `    proxy ${t.name} {\n        argument "first" upstream="a"\n        argument "note" hide=#true\n    }`
    ).join("\n")
  }
}
`);
  const weir = await serveHttp(file);
  try {
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      const listed = await post(weir.url, revision, "tools/list", {});
      for (
        const tool of listed.result!.tools as {
          name: string;
          inputSchema: Record<string, unknown>;
        }[]
      ) {
        if (!tool.name.endsWith("_sum")) continue;
        const schema = JSON.stringify(tool.inputSchema);
        assert.ok(!("propertyNames" in tool.inputSchema), `${revision} ${tool.name}: ${schema}`);
        for (const name of ["owner", "note", '"a"']) {
          assert.ok(!schema.includes(name), `${revision} ${tool.name} names ${name}: ${schema}`);
        }
        assert.deepEqual(Object.keys(tool.inputSchema.properties as object), ["first", "b"]);
      }
    }
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { first: 1, owner: "acme" },
        /argument "owner" is set by the server, not by the caller \(the operator pinned its value\): leave it out/,
      ],
      [{ first: 1, owner: "evil" }, /argument "owner" is set by the server, not by the caller/],
      [
        { first: 1, note: "x" },
        /argument "note" is set by the server, not by the caller \(the operator hid it/,
      ],
      [{ first: 1, a: 2 }, /argument "a" is served as "first": send it as "first"/],
    ];
    for (const tool of TOOLS) {
      for (const [args, said] of cases) {
        for (const revision of ["2025-11-25", "2026-07-28"] as const) {
          const answer = await post(weir.url, revision, "tools/call", {
            name: tool.name,
            arguments: args,
          });
          const text = answer.error?.message ??
            ((answer.result?.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join(
              "\n",
            );
          assert.ok(
            answer.error || answer.result?.isError,
            `${revision} ${tool.name} ${JSON.stringify(args)}`,
          );
          assert.match(text, said, `${revision} ${tool.name} ${JSON.stringify(args)}: ${text}`);
          assert.doesNotMatch(text, /not declared/, text);
        }
        const api = await fetch(`${weir.url}/api/${tool.name}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(args),
        });
        const raw = await api.text();
        const body = JSON.stringify(JSON.parse(raw).content ?? JSON.parse(raw));
        assert.match(JSON.parse(raw).content?.[0]?.text ?? raw, said, `/api ${tool.name}: ${body}`);
      }
    }
    assert.equal(up.calls().length, 0, "nothing refused reached the MCP server");
    for (const tool of TOOLS) {
      const ok = await post(weir.url, "2026-07-28", "tools/call", {
        name: tool.name,
        arguments: { first: 1, b: 2 },
      });
      assert.equal(ok.result?.isError, undefined, JSON.stringify(ok));
      assert.deepEqual(JSON.parse(up.calls().at(-1)!).params.arguments, {
        a: 1,
        b: 2,
        owner: "acme",
      });
    }
  } finally {
    await weir.stop();
    await up.stop();
  }
});
