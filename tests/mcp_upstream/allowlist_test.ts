/** The allowlist rules, the read-only name heuristic, nearest names and `--pin` parsing. */
import assert from "node:assert/strict";
import {
  AllowlistError,
  mutationSegment,
  nameSegments,
  nearestNames,
  parseAllowlist,
  parsePins,
  readOnlyNameProblem,
} from "../../src/mcp_upstream/allowlist.ts";

Deno.test("allowlist: trimmed; empty, blank and duplicate entries refused", () => {
  assert.deepEqual(parseAllowlist([" echo", "get_sum "]), ["echo", "get_sum"]);
  assert.throws(() => parseAllowlist([]), AllowlistError);
  assert.throws(() => parseAllowlist(["echo", "  "]), /--tool #2 is empty/);
  assert.throws(() => parseAllowlist(["echo", " echo "]), /"echo" is given twice/);
});

Deno.test("read-only heuristic: whole segments on _ - . / space and camelCase", () => {
  assert.deepEqual(nameSegments("deleteAllRows"), ["delete", "all", "rows"]);
  assert.deepEqual(nameSegments("HTTPGet.items/v2 x-y"), ["http", "get", "items", "v2", "x", "y"]);
  for (
    const [name, segment] of [
      ["delete_all", "delete"],
      ["issues.create", "create"],
      ["repo/put-file", "put"],
      ["sendEmail", "send"],
      ["Update Record", "update"],
      ["upsert", "upsert"],
    ]
  ) assert.equal(mutationSegment(name), segment, name);
  for (const name of ["get_field_values", "list_settings", "addresses", "getUpdates_count"]) {
    assert.equal(mutationSegment(name), undefined, name);
  }
  assert.equal(mutationSegment("dataset_info"), undefined, "set only as a whole segment");
});

Deno.test("read-only heuristic: a name passes only with a read verb and no mutation segment", () => {
  for (
    const name of [
      "get_field_values",
      "list_sites",
      "issues.list",
      "searchRepos",
      "getUpdates_count",
    ]
  ) {
    assert.equal(readOnlyNameProblem(name), undefined, name);
  }
  assert.match(readOnlyNameProblem("get_or_create")!, /looks like a mutation \(segment "create"\)/);
  // An unknown verb counts as a write: refuse rather than guess.
  for (
    const [name, verb] of [["toggle-simulated-logging", "toggle"], ["echo", "echo"], [
      "runJob",
      "run",
    ]]
  ) {
    const problem = readOnlyNameProblem(name);
    assert.ok(problem, name);
    assert.match(problem, new RegExp(`no read verb .*counts "${verb}" as a write`), name);
    assert.match(problem, /--read-only strict/);
  }
});

Deno.test("nearest names: closest first", () => {
  assert.deepEqual(nearestNames("ech0", ["get-env", "echo", "get-sum"], 2), [
    "echo",
    "get-env",
  ]);
  assert.deepEqual(nearestNames("x", []), []);
});

Deno.test("pins: tool.arg=value, longest allowlisted tool prefix, refusals", () => {
  const pins = parsePins(["get.site=prod", "a.b.c=1=2"], ["get", "a.b"]);
  assert.equal(pins.get("get")!.get("site"), "prod");
  assert.equal(pins.get("a.b")!.get("c"), "1=2");
  assert.throws(() => parsePins(["noequals"], ["get"]), /tool.arg=value/);
  assert.throws(() => parsePins(["other.x=1"], ["get"]), /not on the allowlist/);
  assert.throws(() => parsePins(["get.=1"], ["get"]), AllowlistError);
  assert.throws(() => parsePins(["get.site="], ["get"]), /value is empty/);
  assert.throws(() => parsePins(["get.site=a", "get.site=b"], ["get"]), /two different values/);
  assert.equal(parsePins(["get.site=a", "get.site=a"], ["get"]).get("get")!.size, 1);
});
