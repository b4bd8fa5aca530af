/**
 * The `encoded-blob` rule of the tool-poisoning scan (`scan_rules.ts`):
 * text a model can decode and a reader cannot check. A run that decodes to
 * words (base64, base64url, hex, `\x`/`\u`/percent escapes, character
 * references, a `data:` URI; base64 split into chunks, hex bytes written
 * apart) is an error; a long run that does not is a warning.
 *
 * Pure: no I/O.
 *
 * @module
 */
import type { RuleHit } from "./scan_rules.ts";

const BASE64 = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/_-])/g;
const BASE64URL = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9_-]{16,}(?![A-Za-z0-9+/_-])/g;
/** Base64 written in chunks (wrapped lines, groups): decoded as one run. */
const BASE64_CHUNKS =
  /(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/]{4,}[ \t\r\n]+){2,}[A-Za-z0-9+/]{4,}={0,2}/g;
const HEX = /(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}){16,}(?![0-9A-Za-z])/g;
/** Hex bytes written apart: `49 67 6e`, `0x49, 0x67`, `49:67:6e`. */
const HEX_APART =
  /(?<![0-9A-Za-z])(?:(?:0x)?[0-9A-Fa-f]{2}(?:[ \t,:;-]|\r?\n)+){11,}(?:0x)?[0-9A-Fa-f]{2}(?![0-9A-Za-z])/gi;
const ESCAPES = /(?:\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}|&#x?[0-9A-Fa-f]+;){8,}/g;
const DATA_URI = /\bdata:([\w.+/-]*)(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=]{16,}/gi;

/** Decoded bytes read as text, when most of them are printable (a hidden message). */
function asText(bytes: Uint8Array): string | undefined {
  if (bytes.length < 12) return undefined;
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const chars = [...text];
  const printable = chars.filter((c) => /[\p{L}\p{N}\p{P}\p{Zs}\n]/u.test(c)).length;
  const letters = chars.filter((c) => /\p{L}/u.test(c)).length;
  return printable / chars.length > 0.9 && letters / chars.length > 0.5 && /\s/.test(text)
    ? text
    : undefined;
}

function fromBase64(s: string): Uint8Array | undefined {
  try {
    const std = s.replace(/\s+/g, "").replaceAll("-", "+").replaceAll("_", "/").replace(/=+$/, "");
    const padded = std + "=".repeat((4 - (std.length % 4)) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function fromEscapes(s: string): Uint8Array {
  const out: number[] = [];
  for (
    const m of s.matchAll(
      /\\x([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})|%([0-9A-Fa-f]{2})|&#(x?)([0-9A-Fa-f]+);/g,
    )
  ) {
    const code = m[1] ?? m[3]
      ? parseInt(m[1] ?? m[3], 16)
      : m[2]
      ? parseInt(m[2], 16)
      : parseInt(m[5], m[4] ? 16 : 10);
    out.push(...new TextEncoder().encode(String.fromCodePoint(Math.min(code, 0x10ffff))));
  }
  return new Uint8Array(out);
}

/** Every encoded run of one string (see the module doc). */
export function blobs(text: string): RuleHit[] {
  const hits: RuleHit[] = [];
  const seen = (start: number) => hits.some((h) => h.start <= start && start < h.end);
  /** `long`: the length from which a run that does not decode to words is still reported. */
  const judge = (m: RegExpMatchArray, bytes: Uint8Array | undefined, long: number) => {
    if (seen(m.index!)) return;
    const decoded = bytes && asText(bytes);
    if (decoded === undefined && m[0].length < long) return;
    hits.push({
      rule: "encoded-blob",
      severity: decoded === undefined ? "warning" : "error",
      start: m.index!,
      end: m.index! + m[0].length,
      what: decoded === undefined
        ? "a long encoded run (base64, hex or escapes) a reader cannot check"
        : "encoded text (it decodes to words a model can read and a reader cannot see)",
    });
  };
  for (const m of text.matchAll(DATA_URI)) {
    const bytes = fromBase64(m[0].slice(m[0].indexOf(",") + 1));
    // An image is what a data URI usually holds: only words in one are reported.
    judge(m, bytes, /^image\//i.test(m[1]) ? Infinity : 0);
  }
  for (const m of text.matchAll(ESCAPES)) judge(m, fromEscapes(m[0]), 64);
  for (const m of text.matchAll(HEX)) {
    judge(m, Uint8Array.from(m[0].match(/../g)!, (h) => parseInt(h, 16)), 129);
  }
  for (const m of text.matchAll(HEX_APART)) {
    const bytes = [...m[0].matchAll(/(?:0x)?([0-9A-Fa-f]{2})/gi)].map((h) => parseInt(h[1], 16));
    judge(m, Uint8Array.from(bytes), Infinity);
  }
  for (const re of [BASE64, BASE64URL]) {
    for (const m of text.matchAll(re)) {
      // An identifier is not a blob: base64 of anything mixes cases and digits. Words
      // decoded are reported at any length.
      const mixed = /[a-z]/.test(m[0]) && /[A-Z]/.test(m[0]) && /\d/.test(m[0]);
      judge(m, fromBase64(m[0]), mixed ? 64 : Infinity);
    }
  }
  for (const m of text.matchAll(BASE64_CHUNKS)) {
    // Words apart are not chunks: base64 of text holds a digit, + or / somewhere.
    if (!/[\d+/]/.test(m[0])) continue;
    judge(m, fromBase64(m[0]), Infinity);
  }
  return hits;
}
