/**
 * Every form an upstream might decode a value to. weir percent-encodes each
 * path and query value exactly once (a `%` becomes `%25`), so the upstream's
 * first decoding gives back the value as the caller wrote it; but servers and
 * the frameworks in front of them decode again (Prometheus 2.x decodes `%2F`
 * before routing), some decode `%uXXXX` (IIS), and some accept overlong UTF-8
 * (`%C0%AE` for `.`). A value is therefore decided by all of its forms, not by
 * a list of spellings: `%252e%252e` and `%25%32%65%25%32%65` both decode,
 * twice, to `..`.
 *
 * {@link decodedForms} gives the value itself and what each further round of
 * decoding makes of it, on bytes, under two decoders: the standard one (RFC
 * 3986 percent-decoding, as WHATWG URL and most servers do it) and one that
 * also reads `%uXXXX`; each round's bytes are read as text both strictly
 * (UTF-8) and leniently (overlong UTF-8 accepted). A value still
 * changing after {@link MAX_DECODING_ROUNDS} rounds is reported as such
 * (refused by the caller: no real value is escaped that often).
 *
 * @module
 */

/** Rounds of decoding followed; a value that still changes after them is refused. */
export const MAX_DECODING_ROUNDS = 16;

/** The forms of a value, and whether decoding had not settled after the last round. */
export interface DecodedForms {
  /** The value itself first, then each distinct form further decoding gives, in order found. */
  forms: string[];
  /** True when a decoder still changed the value after {@link MAX_DECODING_ROUNDS} rounds. */
  unsettled: boolean;
}

/**
 * The value and every form it decodes to (see the module text). Forms are
 * distinct; the value itself is `forms[0]`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodedForms } from "./decoded.ts";
 * assert.ok(decodedForms("%25%32%65%25%32%65").forms.includes(".."));
 * assert.ok(decodedForms("%C0%AE%C0%AE").forms.includes(".."));
 * assert.equal(decodedForms("plain").forms.length, 1);
 * ```
 */
export function decodedForms(value: string): DecodedForms {
  const forms = [value];
  if (!value.includes("%")) return { forms, unsettled: false };
  const add = (form: string) => {
    if (!forms.includes(form)) forms.push(form);
  };
  let unsettled = false;
  // Decoders work on bytes: a round may leave a byte that is not UTF-8 on its
  // own (%AE) which the next round completes (%C0 then %AE is an overlong "."),
  // so the rounds run on bytes and each result is read as text both ways.
  for (const withU of [false, true]) {
    let current: Uint8Array = utf8Encoder.encode(value);
    for (let round = 0;; round++) {
      const next = decodeRound(current, withU);
      if (next === current) break;
      if (round === MAX_DECODING_ROUNDS) {
        unsettled = true;
        break;
      }
      add(utf8.decode(next));
      add(lenientText(next));
      current = next;
    }
  }
  return { forms, unsettled };
}

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();
const PERCENT = 0x25;

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  return -1;
}

/**
 * One round of percent-decoding on bytes (RFC 3986 section 2.1): `%XX`
 * becomes the byte XX; with `withU`, `%uXXXX` (IIS) becomes the UTF-8 bytes of
 * that code unit. Anything else is kept. Returns `bytes` itself when nothing
 * was decoded.
 */
function decodeRound(bytes: Uint8Array, withU: boolean): Uint8Array {
  if (!bytes.includes(PERCENT)) return bytes;
  const out: number[] = [];
  let changed = false;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === PERCENT) {
      const h = hexValue(bytes[i + 1] ?? 0);
      const l = hexValue(bytes[i + 2] ?? 0);
      if (h >= 0 && l >= 0) {
        out.push(h * 16 + l);
        i += 2;
        changed = true;
        continue;
      }
      if (withU && (bytes[i + 1] === 0x75 || bytes[i + 1] === 0x55)) {
        const digits = [2, 3, 4, 5].map((k) => hexValue(bytes[i + k] ?? 0));
        if (digits.every((d) => d >= 0)) {
          const unit = digits.reduce((acc, d) => acc * 16 + d, 0);
          out.push(...utf8Encoder.encode(String.fromCharCode(unit)));
          i += 5;
          changed = true;
          continue;
        }
      }
    }
    out.push(bytes[i]);
  }
  return changed ? new Uint8Array(out) : bytes;
}

/**
 * Bytes read as a lenient decoder reads them: an overlong UTF-8 sequence
 * (`C0 AE`, `E0 80 AE`) is the character it spells, where a strict decoder
 * sees an error (U+FFFD); everything else as UTF-8.
 */
function lenientText(bytes: Uint8Array): string {
  let out = "";
  let plain: number[] = [];
  const flush = () => {
    if (plain.length > 0) out += utf8.decode(new Uint8Array(plain));
    plain = [];
  };
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    // Overlong two-byte form of U+0000..U+007F: C0 or C1, then a continuation byte.
    if ((b === 0xc0 || b === 0xc1) && i + 1 < bytes.length && (bytes[i + 1] & 0xc0) === 0x80) {
      flush();
      out += String.fromCharCode(((b & 0x1f) << 6) | (bytes[i + 1] & 0x3f));
      i += 1;
      continue;
    }
    // Overlong three-byte form of U+0000..U+07FF: E0, then 80..9F, then a continuation byte.
    if (
      b === 0xe0 && i + 2 < bytes.length && (bytes[i + 1] & 0xe0) === 0x80 &&
      (bytes[i + 2] & 0xc0) === 0x80
    ) {
      flush();
      out += String.fromCharCode(((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f));
      i += 2;
      continue;
    }
    plain.push(b);
  }
  flush();
  return out;
}

/**
 * The value as an upstream that normalizes Unicode may read it: its NFKC form
 * (Unicode Standard Annex 15). Compatibility characters become what they look
 * like: fullwidth `．` (U+FF0E), `／` (U+FF0F), `＼` (U+FF3C) become `.`, `/`,
 * `\`, and the leaders `․` (U+2024) and `‥` (U+2025) become `.` and `..`.
 * Frameworks that normalize paths, and Windows' "best fit" conversion of
 * Unicode to an ANSI code page, read these so. The same string when NFKC
 * changes nothing.
 */
export function compatibilityForm(text: string): string {
  // ASCII is its own NFKC form (no ASCII character decomposes or composes).
  return ASCII.test(text) ? text : text.normalize("NFKC");
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * Whether one piece of a path (between separators) is a dot segment to some
 * upstream: `.` or `..` itself, or once a `;` path parameter is dropped
 * (RFC 3986 section 3.3 lets a segment carry parameters; Tomcat and Spring drop
 * them before resolving dot segments, so `..;x` climbs, notably behind a proxy
 * that decodes `%3B`), in the piece's own form or its
 * {@link compatibilityForm} (`．．`, `‥`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isDotPiece } from "./decoded.ts";
 * assert.ok(isDotPiece("..;jsessionid=1") && isDotPiece("\uff0e\uff0e") && isDotPiece("\u2025"));
 * assert.ok(!isDotPiece("...") && !isDotPiece("a..b"));
 * ```
 */
export function isDotPiece(piece: string): boolean {
  if (isDotBare(piece)) return true;
  const compatible = compatibilityForm(piece);
  return compatible !== piece && isDotBare(compatible);
}

/** `.` or `..`, alone or before a `;` path parameter. */
function isDotBare(form: string): boolean {
  const end = form.indexOf(";");
  const bare = end < 0 ? form : form.slice(0, end);
  return bare === "." || bare === "..";
}
