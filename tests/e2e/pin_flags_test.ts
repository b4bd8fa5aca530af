/**
 * serve-upstream's `--pin` hides the pinned argument as the guardfile's `pin`
 * does (a sibling of issue 34 item 6): the served schema no longer lists it
 * (neither `properties` nor `required`), every call carries the pinned
 * value, and a caller who sends the argument anyway, with any value, is told
 * the server sets it, over both revisions and the tool API, whether the MCP
 * server's schema is open to extra keys or closed; nothing is sent. A pin on
 * a schema whose root may name the argument elsewhere (`allOf`, ...) makes
 * the tool a stub saying why. Through the shipped CLI in front of a recording
 * MCP server on the official SDK.
 */
import assert from "node:assert/strict";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { rpcAs as post } from "../support/revision_http.ts";

const properties = {
  site: { type: "string", description: "Which site to read." },
  limit: { type: "integer" },
  field: { type: "string" },
};
const TOOLS: ListedTool[] = [
  { name: "open_get", inputSchema: { type: "object", properties, required: ["site", "field"] } },
  {
    name: "closed_get",
    inputSchema: {
      type: "object",
      properties,
      required: ["site", "field"],
      additionalProperties: false,
    },
  },
  {
    name: "combined_get",
    inputSchema: { type: "object", properties, allOf: [{ required: ["site"] }] },
  },
];

Deno.test("serve-upstream --pin: the pinned argument is not listed, and a caller who sends it is told the server sets it", async () => {
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools: TOOLS });
  const weir = await startWrapper([
    ...TOOLS.flatMap((t) => ["--tool", t.name, "--pin", `${t.name}.site=prod`]),
    "--pin",
    "open_get.limit=10",
    "--upstream",
    up.url,
  ]);
  try {
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      const listed = await post(weir.url, revision, "tools/list", {});
      const tools = listed.result!.tools as {
        name: string;
        description?: string;
        inputSchema: Record<string, unknown>;
      }[];
      for (const name of ["open_get", "closed_get"]) {
        const tool = tools.find((t) => t.name === name)!;
        const schema = JSON.stringify(tool.inputSchema);
        assert.ok(!schema.includes("site"), `${revision} ${name} names site: ${schema}`);
        assert.deepEqual(tool.inputSchema.required, ["field"], `${revision} ${name}`);
      }
      const open = tools.find((t) => t.name === "open_get")!;
      assert.deepEqual(Object.keys(open.inputSchema.properties as object), ["field"]);
      const combined = tools.find((t) => t.name === "combined_get")!;
      assert.match(combined.description ?? "", /^NOT AVAILABLE: .*allOf.*plain properties/);
    }
    const cases: [string, Record<string, unknown>][] = [
      ["open_get", { field: "city", site: "prod" }],
      ["open_get", { field: "city", site: "staging" }],
      ["open_get", { field: "city", limit: 10 }],
      ["open_get", { field: "city", site: null }],
      ["closed_get", { field: "city", site: "prod" }],
      ["closed_get", { field: "city", site: "staging" }],
    ];
    for (const [tool, args] of cases) {
      const arg = Object.keys(args).find((k) => k !== "field")!;
      const said = new RegExp(
        `argument "${arg}"( of tool "${tool}")? is set by the server, not by the caller ` +
          `\\(the operator pinned its value\\): leave it out`,
      );
      for (const revision of ["2025-11-25", "2026-07-28"] as const) {
        const answer = await post(weir.url, revision, "tools/call", {
          name: tool,
          arguments: args,
        });
        const text = answer.error?.message ??
          ((answer.result?.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join(
            "\n",
          );
        const where = `${revision} ${tool} ${JSON.stringify(args)}: ${text}`;
        assert.ok(answer.error || answer.result?.isError, where);
        assert.match(text, said, where);
        assert.doesNotMatch(text, /not declared/, where);
      }
      const api = await fetch(`${weir.url}/api/${tool}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(args),
      });
      const raw = await api.text();
      assert.ok(api.status === 400 || api.status === 403, `/api ${tool}: ${api.status} ${raw}`);
      assert.match(JSON.parse(raw).content?.[0]?.text ?? raw, said, `/api ${tool}: ${raw}`);
    }
    assert.equal(up.calls().length, 0, "nothing refused reached the MCP server");
    for (
      const [tool, sent] of [["open_get", { site: "prod", limit: 10 }], ["closed_get", {
        site: "prod",
      }]] as const
    ) {
      const ok = await post(weir.url, "2026-07-28", "tools/call", {
        name: tool,
        arguments: { field: "city" },
      });
      assert.equal(ok.result?.isError, undefined, JSON.stringify(ok));
      assert.deepEqual(JSON.parse(up.calls().at(-1)!).params.arguments, { field: "city", ...sent });
    }
  } finally {
    await weir.stop();
    await up.stop();
  }
});
