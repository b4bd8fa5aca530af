/**
 * KDL v2 text -> a node tree with source positions, via `npm:kdljs`.
 *
 * Two things are added on top of the parser:
 *
 * 1. The boolean compatibility shim of the reference (umbra/mcp-beaver):
 *    before parsing, the literal substrings `required=true`, `required=false`,
 *    `raw=true` and `raw=false` become their `#true`/`#false` forms anywhere in
 *    the text. Positions reported afterwards are mapped back to the original
 *    text, so a column is the column the author sees.
 * 2. Node positions. kdljs returns plain nodes without locations; this module
 *    wraps the parser's `node` rule (chevrotain, `coreRule`) to record the
 *    first token of every node. If a kdljs update ever changes that shape, the
 *    wrap is skipped and diagnostics fall back to node paths.
 *
 * @module
 */
import { parse as kdlParse } from "kdljs";
// @ts-types="./kdljs_parser.d.ts"
import { parser as kdlParser } from "kdljs/src/parser/kdl.js";

/** A scalar KDL value (kdljs maps numbers to JS numbers). */
export type KdlValue = string | number | boolean | null;

/** A position in the source text, 1-based. */
export interface SourcePosition {
  line: number;
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

interface ParsedNode {
  name: string;
  values: KdlValue[];
  properties: Record<string, KdlValue>;
  children: ParsedNode[];
  [POSITION]?: number;
}

const POSITION = Symbol("weir.kdl.offset");

// Record each node's first-token offset. See the module doc for why and how.
(() => {
  const rule = (kdlParser as unknown as Record<string, unknown>).node as
    | { coreRule?: (...args: unknown[]) => unknown }
    | undefined;
  if (!rule || typeof rule.coreRule !== "function") return;
  const original = rule.coreRule;
  rule.coreRule = function (this: { LA(n: number): { startOffset: number } }, ...args) {
    const offset = this.LA(1)?.startOffset;
    const node = original.apply(this, args) as ParsedNode | undefined;
    if (node && typeof node === "object" && Number.isFinite(offset)) node[POSITION] = offset;
    return node;
  };
})();

/**
 * Parse KDL v2 text, applying the reference's boolean shim.
 *
 * @param text the file's contents
 * @returns the top-level nodes, or the syntax errors (with positions in `text`)
 */
export function parseKdl(text: string): { nodes: KdlNode[] } | { errors: KdlSyntaxError[] } {
  const insertions: number[] = []; // offsets in the original text where a "#" was inserted
  const shimmed = text.replace(SHIM, (_match, key: string, value: string, offset: number) => {
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

  let result: ReturnType<typeof kdlParse>;
  try {
    result = kdlParse(shimmed);
  } catch (error) {
    // The parser recurses per nesting level and per token: a pathological file
    // exhausts its stack instead of producing a syntax error.
    const why = error instanceof RangeError
      ? "it nests too deeply or holds a token too large for the KDL parser"
      : `the KDL parser failed (${error instanceof Error ? error.name : "error"})`;
    return { errors: [{ message: `cannot parse this file: ${why}` }] };
  }
  if (result.errors.length > 0 || !result.output) {
    const errors = result.errors.map((e) => {
      const token = (e as { token?: { startOffset?: number; image?: string } }).token;
      const at = token?.startOffset;
      return {
        message: describeSyntaxError(e.message, token?.image),
        position: Number.isFinite(at) ? position(at) : locate(lines, text.length),
      };
    });
    return { errors: errors.length > 0 ? errors : [{ message: "the file is not valid KDL" }] };
  }
  const convert = (node: ParsedNode): KdlNode => ({
    name: node.name,
    values: node.values,
    properties: { ...node.properties },
    children: node.children.map(convert),
    position: position(node[POSITION]),
  });
  return { nodes: (result.output as unknown as ParsedNode[]).map(convert) };
}

function describeSyntaxError(message: string, image: string | undefined): string {
  const expected = /Expecting token of type --> (\w+) <-- but found --> '(.*)' <--/s.exec(message);
  if (expected) {
    const [, want, found] = expected;
    if (found === "" || image === "") {
      return want === "RightBrace"
        ? 'unexpected end of file: a block opened with "{" is never closed'
        : `unexpected end of file (expected ${want})`;
    }
    return `expected ${want} but found ${JSON.stringify(found)}`;
  }
  if (message.startsWith("unexpected character")) {
    const shown = image ? JSON.stringify(image.slice(0, 20)) : "a character";
    return `cannot read ${shown} here: an unterminated string, or a character KDL does not allow`;
  }
  const noViable = /but found: '(.*)'/s.exec(message);
  if (noViable) {
    return `unexpected ${JSON.stringify(noViable[1])} (in KDL v2, booleans are #true/#false, ` +
      `and strings with spaces or / ( ) { } ; = # must be quoted)`;
  }
  return message.split("\n")[0];
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
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
