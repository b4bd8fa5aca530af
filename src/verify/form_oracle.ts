/**
 * What `weir verify` reads a form body (a grant with `form`) back as, the way
 * form parsers read one, written from the grammar (docs/guardfile.md, "`form`")
 * and not from the guard's encoder: `a[b]=c` is a member of object `a`; an
 * array's items are `a[]=x` (`arrays="brackets"`), `a[0]=x` (`"indexed"`) or
 * a repeated `a=x` (`"repeat"`), and only the grant's convention is read (an
 * upstream documented for one reads the others otherwise).
 * {@link sameForm} then holds what arrived to the body the call may send, each
 * scalar as text.
 *
 * @module
 */

/**
 * The fields of a form body as a tree, or a reason it cannot be read.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readForm } from "./form_oracle.ts";
 * const tree = readForm("a%5Bb%5D=1&t%5B%5D=x&t%5B%5D=y", "brackets");
 * assert.equal(JSON.stringify(tree), '{"a":{"b":"1"},"t":["x","y"]}');
 * assert.equal(typeof readForm("t=x&t=y", "brackets"), "string"); // not the grant's convention
 * ```
 */
export function readForm(
  body: string,
  arrays: "repeat" | "brackets" | "indexed" = "repeat",
): Record<string, unknown> | string {
  const root: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
    if (!m) return `form field name ${JSON.stringify(name)} is not a[b][c] form`;
    const path = [m[1], ...[...m[2].matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1])];
    let at: Record<string, unknown> | unknown[] = root;
    for (let i = 0; i < path.length; i++) {
      const key = path[i];
      const last = i === path.length - 1;
      const next = path[i + 1];
      // An array in the grant's convention only: `a[]` (brackets), `a[0]` (indexed), a repeated
      // `a` (repeat). Under another convention `a[0]` is the member "0" of an object.
      const isItem = (k: string | undefined) =>
        k !== undefined &&
        (arrays === "brackets" ? k === "" : arrays === "indexed" && /^\d+$/.test(k));
      if (key === "" && arrays !== "brackets") {
        return `form field ${JSON.stringify(name)} writes an array as [] under arrays="${arrays}"`;
      }
      const child = () => (isItem(next) ? [] : {});
      if (Array.isArray(at)) {
        const index = key === "" ? at.length : Number(key);
        if (!isItem(key)) return `form field ${JSON.stringify(name)} mixes arrays and keys`;
        if (last) at[index] = value;
        else at = (at[index] ??= child()) as Record<string, unknown> | unknown[];
      } else if (last) {
        // A repeated key without brackets is an array (the `repeat` convention only).
        if (Object.hasOwn(at, key)) {
          if (arrays !== "repeat") {
            return `form field ${JSON.stringify(name)} is repeated under arrays="${arrays}"`;
          }
          const before = at[key];
          at[key] = Array.isArray(before) ? [...before, value] : [before, value];
        } else at[key] = value;
      } else {
        at = (at[key] ??= child()) as Record<string, unknown> | unknown[];
      }
    }
  }
  return root;
}

/**
 * Whether a form read back (strings) is `expected` (the body a call may send):
 * strings exactly, numbers by their value, booleans as `true`/`false`; a
 * one-item array may arrive as its item (a key sent once).
 */
export function sameForm(sent: unknown, expected: unknown): boolean {
  if (typeof sent === "string") {
    if (Array.isArray(expected)) return expected.length === 1 && sameForm(sent, expected[0]);
    if (typeof expected === "string") return sent === expected;
    if (typeof expected === "number") return sent.trim() !== "" && Number(sent) === expected;
    if (typeof expected === "boolean") return sent === String(expected);
    return false;
  }
  if (Array.isArray(sent)) {
    return Array.isArray(expected) && sent.length === expected.length &&
      sent.every((s, i) => sameForm(s, expected[i]));
  }
  if (typeof sent !== "object" || sent === null) return false;
  if (typeof expected !== "object" || expected === null || Array.isArray(expected)) return false;
  const a = Object.keys(sent);
  const b = Object.keys(expected);
  return a.length === b.length &&
    a.every((k) =>
      Object.hasOwn(expected, k) && sameForm((sent as never)[k], (expected as never)[k])
    );
}
