/**
 * Clean text out, and exact numbers through.
 *
 * Clean text: whatever a server emits (results, error messages, echoes of
 * what a caller or an upstream sent) is well-formed Unicode (a lone UTF-16
 * surrogate becomes U+FFFD, as the WHATWG Encoding standard's UTF-8 encoder
 * does) and holds no terminal control sequence: ECMA-48 escape sequences
 * (CSI `ESC [ ... final`, OSC/DCS/PM/APC strings up to BEL or `ESC \`, and
 * two-character escapes) are removed, and every other C0 or C1 control
 * character except tab, line feed and carriage return becomes U+FFFD. A
 * terminal showing the text cannot be made to clear the screen, set its
 * title, or hide what follows.
 *
 * Exact numbers: {@link parseJsonExact} parses JSON keeping every number whose
 * text `JSON.stringify` would not reproduce (beyond 2^53, more digits than a
 * double holds, `1.0`, `1e3`, `-0`) as its source text in a `JSON.rawJSON`
 * value (TC39 "JSON.parse source text access"), so serializing the value again
 * writes the very digits received.
 *
 * @module
 */

/** ECMA-48 sequences: CSI, string controls (OSC, DCS, SOS, PM, APC) and two-character escapes. */
const SEQUENCES =
  /\u001b\[[0-?]*[ -/]*[@-~]?|\u009b[0-?]*[ -/]*[@-~]?|[\u001b][\]PX^_][^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|[\u009d\u0090\u0098\u009e\u009f][^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -~]?/g;
/** Control characters other than tab, LF and CR (C0, DEL, C1). */
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
/** Anything {@link cleanText} would change. */
const DIRTY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ud800-\udfff]/;

/**
 * Make text safe to emit: well-formed Unicode, no terminal control sequences.
 * @param text any string
 * @returns the same string when it is already clean (no copy)
 */
export function cleanText(text: string): string {
  if (!DIRTY.test(text)) return text;
  const wellFormed = (text as string & { toWellFormed(): string }).toWellFormed();
  return wellFormed.replace(SEQUENCES, "").replace(CONTROLS, "\ufffd");
}

/**
 * JSON text whose decoded strings might need {@link cleanText}: a raw
 * character `cleanText` changes (DEL, C1, a lone surrogate; raw C0 controls
 * cannot appear in valid JSON), or (below) an escape that decodes to one
 * (`\b`, `\f`, any `\u` escape). A false alarm (say, an escaped backslash
 * before `u`) only costs the walk.
 */
const MAYBE_DIRTY_RAW = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ud800-\udfff]/;
/** The escapes of {@link MAYBE_DIRTY_RAW}'s kind: looked for only in text holding a backslash. */
const MAYBE_DIRTY_ESCAPE = /\\[bfu]/;

/**
 * Whether every string and key that `JSON.parse(text)` yields is already
 * clean, so {@link cleanDeep} would return an equal value (one scan of the
 * text instead of rebuilding the decoded value). The raw characters and the
 * escapes are two searches, the second only in text holding a backslash:
 * measured on Deno 2.9.6, 147 ns for a 100-200 character answer where one
 * alternation of both took 270 ns.
 */
export function jsonTextIsClean(text: string): boolean {
  return !MAYBE_DIRTY_RAW.test(text) &&
    !(text.includes("\\") && MAYBE_DIRTY_ESCAPE.test(text));
}

/**
 * {@link cleanText} every string and object key inside a decoded JSON value
 * (raw numbers from {@link parseJsonExact} are kept). Copy on write: a value
 * with nothing to clean comes back as the very same object, and only the
 * arrays and objects on the way to a changed string are rebuilt (a clean
 * answer costs one walk and no allocation).
 *
 * @param maxDepth deeper values are refused rather than walked (default: no limit,
 *   for values the caller has already bounded)
 * @throws {RangeError} when the value nests deeper than `maxDepth`
 */
export function cleanDeep<T>(value: T, maxDepth = Infinity): T {
  // Most values are clean: a walk that only reads (no entry arrays, no copies)
  // proves it; anything else (a string to clean, too deep) takes the walk below.
  if (isCleanDeep(value, maxDepth, 0)) return value;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return cleanText(v);
    if (v === null || typeof v !== "object" || isRawJson(v)) return v;
    if (depth >= maxDepth) throw new RangeError(`nested deeper than ${maxDepth} levels`);
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const child = walk(v[i], depth + 1);
        if (out) out.push(child);
        else if (child !== v[i]) out = [...v.slice(0, i), child];
      }
      return out ?? v;
    }
    // Only plain objects are rebuilt; a Date or a driver's value is left as it is.
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return v;
    const entries = Object.entries(v);
    let changed = false;
    for (const entry of entries) {
      const key = cleanText(entry[0]);
      const child = walk(entry[1], depth + 1);
      if (key !== entry[0] || child !== entry[1]) {
        changed = true;
        entry[0] = key;
        entry[1] = child;
      }
    }
    // fromEntries defines own data properties: a "__proto__" key stays a key.
    return changed ? Object.fromEntries(entries) : v;
  };
  return walk(value, 0) as T;
}

/**
 * Whether {@link cleanDeep} would return `value` itself: every string and key
 * it would visit is clean and nothing nests `maxDepth` deep. Reads only. It
 * may answer `false` where `cleanDeep` changes nothing (a dirty key inherited
 * from a polluted prototype, a `JSON.rawJSON` value at the depth bound): the
 * full walk then decides, so the two never disagree on the result
 * (tests/mcp/clean_text_test.ts compares them value by value).
 */
function isCleanDeep(v: unknown, maxDepth: number, depth: number): boolean {
  if (typeof v === "string") return !DIRTY.test(v);
  if (v === null || typeof v !== "object") return true;
  if (depth >= maxDepth) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (!isCleanDeep(v[i], maxDepth, depth + 1)) return false;
    }
    return true;
  }
  // As in cleanDeep: only plain objects are walked (a raw number is one, and clean).
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return true;
  for (const key in v) {
    if (DIRTY.test(key)) return false;
    if (!isCleanDeep((v as Record<string, unknown>)[key], maxDepth, depth + 1)) return false;
  }
  return true;
}

/** Whether `value` is a `JSON.rawJSON` value (a number kept as its source text). */
export function isRawJson(value: unknown): value is { readonly rawJSON: string } {
  return (JSON as unknown as { isRawJSON(v: unknown): boolean }).isRawJSON(value);
}

/** `JSON.rawJSON`: a value that serializes as exactly `text` (a number's source). */
export const rawJSON = (JSON as unknown as {
  rawJSON(text: string): { readonly rawJSON: string };
}).rawJSON;

/**
 * Number text that `JSON.stringify(JSON.parse(text))` might spell differently
 * (a run of 16 digits and points, so that `1234567890.123456789` counts its
 * 19 digits across the point; an exponent; a fraction ending in zero; `-0`;
 * six or more zeros after `0.`, which `String` writes as `1e-7`).
 */
const INEXACT_NUMBER = /[0-9][0-9.]{15}|[0-9][eE]|\.[0-9]*0(?![0-9])|-0(?![.0-9])|0\.0{5}/;

/**
 * Parse JSON keeping numbers exact (see the module text).
 * @throws {SyntaxError} when the text is not JSON
 */
export function parseJsonExact(text: string): unknown {
  if (!INEXACT_NUMBER.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value, context?: { source?: string }) => {
    if (typeof value !== "number" || context?.source === undefined) return value;
    return String(value) === context.source ? value : rawJSON(context.source);
  });
}

/** Where a decoded value holds text that is not well-formed Unicode. */
export interface IllFormedText {
  /** Where: `a.b[2]` (empty at the top). */
  at: string;
  /** Whether it is an object key (an argument name) rather than a string value. */
  key: boolean;
}

/**
 * The first string or object key in a decoded JSON value that is not
 * well-formed Unicode (it holds a lone UTF-16 surrogate, which JSON text can
 * spell as `"\\ud800"` but UTF-8 cannot encode), or `null` when every one
 * is. Iterative; the caller has bounded the depth. RFC 8259 section 8.2 leaves
 * such strings' behaviour unpredictable; I-JSON (RFC 7493 section 2.1)
 * forbids them.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { illFormedAt } from "./text.ts";
 * assert.equal(illFormedAt({ a: ["ok", "x\ud800"] })?.at, "a[1]");
 * assert.equal(illFormedAt({ a: "\ud83d\ude00" }), null);
 * ```
 */
export function illFormedAt(value: unknown): IllFormedText | null {
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === "string") {
      if (!v.isWellFormed()) return { at, key: false };
      continue;
    }
    if (v === null || typeof v !== "object" || isRawJson(v)) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}[${i}]`]);
      continue;
    }
    for (const key of Object.keys(v)) {
      if (!key.isWellFormed()) return { at, key: true };
      const name = cleanText(key.length > 60 ? `${key.slice(0, 57)}...` : key);
      stack.push([(v as Record<string, unknown>)[key], at ? `${at}.${name}` : name]);
    }
  }
  return null;
}

/** What to tell a caller whose arguments hold text that is not well-formed Unicode. */
export function illFormedMessage(found: IllFormedText): string {
  return found.key
    ? `an argument name is not well-formed Unicode (it holds a lone surrogate${
      found.at ? `, in ${found.at}` : ""
    }): rename it`
    : `the text at ${found.at || "(top)"} is not well-formed Unicode (it holds a lone UTF-16 ` +
      `surrogate, which UTF-8 cannot carry): send well-formed text`;
}

/**
 * `text` cut to at most `max` UTF-16 code units without splitting a surrogate
 * pair (a cut through one would leave a lone surrogate, which the text out
 * becomes U+FFFD): the pair is dropped whole.
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
