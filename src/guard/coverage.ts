/**
 * The coverage envelope: every grant-backed result is
 * `{"coverage": {...}, "result": ...}`, coverage first, in both the text
 * content and `structuredContent`.
 *
 * Coverage leads because a harness that bounds a tool result keeps its front
 * and drops its tail: a caveat serialized last is the first thing lost. It says
 * how large the answer was and names every array in it with its length, so a
 * model can tell "3 issues" from "the first 3 issues".
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";

/** Results larger than this many bytes are flagged `over_budget`. */
export const BUDGET_BYTES = 8192;
/** How deep through nested objects arrays are looked for. */
export const ITEMS_DEPTH = 4;

/** What coverage says about one result. */
export interface Coverage {
  /** Whether weir cut the result (never, today: it refuses oversize answers instead). */
  truncated: boolean;
  /** Size of the upstream body in bytes (or of the encoded result when the body was empty). */
  bytes: number;
  /** `bytes` is over {@link BUDGET_BYTES}. */
  over_budget: boolean;
  /** Every array found, by dotted path (`result` for a top-level array), with its length. */
  items?: Record<string, number>;
  /** `extract as="pdf-text"`: pages extracted of the document's total. */
  pages?: { shown: number; total: number };
  /** `extract as="feed-entries"`: entries kept of the feed's total. */
  entries?: { shown: number; total: number };
}

/** The envelope around a result. */
export interface Envelope {
  /** What the result holds and whether it was cut: read before the result. */
  coverage: Coverage;
  /** The upstream answer (parsed JSON, or text for raw responses). */
  result: unknown;
}

/**
 * Build the envelope for a decoded result.
 *
 * Arrays are found by descending through objects (never into array elements)
 * up to {@link ITEMS_DEPTH} levels; a top-level array is reported as `result`.
 *
 * @param result the decoded upstream answer
 * @param bytes the upstream body's size in bytes
 */
export function envelope(result: unknown, bytes: number): Envelope {
  const items: Record<string, number> = {};
  if (Array.isArray(result)) {
    items.result = result.length;
  } else {
    collect(result, "", 1, items);
  }
  const size = bytes > 0 ? bytes : new TextEncoder().encode(JSON.stringify(result)).length;
  const coverage: Coverage = { truncated: false, bytes: size, over_budget: size > BUDGET_BYTES };
  if (Object.keys(items).length > 0) coverage.items = items;
  return { coverage, result };
}

/** A key written as it is in an item path. */
const PLAIN_KEY = /^[^.[\]"]+$/;

function collect(value: unknown, prefix: string, depth: number, out: Record<string, number>) {
  if (depth > ITEMS_DEPTH || typeof value !== "object" || value === null || Array.isArray(value)) {
    return;
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const child = (value as Record<string, unknown>)[key];
    // A key that itself contains a dot (or a bracket, or nothing) is quoted,
    // so two different arrays never share a path: a["b.c"] vs a.b.c.
    const step = PLAIN_KEY.test(key) ? key : `[${JSON.stringify(key)}]`;
    const path = prefix ? (step.startsWith("[") ? prefix + step : `${prefix}.${step}`) : step;
    if (Array.isArray(child)) out[path] = child.length;
    else collect(child, path, depth + 1, out);
  }
}

const SHOWN_OF_TOTAL: JsonObject = {
  type: "object",
  properties: {
    shown: { type: "integer", minimum: 0 },
    total: { type: "integer", minimum: 0 },
  },
  required: ["shown", "total"],
  additionalProperties: false,
};

/**
 * The JSON Schema (2020-12) of {@link Envelope}. Not listed per tool (it is the same for every
 * grant, so the server's `instructions` describe it once); the OpenAPI export uses it.
 */
export const ENVELOPE_SCHEMA: JsonObject = {
  type: "object",
  properties: {
    coverage: {
      type: "object",
      description: "What this result does and does not contain. Read it before the result.",
      properties: {
        truncated: { type: "boolean" },
        bytes: { type: "integer", minimum: 0 },
        over_budget: { type: "boolean" },
        items: { type: "object", additionalProperties: { type: "integer", minimum: 0 } },
        pages: SHOWN_OF_TOTAL,
        entries: SHOWN_OF_TOTAL,
      },
      required: ["truncated", "bytes", "over_budget"],
      additionalProperties: false,
    },
    result: { description: "The upstream answer, decoded." },
  },
  required: ["coverage", "result"],
  additionalProperties: false,
};
