/**
 * Whether one set of `restrict` globs admits no value another does not:
 * the languages of globs (src/guardfile/glob.ts) compared exactly, as
 * automata over the characters the globs name. A `restrict` is nodes that
 * must all match, each a list of globs of which one must match; `weir diff`
 * asks whether every value NEW's nodes all admit is admitted by each of OLD's
 * nodes (then NEW is as narrow).
 *
 * The comparison walks pairs of states of both sides (each a set of glob
 * positions); past {@link MAX_STATES} it gives up and answers "not within",
 * which diff reports as a widening (never a missed one). Pure.
 *
 * @module
 */
import { type GlobAtom, parseGlob } from "../guardfile/glob.ts";

/** The most state pairs one comparison visits before it answers "not within". */
export const MAX_STATES = 20_000;

const SLASH = 0x2f;

/** A node: its globs' elements, one of which must match the whole value. */
type Node = GlobAtom[][];

/** Positions reached in each glob of a node, as `glob:position` keys. */
type State = Set<string>;

/**
 * Whether every value that all of `nodes` admit (each node: one of its
 * globs matches) is admitted by `target` (one of its globs matches).
 * Malformed globs (never loaded) answer false.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nodesWithin } from "./glob_cover.ts";
 * assert.equal(nodesWithin([["demo-a*"]], ["demo-*"]), true);
 * assert.equal(nodesWithin([["demo-**"]], ["demo-*"]), false);
 * // "demo-x" passes both nodes but not demo-*-x (which needs "demo--x" at least)
 * assert.equal(nodesWithin([["demo-*"], ["*-x"]], ["demo-*-x"]), false);
 * assert.equal(nodesWithin([["demo-*"], ["*-x"]], ["demo-*x"]), true);
 * ```
 */
export function nodesWithin(
  nodes: readonly (readonly string[])[],
  target: readonly string[],
): boolean {
  let inner: Node[];
  let outer: Node;
  try {
    inner = nodes.map((globs) => globs.map(parseGlob));
    outer = target.map(parseGlob);
  } catch {
    return false;
  }
  const alphabet = representatives([...inner.flat(), ...outer]);
  const start = (node: Node) => closure(node, new Set(node.map((_, g) => `${g}:0`)));
  const first = { inner: inner.map(start), outer: start(outer) };
  const seen = new Set<string>([keyOf(first.inner, first.outer)]);
  const queue = [first];
  while (queue.length > 0) {
    const { inner: states, outer: state } = queue.shift()!;
    if (states.every((s, k) => accepts(inner[k], s)) && !accepts(outer, state)) return false;
    for (const c of alphabet) {
      const next = states.map((s, k) => step(inner[k], s, c));
      // A value no inner node can still match is admitted by none: nothing to compare.
      if (next.some((s) => s.size === 0)) continue;
      const out = step(outer, state, c);
      const key = keyOf(next, out);
      if (seen.has(key)) continue;
      if (seen.size >= MAX_STATES) return false;
      seen.add(key);
      queue.push({ inner: next, outer: out });
    }
  }
  return true;
}

function keyOf(states: State[], state: State): string {
  const one = (s: State) => [...s].sort().join(",");
  return `${states.map(one).join("|")}#${one(state)}`;
}

/** Whether an element matches one code point. */
function matches(atom: GlobAtom, c: number): boolean {
  switch (atom.kind) {
    case "char":
      return atom.codePoint === c;
    case "one":
    case "star":
      return c !== SLASH;
    case "any":
      return true;
    case "class": {
      const named = atom.ranges.some(([lo, hi]) => c >= lo && c <= hi);
      return atom.negate ? !named && c !== SLASH : named;
    }
  }
}

/** The positions reachable without reading a character (past `*` and `**`, which may match nothing). */
function closure(node: Node, state: State): State {
  const out = new Set(state);
  for (const key of state) {
    const [g, p] = key.split(":").map(Number);
    let at = p;
    while (at < node[g].length && (node[g][at].kind === "star" || node[g][at].kind === "any")) {
      out.add(`${g}:${++at}`);
    }
  }
  return out;
}

function step(node: Node, state: State, c: number): State {
  const next = new Set<string>();
  for (const key of state) {
    const [g, p] = key.split(":").map(Number);
    const atom = node[g][p];
    if (atom === undefined || !matches(atom, c)) continue;
    const repeats = atom.kind === "star" || atom.kind === "any";
    next.add(`${g}:${repeats ? p : p + 1}`);
  }
  return closure(node, next);
}

function accepts(node: Node, state: State): boolean {
  return [...state].some((key) => {
    const [g, p] = key.split(":").map(Number);
    return p === node[g].length;
  });
}

/**
 * One code point of each class of characters the globs cannot tell apart:
 * the alphabet is cut at every character and range bound the globs name, and
 * at `/`; surrogates (never alone in well-formed text) are left out.
 */
function representatives(globs: GlobAtom[][]): number[] {
  const cuts = new Set<number>([0, SLASH, SLASH + 1]);
  for (const atom of globs.flat()) {
    if (atom.kind === "char") {
      cuts.add(atom.codePoint);
      cuts.add(atom.codePoint + 1);
    } else if (atom.kind === "class") {
      for (const [lo, hi] of atom.ranges) {
        cuts.add(lo);
        cuts.add(hi + 1);
      }
    }
  }
  const sorted = [...cuts].filter((c) => c <= 0x10ffff).sort((a, b) => a - b);
  const out: number[] = [];
  sorted.forEach((lo, i) => {
    const hi = (sorted[i + 1] ?? 0x110000) - 1;
    // A class of characters that lies in the surrogates has no other member to stand for it.
    const pick = lo >= 0xd800 && lo <= 0xdfff ? (hi > 0xdfff ? 0xe000 : undefined) : lo;
    if (pick !== undefined) out.push(pick);
  });
  return out;
}
