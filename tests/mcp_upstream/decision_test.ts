/**
 * serve-upstream's allowlist names upstream tools exactly (issue 34 item 10:
 * `decideTools` had no unit test, and a mutation that matched names ignoring
 * case served the upstream's `Purge_All` for `--tool purge_all`). A name is
 * served only when the upstream lists that very name, with that tool's own
 * definition; a name that differs by case, width, a separator or a look-alike
 * letter is `missing`, its near spellings named for the operator. Then
 * through the CLI: serve-upstream and lint-upstream refuse to start.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { decideTools } from "../../src/mcp_upstream/decision.ts";
import type { ToolSpec } from "../../src/mcp/types.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { runWeir } from "../support/upstream_cli.ts";

const tool = (name: string, description = `the tool ${name}`): ToolSpec => ({
  name,
  description,
  inputSchema: { type: "object", properties: {} },
});

/** Spellings an upstream could list beside or instead of a name. */
function variants(name: string): string[] {
  return [
    name.toUpperCase(),
    name[0].toUpperCase() + name.slice(1),
    name.replaceAll("_", "-"),
    name.replaceAll("_", ""),
    name.replace(/l/g, "I"),
    [...name].map((c) => (/[a-z]/.test(c) ? String.fromCharCode(c.charCodeAt(0) + 0xfee0) : c))
      .join(""),
    `${name} `,
  ].filter((v) => v !== name);
}

Deno.test("decideTools(): an allowlisted name is served only by the tool of that exact name", async () => {
  const decisions = await decideTools({
    allowlist: ["purge_all"],
    listed: [tool("Purge_All"), tool("PURGE_ALL"), tool("purge-all"), tool("list_all")],
  });
  assert.equal(decisions.length, 1);
  const [d] = decisions;
  assert.equal(d.status, "missing", JSON.stringify(d));
  assert.ok(d.status === "missing" && d.nearest.includes("Purge_All"), JSON.stringify(d));
});

Deno.test("decideTools(): among spellings of one name, each allowlisted name gets its own definition", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.stringMatching(/^[a-z][a-z_]{2,12}$/),
      fc.subarray([0, 1, 2, 3, 4, 5, 6], { minLength: 1 }),
      fc.boolean(),
      async (name, picks, listExact) => {
        const others = picks.map((i) => variants(name)[i]).filter((v) => v !== undefined);
        const listed = [
          ...others.map((v) => tool(v, `spelled ${JSON.stringify(v)}`)),
          ...(listExact ? [tool(name, "the exact one")] : []),
        ];
        const allowlist = [name, ...new Set(others)].slice(0, 3);
        const decisions = await decideTools({ allowlist, listed });
        assert.deepEqual(decisions.map((d) => d.name), allowlist);
        for (const d of decisions) {
          const exact = listed.find((t) => t.name === d.name);
          if (!exact) {
            assert.equal(d.status, "missing", JSON.stringify(d));
            continue;
          }
          assert.ok(d.status === "served" || d.status === "stubbed", JSON.stringify(d));
          assert.equal(d.definition?.name, d.name);
          assert.equal(d.definition?.description, exact.description);
        }
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("serve-upstream and lint-upstream: --tool purge_all does not reach the upstream's Purge_All", async () => {
  const upstream = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "json",
    tools: [{
      name: "Purge_All",
      description: "Deletes everything.",
      inputSchema: { type: "object" },
    }],
  });
  try {
    for (const command of ["serve-upstream", "lint-upstream"]) {
      const out = await runWeir(
        [command, "--upstream", upstream.url, "--tool", "purge_all", "--stdio"].filter((a) =>
          command === "serve-upstream" || a !== "--stdio"
        ),
      );
      assert.notEqual(out.code, 0, `${command}: ${out.stdout}${out.stderr}`);
      assert.match(
        out.stdout + out.stderr,
        /"purge_all"(?: is not listed by the upstream|: the upstream does not list it) \(nearest: Purge_All\)/,
      );
      assert.deepEqual(upstream.calls(), [], command);
    }
  } finally {
    await upstream.stop();
  }
});

Deno.test("the wrap host refuses a call of a name it does not serve, whatever the catalog says", async () => {
  // issue 34 item 10: the core refuses a name not listed first; the host's own
  // refusal beneath it (rule allowlist) was held by no test.
  const { startWrapStandIn } = await import("../support/build_fuzz.ts");
  const { loadGuardfileText } = await import("../../src/guardfile/load.ts");
  const { buildWrapSurface } = await import("../../src/wrap/surface.ts");
  const { WeirError, ruleOfError } = await import("../../src/errors/kinds.ts");
  const standIn = startWrapStandIn();
  standIn.tools = [tool("purge_all"), tool("list_all")];
  try {
    const { mcpWrap, diagnostics } = loadGuardfileText(
      `wrap ward mcp t {\n  mcp-server http "${standIn.url}"\n  proxy list_all\n}\n`,
      "t.mcp.kdl",
    );
    assert.ok(mcpWrap, JSON.stringify(diagnostics));
    const surface = await buildWrapSurface(mcpWrap, { log: () => {} });
    try {
      assert.equal(surface.host.servedState("list_all").entry.upstream, "list_all");
      for (const name of ["purge_all", "List_All", "nope", "toString", "__proto__"]) {
        assert.throws(
          () => surface.host.servedState(name),
          (e: unknown) => e instanceof WeirError && ruleOfError(e) === "allowlist",
          name,
        );
      }
    } finally {
      await surface.connection.close();
    }
  } finally {
    await standIn.stop();
  }
});
