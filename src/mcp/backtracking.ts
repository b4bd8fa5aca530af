/**
 * Whether a `pattern` can backtrack super-linearly (ReDoS): V8's engine
 * backtracks, so `^(a+)+$` takes seconds on 30 characters and blocks the
 * event loop of the whole server. A pattern that can backtrack exponentially
 * is refused where it is loaded (a guardfile: a lint error; an upstream MCP
 * server's tool: the tool is stubbed), never at a call: the call pays nothing.
 *
 * The analysis (src/mcp/backtracking_analysis.ts, npm `scslre`) is loaded by
 * URL only when {@link prepareBacktracking} meets a pattern that may need it:
 * exponential backtracking needs a quantified group (`(...)*`, `(...)+`,
 * `(...){n,}`), which {@link mayBacktrackExponentially} finds with one scan,
 * and src/mcp/backtracking_proof.ts proves most such groups safe without it
 * (`([0-9]+(ms|s|m))+`); lint loads it always (its polynomial warnings).
 *
 * @module
 */

import { provedNotExponential } from "./backtracking_proof.ts";

/** How a pattern backtracks on a failing input. */
export interface Backtracking {
  /** `exponential`: seconds from about 30 characters; `polynomial`: slow on long values. */
  kind: "exponential" | "polynomial";
  /** The characters (a class, as regex source) the repeated parts can both match. */
  repeated: string;
  /** A pattern that matches the same strings without it, when the detector found one. */
  fixed?: string;
}

type Analyse = (source: string) => Backtracking | undefined;
let analyser: Analyse | undefined;

/**
 * Whether `source` has a quantified group (the only way to backtrack
 * exponentially). False positives (an escaped `\)` before a quantifier) cost
 * only the analysis.
 * @example
 * ```ts
 * import { mayBacktrackExponentially } from "./backtracking.ts";
 * if (!mayBacktrackExponentially("^(a+)+$")) throw new Error("missed");
 * if (mayBacktrackExponentially("^[a-z]+(?:-x)?$")) throw new Error("not quantified");
 * ```
 */
export function mayBacktrackExponentially(source: string): boolean {
  return /\)[*+{]/.test(source);
}

/** How the analysis module is imported (by URL: `lazy("backtracking_analysis")`, src/ops/lazy.ts). */
export type LoadAnalysis = () => Promise<{ analyseBacktracking: Analyse }>;

/**
 * Load the analysis when one of `sources` may need it (or always, with
 * `all`: lint, which also warns about polynomial backtracking). Await it
 * before {@link backtrackingOf} and before building a catalog whose schemas
 * hold such a pattern.
 * @param load imports src/mcp/backtracking_analysis.ts (the core imports no
 *   module by URL itself: the caller's `lazy`, so `deno compile` embeds it)
 */
export async function prepareBacktracking(
  sources: Iterable<string>,
  load: LoadAnalysis,
  all = false,
): Promise<void> {
  if (analyser) return;
  let needed = all;
  for (const source of sources) needed ||= mayBacktrackExponentially(source) && !proved(source);
  if (!needed) return;
  analyser = (await load()).analyseBacktracking;
}

/**
 * How `source` backtracks, or `undefined` when it cannot backtrack
 * exponentially (nor polynomially, when the analysis is loaded: without it,
 * a pattern src/mcp/backtracking_proof.ts proves is `undefined` unanalysed).
 * @throws RangeError when `source` has a quantified group and is over
 *   {@link MAX_ANALYSED} characters; Error when it has one and
 *   {@link prepareBacktracking} was not awaited first (a programming error).
 * @example
 * ```ts
 * import { backtrackingOf, prepareBacktracking } from "./backtracking.ts";
 * await prepareBacktracking(["^([a-z0-9]+-?)+$"], () => import("./backtracking_analysis.ts"));
 * if (backtrackingOf("^([a-z0-9]+-?)+$")?.kind !== "exponential") throw new Error("missed");
 * if (backtrackingOf("^[a-z0-9]+(-[a-z0-9]+)*-?$") !== undefined) throw new Error("refused");
 * ```
 */
export function backtrackingOf(source: string): Backtracking | undefined {
  if (!mayBacktrackExponentially(source) && !(analyser && source.length <= MAX_ANALYSED)) {
    return undefined;
  }
  if (source.length > MAX_ANALYSED) {
    throw new RangeError(`over ${MAX_ANALYSED} characters, too long to analyse`);
  }
  if (!analyser) {
    if (proved(source)) return undefined;
    throw new Error("the analysis was not loaded: await prepareBacktracking(patterns) first");
  }
  // One analysis per pattern: serve checks each pattern= site, then lint's
  // server build and the served one check each schema's patterns again.
  const analyse = analyser;
  return remembered(verdicts, source, (s) => {
    const found = analyse(s);
    return found && Object.freeze(found);
  });
}

/**
 * The analysis's verdicts by pattern source (it is pure and costs about a
 * millisecond a pattern once compiled): at most this many are kept, so
 * reloads of ever new patterns cannot grow it without bound.
 */
const MAX_VERDICTS = 256;
const verdicts = new Map<string, Backtracking | undefined>();

/**
 * Whether src/mcp/backtracking_proof.ts proves `source` free of exponential
 * backtracking (within {@link MAX_ANALYSED}: a longer one is refused
 * unchecked, as before), each source proved once.
 */
function proved(source: string): boolean {
  return source.length <= MAX_ANALYSED && remembered(proofs, source, provedNotExponential);
}
const proofs = new Map<string, boolean>();

/** `compute(source)`, kept in `memo` (emptied whole once it holds {@link MAX_VERDICTS}). */
function remembered<T>(memo: Map<string, T>, source: string, compute: (source: string) => T): T {
  if (memo.has(source)) return memo.get(source) as T;
  const value = compute(source);
  if (memo.size >= MAX_VERDICTS) memo.clear();
  memo.set(source, value);
  return value;
}

/**
 * The longest pattern analysed, in UTF-16 code units (a guardfile's own
 * bound; the analysis of 4,000 characters takes tens of milliseconds, of
 * 48,000 minutes). A longer one with a quantified group is refused unchecked.
 */
export const MAX_ANALYSED = 4096;

/**
 * The words a refusal or warning puts after the quoted pattern.
 * @example
 * ```ts
 * import { backtrackingWords } from "./backtracking.ts";
 * const words = backtrackingWords({ kind: "exponential", repeated: "a" });
 * if (!words.includes("exponentially")) throw new Error(words);
 * ```
 */
export function backtrackingWords(found: Backtracking): string {
  const fix = found.fixed === undefined ? "" : ` (such as ${JSON.stringify(found.fixed)})`;
  return found.kind === "exponential"
    ? `can backtrack exponentially: a value of about 30 ${found.repeated} ` +
      `characters that fails to match takes seconds and blocks every other call; rewrite it so ` +
      `no repeated part can match the same text two ways (e.g. ^([a-z0-9]+-?)+$ as ` +
      `^[a-z0-9]+(-[a-z0-9]+)*-?$)${fix}`
    : `can backtrack polynomially on long values of ${found.repeated} ` +
      `characters; bound the value with max-length= or rewrite the pattern${fix}`;
}

/**
 * Every `pattern` value and `patternProperties` name in a JSON value (a
 * schema or a tool list), for {@link prepareBacktracking}.
 * @example
 * ```ts
 * import { patternsIn } from "./backtracking.ts";
 * const found = patternsIn({ properties: { s: { type: "string", pattern: "^(a+)+$" } } });
 * if (found[0] !== "^(a+)+$") throw new Error(String(found));
 * ```
 */
export function patternsIn(value: unknown): string[] {
  const found: string[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item !== "object" || item === null) continue;
    if (Array.isArray(item)) {
      stack.push(...item);
      continue;
    }
    for (const [key, child] of Object.entries(item)) {
      if (key === "pattern" && typeof child === "string") found.push(child);
      else if (key === "patternProperties" && typeof child === "object" && child !== null) {
        found.push(...Object.keys(child));
      }
      stack.push(child);
    }
  }
  return found;
}
