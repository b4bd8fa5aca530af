/** `weir describe`: the served surface as a person reads it, and as JSON. */
import assert from "node:assert/strict";
import { runCli, tempGuardfile } from "../support/cli.ts";

Deno.test("describe prints methods, paths, inputs with bounds, restrictions, withheld reasons", async () => {
  // The secret is set, so printing it would show: describe names sources, never values.
  const r = await runCli(["describe", "guardfiles/forgejo-issues.mcp.kdl"], {
    env: { FORGEJO_TOKEN: "forgejo-secret-token-9182" },
  });
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout;
  assert.match(out, /^server forgejo \(guardfiles\/forgejo-issues\.mcp\.kdl\)$/m);
  assert.match(out, /^upstream https:\/\/forgejo\.coilysiren\.me\/api\/v1$/m);
  assert.match(out, /^auth header Authorization \(prefix "token "\) from env FORGEJO_TOKEN$/m);
  assert.match(out, /^list_issue {2}GET \/repos\/\{owner\}\/\{repo\}\/issues$/m);
  assert.match(out, /^ {2}query {4}limit: integer \(optional, 1\.\.50\)$/m);
  assert.match(out, /^ {2}body {5}title: string \(required\)$/m);
  assert.match(out, /^ {2}restrict owner matches "coilyco-\*"$/m);
  assert.match(out, /^ {2}body is always \{"state":"closed"\}$/m);
  assert.match(
    out,
    /^delete_issue {2}WITHHELD\n {2}reason: The upstream has no undo.*\n {2}instead: close_issue$/m,
  );
  assert.ok(
    !out.includes("forgejo-secret-token-9182"),
    "no secret values, only where they come from",
  );
  assert.ok(!r.stderr.includes("forgejo-secret-token-9182"));
});

Deno.test("describe --format json is the surface model for machines", async () => {
  const r = await runCli(["describe", "--format", "json", "tests/fixtures/grammar.mcp.kdl"]);
  assert.equal(r.code, 0, r.stderr);
  const surface = JSON.parse(r.stdout);
  assert.equal(surface.server, "grammar");
  assert.equal(surface.form, "spec");
  const search = surface.tools.find((t: { name: string }) => t.name === "search_ticket");
  assert.deepEqual(search.operation, { kind: "http", method: "GET", path: "/search" });
  assert.equal(search.access.reads, true);
  assert.deepEqual(search.exclusive, [["before", "after"]]);
  const text = search.arguments.find((i: { name: string }) => i.name === "text");
  assert.deepEqual(text, {
    name: "text",
    in: "query",
    sentAs: "q",
    type: "string",
    required: true,
    rules: {},
    restrict: [],
    encoding: { metacharacters: "refuse" },
    served: true,
  });
  assert.deepEqual(search.inputSchema.required, ["text"]);
  const purge = surface.tools.find((t: { name: string }) => t.name === "purge_ticket");
  assert.equal(purge.destructive, true);
});

Deno.test("describe on a broken file prints the errors and exits 1", async () => {
  const file = await tempGuardfile(`wrap ward mcp t {\n  auth none\n}\n`);
  const r = await runCli(["describe", file]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /missing "base-url"/);
});

Deno.test("describe shows value rules, gate opt-outs, pins, cache and the rate limit", async () => {
  const text = await runCli(["describe", "guardfiles/prometheus.mcp.kdl"]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^rate-limit 20 per 1000 ms \(all grants\), in each process /m);
  assert.match(
    text.stdout,
    /query {4}promql: string \(required, length 1\.\.4000, metacharacters allowed, sent as query\)/,
  );
  assert.match(text.stdout, /path {5}label: string \(required, one segment, pattern \^\[a-zA-Z_\]/);
  assert.match(text.stdout, /state: string \(optional, one of "active", "dropped", "any"\)/);
  assert.match(text.stdout, /list_targets {2}GET \/api\/v1\/targets[\s\S]*?cached for 15000 ms/);
  const plausible = await runCli(["describe", "guardfiles/plausible-stats.mcp.kdl"]);
  assert.match(plausible.stdout, /pinned query site_id from env PLAUSIBLE_SITE/);

  const json = JSON.parse(
    (await runCli(["describe", "--format", "json", "guardfiles/github-contents.mcp.kdl"])).stdout,
  );
  const contents = json.tools.find((t: { name: string }) => t.name === "get_contents");
  const path = contents.arguments.find((i: { name: string }) => i.name === "path");
  assert.deepEqual(path, {
    name: "path",
    in: "path",
    sentAs: "path",
    // Untyped, but under restrict globs a pattern states for strings only: a string.
    type: "string",
    required: true,
    rules: { minLength: 1, maxLength: 400 },
    restrict: [["docs/**", "README.md"]],
    encoding: { slashes: "segments", metacharacters: "refuse" },
    served: true,
  });
  assert.equal(contents.controls.cacheTtlMs, 60_000);
});

Deno.test("lint --format json lists each grant's metacharacter opt-outs", async () => {
  const r = await runCli(["lint", "--format", "json", "guardfiles/prometheus.mcp.kdl"]);
  assert.equal(r.code, 0, r.stderr);
  const tools = JSON.parse(r.stdout).files[0].tools as Record<string, unknown>[];
  const byName = Object.fromEntries(tools.map((t) => [t.name, t.metacharactersAllowed]));
  assert.deepEqual(byName.get_query, ["promql"]);
  assert.deepEqual(byName.list_series, ["match"]);
  assert.equal(byName.list_targets, undefined, "a tool with every input gated lists none");
  assert.equal(byName.delete_series, undefined);
});

Deno.test("describe --read-only shows the surface serve --read-only serves: writes withheld", async () => {
  const full = JSON.parse((await runCli(["describe", "--format", "json", DEMO])).stdout);
  const r = await runCli(["describe", "--read-only", "--format", "json", DEMO]);
  assert.equal(r.code, 0, r.stderr);
  const kinds = (s: { tools: { name: string; kind: string }[] }) =>
    Object.fromEntries(s.tools.map((t) => [t.name, t.kind]));
  assert.equal(kinds(full).create_ticket, "grant");
  const readOnly = kinds(JSON.parse(r.stdout));
  assert.equal(readOnly.create_ticket, "withheld");
  assert.equal(readOnly.list_ticket, "grant");
  const text = await runCli(["describe", "--read-only", DEMO]);
  assert.match(text.stdout, /^create_ticket {2}WITHHELD\n {2}reason: .*read-only/m);
  // The same view lint --read-only measures: the same tool names.
  const lint = await runCli(["lint", "--read-only", "--methods", DEMO]);
  assert.match(lint.stdout, /^create_ticket\tWITHHELD$/m);
});

const DEMO = "guardfiles/demo.mcp.kdl";
