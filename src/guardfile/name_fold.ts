/**
 * The one rule by which weir decides that two names may be read as one, by
 * an upstream that matches names loosely: Unicode compatibility
 * normalization (NFKC, Unicode Standard Annex #15: a fullwidth `ｒepo` or a
 * Kelvin sign `K` is its ASCII letter), format characters removed (soft
 * hyphen, zero-width joiners: `\p{Cf}`), letter case folded (Go's
 * `encoding/json` matches struct fields without regard to case, and so do
 * many binders; upper-cased first, as Java's `equalsIgnoreCase` and .NET's
 * `OrdinalIgnoreCase` compare, so `ıd` and `İD` are `id`), and separators removed (`_`, `-`, `.`, whitespace:
 * `repo_name`, `repo-name`, `repoName` under naming strategies).
 *
 * Used for tool names (`src/guardfile/spellings.ts`: one operation, one
 * name), for the inputs of one grant and the arguments of one proxy at load,
 * and for a call's arguments before they leave weir (a key that folds onto
 * a declared argument of the upstream's but is not it is refused: it could
 * be read as that argument, past its rules).
 *
 * Pure: text in, text out.
 *
 * @module
 */

const FORMAT = /\p{Cf}/gu;
/** What `İ` lower-cases to in full (i and a combining dot above): a reader's simple mapping gives `i`. */
const DOTTED_I = /i\u0307/g;
const SEPARATORS = /[_\-.\s]+/gu;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * A name with its compatibility forms, format characters and letter case
 * folded, separators kept (`＿METHOD` -> `_method`): for a fixed key such as
 * `_method`, where `_` is part of the name.
 */
export function foldCaseAndWidth(name: string): string {
  // ASCII is its own NFKC form and holds no format character, and its upper-
  // then lower-cased form is its lower-cased one: no Unicode table is read
  // (\p{Cf} is compiled at its first use, ~2.5 M instructions at start).
  if (ASCII.test(name)) return name.toLowerCase();
  // Upper-cased first: a binder that compares upper-cased letters (Java's
  // equalsIgnoreCase, .NET's OrdinalIgnoreCase) reads a dotless `ı` as `i`
  // and a final `ς` as `σ`.
  return name.normalize("NFKC").replace(FORMAT, "").toUpperCase().toLowerCase()
    .replace(DOTTED_I, "i");
}

/**
 * A name as a loose reader would match it (see the module doc).
 * @example
 * ```ts
 * import { foldName } from "./name_fold.ts";
 * foldName("Repo_Name"); // "reponame"
 * foldName("ｒｅｐｏ"); // "repo"
 * ```
 */
export function foldName(name: string): string {
  return foldCaseAndWidth(name).replace(SEPARATORS, "");
}

/**
 * Pairs of distinct names of `named` that fold onto one ({@link foldName}),
 * each later one with the first it meets, in order.
 */
export function twinPairs<T extends { key: string }>(named: readonly T[]): [T, T][] {
  const first = new Map<string, T>();
  const pairs: [T, T][] = [];
  for (const item of named) {
    const folded = foldName(item.key);
    const before = first.get(folded);
    if (before === undefined) first.set(folded, item);
    else if (before.key !== item.key) pairs.push([item, before]);
  }
  return pairs;
}

/**
 * The first of `keys` that is not one of `names` and folds onto one of
 * them ({@link foldName}), with the name it folds onto; `undefined` when none
 * does.
 * @example
 * ```ts
 * import { nameTwin } from "./name_fold.ts";
 * nameTwin(["Repo", "other"], ["repo", "state"]); // { key: "Repo", of: "repo" }
 * nameTwin(["repo", "other"], ["repo", "state"]); // undefined
 * ```
 */
export function nameTwin(
  keys: Iterable<string>,
  names: Iterable<string>,
): { key: string; of: string } | undefined {
  const exact = new Set(names);
  const folded = new Map<string, string>();
  for (const name of exact) if (!folded.has(foldName(name))) folded.set(foldName(name), name);
  for (const key of keys) {
    if (exact.has(key)) continue;
    const of = folded.get(foldName(key));
    if (of !== undefined) return { key, of };
  }
  return undefined;
}
