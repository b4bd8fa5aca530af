/**
 * Declarations: how a change to each field of the surface model
 * (src/surface/model.ts) moves what an agent can do, and the walk that
 * derives `weir diff`'s verdicts from them.
 *
 * A declaration is one of three shapes, each with a reason (`why`):
 * - a {@link Leaf}: a rule that judges a change of the whole value (`widens`
 *   on any change, `larger widens`, `presence narrows`, ...);
 * - {@link Fields}: an object whose every field has its own declaration (the
 *   type {@link Declared} requires one per field, so a field added to the
 *   model without one does not compile);
 * - a {@link List}: items matched by a key, with what an item added or
 *   removed does and a declaration for each item's fields.
 *
 * The walk ({@link compareBy}) never skips a difference: a key present in a
 * value but missing from its {@link Fields} is reported as a widening ("not
 * declared"), so an undeclared field is at worst a loud false alarm, never a
 * silent miss. Pure.
 *
 * @module
 */
import { Concealed } from "../surface/concealed.ts";
import type { Access } from "../surface/model.ts";

/** How a change moves what an agent can do. */
export type Effect = "widen" | "narrow" | "change";

/** Which way changes to a field can move the surface: the declaration's summary. */
export type Moves = "wider" | "narrower" | "either" | "neither";

/** One change found, before it is given its tool. */
export interface Found {
  /** How it moves what an agent can do. */
  effect: Effect;
  /** What changed, in words. */
  what: string;
}

/** Where the walk is: the label words before a field's own, and what the walk knows around it. */
export interface Context {
  /** Words naming the enclosing value (`input "q"`, `pin on query org`), or `""`. */
  label: string;
  /** Both tools being compared have a known input schema (then it states their value rules). */
  schemasKnown: boolean;
  /**
   * The `pattern`s the advertised schemas carry for `restrict` nodes, by
   * argument (either side's): the restrict rule compares those, so the
   * schema's comparison leaves them out.
   */
  restricted?: Record<string, string[]>;
  /**
   * Both tools proxy a wrapped MCP server's tool: read-only and destructive
   * are hints the file or the server states about one fixed operation.
   */
  hinted?: boolean;
  /**
   * Either tool is a sql grant that reads on the guardfile's word (its
   * statement calls a function `only-reads` states only reads): what the
   * file states, not what weir proved.
   */
  statedRead?: boolean;
  /** Both tools' read or write, for rules that judge one part of it by the rest. */
  access?: { old: Access; next: Access };
  /** Both tools' destructive mark. */
  destructive?: { old: boolean; next: boolean };
}

/** A rule that judges a change of a whole value. */
export interface Leaf<V> {
  /** Which way a change can move the surface. */
  moves: Moves;
  /** Why, in words. */
  why: string;
  /** The changes between two different values (either may be absent). */
  compare(old: V | undefined, next: V | undefined, at: Context): Found[];
  /** Set on {@link ignored}: never compared (a key, the file's path). */
  ignored?: true;
  /** Set on {@link inSchema}: compared by its own rule only when no input schema is known. */
  inSchema?: true;
}

/** An object whose fields are declared one by one. */
export interface Fields<V> {
  /** Why the object is walked field by field. */
  why: string;
  /** A declaration per field. */
  fields: Declared<V>;
  /** Label words for the object's fields (from the enclosing label and the object). */
  label?: (at: Context, old: V | undefined, next: V | undefined) => string;
  /** When the object appears or disappears as a whole (absent: each field is compared with nothing). */
  presence?: Leaf<V>;
}

/** A list whose items are matched by a key. */
export interface List<I> {
  /** Why items are matched and compared. */
  why: string;
  /** The key two versions of an item share. */
  key(item: I): string;
  /** What an item only NEW has does. */
  added(item: I, at: Context): Found[];
  /** What an item only OLD had does. */
  removed(item: I, at: Context): Found[];
  /**
   * What NEW holding none of the items OLD held does, said instead of each
   * item's `removed` (the last inbound token gone opens the server).
   */
  emptied?(gone: I[], at: Context): Found[];
  /** The label for one item's fields. */
  label(item: I, at: Context): string;
  /** A declaration per field of an item. */
  each: Declared<I>;
  /**
   * Items OLD and NEW hold under different keys that are one item (a renamed
   * tool), with the change the pairing itself is; compared as one item.
   */
  pair?(gone: I[], come: I[]): { old: I; next: I; found: Found[] }[];
  /** Compare two versions as a whole instead of field by field when this returns changes. */
  whole?(old: I, next: I, at: Context): Found[] | undefined;
  /** Context for an item's fields. */
  context?(old: I, next: I, at: Context): Context;
}

/** A declaration of a value of type V. */
export type Declaration<V> =
  | Leaf<V>
  | (V extends readonly (infer I)[] ? List<I> : never)
  | (V extends Concealed ? never
    : V extends readonly unknown[] ? never
    : V extends object ? Fields<V>
    : never);

/** One declaration for every field of T (optional fields included). */
export type Declared<T> = { [K in keyof T]-?: Declaration<NonNullable<T[K]>> };

/** Whether a declaration is a {@link List}. */
export function isList<V>(d: Declaration<V>): d is Declaration<V> & List<unknown> {
  return "each" in d;
}

/** Whether a declaration is {@link Fields}. */
export function isFields<V>(d: Declaration<V>): d is Declaration<V> & Fields<V> {
  return "fields" in d;
}

/** Deep equality of model values (a {@link Concealed} by its text). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Concealed || b instanceof Concealed) {
    return a instanceof Concealed && b instanceof Concealed && a.same(b);
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => same(x, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length &&
    ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * Compare two values by their declaration.
 * @returns every change, in declaration order
 */
export function compareBy<V>(
  declaration: Declaration<V>,
  old: V | undefined,
  next: V | undefined,
  at: Context,
): Found[] {
  if (same(old, next)) return [];
  if (isList(declaration)) {
    return compareList(declaration as List<unknown>, old as unknown[], next as unknown[], at);
  }
  if (isFields(declaration)) {
    if ((old === undefined || next === undefined) && declaration.presence) {
      return declaration.presence.compare(old, next, at);
    }
    const inner = declaration.label ? { ...at, label: declaration.label(at, old, next) } : at;
    return compareFields(declaration.fields, old, next, inner);
  }
  return (declaration as Leaf<V>).compare(old, next, at);
}

/** Compare two objects field by field; a field with no declaration widens. */
export function compareFields<V>(
  fields: Declared<V>,
  old: V | undefined,
  next: V | undefined,
  at: Context,
): Found[] {
  const o = (old ?? {}) as Record<string, unknown>;
  const n = (next ?? {}) as Record<string, unknown>;
  const out: Found[] = [];
  const declared = fields as Record<string, Declaration<unknown>>;
  for (const key of new Set([...Object.keys(declared), ...Object.keys(o), ...Object.keys(n)])) {
    if (same(o[key], n[key])) continue;
    const d = declared[key];
    if (!d) {
      out.push({
        effect: "widen",
        what: `${prefix(at)}${key} changed, and the surface model declares nothing for it ` +
          `(counted as a widening)`,
      });
      continue;
    }
    out.push(...compareBy(d, o[key], n[key], at));
  }
  return out;
}

function compareList<I>(
  d: List<I>,
  old: I[] | undefined,
  next: I[] | undefined,
  at: Context,
): Found[] {
  const before = new Map((old ?? []).map((i) => [d.key(i), i]));
  const after = new Map((next ?? []).map((i) => [d.key(i), i]));
  const gone = [...before.values()].filter((i) => !after.has(d.key(i)));
  const come = [...after.values()].filter((i) => !before.has(d.key(i)));
  const out: Found[] = [];
  for (const p of d.pair?.(gone, come) ?? []) {
    gone.splice(gone.indexOf(p.old), 1);
    come.splice(come.indexOf(p.next), 1);
    out.push(...p.found, ...compareItem(d, p.old, p.next, at));
  }
  for (const i of come) out.push(...d.added(i, at));
  if (d.emptied && gone.length > 0 && (next ?? []).length === 0) out.push(...d.emptied(gone, at));
  else for (const i of gone) out.push(...d.removed(i, at));
  for (const [key, n] of after) {
    const o = before.get(key);
    if (o !== undefined) out.push(...compareItem(d, o, n, at));
  }
  return out;
}

/** Compare two versions of one list item (by `whole`, else field by field). */
export function compareItem<I>(d: List<I>, old: I, next: I, at: Context): Found[] {
  if (same(old, next)) return [];
  const inner = d.context ? d.context(old, next, at) : at;
  const whole = d.whole?.(old, next, inner);
  if (whole) return whole;
  return compareFields(d.each, old, next, { ...inner, label: d.label(next, inner) });
}

/** The label and a separator, for messages. */
export function prefix(at: Context): string {
  return at.label === "" ? "" : `${at.label}: `;
}

// ---- leaf rules ----

/** Show a value in a message (a concealed one as "a literal (not shown)"). */
export type Show<V> = (v: V | undefined) => string;

const json: Show<unknown> = (v) => v === undefined ? "none" : JSON.stringify(v);

/** Any change widens (what the value names may reach more). */
export function widens<V>(why: string, name: string, show: Show<V> = json): Leaf<V> {
  return {
    moves: "wider",
    why,
    compare: (
      o,
      n,
      at,
    ) => [{ effect: "widen", what: `${prefix(at)}${name} ${show(o)} -> ${show(n)}` }],
  };
}

/** A change moves nothing an agent can reach, but a reviewer should see it. */
export function changes<V>(why: string, name: string, show: Show<V> = json): Leaf<V> {
  return {
    moves: "either",
    why,
    compare: (o, n, at) => [{
      effect: "change",
      what: `${prefix(at)}${name} ${show(o)} -> ${show(n)}`,
    }],
  };
}

/** Not compared at all (the path a file was read from). */
export function ignored<V>(why: string): Leaf<V> {
  return { moves: "neither", why, compare: () => [], ignored: true };
}

/** A number: larger widens, smaller narrows; added narrows, removed widens (no bound). */
export function largerWidens(why: string, name: string, unit = ""): Leaf<number> {
  return numberRule(why, name, unit, (o, n) => n > o);
}

/** A number: smaller widens (a lower bound, a window), larger narrows; removed widens. */
export function smallerWidens(why: string, name: string, unit = ""): Leaf<number> {
  return numberRule(why, name, unit, (o, n) => n < o);
}

/** A number that widens when removed, or when `wider(old, next)` says so; else it narrows. */
function numberRule(
  why: string,
  name: string,
  unit: string,
  wider: (o: number, n: number) => boolean,
): Leaf<number> {
  return {
    moves: "either",
    why,
    compare: (o, n, at) => {
      const show = (v: number | undefined) => v === undefined ? "none" : `${v}${unit}`;
      const widened = n === undefined || (o !== undefined && wider(o, n));
      return [{
        effect: widened ? "widen" : "narrow",
        what: `${prefix(at)}${name} ${show(o)} -> ${show(n)}`,
      }];
    },
  };
}

/** A boolean: `true` widens (e.g. no longer gated), `false` narrows. */
export function trueWidens(why: string, on: string, off: string): Leaf<boolean> {
  return booleanRule(why, "widen", "narrow", on, off);
}

/** A boolean: `true` narrows (e.g. redacted, read-only), `false` widens. */
export function trueNarrows(why: string, on: string, off: string): Leaf<boolean> {
  return booleanRule(why, "narrow", "widen", on, off);
}

function booleanRule(
  why: string,
  turnedOn: Effect,
  turnedOff: Effect,
  on: string,
  off: string,
): Leaf<boolean> {
  return {
    moves: "either",
    why,
    compare: (o, n, at) =>
      Boolean(o) === Boolean(n)
        ? []
        : n
        ? [{ effect: turnedOn, what: `${prefix(at)}${on}` }]
        : [{ effect: turnedOff, what: `${prefix(at)}${off}` }],
  };
}

/** A set of names: a member added widens (a tool a caller may call), one removed narrows. */
export function growthWidens(
  why: string,
  plus: (names: string) => string,
  minus: (names: string) => string,
): Leaf<string[]> {
  return setRule(why, "widen", "narrow", plus, minus);
}

/** A set of names: a member added narrows (a scope a token must carry), one removed widens. */
export function growthNarrows(
  why: string,
  plus: (names: string) => string,
  minus: (names: string) => string,
): Leaf<string[]> {
  return setRule(why, "narrow", "widen", plus, minus);
}

function setRule(
  why: string,
  added: Effect,
  removed: Effect,
  plus: (names: string) => string,
  minus: (names: string) => string,
): Leaf<string[]> {
  return {
    moves: "either",
    why,
    compare: (o, n, at) => {
      const a = o ?? [];
      const b = n ?? [];
      const out: Found[] = [];
      const more = b.filter((x) => !a.includes(x));
      const less = a.filter((x) => !b.includes(x));
      if (more.length > 0) {
        out.push({ effect: added, what: `${prefix(at)}${plus(more.join(", "))}` });
      }
      if (less.length > 0) {
        out.push({ effect: removed, what: `${prefix(at)}${minus(less.join(", "))}` });
      }
      return out;
    },
  };
}

/** A rule written out: judged by `compare`, with its summary and reason. */
export function rule<V>(
  moves: Moves,
  why: string,
  compare: (old: V | undefined, next: V | undefined, at: Context) => Found[],
): Leaf<V> {
  return { moves, why, compare };
}

/**
 * A value rule the advertised input schema also states: compared there (and
 * reported once) when both tools' schemas are known, else by `rule` itself.
 */
export function inSchema<V>(leaf: Leaf<V>): Leaf<V> {
  return {
    moves: leaf.moves,
    why: `${leaf.why} (stated in the advertised input schema, compared there when it is known)`,
    compare: (o, n, at) => at.schemasKnown ? [] : leaf.compare(o, n, at),
    inSchema: true,
  };
}
