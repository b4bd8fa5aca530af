/**
 * What changed between two input schemas of one tool, as an agent feels it:
 * a change **widens** when NEW admits an argument OLD refused (a new input, a
 * type or enum value added, a bound loosened or dropped, a pattern dropped or
 * changed, an input no longer required, an object opened), and **narrows** in
 * the reverse case. A change can do both (a pattern replaced by another).
 *
 * Reads the JSON Schema 2020-12 the guard advertises and enforces
 * (`grantInputSchema` in `src/guard/tools.ts`), so what it reports is what is
 * enforced. Pure.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
// Keywords that annotate and admit nothing more or less (JSON Schema 2020-12 section 9).
import { ANNOTATIONS } from "../mcp/fast_schema.ts";

/** How a change moves what an agent can do. */
export type Effect = "widen" | "narrow" | "change";

/** One change, in words. */
export interface SchemaChange {
  effect: Effect;
  /** e.g. `input "per_page": maximum 50 -> 100`. */
  what: string;
}

type Schema = JsonObject;

/**
 * Compare two object schemas (a tool's `inputSchema`, or a nested object).
 * @param label how to name the object in messages (`""` for the top level)
 */
export function diffObjectSchema(old: Schema, next: Schema, label = ""): SchemaChange[] {
  const out: SchemaChange[] = [];
  const oldProps = (old.properties ?? {}) as Record<string, Schema>;
  const newProps = (next.properties ?? {}) as Record<string, Schema>;
  const oldReq = new Set((old.required ?? []) as string[]);
  const newReq = new Set((next.required ?? []) as string[]);
  const name = (k: string) => `input "${label}${k}"`;
  for (const k of Object.keys(newProps)) {
    if (!Object.hasOwn(oldProps, k)) {
      out.push({
        effect: "widen",
        what: `${name(k)} added (${typeWords(newProps[k])}${newReq.has(k) ? ", required" : ""})`,
      });
    }
  }
  for (const k of Object.keys(oldProps)) {
    if (!Object.hasOwn(newProps, k)) out.push({ effect: "narrow", what: `${name(k)} removed` });
  }
  for (const k of Object.keys(newProps)) {
    if (!Object.hasOwn(oldProps, k)) continue;
    if (oldReq.has(k) && !newReq.has(k)) {
      out.push({ effect: "widen", what: `${name(k)} no longer required` });
    }
    if (!oldReq.has(k) && newReq.has(k)) {
      out.push({ effect: "narrow", what: `${name(k)} now required` });
    }
    out.push(...diffValueSchema(oldProps[k], newProps[k], name(k), `${label}${k}.`));
  }
  if (label === "") out.push(...otherKeywords(old, next, "the arguments"));
  const oldOpen = old.additionalProperties !== false;
  const newOpen = next.additionalProperties !== false;
  const obj = label === "" ? "the arguments" : `input "${label.slice(0, -1)}"`;
  if (!oldOpen && newOpen) out.push({ effect: "widen", what: `${obj} admit any extra key` });
  if (oldOpen && !newOpen) out.push({ effect: "narrow", what: `${obj} admit no extra key` });
  return out;
}

/** Compare the schemas of one value (a property, or array items). */
function diffValueSchema(old: Schema, next: Schema, name: string, nested: string): SchemaChange[] {
  const out: SchemaChange[] = [];
  const oldTypes = typesOf(old);
  const newTypes = typesOf(next);
  const added = newTypes === "any"
    ? (oldTypes === "any" ? [] : ["any"])
    : oldTypes === "any"
    ? []
    : newTypes.filter((t) => !oldTypes.includes(t));
  const removed = oldTypes === "any"
    ? (newTypes === "any" ? [] : ["any"])
    : newTypes === "any"
    ? []
    : oldTypes.filter((t) => !newTypes.includes(t));
  if (added.length > 0 || removed.length > 0) {
    const text = `${name}: type ${fmtTypes(oldTypes)} -> ${fmtTypes(newTypes)}`;
    if (added.length > 0) out.push({ effect: "widen", what: text });
    else out.push({ effect: "narrow", what: text });
  }
  // enum
  const oe = old.enum as unknown[] | undefined;
  const ne = next.enum as unknown[] | undefined;
  if (oe && !ne) {
    out.push({ effect: "widen", what: `${name}: enum ${fmt(oe)} removed (any value)` });
  }
  if (!oe && ne) out.push({ effect: "narrow", what: `${name}: now one of ${fmt(ne)}` });
  if (oe && ne) {
    const plus = ne.filter((v) => !oe.some((o) => o === v));
    const minus = oe.filter((v) => !ne.some((n) => n === v));
    if (plus.length > 0) out.push({ effect: "widen", what: `${name}: enum adds ${fmt(plus)}` });
    if (minus.length > 0) out.push({ effect: "narrow", what: `${name}: enum drops ${fmt(minus)}` });
  }
  for (const key of ["minimum", "minLength", "minItems"]) {
    out.push(...bound(old, next, key, "low", name));
  }
  for (const key of ["maximum", "maxLength", "maxItems"]) {
    out.push(...bound(old, next, key, "high", name));
  }
  const op = old.pattern as string | undefined;
  const np = next.pattern as string | undefined;
  if (op !== undefined && np === undefined) {
    out.push({ effect: "widen", what: `${name}: pattern ${JSON.stringify(op)} removed` });
  } else if (op === undefined && np !== undefined) {
    out.push({ effect: "narrow", what: `${name}: pattern ${JSON.stringify(np)} added` });
  } else if (op !== np) {
    out.push({
      effect: "widen",
      what: `${name}: pattern ${JSON.stringify(op)} -> ${JSON.stringify(np)} (may admit values ` +
        `the old one refused)`,
    });
  }
  const oi = old.items as Schema | undefined;
  const ni = next.items as Schema | undefined;
  if (oi && ni) out.push(...diffValueSchema(oi, ni, `${name} items`, nested));
  else if (oi && !ni && hasType(next, "array")) {
    out.push({ effect: "widen", what: `${name}: items of any type (was ${typeWords(oi)})` });
  } else if (!oi && ni && hasType(old, "array")) {
    out.push({ effect: "narrow", what: `${name}: items now ${typeWords(ni)}` });
  }
  out.push(...otherKeywords(old, next, name));
  const objectish = hasType(old, "object") && hasType(next, "object");
  if (objectish && (old.properties || next.properties)) {
    if (old.properties && !next.properties) {
      out.push({ effect: "widen", what: `${name}: any object (was declared fields)` });
    } else if (!old.properties && next.properties) {
      out.push({ effect: "narrow", what: `${name}: declared fields only (was any object)` });
    } else {
      out.push(...diffObjectSchema(old, next, nested));
    }
  }
  return out;
}

function bound(
  old: Schema,
  next: Schema,
  key: string,
  side: "low" | "high",
  name: string,
): SchemaChange[] {
  const o = old[key] as number | undefined;
  const n = next[key] as number | undefined;
  if (o === n) return [];
  const text = `${name}: ${key} ${o ?? "none"} -> ${n ?? "none"}`;
  const looser = n === undefined || (o !== undefined && (side === "low" ? n < o : n > o));
  return [{ effect: looser ? "widen" : "narrow", what: text }];
}

function typesOf(s: Schema): string[] | "any" {
  if (s.type === undefined) return "any";
  return (Array.isArray(s.type) ? s.type : [s.type]).map(String).sort();
}

function hasType(s: Schema, t: string): boolean {
  const types = typesOf(s);
  return types === "any" || types.includes(t);
}

function fmtTypes(t: string[] | "any"): string {
  return t === "any" ? "any" : t.join("|");
}

function typeWords(s: Schema): string {
  const t = typesOf(s);
  return t === "any" ? "any type" : t.filter((x) => x !== "null").join("|");
}

function fmt(values: unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

/** Keywords compared above (or by the object comparison). */
const COMPARED = new Set([
  "type",
  "enum",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "pattern",
  "items",
  "properties",
  "required",
  "additionalProperties",
]);

/**
 * Every other keyword that differs: an annotation is a change in words; any
 * other (`allOf`, `anyOf`, `not`, `const`, `format`, `multipleOf`, ...) may
 * admit what the old one refused, and weir does not reason about it: counted
 * as a widening, so it is never missed.
 */
function otherKeywords(old: Schema, next: Schema, name: string): SchemaChange[] {
  const out: SchemaChange[] = [];
  const keys = new Set([...Object.keys(old), ...Object.keys(next)]);
  for (const key of [...keys].sort()) {
    if (COMPARED.has(key)) continue;
    if (JSON.stringify(old[key]) === JSON.stringify(next[key])) continue;
    out.push(
      ANNOTATIONS.has(key) ? { effect: "change", what: `${name}: ${key} changed` } : {
        effect: "widen",
        what: `${name}: ${key} ${
          old[key] === undefined ? "added" : next[key] === undefined ? "removed" : "changed"
        } (weir does not tell whether it admits more: counted as a widening)`,
      },
    );
  }
  return out;
}
