/**
 * A cheap proof that a pattern cannot backtrack exponentially, so the
 * analysis (npm `scslre`, src/mcp/backtracking_analysis.ts: a megabyte of
 * code and some 300 million instructions to load) is needed only for the
 * patterns this cannot prove. It answers `true` (proved) or `false`
 * (unknown: ask the analysis, as before); never "exponential".
 *
 * ## The argument
 *
 * V8's engine matches by backtracking: for each start index it walks the
 * paths of the expression's automaton depth first, so a failing input costs
 * about as many steps as the automaton has partial paths on that input.
 * Take the position automaton (Glushkov's): one state per character atom
 * (a literal, a class, `.` or an escape such as `\d`, entered on that set),
 * a transition for each way the expression lets one atom follow another
 * ("routes": a concatenation's joint, a quantifier's repeat). The number of
 * paths on inputs of length n grows exponentially exactly when some state q
 * has two different cycles reading the same word (Weber and Seidl's
 * criterion, "EDA"), and otherwise stays below a polynomial in n. That is
 * decided on the product automaton: states are pairs (p, q), a step reads
 * one character both atoms accept; exponential iff one strongly connected
 * component holds a pair (q, q) and a pair (p, p') with p != p'. Every
 * state is checked, reachable or not, and every state counts as accepting
 * (the engine pays for dead ends too), so nothing is missed by trimming.
 *
 * Proved only when the paths the engine walks are those paths, one for one:
 *
 * - no construct outside this model: a backreference, a lookaround, `\p{…}`
 *   outside a class, a modifier group `(?i:…)`, a lone surrogate escape, or
 *   anything this reader does not know gives "unknown";
 * - each subexpression matches the empty string in at most one way: an
 *   alternation with two alternatives that can be empty, or a quantified
 *   part that can be empty (`(a?)*`), gives "unknown" (two empty routes are
 *   two paths the automaton above does not see: `^(x(?:|)y)*$`, and
 *   `^(x(a?)+y)*$`, whose `+` may match empty once before `a`, are
 *   exponential in V8 and both slip past scslre);
 * - no two routes join the same pair of atoms (`(a+)+`: the inner and the
 *   outer repeat both lead from `a` to `a`): "unknown";
 * - a bounded repeat `{n,m}` with m > 1 of one character atom with no
 *   route to itself (`[0-9]{4}`, not `(?:a+){2}`) is read as its m copies,
 *   exactly (each count of iterations is one path); of anything else (or
 *   past 16 copies) as unbounded
 *   (`{n,}`): every path of the copies maps to a distinct path of the loop
 *   (the route taken fixes which copy is entered), so the count can only
 *   grow, and a repeat such as `(a|a){1,30}` (2^30 paths on 30 characters,
 *   acyclic written out) is not proved;
 * - anchors and `\b`/`\B` are read as empty: they only cut paths;
 * - character sets are exact for literals, ranges, `.`, `\d\w\s` and their
 *   negations (held against V8 by tests/mcp/backtracking_proof_test.ts); a
 *   `\p{…}` inside a class counts as every character (any character could
 *   be shared), negated or not: a set is never smaller than the engine's.
 *
 * Flags: `u` only, as guardfile and schema patterns are compiled. Past
 * {@link MAX_ATOMS} atoms, {@link MAX_PAIRS} product pairs or 64 nested
 * groups it gives up ("unknown"), so its own cost stays small on any input
 * and its reader cannot run out of stack.
 *
 * @module
 */

/** Atoms past which the proof gives up (its product has their square of states). */
export const MAX_ATOMS = 96;
/** Product pairs visited past which the proof gives up. */
export const MAX_PAIRS = 4096;
/** The deepest nesting of groups read. */
const MAX_DEPTH = 64;
/** The longest bounded repeat of one character atom read as its copies (longer: as a loop). */
const MAX_COPIES = 16;

const MAX_CODE_POINT = 0x10ffff;

/** A set of code points: sorted, disjoint, non-adjacent `[from, to]` pairs, flattened. */
type CharSet = number[];

/** A subexpression's position automaton: its atoms' indexes. */
interface Part {
  nullable: boolean;
  first: number[];
  last: number[];
}

/** Raised inside the reader for anything the proof does not cover. */
class Unknown extends Error {}

/**
 * Whether `source` (ECMA-262, `u` flag) provably cannot backtrack
 * exponentially; `false` means unknown (the full analysis decides).
 * @example
 * ```ts
 * import { provedNotExponential } from "./backtracking_proof.ts";
 * if (!provedNotExponential("^([0-9]+(ms|s|m|h|d|w|y))+$")) throw new Error("not proved");
 * if (provedNotExponential("^([a-z0-9]+-?)+$")) throw new Error("proved an exponential one");
 * if (provedNotExponential("^(a|a)*$")) throw new Error("proved an exponential one");
 * ```
 */
export function provedNotExponential(source: string): boolean {
  let automaton;
  try {
    automaton = new Reader(source).read();
  } catch (error) {
    if (error instanceof Unknown) return false;
    throw error;
  }
  return !ambiguousCycle(automaton.sets, automaton.follow);
}

/** Exponential paths (see the module docs): a product component with (q, q) and (p, p'), p != p'. */
function ambiguousCycle(sets: CharSet[], follow: number[][]): boolean {
  const n = sets.length;
  // Tarjan's strongly connected components over the pairs reachable from a diagonal pair.
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  let counter = 0;
  let found = false;
  let budget = MAX_PAIRS;
  const meets = (a: number, b: number) =>
    a === b ? sets[a].length > 0 : intersects(sets[a], sets[b]);
  const successors = (pair: number): number[] => {
    const p = Math.floor(pair / n), q = pair % n;
    const next: number[] = [];
    for (const a of follow[p]) for (const b of follow[q]) if (meets(a, b)) next.push(a * n + b);
    return next;
  };
  const visit = (root: number) => {
    // Iterative, so a long pattern cannot overflow the stack.
    const work: [number, number[], number][] = [];
    const open = (pair: number) => {
      if (--budget < 0) throw new Unknown();
      index.set(pair, counter);
      low.set(pair, counter++);
      stack.push(pair);
      onStack.add(pair);
      work.push([pair, successors(pair), 0]);
    };
    open(root);
    while (work.length > 0 && !found) {
      const frame = work[work.length - 1];
      const [pair, next] = frame;
      if (frame[2] < next.length) {
        const to = next[frame[2]++];
        if (!index.has(to)) open(to);
        else if (onStack.has(to)) low.set(pair, Math.min(low.get(pair)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent)!, low.get(pair)!));
      }
      if (low.get(pair) !== index.get(pair)) continue;
      let diagonal = false, apart = false, member;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        if (Math.floor(member / n) === member % n) diagonal = true;
        else apart = true;
      } while (member !== pair);
      if (diagonal && apart) found = true;
    }
  };
  try {
    for (let q = 0; q < n && !found; q++) if (!index.has(q * n + q)) visit(q * n + q);
  } catch (error) {
    if (error instanceof Unknown) return true;
    throw error;
  }
  return found;
}

/** Whether two sets share a code point. */
function intersects(a: CharSet, b: CharSet): boolean {
  let i = 0, j = 0;
  while (i < a.length && j < b.length) {
    if (a[i + 1] < b[j]) i += 2;
    else if (b[j + 1] < a[i]) j += 2;
    else return true;
  }
  return false;
}

/** The union of sets, normalised. */
function union(...sets: CharSet[]): CharSet {
  const pairs: [number, number][] = [];
  for (const set of sets) for (let i = 0; i < set.length; i += 2) pairs.push([set[i], set[i + 1]]);
  pairs.sort((x, y) => x[0] - y[0]);
  const out: CharSet = [];
  for (const [from, to] of pairs) {
    if (out.length > 0 && from <= out[out.length - 1] + 1) {
      out[out.length - 1] = Math.max(out[out.length - 1], to);
    } else out.push(from, to);
  }
  return out;
}

/** Every code point not in `set` (which is normalised). */
function complement(set: CharSet): CharSet {
  const out: CharSet = [];
  let next = 0;
  for (let i = 0; i < set.length; i += 2) {
    if (set[i] > next) out.push(next, set[i] - 1);
    next = set[i + 1] + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  return out;
}

const EVERY: CharSet = [0, MAX_CODE_POINT];
const DIGIT: CharSet = [0x30, 0x39];
const WORD: CharSet = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
/** ECMA-262 WhiteSpace and LineTerminator, as V8 matches `\s` with `u`. */
const SPACE: CharSet = [
  0x09,
  0x0d,
  0x20,
  0x20,
  0xa0,
  0xa0,
  0x1680,
  0x1680,
  0x2000,
  0x200a,
  0x2028,
  0x2029,
  0x202f,
  0x202f,
  0x205f,
  0x205f,
  0x3000,
  0x3000,
  0xfeff,
  0xfeff,
];
/** `.` without the `s` flag: all but the line terminators. */
const DOT: CharSet = complement([0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]);
const CLASS_ESCAPES: Record<string, CharSet> = {
  d: DIGIT,
  D: complement(DIGIT),
  w: WORD,
  W: complement(WORD),
  s: SPACE,
  S: complement(SPACE),
};
const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
/** What `\` may escape as itself with `u` (outside a class; a class adds `-`). */
const SYNTAX = new Set("^$\\.*+?()[]{}|/");

/** A recursive-descent reader building the position automaton as it goes. */
class Reader {
  readonly sets: CharSet[] = [];
  readonly follow: number[][] = [];
  #at = 0;
  #depth = 0;

  constructor(readonly source: string) {}

  /** The automaton: each atom's set and the atoms that may follow it. */
  read(): { sets: CharSet[]; follow: number[][] } {
    this.#alternation();
    if (this.#at < this.source.length) throw new Unknown();
    return { sets: this.sets, follow: this.follow };
  }

  #peek(): string {
    return this.source[this.#at] ?? "";
  }

  #alternation(): Part {
    const branches = [this.#sequence()];
    while (this.#peek() === "|") {
      this.#at++;
      branches.push(this.#sequence());
    }
    if (branches.length === 1) return branches[0];
    // Two alternatives that can both match empty are two empty routes.
    if (branches.filter((b) => b.nullable).length > 1) throw new Unknown();
    return {
      nullable: branches.some((b) => b.nullable),
      first: branches.flatMap((b) => b.first),
      last: branches.flatMap((b) => b.last),
    };
  }

  #sequence(): Part {
    let whole: Part = { nullable: true, first: [], last: [] };
    while (this.#at < this.source.length && this.#peek() !== "|" && this.#peek() !== ")") {
      const next = this.#quantified();
      this.#join(whole.last, next.first);
      whole = {
        nullable: whole.nullable && next.nullable,
        first: whole.nullable ? [...whole.first, ...next.first] : whole.first,
        last: next.nullable ? [...whole.last, ...next.last] : next.last,
      };
    }
    return whole;
  }

  /** Add the routes from each of `from` to each of `to`; a second route between one pair is unknown. */
  #join(from: number[], to: number[]): void {
    for (const p of from) {
      const next = this.follow[p];
      for (const q of to) {
        if (next.includes(q)) throw new Unknown();
        next.push(q);
      }
    }
  }

  #quantified(): Part {
    const before = this.sets.length;
    const atom = this.#atom();
    const bounds = this.#bounds();
    if (bounds === undefined) return atom;
    if (this.#peek() === "?") this.#at++; // lazy: the same paths, in another order
    const [min, max] = bounds;
    if (max === 0) return { nullable: true, first: [], last: [] };
    // A part that can match empty, repeated, has more than one empty route.
    if (atom.nullable) throw new Unknown();
    if (max <= 1) return { nullable: min === 0, first: atom.first, last: atom.last };
    // One character atom (`[0-9]{4}`): its copies, exactly (one path per count).
    // Not an atom with a route to itself (`(?:a+){2}` is `a+a+`, not `aa`):
    // that goes on as a loop, where the second route from `a` to `a` is unknown.
    if (this.sets.length === before + 1 && this.follow[before].length === 0 && max <= MAX_COPIES) {
      return this.#copies(min, max);
    }
    this.#join(atom.last, atom.first);
    return { nullable: min === 0, first: atom.first, last: atom.last };
  }

  /** The last atom read, repeated `min` to `max` times: `x{2,3}` as `xx(x)?`. */
  #copies(min: number, max: number): Part {
    const first = this.sets.length - 1;
    const last = min <= 1 ? [first] : [];
    for (let copy = 2; copy <= max; copy++) {
      const index = this.#position(this.sets[first]).first[0];
      this.#join([index - 1], [index]);
      if (copy >= min) last.push(index);
    }
    return { nullable: min === 0, first: [first], last };
  }

  /** `[min, max]` of a quantifier at the reader, or undefined. */
  #bounds(): [number, number] | undefined {
    const c = this.#peek();
    if (c === "*" || c === "+" || c === "?") {
      this.#at++;
      return c === "*" ? [0, Infinity] : c === "+" ? [1, Infinity] : [0, 1];
    }
    if (c !== "{") return undefined;
    const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.#at, this.#at + 40));
    if (!match) throw new Unknown();
    this.#at += match[0].length;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
    return [min, max];
  }

  #atom(): Part {
    const c = this.#peek();
    switch (c) {
      case "^":
      case "$":
        this.#at++;
        return { nullable: true, first: [], last: [] };
      case "(":
        return this.#group();
      case "[":
        return this.#position(this.#class());
      case ".":
        this.#at++;
        return this.#position(DOT);
      case "\\":
        return this.#escapeAtom();
      case "*":
      case "+":
      case "?":
      case "{":
      case "}":
      case "]":
      case ")":
      case "":
        throw new Unknown();
      default:
        return this.#position(point(this.#codePoint()));
    }
  }

  /** A new atom entered on `set`. */
  #position(set: CharSet): Part {
    if (this.sets.length >= MAX_ATOMS) throw new Unknown();
    this.sets.push(set);
    this.follow.push([]);
    const index = this.sets.length - 1;
    return { nullable: false, first: [index], last: [index] };
  }

  /** The literal code point at the reader (a surrogate pair is one), advancing past it. */
  #codePoint(): number {
    const point = this.source.codePointAt(this.#at)!;
    this.#at += point > 0xffff ? 2 : 1;
    return point;
  }

  #group(): Part {
    // Deeper nesting gives up rather than recurse (the engine itself allows thousands).
    if (++this.#depth > MAX_DEPTH) throw new Unknown();
    this.#at++; // (
    if (this.#peek() === "?") {
      const head = this.source.slice(this.#at, this.#at + 3);
      if (head.startsWith("?:")) this.#at += 2;
      else if (/^\?<[A-Za-z_$]/.test(head)) {
        const close = this.source.indexOf(">", this.#at);
        if (close < 0) throw new Unknown();
        this.#at = close + 1;
      } else throw new Unknown(); // lookaround, modifiers
    }
    const inner = this.#alternation();
    if (this.#peek() !== ")") throw new Unknown();
    this.#at++;
    this.#depth--;
    return inner;
  }

  #escapeAtom(): Part {
    const c = this.source[this.#at + 1] ?? "";
    if (c === "b" || c === "B") {
      this.#at += 2;
      return { nullable: true, first: [], last: [] };
    }
    return this.#position(this.#escape(false));
  }

  /** The set of an escape at the reader (`\` included), in a class or not. */
  #escape(inClass: boolean): CharSet {
    this.#at++; // backslash
    const c = this.#peek();
    this.#at++;
    if (Object.hasOwn(CLASS_ESCAPES, c)) return CLASS_ESCAPES[c];
    if (Object.hasOwn(CONTROL_ESCAPES, c)) return point(CONTROL_ESCAPES[c]);
    if (SYNTAX.has(c) || (inClass && c === "-")) return point(c.codePointAt(0)!);
    if (inClass && c === "b") return point(8);
    if (c === "0" && !/[0-9]/.test(this.#peek())) return point(0);
    if (c === "c" && /[A-Za-z]/.test(this.#peek())) {
      return point(this.source.charCodeAt(this.#at++) % 32);
    }
    if (c === "x") return point(this.#hex(/^[0-9A-Fa-f]{2}/));
    if (c === "u") {
      const value = this.#peek() === "{"
        ? this.#hex(/^\{([0-9A-Fa-f]+)\}/)
        : this.#hex(/^[0-9A-Fa-f]{4}/);
      // A surrogate escape may pair with the next one: not modelled.
      if (value >= 0xd800 && value <= 0xdfff) throw new Unknown();
      return point(value);
    }
    // \p{…} (only in a class, see #class), backreferences, \k<name>, anything else.
    throw new Unknown();
  }

  #hex(shape: RegExp): number {
    const match = shape.exec(this.source.slice(this.#at, this.#at + 12));
    if (!match) throw new Unknown();
    this.#at += match[0].length;
    const value = parseInt(match[1] ?? match[0], 16);
    if (value > MAX_CODE_POINT) throw new Unknown();
    return value;
  }

  /** A class `[…]`: its set, never smaller than the engine's (see the module docs). */
  #class(): CharSet {
    this.#at++; // [
    const negated = this.#peek() === "^";
    if (negated) this.#at++;
    const parts: CharSet[] = [];
    let unbounded = false; // a \p{…}: any character, for all this reader knows
    while (this.#peek() !== "]") {
      if (this.#at >= this.source.length) throw new Unknown();
      const from = this.#classAtom();
      if (from === "property") {
        unbounded = true;
        continue;
      }
      if (this.#peek() === "-" && this.source[this.#at + 1] !== "]") {
        this.#at++;
        const to = this.#classAtom();
        // A range's ends are single characters with `u` (the engine refused the rest).
        if (to === "property" || from.length !== 2 || from[0] !== from[1] || to.length !== 2) {
          throw new Unknown();
        }
        if (to[0] !== to[1] || to[0] < from[0]) throw new Unknown();
        parts.push([from[0], to[0]]);
      } else parts.push(from);
    }
    this.#at++; // ]
    if (unbounded) return EVERY;
    const set = union(...parts);
    return negated ? complement(set) : set;
  }

  #classAtom(): CharSet | "property" {
    if (this.#peek() !== "\\") {
      const code = this.#codePoint();
      return point(code);
    }
    const c = this.source[this.#at + 1] ?? "";
    if (c === "p" || c === "P") {
      const close = this.source.indexOf("}", this.#at);
      if (this.source[this.#at + 2] !== "{" || close < 0) throw new Unknown();
      this.#at = close + 1;
      return "property";
    }
    return this.#escape(true);
  }
}

function point(code: number): CharSet {
  return [code, code];
}
