/**
 * Reading one JSON Schema of an OpenAPI document (3.0 or 3.1, after `$ref`
 * resolution) as the one type and the value rules a guardfile input can carry:
 * `allOf` merged, `oneOf`/`anyOf` narrowed to their first branch that is not
 * `null` (every value it admits is one the document admits), `nullable` and
 * `type: [T, "null"]` read as `T`, `const` as a one-value `enum`.
 *
 * Pure: no I/O. Circular schemas are walked with a visited set.
 *
 * @module
 */
import type { ScalarType, ValueRules } from "../guardfile/model.ts";
import { isObject, type Json } from "./document.ts";

/** A schema read for the grammar: one type and what weir can enforce of it. */
export interface ReadSchema extends ValueRules {
  /** The one JSON type (`unknown` when the schema names none and implies none). */
  type: ScalarType | "array" | "object" | "unknown";
  /** Inclusive numeric bounds (an exclusive integer bound is moved by one). */
  minimum?: number;
  /** Inclusive numeric upper bound. */
  maximum?: number;
  /** Array bounds. */
  minItems?: number;
  /** Array upper bound. */
  maxItems?: number;
  /** Array items, read the same way. */
  items?: ReadSchema;
  /** Object properties, by name, read the same way. */
  properties?: [string, ReadSchema][];
  /** Required property names. */
  required?: string[];
  /** The object admits keys beyond `properties` (`additionalProperties` not false). */
  openKeys?: boolean;
  /** `readOnly: true`: a response-only property. */
  readOnly?: boolean;
  /** The schema (or one of its parents) is circular at this point. */
  circular?: boolean;
  /** What of the document's schema the read could not keep, in words. */
  lost: string[];
}

const SCALARS = new Set(["string", "integer", "number", "boolean"]);
/** Nesting weir reads before treating an object as any object (`raw=#true`). */
const MAX_DEPTH = 8;
/** `allOf` inside `allOf` weir merges before ignoring deeper members (real documents nest 2 or 3). */
const MAX_ALLOF_DEPTH = 32;

/**
 * Read a schema.
 * @param schema a JSON Schema object of the document (or anything: a non-object reads as `unknown`)
 * @param seen schemas on the current path (cycle guard); callers pass nothing
 */
export function readSchema(schema: unknown, seen: Set<object> = new Set()): ReadSchema {
  if (!isObject(schema)) return { type: "unknown", lost: [] };
  if (seen.has(schema) || seen.size >= MAX_DEPTH) {
    return { type: "object", circular: true, lost: [] };
  }
  seen = new Set(seen).add(schema);
  const merged = mergeAllOf(schema);
  const lost: string[] = [];
  const choice = (Array.isArray(merged.oneOf) ? merged.oneOf : undefined) ??
    (Array.isArray(merged.anyOf) ? merged.anyOf : undefined);
  if (choice && !hasOwnType(merged)) {
    const branches = choice.filter(isObject).filter((b) => !isNullOnly(b));
    if (branches.length === 0) return { type: "unknown", lost };
    const first = readSchema(branches[0], seen);
    if (branches.length > 1) {
      const kinds = branches.map((b) => typeName(b)).join(" | ");
      first.lost.push(
        `${Array.isArray(merged.oneOf) ? "oneOf" : "anyOf"} ${kinds} narrowed to its first`,
      );
    }
    return first;
  }
  const type = typeOf(merged);
  const out: ReadSchema = { type, lost };
  if (merged.readOnly === true) out.readOnly = true;
  if (type === "integer" || type === "number") {
    readBounds(merged, type, out);
  }
  if (type === "string") {
    if (typeof merged.pattern === "string") out.pattern = merged.pattern;
    if (isCount(merged.minLength) && merged.minLength > 0) out.minLength = merged.minLength;
    if (isCount(merged.maxLength)) out.maxLength = merged.maxLength;
  }
  const values = Array.isArray(merged.enum)
    ? merged.enum
    : merged.const !== undefined
    ? [merged.const]
    : undefined;
  if (values && type !== "boolean" && SCALARS.has(type)) {
    const kept = [...new Set(values.filter((v) => v !== null && fitsType(v, type)))] as (
      | string
      | number
    )[];
    if (kept.length > 0) out.enum = kept;
    if (kept.length < values.filter((v) => v !== null).length) {
      lost.push("enum values of another type");
    }
  }
  if (type === "array") {
    out.items = readSchema(merged.items, seen);
    if (isCount(merged.minItems)) out.minItems = merged.minItems;
    if (isCount(merged.maxItems)) out.maxItems = merged.maxItems;
  }
  if (type === "object") {
    const props = isObject(merged.properties) ? merged.properties : {};
    out.properties = Object.entries(props).map(([k, v]) => [k, readSchema(v, seen)]);
    out.required = Array.isArray(merged.required)
      ? merged.required.filter((r): r is string => typeof r === "string")
      : [];
    out.openKeys = merged.additionalProperties !== false;
  }
  return out;
}

function readBounds(s: Json, type: "integer" | "number", out: ReadSchema): void {
  const step = type === "integer" ? 1 : 0;
  if (finite(s.minimum)) out.minimum = s.minimum;
  if (finite(s.maximum)) out.maximum = s.maximum;
  // 3.1: exclusiveMinimum is a number; 3.0: a boolean beside minimum.
  if (finite(s.exclusiveMinimum)) out.minimum = s.exclusiveMinimum + step;
  if (finite(s.exclusiveMaximum)) out.maximum = s.exclusiveMaximum - step;
  if (s.exclusiveMinimum === true && out.minimum !== undefined) out.minimum += step;
  if (s.exclusiveMaximum === true && out.maximum !== undefined) out.maximum -= step;
  if (
    type === "number" &&
    (s.exclusiveMinimum !== undefined || s.exclusiveMaximum !== undefined)
  ) {
    out.lost.push("an exclusive bound, kept inclusive");
  }
  if (type === "integer") {
    if (out.minimum !== undefined) out.minimum = Math.ceil(out.minimum);
    if (out.maximum !== undefined) out.maximum = Math.floor(out.maximum);
  }
  for (const side of ["minimum", "maximum"] as const) {
    const v = out[side];
    if (v !== undefined && Math.abs(v) > Number.MAX_SAFE_INTEGER) {
      // A guardfile holds numbers exactly; a bound this far out bounds nothing real.
      out.lost.push(`${side} ${v} (beyond the numbers a guardfile holds exactly)`);
      delete out[side];
    }
  }
  if (out.minimum !== undefined && out.maximum !== undefined && out.minimum > out.maximum) {
    out.lost.push(`bounds ${out.minimum}..${out.maximum} that admit nothing`);
    delete out.minimum;
    delete out.maximum;
  }
}

/**
 * `allOf` members merged into the schema: properties and required united, the
 * rest first-wins. A member already being merged (an `allOf` that reaches
 * itself, directly or through others) adds nothing more.
 */
function mergeAllOf(schema: Json, merging: Set<object> = new Set()): Json {
  if (!Array.isArray(schema.allOf)) return schema;
  const out: Json = { ...schema };
  delete out.allOf;
  if (merging.has(schema) || merging.size >= MAX_ALLOF_DEPTH) return out;
  merging = new Set(merging).add(schema);
  for (const part of schema.allOf) {
    if (!isObject(part)) continue;
    const p = mergeAllOf(part, merging);
    for (const [k, v] of Object.entries(p)) {
      if (k === "properties" && isObject(v)) {
        out.properties = { ...(isObject(out.properties) ? out.properties : {}), ...v };
      } else if (k === "required" && Array.isArray(v)) {
        out.required = [...new Set([...(Array.isArray(out.required) ? out.required : []), ...v])];
      } else if (!(k in out)) {
        out[k] = v;
      }
    }
  }
  return out;
}

function hasOwnType(s: Json): boolean {
  return typeof s.type === "string" || Array.isArray(s.type) || isObject(s.properties);
}

function isNullOnly(s: Json): boolean {
  return s.type === "null" ||
    (Array.isArray(s.type) && s.type.length === 1 && s.type[0] === "null");
}

function typeName(s: Json): string {
  const t = typeOf(mergeAllOf(s));
  return t === "unknown" ? "any" : t;
}

function typeOf(s: Json): ReadSchema["type"] {
  const declared = Array.isArray(s.type)
    ? s.type.filter((t) => t !== "null")
    : typeof s.type === "string"
    ? [s.type]
    : [];
  if (declared.length === 1 && typeof declared[0] === "string") {
    const t = declared[0];
    if (SCALARS.has(t) || t === "array" || t === "object") return t as ReadSchema["type"];
  }
  if (declared.length > 1) {
    // ["string", "integer"]: the first is one the document admits.
    const t = declared.find((x) =>
      typeof x === "string" && (SCALARS.has(x) || x === "array" || x === "object")
    );
    return (t as ReadSchema["type"] | undefined) ?? "unknown";
  }
  if (isObject(s.properties) || isObject(s.additionalProperties)) return "object";
  if (s.items !== undefined) return "array";
  const values = Array.isArray(s.enum) ? s.enum.filter((v) => v !== null) : [];
  if (values.length > 0) {
    if (values.every((v) => typeof v === "string")) return "string";
    if (values.every((v) => Number.isInteger(v))) return "integer";
    if (values.every((v) => typeof v === "number")) return "number";
  }
  return "unknown";
}

function fitsType(v: unknown, type: string): boolean {
  return type === "string"
    ? typeof v === "string"
    : type === "integer"
    ? Number.isSafeInteger(v)
    : type === "number"
    ? typeof v === "number" && Number.isFinite(v)
    : false;
}

function finite(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}
