/**
 * Keeping secrets out of what goes back to the caller. Every value resolved
 * from the environment or a file for one call (credentials, pins) is redacted
 * from the result and from error messages, in each form an upstream could
 * plausibly echo it ({@link secretPatterns}):
 *
 * - spelled character by character in any mix of: the character itself;
 *   JSON escapes (`\u003c` in either hex case, `\/`, `\"`: plain and
 *   "HTML-safe" JSON encoders), string-literal escapes (`\'`, `\x2b`); HTML
 *   references (`&amp;`, `&#60;`, `&#x3C;`, and every HTML 5 name of an ASCII
 *   character: `&lowbar;`, `&sol;`);
 *   percent-encoding of its UTF-8 bytes, once or twice (`%2520`), either hex
 *   case, `+` for a space. So `encodeURIComponent`, form encoding, every byte
 *   escaped, Go's `json.Marshal` and an HTML error page's echo all match,
 *   as does any other mixture that spells the secret;
 * - base64 and base64url, padded or not, and, for a secret inside a longer
 *   base64 text (a `Basic` credential `user:secret`, a token wrapping it), the
 *   run of characters that depends on the secret alone at each of the three
 *   byte alignments (RFC 4648 sections 4 and 5);
 * - base64 wrapped into lines (MIME's 76 characters, PEM's 64, or any other
 *   width: a line break, raw or JSON-escaped, between any two characters),
 *   looked for only in text that holds a line break;
 * - hexadecimal, either case;
 * - and the other way round: a secret that is itself base64 (a `Basic`
 *   credential's value), base64url or percent-encoded text is also redacted
 *   in its decoded form.
 *
 * `literal` values are written in the guardfile itself and are not secret.
 *
 * A credential shorter than {@link MIN_SECRET_LENGTH} characters is refused
 * before it is sent: a value that short cannot be redacted without mangling
 * ordinary text, so weir could not keep its promise for it. A derived form
 * shorter than that (the decoding of a short base64 value) is not redacted.
 *
 * @module
 */
export { nestsDeeperThan } from "../mcp/depth.ts";
import { isRawJson } from "../mcp/text.ts";

/** Shortest secret weir will send and redact. */
export const MIN_SECRET_LENGTH = 8;

/** How deep a decoded upstream answer may nest (deeper: refused, not walked). */
export const MAX_ANSWER_DEPTH = 256;

const REDACTED = "[redacted]";

const encoder = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

const toUrlAlphabet = (b64: string) => b64.replaceAll("+", "-").replaceAll("/", "_");

/**
 * The base64 characters that depend on `bytes` alone when they sit at byte
 * offset k (mod 3) of a longer base64 text, for k = 0, 1, 2: character i
 * covers bits [6i, 6i + 6), so with k bytes before them the characters from
 * ceil(4k / 3) up to floor(8(k + n) / 6) are theirs alone.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const cores: string[] = [];
  for (let k = 0; k < 3; k++) {
    const padded = new Uint8Array(k + bytes.length);
    padded.set(bytes, k);
    cores.push(
      base64(padded).slice(Math.ceil((4 * k) / 3), Math.floor((8 * (k + bytes.length)) / 6)),
    );
  }
  return cores;
}

/** The text a base64 or base64url value decodes to, when it is UTF-8 text. */
function base64Decoded(value: string): string | undefined {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value) || value.length % 4 === 1) return undefined;
  try {
    const std = value.replaceAll("-", "+").replaceAll("_", "/").replace(/=+$/, "");
    const binary = atob(std + "=".repeat((4 - (std.length % 4)) % 4));
    const text = strictUtf8.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
    // Only printable text: a random token is seldom valid base64 of text.
    return /^[\x20-\x7e]+$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** A hex byte as a regex matching either case: `3c` -> `3[cC]`. */
function hexPattern(n: number, width: number): string {
  return n.toString(16).padStart(width, "0")
    .replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`);
}

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;
const escapeRegex = (text: string) => text.replace(REGEX_SPECIAL, "\\$&");

/**
 * Short escapes of string literals, by character: JSON's (RFC 8259 section
 * 7), and `\'`, which JSON lacks but PHP's `addslashes` and `var_export`,
 * Python's `repr` and Go's `JSEscapeString` write.
 */
const SHORT_ESCAPES: Record<string, string> = {
  "'": "\\'",
  '"': '\\"',
  "\\": "\\\\",
  "/": "\\/",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/**
 * HTML's named character references of ASCII characters (HTML 5, 13.5: every
 * name the standard gives each one). Escapers write more than the five
 * specials so: PHP's `htmlentities($s, ENT_HTML5)` writes `sk_live.a/b` as
 * `sk&lowbar;live&period;a&sol;b`.
 */
const HTML_NAMED: Record<string, string[]> = {
  "\t": ["Tab"],
  "\n": ["NewLine"],
  "!": ["excl"],
  '"': ["quot", "QUOT"],
  "#": ["num"],
  "$": ["dollar"],
  "%": ["percnt"],
  "&": ["amp", "AMP"],
  "'": ["apos"],
  "(": ["lpar"],
  ")": ["rpar"],
  "*": ["ast", "midast"],
  "+": ["plus"],
  ",": ["comma"],
  ".": ["period"],
  "/": ["sol"],
  ":": ["colon"],
  ";": ["semi"],
  "<": ["lt", "LT"],
  "=": ["equals"],
  ">": ["gt", "GT"],
  "?": ["quest"],
  "@": ["commat"],
  "[": ["lsqb", "lbrack"],
  "\\": ["bsol"],
  "]": ["rsqb", "rbrack"],
  "^": ["Hat"],
  "_": ["lowbar", "UnderBar"],
  "`": ["grave", "DiacriticalGrave"],
  "{": ["lcub", "lbrace"],
  "|": ["verbar", "vert", "VerticalLine"],
  "}": ["rcub", "rbrace"],
};

/**
 * Every spelling of one character an echo might use, as a regex group: the
 * character; a JSON `\uXXXX` escape (a surrogate pair for astral ones), a
 * `\xHH` escape, or a short escape (`\"`, `\'`); an HTML numeric or named
 * reference; each UTF-8 byte percent-encoded, or percent-encoded twice
 * (`%2520`), with `+` for a space. Hex digits in either case.
 */
function charPattern(c: string): string {
  const alternatives = [escapeRegex(c)];
  const units = c.length === 1 ? [c.charCodeAt(0)] : [c.charCodeAt(0), c.charCodeAt(1)];
  alternatives.push(units.map((u) => `\\\\u${hexPattern(u, 4)}`).join(""));
  if (SHORT_ESCAPES[c]) alternatives.push(escapeRegex(SHORT_ESCAPES[c]));
  const code = c.codePointAt(0)!;
  // JavaScript's and C's `\xHH` (OWASP ESAPI's encodeForJavaScript writes every
  // non-alphanumeric character so; Python's repr the unprintable ones).
  if (code <= 0xff) alternatives.push(`\\\\x${hexPattern(code, 2)}`);
  alternatives.push(`&#0*${code};`, `&#[xX]0*${hexPattern(code, 1)};`);
  for (const named of HTML_NAMED[c] ?? []) alternatives.push(`&${named};`);
  const bytes = [...encoder.encode(c)];
  alternatives.push(bytes.map((b) => `%${hexPattern(b, 2)}`).join(""));
  alternatives.push(bytes.map((b) => `%25${hexPattern(b, 2)}`).join(""));
  if (c === " ") alternatives.push("\\+");
  return `(?:${alternatives.join("|")})`;
}

/**
 * A secret as a regex that matches it however each character is spelled
 * ({@link charPattern}): as is, percent-encoded (in part or in full, once or
 * twice, `+` for space), JSON-escaped in any mix (HTML-safe encoders, `\/`),
 * HTML-escaped.
 */
function spelledPattern(secret: string): string {
  return [...secret].map(charPattern).join("");
}

/** A line break inside wrapped base64: CRLF or LF, raw or JSON-escaped. */
const WRAP = String.raw`(?:\\r?\\n|\r?\n)?`;

/** Whether a text holds a line break (raw or JSON-escaped) that wrapped base64 could hold. */
const HAS_BREAK = /\\n|\n/;

/** What {@link Redactor.findsAny} joins texts with: no pattern matches it unless a secret holds one. */
const SEPARATOR = "\u0000";

/**
 * The base64 forms of one secret as regexes that also match them wrapped into
 * lines: a line break may sit between any two characters (RFC 2045 section
 * 6.8 wraps at 76, RFC 7468 at 64; other encoders elsewhere).
 */
function wrappedPatterns(secret: string): string[] {
  const bytes = encoder.encode(secret);
  const b64 = base64(bytes);
  return [
    ...new Set([
      b64,
      toUrlAlphabet(b64),
      ...base64Cores(bytes).flatMap((core) => [core, toUrlAlphabet(core)]),
    ]),
  ]
    .filter((f) => f.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length)
    .map((f) => [...f.replace(/=+$/, "")].map(escapeRegex).join(WRAP) + "(?:=){0,2}");
}

/** The regex sources of one secret (computed once per value: see {@link secretPatterns}). */
function patternsOf(secret: string): string[] {
  const bytes = encoder.encode(secret);
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  const b64 = base64(bytes);
  // Encodings that are not character by character: the literal text of each.
  const literal = [
    b64,
    b64.replace(/=+$/, ""),
    toUrlAlphabet(b64),
    toUrlAlphabet(b64).replace(/=+$/, ""),
    ...base64Cores(bytes).flatMap((core) => [core, toUrlAlphabet(core)]),
    hex,
    hex.toUpperCase(),
  ].filter((f) => f.length >= MIN_SECRET_LENGTH);
  const spelled = [secret];
  // The other way round: a secret that is an encoding of text is also that text.
  const decodedBase64 = base64Decoded(secret);
  if (decodedBase64 !== undefined) spelled.push(decodedBase64);
  if (/%[0-9A-Fa-f]{2}/.test(secret)) {
    try {
      spelled.push(decodeURIComponent(secret.replaceAll("+", " ")));
    } catch { /* not percent-encoded text */ }
  }
  return [
    ...[...new Set(literal)].sort((a, b) => b.length - a.length).map(escapeRegex),
    ...[...new Set(spelled)].filter((t) => [...t].length >= MIN_SECRET_LENGTH)
      .map(spelledPattern),
  ];
}

/** Patterns already built, by secret (a call resolves the same credential every time). */
const patternCache = new Map<string, readonly string[]>();
const PATTERN_CACHE_SIZE = 64;

/**
 * The regex sources that find `secret` in every form an upstream could
 * plausibly echo it (see the module text).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { secretPatterns } from "./secrets.ts";
 * const re = new RegExp(secretPatterns("tk-secret-9f8e7d6c").join("|"));
 * assert.ok(re.test(btoa("tk-secret-9f8e7d6c")));
 * assert.ok(re.test("tk%2Dsecret\\u002d9f8e7d6c"));
 * ```
 */
export function secretPatterns(secret: string): readonly string[] {
  let patterns = patternCache.get(secret);
  if (patterns === undefined) {
    patterns = patternsOf(secret);
    if (patternCache.size >= PATTERN_CACHE_SIZE) {
      patternCache.delete(patternCache.keys().next().value!);
    }
    patternCache.set(secret, patterns);
  }
  return patterns;
}

/** Every {@link Redactor}'s secrets until its first: never added to. */
const NO_SECRETS: ReadonlySet<string> = new Set<string>();

/** The secrets of one call, and the functions that redact them. */
export class Redactor {
  /** The secrets: a set of its own from the first one (most calls resolve none). */
  #secrets: ReadonlySet<string> = NO_SECRETS;

  /** Register a secret value (ignored when shorter than {@link MIN_SECRET_LENGTH}). */
  add(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH || this.#secrets.has(secret)) return;
    if (this.#secrets === NO_SECRETS) this.#secrets = new Set([secret]);
    else (this.#secrets as Set<string>).add(secret);
    this.#pattern = undefined;
    this.#wrapped = undefined;
  }

  /** Whether any secret is registered. */
  get active(): boolean {
    return this.#secrets.size > 0;
  }

  /** Every secret's patterns as one alternation (built on first use). */
  #pattern: RegExp | undefined;
  /** Every secret's wrapped base64 forms as one alternation (built on first use). */
  #wrapped: RegExp | undefined;

  /** Redact every form of every secret in `text`. */
  text(text: string): string {
    if (this.#secrets.size === 0) return text;
    this.#pattern ??= combined([...this.#secrets]);
    const out = text.replace(this.#pattern, REDACTED);
    if (!HAS_BREAK.test(out)) return out;
    this.#wrapped ??= combinedWrapped([...this.#secrets]);
    return out.replace(this.#wrapped, REDACTED);
  }

  /**
   * Whether `text` holds any registered secret, in any form {@link text}
   * redacts (src/guard/secret_arguments.ts refuses such an argument).
   * Text shorter than {@link MIN_SECRET_LENGTH} holds none: every form is at
   * least that long.
   */
  finds(text: string): boolean {
    if (this.#secrets.size === 0 || text.length < MIN_SECRET_LENGTH) return false;
    this.#pattern ??= combined([...this.#secrets]);
    if (holds(this.#pattern, text)) return true;
    if (!HAS_BREAK.test(text)) return false;
    this.#wrapped ??= combinedWrapped([...this.#secrets]);
    return holds(this.#wrapped, text);
  }

  /**
   * Whether any of `texts` holds a registered secret ({@link finds} of each),
   * in one search of the texts joined by NUL: no form of a secret spans a NUL
   * unless the secret itself holds one (then each text is searched alone). The
   * search costs one regex run over the texts' total length, not one run per
   * text (about a microsecond each).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor } from "./secrets.ts";
   * const redactor = new Redactor();
   * redactor.add("tk-secret-9f8e7d6c");
   * assert.equal(redactor.findsAny(["title text", "tk-secret-", "9f8e7d6c"]), false);
   * assert.equal(redactor.findsAny(["title text", encodeURIComponent("tk-secret-9f8e7d6c")]), true);
   * ```
   */
  findsAny(texts: readonly string[]): boolean {
    if (this.#secrets.size === 0 || texts.length === 0) return false;
    if (texts.length === 1) return this.finds(texts[0]);
    this.#pattern ??= combined([...this.#secrets]);
    this.#wrapped ??= combinedWrapped([...this.#secrets]);
    if (this.#pattern.source.includes(SEPARATOR) || this.#wrapped.source.includes(SEPARATOR)) {
      return texts.some((text) => this.finds(text));
    }
    const joined = texts.join(SEPARATOR);
    // A wrapped form is looked for in text holding a line break ({@link finds}): off a
    // break it is a plain base64 form, which the first pattern finds.
    return holds(this.#pattern, joined) || (HAS_BREAK.test(joined) && holds(this.#wrapped, joined));
  }

  /**
   * Redact every string and object key inside a decoded JSON value. The value
   * must already be known to nest at most {@link MAX_ANSWER_DEPTH} levels.
   */
  deep(value: unknown): unknown {
    if (!this.active) return value;
    return this.#deep(value);
  }

  /**
   * {@link deep} for a value the caller owns (a freshly decoded answer): the
   * value itself when no string or key in it holds a secret (one search over
   * them all, as {@link findsAny}: no copy of a clean answer), else its
   * redacted copy, exactly as {@link deep} makes it.
   */
  redactOwned(value: unknown): unknown {
    if (!this.active) return value;
    const texts: string[] = [];
    textsOf(value, texts);
    if (texts.length === 0) return value;
    this.#pattern ??= combined([...this.#secrets]);
    this.#wrapped ??= combinedWrapped([...this.#secrets]);
    if (!this.#pattern.source.includes(SEPARATOR) && !this.#wrapped.source.includes(SEPARATOR)) {
      const joined = texts.join(SEPARATOR);
      // What `text` replaces, looked for in every text at once: the wrapped forms
      // wherever any text holds a line break (a superset of where `text` looks).
      if (
        !holds(this.#pattern, joined) && !(HAS_BREAK.test(joined) && holds(this.#wrapped, joined))
      ) {
        return value;
      }
    }
    return this.#deep(value);
  }

  #deep(value: unknown): unknown {
    const walk = (v: unknown): unknown => {
      if (typeof v === "string") return this.text(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === "object" && !isRawJson(v)) {
        const out: Record<string, unknown> = {};
        for (const [k, child] of Object.entries(v)) {
          Object.defineProperty(out, this.text(k), {
            value: walk(child),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return out;
      }
      return v;
    };
    return walk(value);
  }
}

/** Whether a global regex (shared: its `lastIndex` is left at 0) matches `text`. */
function holds(re: RegExp, text: string): boolean {
  re.lastIndex = 0;
  const found = re.test(text);
  re.lastIndex = 0;
  return found;
}

/** Every string and object key {@link Redactor.deep} passes to `text`, in any order. */
function textsOf(v: unknown, out: string[]): void {
  if (typeof v === "string") {
    out.push(v);
    return;
  }
  if (Array.isArray(v)) {
    for (const item of v) textsOf(item, out);
    return;
  }
  if (v !== null && typeof v === "object" && !isRawJson(v)) {
    for (const [k, child] of Object.entries(v)) {
      out.push(k);
      textsOf(child, out);
    }
  }
}

/** The wrapped base64 forms of several secrets, compiled once per set of secrets. */
const wrappedCache = new Map<string, RegExp>();

function combinedWrapped(secrets: string[]): RegExp {
  const key = secrets.join("\u0000");
  let re = wrappedCache.get(key);
  if (re === undefined) {
    re = new RegExp(secrets.flatMap(wrappedPatterns).join("|"), "g");
    if (wrappedCache.size >= PATTERN_CACHE_SIZE) {
      wrappedCache.delete(wrappedCache.keys().next().value!);
    }
    wrappedCache.set(key, re);
  }
  return re;
}

/** The alternation of several secrets' patterns, compiled once per set of secrets. */
const combinedCache = new Map<string, RegExp>();

function combined(secrets: string[]): RegExp {
  const key = secrets.join("\u0000");
  let re = combinedCache.get(key);
  if (re === undefined) {
    // Literal encodings (longest first) before the character-wise patterns.
    const patterns = secrets.map(secretPatterns);
    const literal = patterns.flatMap((p) => p.filter((x) => !x.startsWith("(?:")));
    const spelled = patterns.flatMap((p) => p.filter((x) => x.startsWith("(?:")));
    re = new RegExp([...literal, ...spelled].join("|"), "g");
    if (combinedCache.size >= PATTERN_CACHE_SIZE) {
      combinedCache.delete(combinedCache.keys().next().value!);
    }
    combinedCache.set(key, re);
  }
  return re;
}
