/**
 * Text from an OpenAPI document written into KDL: as a quoted string, as one
 * comment line, and whether a name survives being written unchanged. Every
 * character a guardfile refuses (controls other than line breaks and tab,
 * bidirectional marks, a byte-order mark, lone surrogates) is dropped; line
 * breaks never reach a comment line. Pure.
 *
 * @module
 */

/** A KDL v2 quoted string. Characters a guardfile refuses (controls, bidi overrides) are dropped. */
export function str(text: string): string {
  const clean = text.replace(DISALLOWED, "").replace(LONE_SURROGATE, "");
  return `"${
    clean.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t")
  }"`;
}

/**
 * Whether {@link str} writes `text` as it is: no control character (other than
 * a line break or tab), bidirectional override or lone surrogate is dropped.
 * A name that fails this would reach the wire as another name.
 */
export function writtenExactly(text: string): boolean {
  return text.replace(DISALLOWED, "").replace(LONE_SURROGATE, "") === text;
}

// deno-lint-ignore no-control-regex
const DISALLOWED =
  /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029]/g;

/** One comment line: line breaks and refused characters out. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").replace(DISALLOWED, "").replace(LONE_SURROGATE, "").trim();
}

/** A UTF-16 surrogate without its pair: not a character, refused by KDL. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
