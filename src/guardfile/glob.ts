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
 * The expression uses only what every common regular-expression engine reads
 * alike (literal characters, `[...]`/`[^...]` classes, `*`, `(?:a|b)`, `^`,
 * `$`, a backslash before punctuation), so a client validating with Go's
 * RE2, Rust's `regex`, Python's `re` or Java compiles it too.
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
 * character past U+FFFF, which a JavaScript validator reading the pattern
 * without the `u` flag would refuse as an expression (a range of surrogates
 * out of order), so such globs are said in words instead.
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

/**
 * A glob as an anchored ECMA-262 regular expression source (`^...$`) with the
 * same meaning: what a JSON Schema `pattern` holds (JSON Schema 2020-12
 * section 6.3.3; ECMA-262 section 22.2), read as JSON Schema says to read it,
 * character by character (the `u` flag; weir compiles it so): `?` is `[^/]`,
 * one character however many UTF-16 units it takes. Every engine that reads
 * text by code point agrees (RE2, Rust, Python, Java). A reader counting
 * UTF-16 units (JavaScript without `u`, .NET) may take `?` for half of a
 * character past U+FFFF, which weir then refuses: such readers only admit
 * too much, never refuse what weir admits. No `\u` escape appears: RE2 and
 * Rust refuse the expression for one (and a surrogate cannot be one).
 *
 * @throws {GlobError} as {@link compileGlob}
 * @example
 * ```ts
 * import { globSource } from "./glob.ts";
 * if (globSource("docs/**") !== "^docs/[\\s\\S]*$") throw new Error(globSource("docs/**"));
 * if (globSource("a?[^x]") !== "^a[^/][^/x]$") throw new Error(globSource("a?[^x]"));
 * if (globSource("v*.md") !== "^v[^/]*\\.md$") throw new Error(globSource("v*.md"));
 * ```
 */
export function globSource(pattern: string): string {
  return translate(pattern).source;
}

/**
 * What a reader who knows other glob dialects would misread in a well-formed
 * glob, each as a warning to show at the `restrict` (the glob is still used as
 * written): `[!...]`, which shells, `fnmatch` and `.gitignore` read as a
 * negated class but weir (as Go's `path.Match`) reads as a class holding `!`,
 * so `[!.]*` admits `.env`; and `{a,b}`, which shells and minimatch read as
 * alternatives but a glob here matches literally; and a part no restricted
 * value can ever match (a literal `\\` or `%XX`: the guard refuses the first
 * and matches every decoded form, src/guard/restricted_value.ts).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { globWarnings } from "./glob.ts";
 * assert.match(globWarnings("[!.]*")[0], /holds "!"/);
 * assert.match(globWarnings("{api,web}-*")[0], /braces/);
 * assert.deepEqual(globWarnings("[^.]*"), []);
 * assert.deepEqual(globWarnings("\\[!x]"), []);
 * ```
 */
export function globWarnings(glob: string): string[] {
  const out: string[] = [];
  const chars = [...glob];
  let inClass = false;
  let braces = false;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === "\\") {
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
      if (chars[i + 1] === "!") {
        out.push(
          `glob ${JSON.stringify(glob)}: "[!" starts a class that holds "!", not a negated ` +
            `class (shells read it so; weir negates with "[^"): write "[^" to exclude, or ` +
            `put "!" later in the class to keep it as a character`,
        );
      }
    } else if (c === "{" && chars.slice(i + 1).join("").match(/^[^}]*,[^}]*\}/)) {
      braces = true;
    }
  }
  if (braces) {
    out.push(
      `glob ${JSON.stringify(glob)}: braces match themselves here, they are not alternatives ` +
        `(as in a shell): write each alternative as its own glob ("{a,b}-*" is "a-*" "b-*")`,
    );
  }
  // Characters no restricted value may hold: the glob's part that needs them matches nothing.
  const atoms = parseGlob(glob);
  const literal = (i: number, test: (c: number) => boolean) => {
    const a = atoms[i];
    return a?.kind === "char" && test(a.codePoint);
  };
  const hex = (c: number) => /^[0-9A-Fa-f]$/.test(String.fromCodePoint(c));
  if (atoms.some((_, i) => literal(i, (c) => c === 0x5c))) {
    out.push(
      `glob ${JSON.stringify(glob)} needs a "\\", which weir refuses in a restricted value ` +
        `(a path separator to some servers), so no value passes it: drop it`,
    );
  }
  if (
    atoms.some((_, i) =>
      literal(i, (c) => c === 0x25) && literal(i + 1, hex) && literal(i + 2, hex)
    )
  ) {
    out.push(
      `glob ${JSON.stringify(glob)} needs a percent-encoded character ("%XX"), but a value must ` +
        `match in every form it decodes to, so no value passes it: write the character itself`,
    );
  }
  return out;
}

/** Whether every value a glob matches holds a `/` (a literal `/` outside any class). */
export function globNeedsSlash(glob: string): boolean {
  return parseGlob(glob).some((a) => a.kind === "char" && a.codePoint === 0x2f);
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

/** A glob's expression, and whether a reader without the `u` flag can compile it. */
function translate(pattern: string): { source: string; portable: boolean } {
  let source = "^";
  let portable = true;
  for (const atom of parseGlob(pattern)) {
    if (atom.kind === "any") source += "[\\s\\S]*";
    else if (atom.kind === "star") source += "[^/]*";
    else if (atom.kind === "one") source += "[^/]";
    else if (atom.kind === "char") source += escape(String.fromCodePoint(atom.codePoint));
    else {
      if (atom.ranges.some(([, hi]) => hi > 0xffff)) portable = false;
      source += classSource(atom.ranges, atom.negate);
    }
  }
  return { source: source + "$", portable };
}

/** A class as a source: its ranges; negated, `/` too is outside it. */
function classSource(ranges: [number, number][], negate: boolean): string {
  const body = ranges.map(([lo, hi]) => classRange(lo, hi)).join("");
  return negate ? `[^/${body}]` : `[${body}]`;
}

function classRange(lo: number, hi: number): string {
  const one = escapeInClass(String.fromCodePoint(lo));
  return lo === hi ? one : `${one}-${escapeInClass(String.fromCodePoint(hi))}`;
}

/** A literal character: ECMA-262's syntax characters escaped (`/` needs none in a pattern). */
function escape(c: string): string {
  return /[\\^$.*+?()[\]{}|]/.test(c) ? `\\${c}` : c;
}

function escapeInClass(c: string): string {
  return /[\\\]\[^-]/.test(c) ? `\\${c}` : c;
}
