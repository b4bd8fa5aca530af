/**
 * A value written in a guardfile that may be a secret (a literal credential,
 * a header's text, a pinned literal): the surface model holds it so that two
 * files can be compared exactly, and nothing can print it. `JSON.stringify`,
 * `String()` and Deno's inspector all show {@link CONCEALED_TEXT}; only
 * {@link Concealed.same} reads the text, and it answers a boolean.
 *
 * @example Compare two literals without showing either
 * ```ts
 * import assert from "node:assert/strict";
 * import { Concealed } from "./concealed.ts";
 * const a = new Concealed("token-1");
 * assert.ok(a.same(new Concealed("token-1")) && !a.same(new Concealed("token-2")));
 * assert.equal(JSON.stringify({ a }), '{"a":"a literal (not shown)"}');
 * ```
 *
 * @module
 */

/** What a concealed value shows in every printed form. */
export const CONCEALED_TEXT = "a literal (not shown)";

const TEXTS = new WeakMap<Concealed, string>();

/** A literal that compares exactly and prints as {@link CONCEALED_TEXT}. */
export class Concealed {
  /** @param text the literal as written (kept out of every enumerable field) */
  constructor(text: string) {
    TEXTS.set(this, text);
  }

  /** Whether both hold the same text. */
  same(other: Concealed | undefined): boolean {
    return other !== undefined && TEXTS.get(this) === TEXTS.get(other);
  }

  /** {@link CONCEALED_TEXT}, never the value. */
  toJSON(): string {
    return CONCEALED_TEXT;
  }

  /** {@link CONCEALED_TEXT}, never the value. */
  toString(): string {
    return CONCEALED_TEXT;
  }

  /** Deno's inspector (console.log) shows {@link CONCEALED_TEXT} too. */
  [Symbol.for("Deno.customInspect")](): string {
    return CONCEALED_TEXT;
  }
}
