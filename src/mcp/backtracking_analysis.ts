/**
 * The super-linear backtracking analysis itself (npm `scslre`, the detector
 * of eslint-plugin-regexp's `no-super-linear-backtracking`, over an
 * `@eslint-community/regexpp` AST). Loaded by URL from
 * src/mcp/backtracking.ts only when a pattern may need it, so the serve path
 * does not read it otherwise.
 *
 * @module
 */
import { analyse } from "scslre";
import { RegExpParser } from "@eslint-community/regexpp";
import type { Backtracking } from "./backtracking.ts";

const parser = new RegExpParser({ ecmaVersion: 2025 });

/**
 * How `source` (ECMA-262, `u` flag) backtracks on a failing input, or
 * `undefined` when it backtracks at most linearly (or cannot be parsed: the
 * caller's own syntax check words that).
 */
export function analyseBacktracking(source: string): Backtracking | undefined {
  let literal;
  try {
    literal = parser.parseLiteral(`/${source.replaceAll("/", "\\/")}/u`);
  } catch {
    return undefined;
  }
  const { reports } = analyse(literal, {
    maxReports: 4,
    reportTypes: { Move: false, Self: true, Trade: true },
  });
  if (reports.length === 0) return undefined;
  const worst = reports.find((r) => r.exponential) ?? reports[0];
  let fixed: string | undefined;
  try {
    fixed = worst.fix()?.source;
  } catch {
    fixed = undefined;
  }
  return {
    kind: worst.exponential ? "exponential" : "polynomial",
    repeated: worst.character.literal.source,
    ...(fixed === undefined ? {} : { fixed }),
  };
}
