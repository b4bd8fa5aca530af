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
/** One encoded run (a `RuleHit` of scan_rules.ts, which reads this module). */
export interface BlobHit {
  rule: "encoded-blob";
  severity: "error" | "warning";
  /** Start and end of the run, in UTF-16 code units of the string. */
  start: number;
  end: number;
  /** What it is, in words. */
  what: string;
}

/** A run of base64, base64url or hex (told apart by its characters). */
const RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
/** A word that may be a chunk of base64 written apart (wrapped lines, groups). */
const CHUNK = /^[A-Za-z0-9+/]{4,}={0,2}$/;
/** A chunk base64 of text would hold: a capital after a small letter, a digit, + or / by a letter. */
const CHUNK_MIXED = /[a-z][A-Z]|[A-Za-z][0-9+/]|[0-9+/][A-Za-z]/;
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
export function blobs(text: string): BlobHit[] {
  const hits: BlobHit[] = [];
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
  if (/[\\%&]/.test(text)) {
    for (const m of text.matchAll(ESCAPES)) judge(m, fromEscapes(m[0]), 64);
  }
  for (const m of text.matchAll(HEX_APART)) {
    const bytes = [...m[0].matchAll(/(?:0x)?([0-9A-Fa-f]{2})/gi)].map((h) => parseInt(h[1], 16));
    judge(m, Uint8Array.from(bytes), Infinity);
  }
  for (const m of text.matchAll(RUN)) {
    const run = m[0];
    if (run.length >= 32 && run.length % 2 === 0 && /^[0-9A-Fa-f]+$/.test(run)) {
      judge(m, Uint8Array.from(run.match(/../g)!, (h) => parseInt(h, 16)), 129);
      continue;
    }
    // base64 of words mixes both cases: an identifier in one case is not decoded; nor a
    // run mixing the two alphabets (+/ and -_). Words decoded are reported at any
    // length; a run of both cases and digits from 64 on.
    if (!/[a-z]/.test(run) || !/[A-Z]/.test(run) || (/[+/]/.test(run) && /[-_]/.test(run))) {
      continue;
    }
    judge(m, fromBase64(run), /\d/.test(run) ? 64 : Infinity);
  }
  if (CHUNK_MIXED.test(text)) {
    for (const run of chunkRuns(text)) judge(run, fromBase64(run[0]), Infinity);
  }
  return hits;
}

/**
 * Runs of three or more words apart (spaces, line breaks) that could be
 * chunks of base64, one of them mixing cases, digits or `+`/`/` (words of
 * prose do not), each as a match of the whole run.
 */
function chunkRuns(text: string): RegExpMatchArray[] {
  const runs: RegExpMatchArray[] = [];
  let words: RegExpMatchArray[] = [];
  const close = () => {
    if (words.length >= 3 && words.some((w) => CHUNK_MIXED.test(w[0]))) {
      const start = words[0].index!;
      const last = words[words.length - 1];
      const run = [text.slice(start, last.index! + last[0].length)] as RegExpMatchArray;
      run.index = start;
      runs.push(run);
    }
    words = [];
  };
  for (const word of text.matchAll(/\S+/g)) {
    const prev = words.at(-1);
    // A chunk ends a run when padded (=); a word that is no chunk ends it too.
    if (prev && (prev[0].endsWith("=") || !CHUNK.test(word[0]))) close();
    if (CHUNK.test(word[0])) words.push(word);
  }
  close();
  return runs;
}
