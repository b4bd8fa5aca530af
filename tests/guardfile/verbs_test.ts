/**
 * readLikePrefix(): the read word a compound verb outside the table starts
 * with. An ASCII verb takes a shortcut (no \p{..} pattern); it must split and
 * answer exactly as the general path (NFKC, then the Unicode word break) does.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { foldCaseAndWidth } from "../../src/guardfile/name_fold.ts";
import { methodForVerb, READ_WORDS, readLikePrefix } from "../../src/guardfile/verbs.ts";

/** The general path, as the function's doc defines it (no shortcut). */
function generalReadLikePrefix(verb: string): string | undefined {
  if (!methodForVerb(verb).inferred) return undefined;
  const parts = verb.normalize("NFKC").split(/[-_.]|(?<=\p{Ll})(?=\p{Lu})/u);
  if (parts.length < 2) return undefined;
  const first = foldCaseAndWidth(parts[0]);
  return READ_WORDS.includes(first) ? first : undefined;
}

Deno.test("readLikePrefix(): the ASCII shortcut answers as the general path does (property)", () => {
  const asciiChar = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
  const word = fc.oneof(
    fc.constantFrom(...READ_WORDS, "approve", "merge", "Open", "BY", "tag"),
    fc.string({ unit: asciiChar, maxLength: 5 }),
  );
  const sep = fc.constantFrom("-", "_", ".", "", " ");
  // Cased letters beyond ASCII, and Latin-1, where the two patterns would differ.
  const tricky = fc.constantFrom(
    "\u00e9",
    "\u00c9",
    "\u00df",
    "\u0131",
    "\uff27",
    "\u00aa",
    "\u01c5",
  );
  const verb = fc.oneof(
    fc.tuple(word, sep, word, sep, word).map((p) => p.join("")),
    fc.tuple(word, tricky, word).map((p) => p.join("")),
    fc.string({ unit: fc.oneof(asciiChar, tricky), maxLength: 12 }),
  );
  fc.assert(
    fc.property(verb, (v) => assert.equal(readLikePrefix(v), generalReadLikePrefix(v))),
    { numRuns: 3_000 },
  );
  for (const [v, want] of [["getOpen", "get"], ["find_by_tag", "find"], ["approve", undefined]]) {
    assert.equal(readLikePrefix(v as string), want, v as string);
  }
});
