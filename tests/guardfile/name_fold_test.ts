/**
 * foldName() and nameTwin(): every respelling a loose reader takes for the
 * same name (letter case, fullwidth and other compatibility forms, format
 * characters, separators) folds onto it; a name with another letter does not.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { foldCaseAndWidth, foldName, nameTwin } from "../../src/guardfile/name_fold.ts";

const NAME = fc.stringMatching(/^[a-z][a-z0-9]{1,11}$/);

/** One character respelled: upper case, fullwidth, a separator or a format character after it. */
const respell = (name: string) =>
  fc.array(fc.constantFrom("same", "upper", "fullwidth", "sep", "format"), {
    minLength: name.length,
    maxLength: name.length,
  }).map((how) =>
    [...name].map((c, i) => {
      switch (how[i]) {
        case "upper":
          return c.toUpperCase();
        case "fullwidth":
          return String.fromCodePoint(c.codePointAt(0)! + 0xfee0);
        case "sep":
          return i === 0 ? c : `_${c}`;
        case "format":
          return `${c}\u200d`;
      }
      return c;
    }).join("")
  );

Deno.test("foldName(): every respelling of a name folds onto it", () => {
  fc.assert(
    fc.property(NAME.chain((n) => fc.tuple(fc.constant(n), respell(n))), ([name, twin]) => {
      assert.equal(foldName(twin), foldName(name));
      const found = nameTwin([twin], [name]);
      if (twin === name) assert.equal(found, undefined);
      else assert.deepEqual(found, { key: twin, of: name });
    }),
    { numRuns: 500 },
  );
});

Deno.test("nameTwin(): another letter is another name; an exact name is never its own twin", () => {
  fc.assert(
    fc.property(NAME, fc.integer({ min: 0, max: 11 }), (name, at) => {
      const i = at % name.length;
      const other = name.slice(0, i) + (name[i] === "q" ? "x" : "q") + name.slice(i + 1);
      assert.equal(nameTwin([other, name], [name]), undefined);
    }),
  );
  assert.deepEqual(nameTwin(["Kelvin", "\u212Aelvin"], ["kelvin"]), {
    key: "Kelvin",
    of: "kelvin",
  });
  assert.deepEqual(nameTwin(["\u017Fort"], ["sort"]), { key: "\u017Fort", of: "sort" });
  // Upper-cased to an ASCII letter by Java's equalsIgnoreCase and .NET's OrdinalIgnoreCase.
  assert.deepEqual(nameTwin(["\u0131d"], ["id"]), { key: "\u0131d", of: "id" });
  assert.deepEqual(nameTwin(["\u0130D"], ["id"]), { key: "\u0130D", of: "id" });
  // A final sigma is a sigma to a case-insensitive reader.
  assert.deepEqual(nameTwin(["\u03c3\u03c4\u03b1\u03c2"], ["\u03a3\u03a4\u0391\u03a3"]), {
    key: "\u03c3\u03c4\u03b1\u03c2",
    of: "\u03a3\u03a4\u0391\u03a3",
  });
});

/** The general fold, as the module doc defines it (no shortcut). */
const generalFold = (name: string) =>
  name.normalize("NFKC").replace(/\p{Cf}/gu, "").toUpperCase().toLowerCase()
    .replace(/i\u0307/g, "i");

Deno.test("foldCaseAndWidth(): its ASCII shortcut folds as the general path does (property)", () => {
  const asciiChar = fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c));
  // Characters whose fold differs from their lower case, and Latin-1 beside ASCII.
  const tricky = fc.constantFrom(
    "\u00b5",
    "\u00df",
    "\u017f",
    "\u0131",
    "\u0130",
    "\u212a",
    "\u00ad",
    "\u200d",
    "\ufb01",
    "\uff52",
    "\u00c0",
    "\u0307",
    "\u00ff",
    "\u00aa",
  );
  const unit = fc.oneof(
    asciiChar,
    tricky,
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  );
  const ascii = fc.string({ unit: asciiChar });
  const mixed = fc.string({ unit, maxLength: 12 });
  fc.assert(
    fc.property(fc.oneof(ascii, mixed), (name) => {
      assert.equal(foldCaseAndWidth(name), generalFold(name));
    }),
    { numRuns: 2_000 },
  );
  for (
    const name of [
      "GET",
      "Delete",
      "_METHOD",
      "x-HTTP-Method",
      "\u0130D",
      "\u212Aelvin",
      "a\u00adb",
    ]
  ) {
    assert.equal(foldCaseAndWidth(name), generalFold(name), name);
  }
});
