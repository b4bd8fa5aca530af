/** Planning the one upstream request a grant allows. */
import assert from "node:assert/strict";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import { encodeSegment, indexRestricts, planRequest } from "../../src/guard/request.ts";
import { ToolError } from "../../src/mcp/server.ts";

function grantOf(body: string) {
  const { guardfile, diagnostics } = parseGuardfile(
    `wrap ward mcp t {\n  base-url "t.example"\n  auth none\n  ${body}\n}`,
    "t.mcp.kdl",
  );
  assert.ok(guardfile, diagnostics.map((d) => d.message).join("\n"));
  return { grant: guardfile.grants[0], restricts: indexRestricts(guardfile) };
}

Deno.test("an omitted input named like an Object member is not sent", () => {
  // lint refuses such names (tests/cli/lint_strict_test.ts); the planner must
  // still not read them off Object.prototype, so the model is renamed here.
  const { grant, restricts } = grantOf(
    `can list results { path "/r"; query "season" "q1" "q2"; body "b1" }`,
  );
  const rename: Record<string, string> = { q1: "constructor", q2: "toString", b1: "valueOf" };
  for (const input of [...grant.query, ...grant.body] as { name: string; wire?: string }[]) {
    if (rename[input.name]) {
      if (input.wire === input.name) input.wire = rename[input.name];
      input.name = rename[input.name];
    }
  }
  const planned = planRequest(grant, { season: "2024" }, restricts);
  assert.deepEqual(planned.query, [["season", "2024"]]);
  assert.equal(planned.body, undefined);
  const withOwn = planRequest(grant, Object.fromEntries([["constructor", "c"]]), restricts);
  assert.deepEqual(withOwn.query, [["constructor", "c"]]);
});

Deno.test("lint refuses input names every JavaScript object has", () => {
  const { guardfile, diagnostics } = parseGuardfile(
    `wrap ward mcp t {\n  base-url "t.example"\n  auth none\n  can list results { path "/r"; query "season" "constructor" "toString"; body "valueOf" }\n}`,
    "t.mcp.kdl",
  );
  assert.equal(guardfile, undefined);
  for (const name of ["constructor", "toString", "valueOf"]) {
    assert.ok(
      diagnostics.some((d) => d.message.startsWith(`"${name}" is a name every JavaScript`)),
    );
  }
});

Deno.test("a path value is one encoded segment; dot segments, empties and controls are refused", () => {
  assert.equal(encodeSegment("id", "a/b?c#d%2F"), "a%2Fb%3Fc%23d%252F");
  for (const bad of ["", ".", "..", "a\rb", "a\u0000"]) {
    assert.throws(() => encodeSegment("id", bad), ToolError, JSON.stringify(bad));
  }
});

Deno.test("an unpaired surrogate is refused as policy, not an internal error", () => {
  const { grant, restricts } = grantOf(`can get issue { path "/i/{id}"; query "q" }`);
  assert.throws(() => planRequest(grant, { id: "\ud800" }, restricts), /unpaired UTF-16 surrogate/);
  assert.throws(() => planRequest(grant, { id: "1", q: "a\udc00" }, restricts), /surrogate/);
});

Deno.test("restrict: globs in one node are OR'd, nodes are AND'd", () => {
  const { guardfile } = parseGuardfile(
    `wrap ward mcp t {\n  base-url "t.example"\n  auth none\n  restrict o matches "team-*" "ops"\n  restrict o matches "*-a" "ops"\n  can get x { path "/o/{o}" }\n}`,
    "t.mcp.kdl",
  );
  const restricts = indexRestricts(guardfile!);
  const grant = guardfile!.grants[0];
  assert.equal(planRequest(grant, { o: "team-a" }, restricts).path, "/o/team-a");
  assert.equal(planRequest(grant, { o: "ops" }, restricts).path, "/o/ops");
  assert.throws(() => planRequest(grant, { o: "team-b" }, restricts), /policy_denied/);
});
