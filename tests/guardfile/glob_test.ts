/**
 * `restrict` globs as regular expressions (src/guardfile/glob.ts): the
 * expression the guard matches with and the `pattern` the advertised schema
 * carries mean what docs/guardfile.md says a glob means, read character by
 * character as JSON Schema reads a pattern (the `u` flag), against a matcher
 * written here from the documented rules alone (code point by code point, by
 * backtracking); and the pattern uses only what every common engine compiles
 * alike (Go's RE2 and Rust's regex refuse a `\u` escape).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { compileGlob, GlobError, globSource, globsPattern } from "../../src/guardfile/glob.ts";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import { checkRestrictedValue } from "../../src/guard/restricted_value.ts";

type Token =
  | { kind: "char"; cp: number }
  | { kind: "star" | "any-run" | "one" }
  | { kind: "class"; negate: boolean; ranges: [number, number][] };

/** The documented grammar, parsed on its own (a malformed glob: undefined). */
function parse(glob: string): Token[] | undefined {
  const cs = [...glob];
  const out: Token[] = [];
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i];
    if (c === "*") {
      let n = 1;
      while (cs[i + 1] === "*") (i++, n++);
      out.push({ kind: n > 1 ? "any-run" : "star" });
    } else if (c === "?") out.push({ kind: "one" });
    else if (c === "\\") {
      if (i + 1 >= cs.length) return undefined;
      out.push({ kind: "char", cp: cs[++i].codePointAt(0)! });
    } else if (c === "[") {
      let j = i + 1;
      const negate = cs[j] === "^";
      if (negate) j++;
      const ranges: [number, number][] = [];
      while (j < cs.length && cs[j] !== "]") {
        let lo = cs[j];
        if (lo === "\\") {
          if (++j >= cs.length) return undefined;
          lo = cs[j];
        }
        j++;
        let hi = lo;
        if (cs[j] === "-" && cs[j + 1] !== undefined && cs[j + 1] !== "]") {
          hi = cs[j + 1];
          j += 2;
          if (hi === "\\") hi = cs[j++];
          if (hi === undefined || hi.codePointAt(0)! < lo.codePointAt(0)!) return undefined;
        }
        ranges.push([lo.codePointAt(0)!, hi.codePointAt(0)!]);
      }
      if (j >= cs.length || ranges.length === 0) return undefined;
      out.push({ kind: "class", negate, ranges });
      i = j;
    } else out.push({ kind: "char", cp: c.codePointAt(0)! });
  }
  return out;
}

const SLASH = 0x2f;

/** Whether the whole value matches (docs/guardfile.md, `restrict`). */
function matches(tokens: Token[], value: string): boolean {
  const v = [...value].map((c) => c.codePointAt(0)!);
  const memo = new Map<number, boolean>();
  const at = (t: number, i: number): boolean => {
    const key = t * 10_000 + i;
    const seen = memo.get(key);
    if (seen !== undefined) return seen;
    let ok: boolean;
    if (t === tokens.length) ok = i === v.length;
    else {
      const tok = tokens[t];
      switch (tok.kind) {
        case "star":
          ok = at(t + 1, i) || (i < v.length && v[i] !== SLASH && at(t, i + 1));
          break;
        case "any-run":
          ok = at(t + 1, i) || (i < v.length && at(t, i + 1));
          break;
        case "one":
          ok = i < v.length && v[i] !== SLASH && at(t + 1, i + 1);
          break;
        case "char":
          ok = i < v.length && v[i] === tok.cp && at(t + 1, i + 1);
          break;
        case "class": {
          const inside = i < v.length && tok.ranges.some(([lo, hi]) => v[i] >= lo && v[i] <= hi);
          ok = i < v.length &&
            (tok.negate ? !inside && v[i] !== SLASH : inside) && at(t + 1, i + 1);
          break;
        }
      }
    }
    memo.set(key, ok);
    return ok;
  };
  return at(0, 0);
}

/** Pieces of globs and values: metacharacters, regex syntax, `/`, BMP and astral letters. */
const PIECES = ["a", "b", "c", "-", ".", "$", "(", "|", "/", "é", "😀", "𝔸", "]", "^", "\\"];
const GLOB_PIECES = [
  ...PIECES,
  "*",
  "**",
  "?",
  "[a-c]",
  "[^b]",
  "[^/a]",
  "[\\]x]",
  "[é-ü]",
  "[ -￿]",
  "[𝔸-😀]",
  "[^😀]",
  "\\*",
  "\\?",
  "\\[",
];
const glob = fc.array(fc.constantFrom(...GLOB_PIECES), { maxLength: 6 }).map((p) => p.join(""));
const value = fc.array(fc.constantFrom(...PIECES, "ab", "a/b", "x"), { maxLength: 8 })
  .map((p) => p.join(""));

Deno.test("a glob's expression means the documented glob, read as JSON Schema reads a pattern (u)", () => {
  fc.assert(
    fc.property(glob, fc.array(value, { minLength: 1, maxLength: 8 }), (g, values) => {
      const tokens = parse(g);
      if (tokens === undefined) {
        assert.throws(() => globSource(g), GlobError);
        return;
      }
      const guard = compileGlob(g);
      const pattern = globsPattern([g]);
      const unicode = pattern === undefined ? undefined : new RegExp(pattern, "u");
      // Only a class naming a character past U+FFFF is left unstated.
      const astralClass = tokens.some((t) =>
        t.kind === "class" && t.ranges.some(([, hi]) => hi > 0xffff)
      );
      assert.equal(pattern === undefined, astralClass);
      for (const v of [...values, ...values.map((x) => g.replaceAll("*", x))]) {
        const want = matches(tokens, v);
        assert.equal(guard(v), want, `guard ${g} on ${JSON.stringify(v)}`);
        if (unicode) assert.equal(unicode.test(v), want, `${pattern} (u) on ${JSON.stringify(v)}`);
      }
    }),
    { numRuns: 3000 },
  );
});

Deno.test("several globs: the pattern admits a value when one glob does", () => {
  fc.assert(
    fc.property(fc.array(glob, { minLength: 1, maxLength: 3 }), value, (globs, v) => {
      const parsed = globs.map(parse);
      if (parsed.some((t) => t === undefined)) return;
      const pattern = globsPattern(globs);
      if (pattern === undefined) return;
      const want = parsed.some((t) => matches(t!, v));
      assert.equal(new RegExp(pattern, "u").test(v), want);
    }),
    { numRuns: 1000 },
  );
});

Deno.test("the documented examples", () => {
  const cases: [string, string, boolean][] = [
    ["demo-*", "demo-1", true],
    ["demo-*", "demo-1/x", false],
    ["demo-*", "demo-", true],
    ["docs/**", "docs/a/b.md", true],
    ["docs/**", "doc/a", false],
    ["??", "😀", false],
    ["??", "😀a", true],
    ["[^a]", "/", false],
    ["a\\*", "a*", true],
    ["a\\*", "ab", false],
  ];
  for (const [g, v, want] of cases) {
    assert.equal(compileGlob(g)(v), want, `${g} ${v}`);
    assert.equal(new RegExp(globsPattern([g])!, "u").test(v), want, `${g} ${v} as a pattern`);
  }
});

/**
 * What a pattern may hold so that every common engine compiles it and reads
 * it alike by code point (JSON Schema's u reading, Go's RE2, Rust's regex,
 * Python's re, Java): literal characters, ECMA-262 syntax characters escaped,
 * classes with `\\ ] [ ^ -` escaped inside, `[^/]`, `[\\s\\S]`, `*`,
 * `(?:a|b)`, `^`, `$`. No `\\u` or `\\x` escape (RE2 and Rust refuse the
 * former), no lookaround, no backreference, no property class.
 */
const PORTABLE = new RegExp(
  String.raw`^\^(?:\(\?:)?(?:` +
    String.raw`[^\\^$.*+?()[\]{}|]|\\[\\^$.*+?()[\]{}|]|` + // a literal
    String.raw`\[\^?(?:[^\\\]\[]|\\[\\\]\[^-]|\\[sS])+\]|` + // a class
    String.raw`\*|\||\)|\(\?:` +
    String.raw`)*\$$`,
  "u",
);

Deno.test("a pattern holds only what RE2, Rust, Python and Java compile alike (no \\u escape, no lookaround)", () => {
  fc.assert(
    fc.property(fc.array(glob, { minLength: 1, maxLength: 3 }), (globs) => {
      if (globs.some((g) => parse(g) === undefined)) return;
      const pattern = globsPattern(globs);
      if (pattern === undefined) return;
      assert.match(pattern, PORTABLE, JSON.stringify(globs));
      // An escaped backslash (\\) is a literal: taken out first, so \\b (backslash, b) is not read as \b.
      const escapes = pattern.replaceAll("\\\\", "");
      assert.doesNotMatch(escapes, /\\[ux]|\(\?[=!<]|\\[1-9pPdDwWbB]/, JSON.stringify(globs));
    }),
    { numRuns: 2000 },
  );
  // The shapes the translation writes, each once.
  assert.equal(globsPattern(["a?[^x]*"]), "^a[^/][^/x][^/]*$");
  assert.equal(globsPattern(["docs/**", "[\\]-]"]), "^(?:docs/[\\s\\S]*|[\\]\\-])$");
  // The property's counterexample at seed 323146926: a literal backslash before a letter.
  assert.equal(globsPattern(["\\\\b", ""]), "^(?:\\\\b|)$");
});

/** The warnings a spec-mode file and a wrap-form file get for `restrict` globs. */
function restrictWarnings(globs: string[], slashes = "refuse"): { spec: string[]; wrap: string[] } {
  const list = globs.map((g) => JSON.stringify(g)).join(" ");
  const spec = parseGuardfile(
    `wrap ward mcp t {\n  base-url "https://x.example"\n  auth none\n` +
      `  restrict p matches ${list}\n  can get p { path "/p/{p}"; param "p" slashes="${slashes}"; }\n}\n`,
    "t.mcp.kdl",
  );
  const wrap = parseGuardfile(
    `wrap ward mcp t {\n  mcp-server http "https://x.example/mcp"\n` +
      `  proxy get { argument "p" { restrict ${list}; }; }\n}\n`,
    "t.mcp.kdl",
  );
  const warnings = (r: typeof spec) => {
    assert.deepEqual(r.diagnostics.filter((d) => d.severity === "error"), []);
    return r.diagnostics.filter((d) => d.severity === "warning").map((d) => d.message);
  };
  return { spec: warnings(spec), wrap: warnings(wrap) };
}

Deno.test("lint warns of a glob a reader of other dialects misreads, or no value can pass; the glob is used as written", () => {
  const cases: [string, RegExp][] = [
    ["[!.]*", /"\[!" starts a class that holds "!", not a negated class/],
    ["{api,web}-*", /braces match themselves here, they are not alternatives/],
    ["x%2Fy", /needs a percent-encoded character/],
    ["a\\\\b", /needs a "\\", which weir refuses in a restricted value/],
  ];
  for (const [g, said] of cases) {
    const { spec, wrap } = restrictWarnings([g, "ok-*"]);
    assert.equal(spec.length, 1, `${g}: ${spec}`);
    assert.match(spec[0], said);
    assert.equal(wrap.length, 1, `${g}: ${wrap}`);
    assert.match(wrap[0], said);
  }
  // Said only where it holds.
  for (const g of ["[^.]*", "\\[!x]", "[a!]", "{x}", "a%zz", "100%", "a{1}", "[{,}]"]) {
    assert.deepEqual(restrictWarnings([g]), { spec: [], wrap: [] }, g);
  }
  // A "/" the parameter refuses (spec mode: a one-segment path parameter).
  assert.match(
    restrictWarnings(["acme/*"]).spec[0],
    /needs a "\/", which path parameter "p" refuses/,
  );
  assert.deepEqual(restrictWarnings(["acme/*"], "segments").spec, []);
  assert.deepEqual(
    restrictWarnings(["[/]x", "a*"]).spec,
    [],
    "a class may hold / (and other values)",
  );
});

Deno.test("what the warnings say holds: no value passes a glob needing %XX or a backslash", () => {
  fc.assert(
    fc.property(
      fc.constantFrom("x%2Fy", "%41*", "*%2e%2E*", "a\\\\b", "*\\\\*"),
      fc.array(fc.constantFrom("a", "x", "y", "%", "2", "F", "4", "1", "e", "E", "/", "\\", "."), {
        maxLength: 8,
      }),
      (g, parts) => {
        const value = parts.join("");
        for (const v of [value, g.replace(/\\(.)/g, "$1").replaceAll("*", value)]) {
          if (!compileGlob(g)(v)) continue;
          assert.throws(() => checkRestrictedValue("argument p", v, [g]), /policy_denied/, v);
        }
      },
    ),
    { numRuns: 500 },
  );
});
