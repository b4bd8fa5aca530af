/**
 * Glob matching for `restrict`, with the semantics of Go's `path/filepath.Match`
 * on a `/`-separated system (what the reference uses): `*` matches any run of
 * characters except `/`, `?` one character (one code point) except `/`,
 * `[a-z]`/`[^x]` character classes (a negated class never matches `/`), and `\`
 * escapes the next character. The whole value must match. One addition: `**`
 * matches any run of characters including `/`, for path parameters that take
 * several segments (`slashes="segments"` or `"encoded"`); a one-segment value
 * never contains `/`, so there `**` and `*` agree. See `docs/guardfile.md`.
 *
 * A glob is also an anchored ECMA-262 regular expression ({@link globSource}),
 * the `pattern` the advertised input schema carries: the guard matches with
 * that same expression, so what the schema states is what the guard holds.
 *
 * @module
 */

import { patternProblem, shownPattern } from "./pattern.ts";

/** Thrown by {@link compileGlob} for a malformed pattern. */
export class GlobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GlobError";
  }
}

/**
 * Compile a glob into a matcher.
 *
 * @throws {GlobError} for an unclosed class, an empty class or a trailing `\`
 *   (Go reports `ErrBadPattern`; weir refuses such a pattern when loading), or
 *   a glob whose regular expression the engine cannot use (src/guardfile/pattern.ts)
 * @example
 * ```ts
 * import { compileGlob } from "./glob.ts";
 * const matches = compileGlob("demo-*");
 * if (!matches("demo-1") || matches("demo-1/x") || matches("prod-1")) throw new Error();
 * ```
 */
export function compileGlob(pattern: string): (value: string) => boolean {
  const source = globSource(pattern);
  const problem = patternProblem(source);
  if (problem) {
    throw new GlobError(`pattern ${shownPattern(pattern)}: its regular expression ${problem}`);
  }
  const regex = new RegExp(source, "u");
  return (value) => regex.test(value);
}

/**
 * The globs of one `restrict` (one matching is enough) as one anchored
 * regular expression for a JSON Schema `pattern`: {@link globSource} for one
 * glob, `^(?:a|b)$` for several; `undefined` when a glob's class names a
 * character past U+FFFF, which only the `u` reading of an expression holds
 * (a validator reading it without `u` would refuse the expression itself).
 *
 * @throws {GlobError} as {@link compileGlob}
 * @example
 * ```ts
 * import { globsPattern } from "./glob.ts";
 * if (globsPattern(["team-*", "ops"]) !== "^(?:team-[^/]*|ops)$") throw new Error();
 * if (globsPattern(["[😀-😎]"]) !== undefined) throw new Error("stated only with u");
 * ```
 */
export function globsPattern(globs: readonly string[]): string | undefined {
  const translated = globs.map(translate);
  if (!translated.every((t) => t.portable)) return undefined;
  if (translated.length === 1) return translated[0].source;
  return `^(?:${translated.map((t) => t.source.slice(1, -1)).join("|")})$`;
}

/** Lead and trail surrogates, as they pair in a string (UTF-16). */
const PAIR = "[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]";
/** Any one code point but `/`, read the same with and without the `u` flag. */
const ONE_NOT_SLASH = `(?:${PAIR}|[^/\\uD800-\\uDFFF])`;

/**
 * A glob as an anchored ECMA-262 regular expression source (`^...$`) with the
 * same meaning: what a JSON Schema `pattern` holds (JSON Schema 2020-12
 * section 6.3.3; ECMA-262 section 22.2). The expression means the same with
 * the `u` flag (how weir and most validators compile a `pattern`) and without
 * it, on well-formed text (weir refuses the rest before any check): a
 * character outside the Basic Multilingual Plane is one character to `?` and
 * to a negated class either way. The one exception is a class that names such
 * a character (`[😀-😎]`), which only the `u` reading holds
 * ({@link globsPattern} says so).
 *
 * @throws {GlobError} as {@link compileGlob}
 * @example
 * ```ts
 * import { globSource } from "./glob.ts";
 * if (globSource("docs/**") !== "^docs\\/[\\s\\S]*$") throw new Error(globSource("docs/**"));
 * if (globSource("v*.md") !== "^v[^/]*\\.md$") throw new Error(globSource("v*.md"));
 * ```
 */
export function globSource(pattern: string): string {
  return translate(pattern).source;
}

/** One element of a glob: a character, `?`, `*`, `**` or a class. */
export type GlobAtom =
  | { kind: "char"; codePoint: number }
  | { kind: "one" }
  | { kind: "star" }
  | { kind: "any" }
  | { kind: "class"; ranges: [number, number][]; negate: boolean };

/**
 * A glob's elements, in order (code points): `**` (any run) is one element,
 * `*` a run without `/`, `?` one code point but `/`, a class its ranges (a
 * negated class never matches `/`), an escaped character itself.
 * @throws {GlobError} for an unclosed class, an empty class, a bad range or a trailing `\`
 * @example
 * ```ts
 * import { parseGlob } from "./glob.ts";
 * const atoms = parseGlob("a*[0-9]");
 * if (atoms.length !== 3 || atoms[1].kind !== "star") throw new Error();
 * ```
 */
export function parseGlob(pattern: string): GlobAtom[] {
  const atoms: GlobAtom[] = [];
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === "*" && chars[i + 1] === "*") {
      while (chars[i + 1] === "*") i++;
      atoms.push({ kind: "any" });
    } else if (c === "*") {
      atoms.push({ kind: "star" });
    } else if (c === "?") {
      atoms.push({ kind: "one" });
    } else if (c === "\\") {
      if (i + 1 >= chars.length) {
        throw new GlobError(`pattern ${JSON.stringify(pattern)} ends in "\\"`);
      }
      atoms.push({ kind: "char", codePoint: chars[++i].codePointAt(0)! });
    } else if (c === "[") {
      let j = i + 1;
      let negate = false;
      if (chars[j] === "^") {
        negate = true;
        j++;
      }
      const ranges: [number, number][] = [];
      while (j < chars.length && chars[j] !== "]") {
        let lo = chars[j];
        if (lo === "\\") {
          if (++j >= chars.length) break;
          lo = chars[j];
        }
        j++;
        let hi = lo;
        if (chars[j] === "-" && chars[j + 1] !== undefined && chars[j + 1] !== "]") {
          hi = chars[j + 1];
          j += 2;
          if (hi === "\\") hi = chars[j++];
          if (hi === undefined || hi.codePointAt(0)! < lo.codePointAt(0)!) {
            throw new GlobError(`pattern ${JSON.stringify(pattern)} has a bad range`);
          }
        }
        ranges.push([lo.codePointAt(0)!, hi.codePointAt(0)!]);
      }
      if (j >= chars.length) {
        throw new GlobError(`pattern ${JSON.stringify(pattern)} has an unclosed "["`);
      }
      if (ranges.length === 0) {
        throw new GlobError(`pattern ${JSON.stringify(pattern)} has an empty "[]"`);
      }
      atoms.push({ kind: "class", ranges, negate });
      i = j;
    } else {
      atoms.push({ kind: "char", codePoint: c.codePointAt(0)! });
    }
  }
  return atoms;
}

/** A glob's expression, and whether it reads the same without the `u` flag. */
function translate(pattern: string): { source: string; portable: boolean } {
  let source = "^";
  let portable = true;
  for (const atom of parseGlob(pattern)) {
    if (atom.kind === "any") source += "[\\s\\S]*";
    else if (atom.kind === "star") source += "[^/]*";
    else if (atom.kind === "one") source += ONE_NOT_SLASH;
    else if (atom.kind === "char") source += escape(String.fromCodePoint(atom.codePoint));
    else {
      if (atom.ranges.some(([, hi]) => hi > 0xffff)) portable = false;
      source += classSource(atom.ranges, atom.negate);
    }
  }
  return { source: source + "$", portable };
}

/**
 * A class as a source that means the same with and without the `u` flag (see
 * {@link globSource}), unless it names a character past U+FFFF.
 */
function classSource(ranges: [number, number][], negate: boolean): string {
  if (ranges.some(([, hi]) => hi > 0xffff)) {
    // Only the u reading holds a class naming a character past U+FFFF.
    const body = ranges.map(([lo, hi]) => classRange(lo, hi)).join("");
    return negate ? `[^/${body}]` : `[${body}]`;
  }
  // Surrogates never stand alone in well-formed text: leaving them out keeps
  // a class from matching half of a pair when read without the u flag.
  const body = ranges.flatMap(([lo, hi]) =>
    lo >= 0xd800 && hi <= 0xdfff
      ? []
      : lo < 0xd800 && hi > 0xdfff
      ? [classRange(lo, 0xd7ff), classRange(0xe000, hi)]
      : hi >= 0xd800 && hi <= 0xdfff
      ? [classRange(lo, 0xd7ff)]
      : lo >= 0xd800 && lo <= 0xdfff
      ? [classRange(0xe000, hi)]
      : [classRange(lo, hi)]
  ).join("");
  return negate ? `(?:${PAIR}|[^/${body}\\uD800-\\uDFFF])` : `[${body}]`;
}

function classRange(lo: number, hi: number): string {
  const one = escapeInClass(String.fromCodePoint(lo));
  return lo === hi ? one : `${one}-${escapeInClass(String.fromCodePoint(hi))}`;
}

function escape(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

function escapeInClass(c: string): string {
  return /[\\\]\[^-]/.test(c) ? `\\${c}` : c;
}
