/**
 * A fast acceptor for the schemas most tools advertise (objects of scalar or
 * scalar-array properties, and small nested objects such as the guard's result
 * envelope) with JSON Schema 2020-12 type, length,
 * range, pattern and enumeration keywords. It answers one question, "is this
 * value surely valid?", and a `false` means only "ask the full validator"
 * (`@cfworker/json-schema`, which stays the authority and writes every error
 * message). So the acceptor may be narrower than JSON Schema but never wider:
 * each keyword it checks follows the 2020-12 validation vocabulary (RFC draft
 * `draft-bhutton-json-schema-validation-01`, sections 6.1-6.4) exactly as the
 * full validator implements it (lengths in code points, `integer` as a number
 * with no fractional part, `pattern` as a Unicode `RegExp`), and any keyword
 * outside that list makes the schema fall back as a whole.
 *
 * Why: validating `{"id": "abc"}` with the full validator cost about 1.6 µs
 * (it builds a JSON Pointer for every property it visits), the largest single
 * item of a core `tools/call` after JSON parsing; this check costs a few
 * hundred nanoseconds.
 *
 * @module
 */

/** Returns `true` only when the value is valid against the schema. */
export type Acceptor = (value: unknown) => boolean;

type Check = (value: unknown) => boolean;

/**
 * Keywords that only annotate (2020-12 meta-data and core vocabulary) and never fail a value.
 * Deliberately a subset of schema.ts's ANNOTATIONS: a keyword missing here only sends a
 * schema to the full validator, so this set must never hold one that schema.ts enforces.
 * `weir diff` reads a change of one as a change in words (src/diff/schema_diff.ts).
 */
export const ANNOTATIONS: ReadonlySet<string> = new Set([
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$comment",
]);

const SCALARS = new Set(["string", "number", "integer", "boolean", "null"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** The JSON type name of a decoded value, as the full validator names it. */
function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  if (type === "integer") return actual === "number" && (value as number) % 1 === 0;
  return actual === type;
}

/** Length in Unicode code points (a surrogate pair counts once, a lone surrogate once). */
function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    n++;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      if ((text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    }
  }
  return n;
}

/**
 * A check for one property schema, or `undefined` when it uses anything
 * outside the subset. `allowArray`: whether `type: "array"` with scalar
 * `items` is admitted at this level.
 */
function leafCheck(schema: unknown, allowArray: boolean): Check | undefined {
  if (!isObject(schema)) return schema === true ? () => true : undefined;
  const checks: Check[] = [];
  let types: string[] | undefined;
  for (const [keyword, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword)) continue;
    switch (keyword) {
      case "type": {
        const list = Array.isArray(value) ? value : [value];
        if (list.length === 0) return undefined;
        for (const t of list) {
          if (typeof t !== "string") return undefined;
          // "object" in a list of types (["object","null"]): any object, as the full
          // validator reads it, since every keyword that would constrain one
          // (properties, required...) sends the schema to the full validator.
          if (!SCALARS.has(t) && !(allowArray && t === "array") && t !== "object") return undefined;
        }
        types = list as string[];
        break;
      }
      case "minLength":
      case "maxLength": {
        if (!isNumber(value)) return undefined;
        const min = keyword === "minLength";
        checks.push((v) =>
          typeof v !== "string" || (min ? codePoints(v) >= value : codePoints(v) <= value)
        );
        break;
      }
      case "pattern": {
        if (typeof value !== "string") return undefined;
        let regex: RegExp;
        try {
          regex = new RegExp(value, "u");
        } catch {
          return undefined;
        }
        checks.push((v) => typeof v !== "string" || regex.test(v));
        break;
      }
      case "minimum":
        if (!isNumber(value)) return undefined;
        checks.push((v) => typeof v !== "number" || v >= value);
        break;
      case "maximum":
        if (!isNumber(value)) return undefined;
        checks.push((v) => typeof v !== "number" || v <= value);
        break;
      case "exclusiveMinimum":
        if (!isNumber(value)) return undefined;
        checks.push((v) => typeof v !== "number" || v > value);
        break;
      case "exclusiveMaximum":
        if (!isNumber(value)) return undefined;
        checks.push((v) => typeof v !== "number" || v < value);
        break;
      case "enum": {
        if (!Array.isArray(value) || value.length === 0) return undefined;
        if (!value.every((e) => e === null || typeof e !== "object")) return undefined;
        const allowed = value as unknown[];
        checks.push((v) => (v === null || typeof v !== "object") && allowed.includes(v));
        break;
      }
      case "minItems":
      case "maxItems": {
        if (!isNumber(value)) return undefined;
        if (!allowArray) return undefined;
        const min = keyword === "minItems";
        checks.push((v) => !Array.isArray(v) || (min ? v.length >= value : v.length <= value));
        break;
      }
      case "items": {
        if (!allowArray) return undefined;
        const item = leafCheck(value, false);
        if (!item) return undefined;
        checks.push((v) => !Array.isArray(v) || v.every(item));
        break;
      }
      default:
        return undefined;
    }
  }
  const allowed = types;
  return (v) => {
    if (allowed && !allowed.some((t) => hasType(v, t))) return false;
    for (const check of checks) if (!check(v)) return false;
    return true;
  };
}

/**
 * Build the acceptor for a tool's argument (or output) schema, or `undefined`
 * when the schema uses anything outside the subset (then only the full
 * validator runs).
 *
 * The subset: object schemas (`type: "object"`, `properties`, `required`,
 * `additionalProperties` as `false`, `true` or a schema of the subset; up to
 * four levels deep) whose leaves use only `type` (scalar names, `object`
 * with no other object keyword, or `array` with scalar `items`), `minLength`, `maxLength`, `pattern`, `minimum`,
 * `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `enum` (of scalars),
 * `minItems`, `maxItems`, `items`, and annotations (a leaf of annotations
 * only admits any value).
 *
 * @param schema the schema as advertised
 * @param draft the JSON Schema draft the schema was checked under; only "2020-12"
 */
export function compileAcceptor(schema: unknown, draft: string): Acceptor | undefined {
  if (draft !== "2020-12") return undefined;
  return objectCheck(schema, 0, true);
}

/** How deep nested object schemas are taken on (deeper: the full validator). */
const MAX_OBJECT_DEPTH = 4;

/**
 * A check for an object schema: `type: "object"` (required), `properties`,
 * `required`, `additionalProperties` (`false`, `true` or a schema), annotations.
 */
function objectCheck(schema: unknown, depth: number, root = false): Check | undefined {
  if (!isObject(schema) || schema.type !== "object" || depth > MAX_OBJECT_DEPTH) return undefined;
  let additional: Check | false = () => true;
  let required: string[] = [];
  const properties = new Map<string, Check>();
  for (const [keyword, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword) || (root && keyword === "$schema")) continue;
    switch (keyword) {
      case "type":
        break;
      case "additionalProperties": {
        if (value === false) {
          additional = false;
          break;
        }
        const check = anyCheck(value, depth + 1);
        if (!check) return undefined;
        additional = check;
        break;
      }
      case "required":
        if (!Array.isArray(value) || !value.every((r) => typeof r === "string")) return undefined;
        required = value as string[];
        break;
      case "properties":
        if (!isObject(value)) return undefined;
        for (const [name, sub] of Object.entries(value)) {
          const check = anyCheck(sub, depth + 1);
          if (!check) return undefined;
          properties.set(name, check);
        }
        break;
      default:
        return undefined;
    }
  }
  const extra = additional;
  return (value) => {
    if (!isObject(value)) return false;
    for (const name of required) if (!Object.hasOwn(value, name)) return false;
    for (const key of Object.keys(value)) {
      const check = properties.get(key) ?? extra;
      if (check === false || !check(value[key])) return false;
    }
    return true;
  };
}

/** A nested object schema, or a leaf (scalars, scalar arrays, or annotations only). */
function anyCheck(schema: unknown, depth: number): Check | undefined {
  return isObject(schema) && schema.type === "object"
    ? objectCheck(schema, depth)
    : leafCheck(schema, true);
}
