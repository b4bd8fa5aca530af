/**
 * backtrackingOf(): one analysis per pattern source. serve checks each
 * `pattern=` site, then lint's server build and the served one check every
 * schema's patterns again; the analysis (scslre) is pure, so a repeated
 * source gets the first verdict, equal to a fresh analysis.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { backtrackingOf, prepareBacktracking } from "../../src/mcp/backtracking.ts";
import { analyseBacktracking } from "../../src/mcp/backtracking_analysis.ts";

const calls = new Map<string, number>();
// Loaded as lint loads it (`all`): "(a)+" alone is proved without it.
await prepareBacktracking(
  ["(a)+"],
  () =>
    Promise.resolve({
      analyseBacktracking: (source: string) => {
        calls.set(source, (calls.get(source) ?? 0) + 1);
        return analyseBacktracking(source);
      },
    }),
  true,
);

const PATTERNS = [
  "^(a+)+$",
  "^([a-z0-9]+-?)+$",
  "^[a-z0-9]+(-[a-z0-9]+)*-?$",
  "^([0-9]+(\\.[0-9]+)?|([0-9]+(ms|s|m|h|d|w|y))+)$",
  "^(a|a)*$",
  "^(\\d+)*x$",
  "^(ab)+$",
  "^([a-z]+[0-9]+)+$",
];

Deno.test("backtrackingOf(): a pattern is analysed once; every later verdict equals a fresh analysis (property)", () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PATTERNS), { minLength: 1, maxLength: 20 }), (seq) => {
      for (const source of seq) {
        assert.deepEqual(backtrackingOf(source), analyseBacktracking(source), source);
      }
    }),
    { numRuns: 100 },
  );
  for (const source of PATTERNS) assert.equal(calls.get(source), 1, source);
  assert.equal(backtrackingOf("^(a+)+$")?.kind, "exponential");
  assert.equal(backtrackingOf("^[a-z0-9]+(-[a-z0-9]+)*-?$"), undefined);
});

Deno.test("backtrackingOf(): past its bound the memo starts again, and verdicts stay right", () => {
  for (let i = 0; i < 600; i++) backtrackingOf(`^(x${i})+$`);
  assert.deepEqual(backtrackingOf("^(a+)+$"), analyseBacktracking("^(a+)+$"));
  assert.ok((calls.get("^(a+)+$") ?? 0) <= 2);
  assert.throws(() => Object.assign(backtrackingOf("^(a+)+$")!, { kind: "polynomial" }), TypeError);
});
