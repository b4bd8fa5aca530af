/**
 * KDL v2 text -> a node tree with source positions, via `npm:@bgotink/kdl`
 * (a KDL v2 parser that passes the specification's test suite and keeps the
 * location of every node and entry).
 *
 * Three things are added on top of the parser:
 *
 * 1. The boolean compatibility shim of the reference (umbra/mcp-beaver):
 *    before parsing, `required=true`, `required=false`, `raw=true` and
 *    `raw=false` become their `#true`/`#false` forms outside strings and
 *    comments only (inside a quoted string they are text, sent as written).
 *    Positions reported afterwards are mapped back to the original text, so a
 *    column is the column the author sees.
 * 2. Strictness the plain KDL data model would hide: a property given twice
 *    on one node is an error (KDL lets the last one win silently, so the file
 *    and the wire would disagree), and so is an integer too large to be held
 *    exactly (beyond ±(2^53 - 1)), which would otherwise be rounded.
 * 3. Properties are own data properties of their record even when named like
 *    an `Object.prototype` member (`__proto__`, `constructor`).
 * 4. A string holding a control character other than tab and line breaks
 *    (ESC, BEL, NUL, C1, ...) is an error at its entry.
 *
 * Why this parser: `npm:kdljs` (the first choice) builds a chevrotain grammar at
 * import, about 250-320 ms of every start-up on this project's machines, and
 * reports no positions; `@bgotink/kdl` imports in about 3 ms.
 *
 * @module
 */
import { type Document, getLocation, InvalidKdlError, type Node, parse } from "@bgotink/kdl";

/** A scalar KDL value (numbers are JS numbers, always exact). */
export type KdlValue = string | number | boolean | null;

/** A position in the source text, 1-based. */
export interface SourcePosition {
  /** Line, from 1. */
  line: number;
  /** Column in characters, from 1. */
  column: number;
}

/** One parsed node, with where it starts. */
export interface KdlNode {
  name: string;
  values: KdlValue[];
  properties: Record<string, KdlValue>;
  children: KdlNode[];
  /** Where the node's name (or type annotation) starts; absent if unknown. */
  position?: SourcePosition;
}

/** A syntax error, at a position in the original text when one is known. */
export interface KdlSyntaxError {
  message: string;
  position?: SourcePosition;
}

const SHIM = /\b(required|raw)=(true|false)\b/g;

/**
 * Control characters a guardfile string may not hold (written with a KDL
 * escape such as `\u{1b}`): C0 except tab, LF and CR, DEL and C1. What weir
 * serves from the file (descriptions, reasons, instructions, prompts) must be
 * clean text, and describe and lint must show what a client will see.
 */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** How deep nodes may nest before the file is refused (a guardfile nests 4-5 levels). */
const MAX_DEPTH = 64;

/**
 * Parse KDL v2 text, applying the reference's boolean shim.
 *
 * @param text the file's contents
 * @returns the top-level nodes, or the syntax errors (with positions in `text`)
 */
export function parseKdl(text: string): { nodes: KdlNode[] } | { errors: KdlSyntaxError[] } {
  const insertions: number[] = []; // offsets in the original text where a "#" was inserted
  // Scanned only when the shim may apply (most files never write `required=true`).
  let code: [number, number][] | undefined;
  const inCode = (offset: number) =>
    (code ??= codeSpans(text)).some(([from, to]) => offset >= from && offset < to);
  const shimmed = text.replace(SHIM, (match, key: string, value: string, offset: number) => {
    if (!inCode(offset)) return match;
    insertions.push(offset + key.length + 1);
    return `${key}=#${value}`;
  });
  const lines = lineStarts(text);
  const toOriginal = (offset: number): number => {
    let shift = 0;
    for (const at of insertions) {
      if (at + shift < offset) shift++;
      else break;
    }
    return offset - shift;
  };
  const position = (offset: number | undefined): SourcePosition | undefined =>
    offset === undefined || !Number.isFinite(offset)
      ? undefined
      : locate(lines, toOriginal(offset));

  let document: Document;
  try {
    document = parse(shimmed, { as: "document", storeLocations: true });
  } catch (error) {
    if (error instanceof InvalidKdlError) {
      const found = [...error.flat()];
      const first = Math.min(...found.map((e) => e.start ? toOriginal(e.start.offset) : Infinity));
      const open = stringOverLineBreak(text);
      if (open !== undefined && open <= first) {
        return {
          errors: [{
            message: `this string runs past the end of its line: add its closing quote (a ` +
              `string of several lines is written between ${'"'.repeat(3)} and ${'"'.repeat(3)})`,
            position: locate(lines, open),
          }],
        };
      }
      const errors = found.map((e) => ({
        message: describeSyntaxError(e.message),
        position: position(e.start?.offset) ?? locate(lines, text.length),
      }));
      return { errors: errors.length > 0 ? errors : [{ message: "the file is not valid KDL" }] };
    }
    // The parser recurses per nesting level: a pathological file exhausts its
    // stack instead of producing a syntax error.
    const why = error instanceof RangeError
      ? "it nests too deeply or holds a token too large for the KDL parser"
      : `the KDL parser failed (${error instanceof Error ? error.name : "error"})`;
    return { errors: [{ message: `cannot parse this file: ${why}` }] };
  }

  const errors: KdlSyntaxError[] = [];
  const convert = (node: Node, depth: number): KdlNode => {
    const at = position(getLocation(node)?.start.offset);
    const values: KdlValue[] = [];
    const properties: Record<string, KdlValue> = {};
    const seen = new Set<string>();
    for (const entry of node.entries) {
      const value = entry.getValue();
      const entryAt = position(getLocation(entry)?.start.offset) ?? at;
      if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value)) {
        errors.push({
          message: `the number ${entry.value.representation ?? value} on "${node.getName()}" ` +
            `is too large to hold exactly (beyond ±9007199254740991); write a smaller one ` +
            `or quote it as a string`,
          position: entryAt,
        });
      }
      if (typeof value === "string") {
        const control = CONTROL.exec(value);
        if (control) {
          errors.push({
            message:
              `a string on "${node.getName()}" holds the control character U+${
                control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")
              }; weir refuses control characters other than tab and line breaks in a guardfile ` +
              `(they can drive a terminal or hide text from a reviewer): remove it`,
            position: entryAt,
          });
        }
      }
      const name = entry.getName();
      if (name === null) {
        values.push(value);
        continue;
      }
      if (seen.has(name)) {
        errors.push({
          message: `property "${name}" is given more than once on "${node.getName()}"; ` +
            `give it once (KDL would silently keep only the last)`,
          position: entryAt,
        });
      }
      seen.add(name);
      Object.defineProperty(properties, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    let children: KdlNode[] = [];
    if (node.children) {
      if (depth >= MAX_DEPTH) {
        errors.push({
          message: `nodes nest deeper than ${MAX_DEPTH} levels; a guardfile never needs that`,
          position: at,
        });
      } else {
        children = node.children.nodes.map((child) => convert(child, depth + 1));
      }
    }
    return { name: node.getName(), values, properties, children, position: at };
  };
  const nodes = document.nodes.map((node) => convert(node, 1));
  return errors.length > 0 ? { errors } : { nodes };
}

/** The parser's message, made to say what to change where it can. */
function describeSyntaxError(message: string): string {
  if (/^Invalid node children at end of input/.test(message)) {
    return 'unexpected end of file: a block opened with "{" is never closed';
  }
  if (/^Unexpected EOF inside (multiline )?string/.test(message)) {
    return "a string is never closed (a missing closing quote)";
  }
  const keyword = /^Invalid keyword "(\w+)"/.exec(message);
  if (keyword) {
    return `"${keyword[1]}" is not a KDL v2 value: booleans and null are #true, #false and ` +
      `#null, and a string with spaces or / ( ) { } ; = # must be quoted`;
  }
  return message.replace(/ at \d+:\d+$/, "");
}

/**
 * Offsets where lines start. KDL v2 newlines: CRLF, CR, LF, NEL (U+0085),
 * FF (U+000C), LS (U+2028) and PS (U+2029).
 */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0d) {
      if (text.charCodeAt(i + 1) === 0x0a) i++;
      starts.push(i + 1);
    } else if (c === 0x0a || c === 0x85 || c === 0x0c || c === 0x2028 || c === 0x2029) {
      starts.push(i + 1);
    }
  }
  return starts;
}

function locate(starts: number[], offset: number): SourcePosition {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo] + 1 };
}

/**
 * The spans of `text` that are neither strings nor comments, as `[from, to)`
 * offsets: quoted strings (with escapes; multi-line with three quotes), raw
 * strings (`#"..."#`, any number of `#`), line comments and nested block
 * comments are skipped. A malformed tail is treated as code (the parser will
 * report it).
 */
function codeSpans(text: string): [number, number][] {
  return scanSpans(text).code;
}

/** KDL v2 line breaks. */
const BREAK = /[\n\r\u0085\u000c\u2028\u2029]/;

/**
 * The offset of the first quoted string (`"..."`: not raw, not triple-quoted)
 * holding a line break outside a whitespace escape (`\` then whitespace),
 * which KDL v2 forbids: almost always a missing closing quote, which the
 * parser reports only where it next trips, often lines further on.
 */
function stringOverLineBreak(text: string): number | undefined {
  for (const [from, to] of scanSpans(text).quoted) {
    // Whitespace escapes may cross lines; any other escape is two characters.
    const body = text.slice(from + 1, to).replace(/\\(?:[\s\ufeff]+|[^])/g, "");
    if (BREAK.test(body)) return from;
  }
  return undefined;
}

/** codeSpans, and the `[from, to)` of each single-quoted (not raw, not triple) string. */
function scanSpans(text: string): { code: [number, number][]; quoted: [number, number][] } {
  const spans: [number, number][] = [];
  const quoted: [number, number][] = [];
  const TRIPLE = '"'.repeat(3);
  let start = 0;
  let i = 0;
  const skip = (end: number) => {
    if (i > start) spans.push([start, i]);
    i = end;
    start = end;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === "/" && text[i + 1] === "/") {
      const end = text.slice(i).search(BREAK);
      skip(end === -1 ? text.length : i + end);
    } else if (c === "/" && text[i + 1] === "*") {
      let depth = 0;
      let j = i;
      while (j < text.length) {
        if (text[j] === "/" && text[j + 1] === "*") {
          depth++;
          j += 2;
        } else if (text[j] === "*" && text[j + 1] === "/") {
          depth--;
          j += 2;
          if (depth === 0) break;
        } else j++;
      }
      skip(j);
    } else if (c === "#" && /^#+"/.test(text.slice(i, i + 130))) {
      const hashes = /^#+/.exec(text.slice(i))![0];
      const quote = text.startsWith(TRIPLE, i + hashes.length) ? TRIPLE : '"';
      const end = text.indexOf(quote + hashes, i + hashes.length + quote.length);
      skip(end === -1 ? text.length : end + quote.length + hashes.length);
    } else if (c === '"') {
      const quote = text.startsWith(TRIPLE, i) ? TRIPLE : '"';
      let j = i + quote.length;
      while (j < text.length && !text.startsWith(quote, j)) j += text[j] === "\\" ? 2 : 1;
      if (quote === '"') quoted.push([i, Math.min(text.length, j)]);
      skip(Math.min(text.length, j + quote.length));
    } else i++;
  }
  if (start < text.length) spans.push([start, text.length]);
  return { code: spans, quoted };
}
