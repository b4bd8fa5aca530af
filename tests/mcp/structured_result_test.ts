/**
 * `structuredResult` (src/mcp/results.ts) lets `cleanResult` skip its walk of
 * a result whose JSON text shows it clean and within the depth bound. Over
 * generated values (strings with every kind of character cleanText changes,
 * keys such as `__proto__`, exact numbers as `JSON.rawJSON`, nesting around
 * the bound) the result that comes out is, value and bytes, the one the walk
 * gives for the same result built by hand.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { cleanResult, MAX_RESULT_DEPTH, structuredResult } from "../../src/mcp/results.ts";
import { rawJSON } from "../../src/mcp/text.ts";
import type { JsonObject } from "../../src/mcp/jsonrpc.ts";
import type { CallToolResult } from "../../src/mcp/types.ts";

/** The same result, built by hand: the core walks it. */
function byHand(value: JsonObject): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom("\u001b[2J", "\ud800", "a\udc00b", "\u0085", "\u007f", "\b\f", "tab\tnl\n", ""),
);
const key = fc.oneof(text, fc.constantFrom("__proto__", "constructor", "toString", "result"));
const leaf = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom("12345678901234567890", "1.0", "-0", "1e400").map((n) => rawJSON(n)),
);
const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("json"), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie("json")), { maxLength: 4 }).map(toObject),
  ),
}));

/** An object with these entries as own data properties (a `__proto__` key stays a key). */
function toObject(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) {
    Object.defineProperty(out, k, {
      value: v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** `inner` inside `levels` arrays, under one key. */
function nested(levels: number, inner: unknown): JsonObject {
  let v = inner;
  for (let i = 0; i < levels; i++) v = [v];
  return { deep: v } as JsonObject;
}

/** What a result carries (its mark, a symbol key, is not sent). */
const fields = (r: CallToolResult) => Object.fromEntries(Object.entries(r));
function same(value: JsonObject): void {
  const made = structuredResult(value);
  assert.deepEqual(fields(made), fields(byHand(value)));
  const out = cleanResult(made, "t");
  const walked = cleanResult(byHand(value), "t");
  assert.deepEqual(fields(out), fields(walked));
  assert.equal(JSON.stringify(out), JSON.stringify(walked));
}

Deno.test("a structured result leaves the core as the walked one would, for any value", () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(key, json), { maxLength: 6 }), (entries) => {
      same(toObject(entries) as JsonObject);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("a structured result at the depth bound leaves the core as the walked one would", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: MAX_RESULT_DEPTH - 12, max: MAX_RESULT_DEPTH + 12 }),
      fc.oneof(leaf, fc.constant([]), fc.constant({})),
      (levels, inner) => same(nested(levels, inner)),
    ),
    { numRuns: 400 },
  );
  // The walk refuses past the bound (an error result): so does the structured one.
  const deep = cleanResult(structuredResult(nested(MAX_RESULT_DEPTH, 1)), "t");
  assert.equal(deep.isError, true);
});

Deno.test("a dirty structured result is cleaned like any other", () => {
  const out = cleanResult(structuredResult({ name: "\u001b[2Jx", "\u0085": ["\ud800"] }), "t");
  assert.deepEqual(out.structuredContent, { name: "x", "\ufffd": ["\ufffd"] });
});

Deno.test("the shortest value nested past the bound is walked, and refused", () => {
  // `{"":[[...]]}` nests one level per two characters after a 5-character frame: 255
  // arrays put the innermost at the result's depth 256, in 515 characters, the
  // fewest any too-deep value takes (the bound's margin: a text under 512 is marked).
  let v: unknown = [];
  for (let i = 1; i < MAX_RESULT_DEPTH - 1; i++) v = [v];
  const value = { "": v } as JsonObject;
  const made = structuredResult(value);
  const text = (made.content[0] as { text: string }).text;
  assert.equal(text.length, 2 * MAX_RESULT_DEPTH + 3);
  assert.equal(cleanResult(made, "t").isError, true);
  assert.equal(cleanResult(byHand(value), "t").isError, true);
  // One level less is within the bound, and comes out as it went in.
  same({ "": (v as unknown[])[0] } as JsonObject);
});
