/**
 * A token budget in a guardfile that wraps an MCP server (`surface
 * max-tokens=N`), run as CI runs it: `weir lint-upstream FILE` lists the
 * server's tools as serve does and holds the list to the budget (exit 1 over
 * it, naming the largest tools; 0 within it; the figures in JSON), against a
 * real recording MCP server over Streamable HTTP.
 */
import assert from "node:assert/strict";
import { startMcpUpstream } from "../support/mcp_upstream.ts";
import { runWeir } from "../support/upstream_cli.ts";

function wrapFile(url: string, surface: string): string {
  return `${surface}
wrap ward mcp rec {
    mcp-server http "${url}"
    proxy "echo"
    proxy "get_field_values"
    proxy "whoami"
}
`;
}

Deno.test("lint-upstream FILE holds a wrap file's token budget to what serve lists", async () => {
  const up = await startMcpUpstream();
  const dir = await Deno.makeTempDir({ prefix: "weir-wrap-budget-" });
  try {
    const tight = `${dir}/tight.mcp.kdl`;
    await Deno.writeTextFile(tight, wrapFile(up.url, "surface max-tokens=50"));
    const over = await runWeir(["lint-upstream", tight]);
    assert.equal(over.code, 1, over.stderr);
    assert.match(over.stderr, /surface: 4 tools, \d+ tokens \(o200k\), budget 50/);
    assert.match(
      over.stderr,
      /the tools list \d+ tokens, over the budget of 50 \(max-tokens\); the largest tools: get_field_values \d+/,
    );
    // The tools themselves are fine: only the budget fails.
    assert.match(over.stdout, /^echo\tpresent$/m);

    const perTool = `${dir}/per_tool.mcp.kdl`;
    await Deno.writeTextFile(perTool, wrapFile(up.url, "surface max-tool-tokens=40"));
    const json = await runWeir(["lint-upstream", perTool, "--format", "json"]);
    assert.equal(json.code, 1, json.stderr);
    const doc = JSON.parse(json.stdout);
    assert.equal(doc.ok, false);
    assert.equal(doc.size.tools, 4);
    assert.ok(doc.size.perTool.some((t: { name: string }) => t.name === "get_field_values"));
    assert.ok(doc.problems.some((p: string) => /per-tool budget of 40 tokens/.test(p)));

    const roomy = `${dir}/roomy.mcp.kdl`;
    await Deno.writeTextFile(roomy, wrapFile(up.url, "surface max-tokens=100000"));
    const ok = await runWeir(["lint-upstream", roomy]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /surface: 4 tools, \d+ tokens \(o200k\), budget 100000/);

    // No budget: no second listing, nothing said about one.
    const none = `${dir}/none.mcp.kdl`;
    await Deno.writeTextFile(none, wrapFile(up.url, ""));
    const plain = await runWeir(["lint-upstream", none]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.doesNotMatch(plain.stderr, /surface:/);

    // A server that cannot be reached with a budget set: the budget is not silently passed.
    await up.stop();
    const down = await runWeir(["lint-upstream", roomy]);
    assert.equal(down.code, 1);
    assert.match(down.stderr, /a token budget is set, but the surface was not measured/);
  } finally {
    await up.stop().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
