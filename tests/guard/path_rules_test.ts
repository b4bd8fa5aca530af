/**
 * Each rule of a spec-mode path value held on its own (issue 34 item 10's
 * mutation run: these survived, because another layer refuses the same
 * value first: the metacharacter gate, the advertised schema's pattern the
 * core checks, or the segment encoder behind the decoded-forms check). Each
 * layer is held here by `planRequest` or `encodeSegment` directly, with the
 * gate open (`metacharacters="allow"`) where it would hide the rule, naming
 * the audit rule and the words of the refusal.
 */
import assert from "node:assert/strict";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import { encodeSegment, indexRestricts, planRequest } from "../../src/guard/request.ts";
import { MAX_DECODING_ROUNDS } from "../../src/guardfile/decoded.ts";
import { ruleOfError, WeirError } from "../../src/errors/kinds.ts";

const FILE = `wrap ward mcp t {
  base-url "t.example"
  auth none
  restrict code matches "pre%3*"
  can get one { path "/one/{id}"; param "id" metacharacters="allow"; }
  can get tree { path "/tree/{path}"; param "path" slashes="segments" metacharacters="allow"; }
  can get flat { path "/flat/{key}"; param "key" slashes="encoded" metacharacters="allow"; }
  can get coded { path "/coded/{code}"; param "code" metacharacters="allow"; }
}`;

const { guardfile, diagnostics } = parseGuardfile(FILE, "t.mcp.kdl");
assert.ok(guardfile, diagnostics.map((d) => d.message).join("\n"));
const restricts = indexRestricts(guardfile);
const grant = (tool: string) => guardfile.grants.find((g) => g.tool === tool)!;

/** Plan a call of `tool`; the refusal's audit rule and message, or the path sent. */
function plan(tool: string, value: string): { rule?: string; message?: string; path?: string } {
  const g = grant(tool);
  try {
    return { path: planRequest(g, { [g.params[0].name]: value }, restricts).path };
  } catch (error) {
    assert.ok(error instanceof WeirError, String(error));
    return { rule: ruleOfError(error), message: error.message };
  }
}

Deno.test("a path value holding \\ is refused in every slashes mode, even with metacharacters allowed", () => {
  for (const tool of ["get_one", "get_tree", "get_flat"]) {
    for (const value of ["a\\b", "\\", "a\\..\\b"]) {
      const got = plan(tool, value);
      assert.equal(
        got.rule,
        "separator",
        `${tool} ${JSON.stringify(value)}: ${JSON.stringify(got)}`,
      );
      assert.match(got.message!, /contains "\\"; refused so an upstream that reads it as "\/"/);
    }
  }
});

Deno.test("a one-segment path value holding / is refused, saying how to take a relative path", () => {
  for (const value of ["a/b", "a/", "/a"]) {
    const got = plan("get_one", value);
    assert.equal(got.rule, "separator", JSON.stringify(got));
    assert.match(
      got.message!,
      /contains "\/"; it fills exactly one path segment .*slashes="segments"/,
    );
  }
  assert.equal(plan("get_flat", "a/b").path, "/flat/a%2Fb");
  assert.equal(plan("get_tree", "a/b").path, "/tree/a/b");
});

Deno.test("a dot segment an upstream decodes to is refused as such, in the first segment too", () => {
  for (
    const [tool, value] of [
      ["get_one", "%2e%2e"],
      ["get_one", "%2E"],
      ["get_tree", "%2e%2e/etc"],
      ["get_tree", "a/%2e%2e"],
      ["get_flat", "%252e%252e"],
    ]
  ) {
    const got = plan(tool, value);
    assert.equal(got.rule, "dot_segment", `${tool} ${value}: ${JSON.stringify(got)}`);
    assert.match(
      got.message!,
      /decodes to a "\.\.?" segment \(a dot segment\) once an upstream percent-decodes it/,
    );
  }
});

Deno.test("encodeSegment(): a segment that is a dot segment in any decoding is refused", () => {
  for (const value of ["%2e", "%2e%2e", "%2E.", "%252e%252e", "%C0%AE%C0%AE", ".%2e"]) {
    assert.throws(
      () => encodeSegment("id", value),
      (e: unknown) => ruleOfError(e) === "dot_segment",
      value,
    );
  }
  assert.equal(encodeSegment("id", "%2e%2ex"), "%252e%252ex");
});

Deno.test("a value still percent-encoded after the last round of decoding is refused", () => {
  // "..", percent-encoded once, then 16 times more: a % left after 16 rounds.
  let value = "%2e%2e";
  for (let i = 0; i < MAX_DECODING_ROUNDS; i++) value = encodeURIComponent(value);
  for (const tool of ["get_one", "get_tree", "get_flat"]) {
    const got = plan(tool, value);
    assert.equal(got.rule, "encoded_too_deep", `${tool}: ${JSON.stringify(got)}`);
    assert.match(
      got.message!,
      /still percent-encoded after 16 rounds of decoding; send the value itself/,
    );
  }
});

Deno.test("restrict: every form an upstream decodes the value to must match, not only the value as sent", () => {
  // "pre%3A" matches the glob as sent, and decodes to "pre:", which does not.
  const got = plan("get_coded", "pre%3A");
  assert.equal(got.rule, "restrict", JSON.stringify(got));
  assert.match(
    got.message!,
    /"code" value "pre%3A" is outside this server's policy \(allowed: "pre%3\*"\)/,
  );
  assert.equal(plan("get_coded", "pre%31").rule, "restrict");
  assert.equal(plan("get_coded", "pre%3").path, "/coded/pre%253");
});
