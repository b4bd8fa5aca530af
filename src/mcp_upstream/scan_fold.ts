/**
 * Other ways of reading one string of a definition, for the tool-poisoning
 * scan's phrase rules (`scan_rules.ts`): what a model reads past the letters
 * a reader sees. {@link fold} undoes the disguises a phrase rule would not
 * see through: HTML character references (`&lt;IMPORTANT&gt;`, `&#105;`),
 * percent-encoding (`ign%6Fre`), `\u0069` and `\x69` escapes, compatibility
 * forms (fullwidth `Ｉｇｎｏｒｅ`, mathematical `𝐢𝐠𝐧𝐨𝐫𝐞`, ligatures),
 * combining marks, letters of other scripts that look Latin (Cyrillic `е`,
 * Greek `ο`, dotless `ı`: {@link LOOKALIKES}, after Unicode's confusables,
 * UTS #39), invisible characters inside words, and unusual spaces and line
 * separators. {@link rot13} is the text rotated (a rotated instruction reads
 * as gibberish to a person, not to a model). {@link splitName} reads an
 * identifier's words (`ignore_previous_instructions`, `ignorePrevious`).
 *
 * Each view keeps, per UTF-16 unit it holds, the span of the original it
 * came from ({@link View.from}, {@link View.to}), so a rule's span in a view
 * is a span of the original.
 *
 * Pure: no I/O.
 *
 * @module
 */

/** A string read another way, and where each of its units came from. */
export interface View {
  text: string;
  /** Per unit of `text`: the start, in the original, of what it came from (none: the same unit). */
  from?: number[];
  /** Per unit of `text`: the end, in the original, of what it came from (none: the next unit). */
  to?: number[];
}

/**
 * Non-Latin letters and Latin-extended letters that look like a Latin letter,
 * by the ASCII letter they pass for (a subset of Unicode's confusables,
 * UTS #39: the lower- and upper-case look-alikes of Cyrillic, Greek,
 * Armenian, Cherokee, and Latin letters outside ASCII that compatibility
 * decomposition keeps).
 */
export const LOOKALIKES: Readonly<Record<string, string>> = {
  a: "аɑαａ",
  b: "Ьᖯ",
  c: "сϲⅽᴄ",
  d: "ԁⅾ",
  e: "еҽе",
  g: "ɡց",
  h: "һհ",
  i: "іιıɩӏꙇ",
  j: "јϳ",
  k: "κ",
  l: "ӏⅼǀ",
  n: "ոη",
  o: "оοօσᴏ",
  p: "рρ",
  q: "ԛ",
  r: "гᴦ",
  s: "ѕʂ",
  u: "υսᴜ",
  v: "ѵνᴠ",
  w: "ԝѡᴡ",
  x: "хχ",
  y: "уүγ",
  z: "ᴢ",
  A: "АΑᎪ",
  B: "ВΒᏴ",
  C: "СϹᏟ",
  D: "Ꭰ",
  E: "ЕΕᎬ",
  H: "НΗᎻ",
  I: "ІΙӀ",
  J: "ЈᎫ",
  K: "КΚᏦ",
  M: "МΜᎷ",
  N: "Ν",
  O: "ОΟՕ",
  P: "РΡᏢ",
  S: "ЅᏚ",
  T: "ТΤᎢ",
  X: "ХΧ",
  Y: "ҮΥ",
  Z: "ΖᏃ",
};

const ASCII_OF = new Map<string, string>(
  Object.entries(LOOKALIKES).flatMap(([ascii, alikes]) => [...alikes].map((c) => [c, ascii])),
);

/** Whether `c` (one character) is a non-ASCII letter that passes for an ASCII one. */
export function isLookalike(c: string): boolean {
  return ASCII_OF.has(c);
}

/** Characters that show nothing (kept in step with `scan_rules.ts`'s invisible rule). */
const HIDDEN =
  /^(?:[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]|\udb40[\udc00-\udc7f\udd00-\uddef])$/;
const MARK = /\p{M}/gu;
const SPACE = /^[\p{Zs}\t]$/u;
const LINE = /^[\r\v\f\u0085\u2028\u2029]$/;
/** What fold reads as one unit: a character reference, a run of percent-escapes, an escape, a character. */
const UNIT =
  /&#[xX]([0-9A-Fa-f]{1,6});?|&#(\d{1,7});?|&(lt|gt|amp|quot|apos|nbsp|sol|bsol|lowbar|num|colon|period|excl|quest|lsqb|rsqb|lpar|rpar|tilde|grave|commat);?|(?:%[0-9A-Fa-f]{2})+|\\u\{([0-9A-Fa-f]{1,6})\}|\\u([0-9A-Fa-f]{4})|\\x([0-9A-Fa-f]{2})|[\ud800-\udbff][\udc00-\udfff]|[^]/g;
const NAMED: Readonly<Record<string, string>> = {
  lt: "<",
  gt: ">",
  amp: "&",
  quot: '"',
  apos: "'",
  nbsp: " ",
  sol: "/",
  bsol: "\\",
  lowbar: "_",
  num: "#",
  colon: ":",
  period: ".",
  excl: "!",
  quest: "?",
  lsqb: "[",
  rsqb: "]",
  lpar: "(",
  rpar: ")",
  tilde: "~",
  grave: "`",
  commat: "@",
};
/** Text fold leaves as it is: ASCII without `&`, `%` or `\`. */
const PLAIN = /^[\x00-\x24\x27-\x5b\x5d-\x7f]*$/;

/**
 * The string as a model may read it (see the module doc), or `undefined`
 * when that is the string itself.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fold, originalSpan } from "./scan_fold.ts";
 * const view = fold("&lt;IMPORTANT&gt; ｉｇｎｏｒｅ prevіous")!;
 * assert.equal(view.text, "<IMPORTANT> ignore previous");
 * // "ignore" in the view is the fullwidth word in the original.
 * assert.deepEqual(originalSpan(view, 12, 18), [18, 24]);
 * assert.equal(fold("Adds two numbers."), undefined);
 * ```
 */
export function fold(text: string): View | undefined {
  if (PLAIN.test(text)) return undefined;
  const from: number[] = [];
  const to: number[] = [];
  const view: View = { text: "", from, to };
  const put = (s: string, start: number, end: number) => {
    for (let i = 0; i < s.length; i++) {
      from.push(start);
      to.push(end);
    }
    view.text += s;
  };
  for (const m of text.matchAll(UNIT)) {
    const start = m.index!;
    const end = start + m[0].length;
    const hex = m[1] ?? m[5] ?? m[6] ?? m[7];
    const code = hex !== undefined ? parseInt(hex, 16) : m[2] !== undefined ? Number(m[2]) : -1;
    let decoded: string;
    if (code >= 0) decoded = code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
    else if (m[3] !== undefined) decoded = NAMED[m[3]];
    else if (m[0].startsWith("%") && m[0].length > 1) decoded = percentDecoded(m[0]);
    else decoded = m[0];
    for (const c of decoded) put(letter(c), start, end);
  }
  return view.text === text ? undefined : view;
}

/** Characters already read by {@link letter} (text repeats its letters; bounded). */
const LETTERS = new Map<string, string>();

/** One character as fold reads it: hidden -> nothing, spaces -> " ", look-alikes -> ASCII. */
function letter(c: string): string {
  if (c.charCodeAt(0) < 0x80) return c === "\t" ? " " : LINE.test(c) ? "\n" : c;
  let read = LETTERS.get(c);
  if (read === undefined) {
    if (LETTERS.size >= 4096) LETTERS.clear();
    LETTERS.set(c, read = unmemoized(c));
  }
  return read;
}

function unmemoized(c: string): string {
  if (HIDDEN.test(c)) return "";
  if (SPACE.test(c)) return " ";
  if (LINE.test(c)) return "\n";
  const alike = ASCII_OF.get(c);
  if (alike) return alike;
  const plain = c.normalize("NFKD").replace(MARK, "");
  return [...plain].map((p) => ASCII_OF.get(p) ?? p).join("");
}

function percentDecoded(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    return run.replace(/%([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
  }
}

/**
 * Words a rotated instruction holds (ignor, disregard, instruction, secret,
 * password, token, credential, ssh, tell, user, rotated): without one, the
 * rotation is not read.
 */
const ROTATED_WORDS = /vtabe|qvfertneq|vafgehpgvba|frperg|cnffjbeq|gbxra|perqragvny|ffu|gryy|hfre/i;

/**
 * The string with ASCII letters rotated by 13 (ROT13), each unit from the
 * same unit of the original; `undefined` when the rotation holds none of the
 * words an instruction or a request for secrets needs.
 */
export function rot13(text: string): View | undefined {
  if (!ROTATED_WORDS.test(text)) return undefined;
  const rotated = text.replace(/[A-Za-z]/g, (c) => {
    const base = c <= "Z" ? 65 : 97;
    return String.fromCharCode((c.charCodeAt(0) - base + 13) % 26 + base);
  });
  return { text: rotated };
}

/**
 * An identifier's words (`ignore_previous-instructions` and
 * `ignorePreviousInstructions` as `ignore previous instructions`), or
 * `undefined` when it has no separator or inner capital.
 */
export function splitName(name: string): View | undefined {
  if (!/[_\-.][A-Za-z]|[a-z][A-Z]/.test(name)) return undefined;
  const from: number[] = [];
  const to: number[] = [];
  let text = "";
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (/[A-Z]/.test(c) && i > 0 && /[a-z]/.test(name[i - 1])) {
      text += " ";
      from.push(i);
      to.push(i);
    }
    text += /[_\-.]/.test(c) ? " " : c;
    from.push(i);
    to.push(i + 1);
  }
  return { text, from, to };
}

/** A span of a view as a span of the original. */
export function originalSpan(view: View, start: number, end: number): [number, number] {
  if (view.text.length === 0) return [0, 0];
  const s = Math.min(start, view.text.length - 1);
  const e = Math.max(s, Math.min(end, view.text.length) - 1);
  return [view.from?.[s] ?? s, view.to?.[e] ?? e + 1];
}
