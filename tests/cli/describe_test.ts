/** `weir describe`: the served surface as a person reads it, and as JSON. */
import assert from "node:assert/strict";
import { runCli } from "../support/cli.ts";

Deno.test("describe prints methods, paths, inputs with bounds, restrictions, withheld reasons", async () => {
  const r = await runCli(["describe", "guardfiles/forgejo-issues.mcp.kdl"]);
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout;
  assert.match(out, /^server forgejo \(guardfiles\/forgejo-issues\.mcp\.kdl\)$/m);
  assert.match(out, /^upstream https:\/\/forgejo\.coilysiren\.me\/api\/v1$/m);
  assert.match(out, /^auth header Authorization from env FORGEJO_TOKEN$/m);
  assert.match(out, /^list_issue {2}GET \/repos\/\{owner\}\/\{repo\}\/issues$/m);
  assert.match(out, /^ {2}query {4}limit: integer \(optional, 1\.\.50\)$/m);
  assert.match(out, /^ {2}body {5}title: string \(required\)$/m);
  assert.match(out, /^ {2}restrict owner matches "coilyco-\*"$/m);
  assert.match(out, /^ {2}body is always \{"state":"closed"\}$/m);
  assert.match(
    out,
    /^delete_issue {2}WITHHELD\n {2}reason: The upstream has no undo.*\n {2}instead: close_issue$/m,
  );
  assert.doesNotMatch(out, /FORGEJO_TOKEN=/, "no secret values, only where they come from");
});

Deno.test("describe --format json is the same surface for machines", async () => {
  const r = await runCli(["describe", "--format", "json", "tests/fixtures/grammar.mcp.kdl"]);
  assert.equal(r.code, 0, r.stderr);
  const surface = JSON.parse(r.stdout);
  assert.equal(surface.server, "grammar");
  const search = surface.tools.find((t: { name: string }) => t.name === "search_ticket");
  assert.equal(search.method, "GET");
  assert.deepEqual(search.exclusive, [["before", "after"]]);
  const text = search.inputs.find((i: { name: string }) => i.name === "text");
  assert.deepEqual(text, {
    name: "text",
    in: "query",
    type: "string",
    required: true,
    constraints: [],
    sentAs: "q",
    metacharacters: "refuse",
  });
  assert.deepEqual(search.inputSchema.required, ["text"]);
  const purge = surface.tools.find((t: { name: string }) => t.name === "purge_ticket");
  assert.equal(purge.destructive, true);
});

Deno.test("describe on a broken file prints the errors and exits 1", async () => {
  const file = await Deno.makeTempFile({ suffix: ".mcp.kdl" });
  await Deno.writeTextFile(file, `wrap ward mcp t {\n  auth none\n}\n`);
  const r = await runCli(["describe", file]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /missing "base-url"/);
});
