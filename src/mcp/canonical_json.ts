/**
 * Canonical JSON: objects with keys sorted by UTF-16 code units (as RFC 8785
 * sorts them), arrays in order, strings and numbers as `JSON.stringify`
 * writes them, no whitespace, `undefined` members left out. Two values that
 * differ only in the order of their keys have the same text; any other
 * difference shows. What weir hashes into fingerprints (a wrapped tool's
 * definition, the served surface).
 *
 * @module
 */

/**
 * Canonical JSON text of a JSON value (see the module doc).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalJson } from "./canonical_json.ts";
 * assert.equal(canonicalJson({ b: [1, { d: 2, c: 3 }], a: "x" }), '{"a":"x","b":[1,{"c":3,"d":2}]}');
 * ```
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).filter((k) =>
      (value as Record<string, unknown>)[k] !== undefined
    ).sort();
    return `{${
      keys.map((k) =>
        `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`
      )
        .join(",")
    }}`;
  }
  return JSON.stringify(value) ?? "null";
}
