/**
 * A path or query value of unreserved characters is decided at once
 * (src/guard/request.ts `checkPathValue`, `checkQueryValue`): over generated values (plain ones,
 * dots, percent escapes, separators, metacharacters, controls, fullwidth and
 * other non-ASCII text, lone surrogates) and every `slashes` and
 * `metacharacters` setting, the shortcut gives exactly the general path's
 * forms and encoding, or the same refusal.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { checkPathValue, checkQueryValue } from "../../src/guard/request.ts";
import type { PathParam } from "../../src/guardfile/model.ts";
import { WeirError } from "../../src/errors/kinds.ts";

/** The forms and encoding, or the refusal's rule and message. */
function decide(param: PathParam, value: string, general: boolean): unknown {
  try {
    return checkPathValue(param, `path parameter "${param.name}"`, value, general);
  } catch (error) {
    assert.ok(error instanceof WeirError, String(error));
    return { refused: error.message, rule: (error as { rule?: string }).rule };
  }
}

const piece = fc.oneof(
  { arbitrary: fc.stringMatching(/^[A-Za-z0-9._~-]{1,6}$/), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      ".",
      "..",
      "%2e",
      "%2F",
      "%25",
      "/",
      "\\",
      "$",
      ";",
      "|",
      "\n",
      "\u0000",
      " ",
      "\uff0e",
      "\u2025",
      "é",
      "\ud800",
      "'",
      "*",
      "!",
    ),
    weight: 2,
  },
);
const value = fc.oneof(
  fc.array(piece, { maxLength: 4 }).map((p) => p.join("")),
  fc.constantFrom("", ".", "..", "...", "a", "~", "-", "_", ".a", "a."),
);

Deno.test("a plain path value is decided as the general path decides it", () => {
  let plain = 0;
  fc.assert(
    fc.property(
      value,
      fc.constantFrom("refuse", "segments", "encoded"),
      fc.constantFrom("refuse", "allow"),
      (v, slashes, metacharacters) => {
        const param = { name: "id", slashes, metacharacters } as PathParam;
        if (/^[A-Za-z0-9._~-]+$/.test(v)) plain++;
        assert.deepEqual(decide(param, v, false), decide(param, v, true), JSON.stringify(v));
      },
    ),
    { numRuns: 3000 },
  );
  assert.ok(plain > 300, `only ${plain} plain values`);
});

/** Nothing, or the refusal's rule and message. */
function decideQuery(text: string, metacharacters: "refuse" | "allow", general: boolean): unknown {
  try {
    return checkQueryValue(`query parameter "q"`, text, metacharacters, general);
  } catch (error) {
    assert.ok(error instanceof WeirError, String(error));
    return { refused: error.message, rule: (error as { rule?: string }).rule };
  }
}

Deno.test("a plain query value is decided as the general path decides it", () => {
  let plain = 0;
  fc.assert(
    fc.property(value, fc.constantFrom("refuse", "allow"), (v, metacharacters) => {
      if (/^[A-Za-z0-9._~-]+$/.test(v)) plain++;
      assert.deepEqual(decideQuery(v, metacharacters, false), decideQuery(v, metacharacters, true));
    }),
    { numRuns: 3000 },
  );
  assert.ok(plain > 300, `only ${plain} plain values`);
});
