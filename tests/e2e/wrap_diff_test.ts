/**
 * `weir diff` of two files that wrap an MCP server, run as CI runs it: held
 * fixed (the file's rules, pins and controls), from the definitions a
 * fingerprints file recorded (`weir lint-upstream FILE --write-fingerprints
 * F`, then `weir diff --definitions F` with the server gone), and `--live`
 * (each file's server lists its tools), against a real recording MCP server.
 */
import assert from "node:assert/strict";
import { startMcpUpstream } from "../support/mcp_upstream.ts";
import { runWeir } from "../support/upstream_cli.ts";

function wrapFile(url: string, limit: number, extra = ""): string {
  return `wrap ward mcp rec {
    mcp-server http "${url}"
    proxy "echo"${extra}
    proxy "fields" {
        upstream "get_field_values"
        argument "limit" maximum=${limit}
    }
}
`;
}

Deno.test("weir diff of wrap files: held fixed, from recorded definitions, and live", async () => {
  const up = await startMcpUpstream();
  const dir = await Deno.makeTempDir({ prefix: "weir-wrap-diff-" });
  const oldFile = `${dir}/old.mcp.kdl`;
  const newFile = `${dir}/new.mcp.kdl`;
  const prints = `${dir}/fingerprints.json`;
  try {
    // OLD says echo writes; NEW leaves it to the server, whose echo says readOnlyHint: true.
    await Deno.writeTextFile(
      oldFile,
      wrapFile(up.url, 10, ` {\n        annotations read-only=#false\n    }`),
    );
    await Deno.writeTextFile(newFile, wrapFile(up.url, 50));
    // The fingerprints file records the definitions it fingerprints.
    const lint = await runWeir(["lint-upstream", oldFile, "--write-fingerprints", prints]);
    assert.equal(lint.code, 0, lint.stderr);
    const recorded = JSON.parse(await Deno.readTextFile(prints));
    assert.deepEqual(Object.keys(recorded.tools).sort(), ["echo", "get_field_values"]);
    assert.deepEqual(
      recorded.definitions.map((d: { name: string }) => d.name),
      ["echo", "get_field_values"],
    );

    // Live: the server lists its tools now.
    const live = await runWeir(["diff", "--live", "--fail-on", "widen", oldFile, newFile]);
    assert.equal(live.code, 1, live.stderr);
    assert.match(live.stdout, /\+ WIDENS +fields: input "limit": maximum 10 -> 50/);
    assert.match(live.stdout, /\+ WIDENS +echo: now said to only read/);
    assert.doesNotMatch(live.stdout, /held fixed/);

    // Recorded: the same verdicts with the server gone.
    await up.stop();
    const offline = await runWeir([
      "diff",
      "--definitions",
      prints,
      "--format",
      "json",
      oldFile,
      newFile,
    ]);
    assert.equal(offline.code, 0, offline.stderr);
    const doc = JSON.parse(offline.stdout);
    const lines = doc.changes.map((c: { effect: string; tool: string; what: string }) =>
      `${c.effect} ${c.tool}: ${c.what}`
    );
    assert.ok(lines.includes(`widen fields: input "limit": maximum 10 -> 50`), lines.join("\n"));
    assert.ok(
      lines.some((l: string) => /^widen echo: now said to only read/.test(l)),
      lines.join("\n"),
    );
    assert.equal(doc.wrappedServer, undefined);

    // Held fixed: the file's own rule change, and a note that the schemas were not read.
    const fixed = await runWeir(["diff", oldFile, newFile]);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.match(fixed.stdout, /\+ WIDENS +fields: input "limit": maximum 10 -> 50/);
    assert.match(fixed.stdout, /a wrapped MCP server's tools are held fixed/);

    // Definitions that cannot be had say so: exit 1.
    const gone = await runWeir(["diff", "--live", oldFile, newFile]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /old\.mcp\.kdl: /);
    const usage = await runWeir(["diff", "--live", "--definitions", prints, oldFile, newFile]);
    assert.equal(usage.code, 2);
  } finally {
    await up.stop().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
