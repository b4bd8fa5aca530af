/**
 * An untyped input with a `pattern` advertises integers only where weir can
 * say exactly which (src/surface/untyped.ts `integerForm`): every integer the
 * advertised form admits keeps the pattern through its decimal text, which the
 * guard checks (`decimalProblem`). Generated patterns, including ones every
 * sample integer passes but some integer does not (`[^6]`, which the old
 * sample check advertised as taking every integer).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { decimalProblem, integerForm } from "../../src/surface/untyped.ts";

const PIECES = [
  "^",
  "$",
  "-?",
  "[0-9]",
  "\\d",
  "[0-9a-f]",
  "[^6]",
  "[1-9]",
  "+",
  "*",
  "{1,3}",
  "{2,}",
  "[0-9-]",
  "[A-Za-z0-9._-]",
  "x",
  "(",
  ")",
  "|",
  "7",
];

Deno.test("an integer the advertised form admits keeps the pattern the guard holds it to", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...PIECES), { maxLength: 6 }).map((p) => p.join("")),
      fc.oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.maxSafeInteger(), fc.constantFrom(6, -6, 0)),
      (pattern, n) => {
        try {
          new RegExp(pattern, "u");
        } catch {
          return;
        }
        const form = integerForm({ pattern });
        if (!form) return;
        const admitted = (form.minimum === undefined || n >= form.minimum) &&
          (form.maximum === undefined || n <= form.maximum);
        if (admitted) {
          assert.equal(decimalProblem(String(n), { pattern }), undefined, `${pattern} ${n}`);
        }
      },
    ),
    { numRuns: 20_000 },
  );
});

Deno.test("the patterns ids use still take integers", () => {
  assert.deepEqual(integerForm({ pattern: "^[0-9]+$" }), { minimum: 0 });
  assert.deepEqual(integerForm({ pattern: "^-?\\d+$" }), {});
  assert.deepEqual(integerForm({ pattern: "^[A-Za-z0-9._-]+$" }), {});
  assert.deepEqual(integerForm({ pattern: "^[0-9]{1,6}$" }), { minimum: 0, maximum: 999_999 });
  assert.equal(integerForm({ pattern: "[^6]" }), null);
  assert.equal(integerForm({ pattern: "^[a-z]+$" }), null);
});
