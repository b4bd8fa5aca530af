/**
 * A wrapped tool's restricted argument (`argument "path" { restrict ... }`),
 * checked by `checkRestrictedValue` (src/guard/restricted_value.ts) on its
 * own: every form the MCP server may read the value as (as sent, each
 * percent-decoding, each NFKC form) must match a glob and hold no control
 * character, `\` or dot segment, wherever the segment sits, the first one
 * included (issue 34 item 10: a mutation that skipped the first segment
 * survived the end-to-end tests, whose globs start with a literal prefix).
 */
import assert from "node:assert/strict";
import { checkRestrictedValue } from "../../src/guard/restricted_value.ts";
import { ruleOfError } from "../../src/errors/kinds.ts";

function refusal(value: unknown, globs: string[]): string | undefined {
  try {
    checkRestrictedValue('argument "path"', value, globs);
    return undefined;
  } catch (error) {
    return `${ruleOfError(error)}: ${(error as Error).message}`;
  }
}

Deno.test("a dot segment is refused in any position, as sent, decoded or NFKC, under a glob that admits it", () => {
  for (
    const value of [
      "../secret.md",
      "..",
      "./a.md",
      "docs/../secret.md",
      "docs/..",
      "%2e%2e/secret.md",
      "%252e%252e/secret.md",
      "\uff0e\uff0e/secret.md",
      "\u2025/secret.md",
    ]
  ) {
    const got = refusal(value, ["**"]);
    assert.match(got ?? "sent", /^dot_segment: .*a dot segment/, JSON.stringify(value));
  }
});

Deno.test("a separator, a control character or a non-string is refused whatever the globs", () => {
  assert.match(refusal("a\\b", ["**"])!, /^separator: .*contains "\\"/);
  assert.match(refusal("a%5Cb", ["**"])!, /^separator: .*once the MCP server percent-decodes it/);
  assert.match(refusal("a\uff3cb", ["**"])!, /^separator: .*normalizes its Unicode/);
  assert.match(refusal("a\u0007", ["**"])!, /^control_character:/);
  assert.match(refusal("a%00", ["**"])!, /^control_character: .*percent-decodes/);
  for (const value of [null, 7, ["a"], { a: 1 }]) {
    assert.match(refusal(value, ["**"])!, /^restrict: .*send a string that matches/);
  }
});

Deno.test("every form must match a glob, not only the value as sent", () => {
  assert.equal(refusal("team-a/x", ["team-*/**"]), undefined);
  assert.match(
    refusal("team-%61", ["team-%61"])!,
    /^restrict: .*once the MCP server percent-decodes it/,
  );
  assert.match(refusal("team-\uff41", ["team-\uff41"])!, /^restrict: .*normalizes its Unicode/);
  assert.match(
    refusal("ops", ["team-*"])!,
    /^restrict: .*argument "path" is outside this server's policy \(allowed: "team-\*"\); nothing was sent/,
  );
});

Deno.test("a value still percent-encoded after the last round is refused", () => {
  let value = "%2e";
  for (let i = 0; i < 16; i++) value = encodeURIComponent(value);
  assert.match(refusal(value, ["**"])!, /^encoded_too_deep:/);
});
