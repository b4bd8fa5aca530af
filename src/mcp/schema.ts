/**
 * JSON Schema checking and validation for tool and prompt arguments.
 *
 * One validator serves both what a catalog advertises and what it enforces:
 * the schema a tool lists is checked at startup, compiled on its first use,
 * and every call is held to it. The validator is `@cfworker/json-schema` (drafts 4, 7, 2019-09 and
 * 2020-12; 2020-12 is MCP's default dialect).
 *
 * Why this library and not Ajv, measured on Deno 2.9.6 with 50 four-property
 * object schemas (`deno task bench:validator` reproduces it):
 * - import: cfworker 5 ms, Ajv 2020 65-82 ms; compiling 50 schemas: 3-9 ms vs
 *   110-117 ms;
 * - one validation: cfworker about 3.6 µs, Ajv about 25-50 ns.
 * A stdio server is spawned once per agent session, so start-up is paid on
 * every launch, while 4 µs is noise beside one upstream round trip. Ajv would
 * add about 180 ms to every cold start.
 *
 * cfworker accepts unknown keywords silently, so {@link checkSchema} refuses,
 * at startup, any keyword it cannot enforce: a schema is enforced exactly as
 * written or the catalog does not start. And it takes a keyword's value as it
 * comes (`"type": "strng"` matches nothing, `"minimum": "5"` is read as 5),
 * so {@link checkSchema} also holds every keyword's value to its dialect's
 * meta-schema (JSON Schema 2020-12, 2019-09, draft-07 or draft-04:
 * {@link KEYWORD_VALUES}): a schema the meta-schema refuses is refused at
 * startup, naming the keyword. (The rules are a table here rather than the
 * meta-schema documents: cfworker cannot evaluate 2020-12's `$dynamicRef`,
 * and compiling the documents with another validator at every start costs
 * about 150 ms; tests/mcp/meta_schema_test.ts holds the table to the official
 * meta-schemas.)
 *
 * @module
 */
import { describeErrors, LONE_SURROGATE_NAME } from "./schema_errors.ts";
import { dereference, type Schema, Validator } from "@cfworker/json-schema";
import { compileAcceptor } from "./fast_schema.ts";
import { backtrackingOf, backtrackingWords } from "./backtracking.ts";

type Draft = "4" | "7" | "2019-09" | "2020-12";

const DIALECTS: Record<string, Draft> = {
  "https://json-schema.org/draft/2020-12/schema": "2020-12",
  "https://json-schema.org/draft/2019-09/schema": "2019-09",
  "http://json-schema.org/draft-07/schema": "7",
  "http://json-schema.org/draft-04/schema": "4",
};

/** Keywords whose value is one subschema. */
const ONE_SCHEMA = new Set([
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "propertyNames",
  "contentSchema",
]);
/** Keywords whose value is an array of subschemas. */
const SCHEMA_ARRAY = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords whose value is an object of subschemas. */
const SCHEMA_MAP = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);
/** Keywords that assert something and that the validator enforces. */
const ASSERTIONS = new Set([
  "type",
  "const",
  "enum",
  "required",
  "format",
  "minProperties",
  "maxProperties",
  "dependentRequired",
  "dependencies",
  "items",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minContains",
  "maxContains",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "$ref",
]);
/** Keywords that only annotate: nothing to enforce. */
const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$anchor",
  "$comment",
  "$vocabulary",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentEncoding",
  "contentMediaType",
]);

/** What a keyword's value must be, as its dialect's meta-schema says. */
type ValueRule =
  | "any"
  | "string"
  | "boolean"
  | "number"
  | "positive-number"
  | "count"
  | "type"
  | "array"
  | "string-set"
  | "non-empty-string-set"
  | "string-sets"
  | "regex"
  | "anchor"
  | "vocabulary"
  | "number-or-boolean";

/** RFC 8259 types JSON Schema names (`simpleTypes`). */
const SIMPLE_TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);

/**
 * Each non-subschema keyword's value rule, by dialect (JSON Schema 2020-12
 * and 2019-09 meta-schemas, draft-07's, draft-04's). Subschema keywords are
 * checked by the walk itself (an object or a boolean, a non-empty array of
 * them, a map of them).
 */
export const KEYWORD_VALUES: Readonly<Record<string, ValueRule>> = {
  type: "type",
  enum: "array",
  const: "any",
  multipleOf: "positive-number",
  maximum: "number",
  minimum: "number",
  exclusiveMaximum: "number", // draft-04: a boolean (below)
  exclusiveMinimum: "number",
  maxLength: "count",
  minLength: "count",
  pattern: "regex",
  maxItems: "count",
  minItems: "count",
  uniqueItems: "boolean",
  maxContains: "count",
  minContains: "count",
  maxProperties: "count",
  minProperties: "count",
  required: "string-set", // draft-04: at least one name (below)
  dependentRequired: "string-sets",
  format: "string",
  $schema: "string",
  $id: "string",
  $anchor: "anchor",
  $comment: "string",
  $ref: "string",
  $vocabulary: "vocabulary",
  title: "string",
  description: "string",
  default: "any",
  examples: "array",
  deprecated: "boolean",
  readOnly: "boolean",
  writeOnly: "boolean",
  contentEncoding: "string",
  contentMediaType: "string",
};

/** Whether `value` is a JSON Schema `nonNegativeInteger` (1.0 counts: JSON has one number type). */
function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

function isStringSet(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string") &&
    new Set(value).size === value.length;
}

/**
 * What is wrong with a keyword's value under `draft`, in words, or `null`.
 * (`$ref` targets and `pattern` syntax get their own messages in the walk.)
 */
function valueProblem(keyword: string, value: unknown, draft: Draft): string | null {
  let rule = KEYWORD_VALUES[keyword];
  if (draft === "4" && (keyword === "exclusiveMaximum" || keyword === "exclusiveMinimum")) {
    rule = "boolean";
  }
  switch (rule) {
    case undefined:
    case "any":
    case "regex": // checked with the walk's own message
      return null;
    case "string":
      return typeof value === "string" ? null : "must be a string";
    case "boolean":
      return typeof value === "boolean"
        ? null
        : `must be true or false${
          draft === "4" && keyword.startsWith("exclusive") ? " (draft-04)" : ""
        }`;
    case "number":
      return typeof value === "number" ? null : "must be a number";
    case "positive-number":
      return typeof value === "number" && value > 0 ? null : "must be a number above 0";
    case "count":
      return isCount(value) ? null : "must be a whole number of at least 0";
    case "array":
      if (!Array.isArray(value)) return "must be an array";
      if ((draft === "4" || draft === "7") && keyword === "enum") {
        return value.length > 0 &&
            new Set(value.map((v) => JSON.stringify(v))).size === value.length
          ? null
          : `must list at least one value, each once (${DRAFT_NAMES[draft]})`;
      }
      return null;
    case "string-set":
      if (!isStringSet(value)) return "must be an array of distinct strings";
      return draft === "4" && value.length === 0
        ? "must name at least one property (draft-04)"
        : null;
    case "non-empty-string-set":
      return isStringSet(value) && value.length > 0
        ? null
        : "must be a non-empty array of distinct strings";
    case "string-sets":
      return isObject(value) && Object.values(value).every(isStringSet)
        ? null
        : "must be an object whose values are arrays of distinct strings";
    case "anchor":
      return typeof value === "string" && /^[A-Za-z_][-A-Za-z0-9._]*$/.test(value)
        ? null
        : "must be a name: a letter or _ then letters, digits, -, _ or .";
    case "vocabulary":
      return isObject(value) && Object.values(value).every((v) => typeof v === "boolean")
        ? null
        : "must be an object of vocabulary URIs to true or false";
    case "number-or-boolean":
      return typeof value === "number" || typeof value === "boolean"
        ? null
        : "must be a number or a boolean";
    case "type": {
      const types = Array.isArray(value) ? value : [value];
      if (types.length === 0 || !types.every((t) => typeof t === "string" && SIMPLE_TYPES.has(t))) {
        return `must be one of ${[...SIMPLE_TYPES].join(", ")}, or a non-empty array of them`;
      }
      return new Set(types).size === types.length ? null : "must not name a type twice";
    }
  }
}

/** How deep subschemas may nest before a schema is refused (bounds validation time). */
export const MAX_SCHEMA_DEPTH = 32;

/**
 * A schema the validator cannot enforce exactly as written.
 *
 * @example A schema no validator should guess at
 * ```ts
 * import { compileSchema, SchemaError } from "./schema.ts";
 * let refused: unknown;
 * try {
 *   compileSchema({ type: "object", properties: { id: { type: "whole number" } } });
 * } catch (error) {
 *   refused = error;
 * }
 * if (!(refused instanceof SchemaError)) throw new Error(`expected a SchemaError: ${refused}`);
 * ```
 */
export class SchemaError extends Error {
  /**
   * Make the error.
   * @param message which keyword cannot be enforced and where
   */
  constructor(message: string) {
    super(message);
    this.name = "SchemaError";
  }
}

/**
 * Check that a schema can be enforced exactly as written, and return its draft.
 *
 * Refuses: a `$schema` naming a dialect other than JSON Schema 4, 7, 2019-09 or
 * 2020-12; a keyword the validator does not enforce (for example `$dynamicRef`);
 * a `$ref` that does not point inside the document (nothing is ever fetched,
 * per the 2026-07-28 tools page), or that points inside it at nothing (a
 * missing `$defs` entry or `$anchor`), which would otherwise fail at the first
 * call instead of at startup; nesting deeper than {@link MAX_SCHEMA_DEPTH}.
 * Keywords starting with `x-` are extension annotations and pass.
 *
 * @param schema a JSON Schema (object or boolean)
 * @returns the dialect the validator will use
 * @throws {SchemaError} naming the JSON Pointer of the offending keyword
 */
export function checkSchema(schema: unknown): Draft {
  let draft: Draft = "2020-12";
  if (isObject(schema) && "$schema" in schema) {
    const uri = String(schema.$schema).replace(/#$/, "");
    const known = DIALECTS[uri];
    if (!known) {
      throw new SchemaError(
        `$schema ${JSON.stringify(schema.$schema)} is not a supported dialect ` +
          `(use JSON Schema 2020-12, MCP's default, by leaving $schema out)`,
      );
    }
    draft = known;
  }
  walk(schema, "#", 0, null, draft);
  // Second pass, once the shape is known to be sound: every $ref must reach a
  // subschema, looked up exactly as the validator will look it up.
  const text = JSON.stringify(schema);
  if (text.includes('"$ref"') || text.includes('"$id"') || text.includes('"$anchor"')) {
    const { copy, lookup } = resolvable(schema);
    walk(copy, "#", 0, lookup, draft);
  }
  return draft;
}

/** The validator's own table of what each `$ref` can reach, built on a copy. */
type Lookup = Record<string, unknown>;

function resolvable(schema: unknown): { copy: unknown; lookup: Lookup } {
  // dereference() records each $ref's absolute target on the (copied) node as
  // `__absolute_ref__`, exactly as the validator will later look it up.
  const copy = structuredClone(schema);
  try {
    return { copy, lookup: dereference(copy as Schema) };
  } catch (error) {
    throw new SchemaError(
      `the schema's $id or $anchor values are malformed: ${
        (error as Error).message.split("\n")[0]
      }`,
    );
  }
}

function walk(
  schema: unknown,
  pointer: string,
  depth: number,
  lookup: Lookup | null,
  draft: Draft,
): void {
  if (typeof schema === "boolean") return;
  if (!isObject(schema)) throw new SchemaError(`${pointer} is not a schema (object or boolean)`);
  if (depth > MAX_SCHEMA_DEPTH) {
    throw new SchemaError(`${pointer} nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  }
  for (const [keyword, value] of Object.entries(schema)) {
    const at = `${pointer}/${escapePointer(keyword)}`;
    if (keyword.startsWith("x-")) continue;
    const problem = valueProblem(keyword, value, draft);
    if (problem !== null) {
      throw new SchemaError(
        `${at} ${problem} (the JSON Schema ${DRAFT_NAMES[draft]} meta-schema); got ${shown(value)}`,
      );
    }
    if (ANNOTATIONS.has(keyword)) continue;
    if (ONE_SCHEMA.has(keyword)) {
      walk(value, at, depth + 1, lookup, draft);
    } else if (SCHEMA_ARRAY.has(keyword)) {
      if (!Array.isArray(value) || value.length === 0) {
        throw new SchemaError(`${at} must be a non-empty array of schemas`);
      }
      value.forEach((sub, i) => walk(sub, `${at}/${i}`, depth + 1, lookup, draft));
    } else if (SCHEMA_MAP.has(keyword)) {
      if (!isObject(value)) throw new SchemaError(`${at} must be an object of schemas`);
      for (const [name, sub] of Object.entries(value)) {
        // patternProperties' names are regular expressions the validator compiles.
        if (keyword === "patternProperties") checkRegExp(name, at);
        walk(sub, `${at}/${escapePointer(name)}`, depth + 1, lookup, draft);
      }
    } else if (keyword === "items") {
      if (Array.isArray(value)) {
        if (draft === "2020-12") {
          throw new SchemaError(
            `${at} must be one schema in JSON Schema 2020-12 (a list of schemas, one per ` +
              `position, is "prefixItems")`,
          );
        }
        if (value.length === 0) {
          throw new SchemaError(`${at} must be one schema or a non-empty array of them`);
        }
        value.forEach((sub, i) => walk(sub, `${at}/${i}`, depth + 1, lookup, draft));
      } else walk(value, at, depth + 1, lookup, draft);
    } else if (keyword === "dependencies") {
      if (!isObject(value)) {
        throw new SchemaError(`${at} must be an object of schemas or arrays of property names`);
      }
      for (const [name, sub] of Object.entries(value)) {
        if (!Array.isArray(sub)) {
          walk(sub, `${at}/${escapePointer(name)}`, depth + 1, lookup, draft);
        } else if (!isStringSet(sub)) {
          throw new SchemaError(
            `${at}/${escapePointer(name)} must be an array of distinct property names`,
          );
        }
      }
    } else if (keyword === "$ref") {
      if (typeof value !== "string" || !value.startsWith("#")) {
        throw new SchemaError(
          `${at} ${
            JSON.stringify(value)
          } points outside the schema; only local "#..." references ` +
            `are resolved (nothing is fetched)`,
        );
      }
      const target = (schema as { __absolute_ref__?: string }).__absolute_ref__ ?? value;
      if (lookup && lookup[target] === undefined) {
        throw new SchemaError(
          `${at} ${JSON.stringify(value)} points at nothing in this schema ` +
            `(no subschema at that JSON Pointer or $anchor)`,
        );
      }
    } else if (keyword === "pattern") {
      checkRegExp(String(value), at);
    } else if (!ASSERTIONS.has(keyword)) {
      throw new SchemaError(
        `${at}: keyword "${keyword}" cannot be enforced by this server's validator; ` +
          `remove it or rename it "x-${keyword}" if it is only an annotation`,
      );
    }
  }
}

/**
 * Refuse a regular expression the validator could not use (ECMA-262, `u`
 * flag). It is run once: the engine compiles an expression at its first use,
 * and only then refuses one too large or too deep for it, which would fail
 * the first call instead of the start.
 */
function checkRegExp(source: string, at: string): void {
  try {
    new RegExp(source, "u").test("");
  } catch (error) {
    const message = (error as Error).message;
    const why = /(?:too large|Stack overflow)$/i.test(message)
      ? ` (the engine cannot compile it: ${message.slice(message.lastIndexOf(": ") + 2)})`
      : "";
    throw new SchemaError(`${at} ${shown(source)} is not a valid regular expression${why}`);
  }
  let found;
  try {
    found = backtrackingOf(source);
  } catch (error) {
    throw new SchemaError(
      `${at} ${shown(source)} has a quantified group weir could not check for exponential ` +
        `backtracking (${(error as Error).message})`,
    );
  }
  if (found?.kind === "exponential") {
    throw new SchemaError(`${at} ${shown(source)} ${backtrackingWords(found)}`);
  }
}

const DRAFT_NAMES: Record<Draft, string> = {
  "4": "draft-04",
  "7": "draft-07",
  "2019-09": "2019-09",
  "2020-12": "2020-12",
};

/** A value as a message may show it: short, one line. */
function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = typeof value;
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** A compiled schema: returns `[]` when the value conforms, else one message per problem. */
export type ValidateFn = (value: unknown) => string[];

/**
 * Compile a schema that passed {@link checkSchema} into a validation function.
 *
 * Messages name the argument by its path (`labels[1]`, `meta.kind`) and say
 * what is wrong in a sentence a model can act on: `unexpected argument "foo"`,
 * `missing required argument "owner"`.
 *
 * @param schema the schema exactly as advertised (it is cloned, never mutated)
 * @throws {SchemaError} as {@link checkSchema}
 *
 * @example Problems in words a model can act on
 * ```ts
 * import { compileSchema } from "./schema.ts";
 * const validate = compileSchema({
 *   type: "object",
 *   properties: { id: { type: "integer" } },
 *   required: ["id"],
 *   additionalProperties: false,
 * });
 * if (validate({ id: 7 }).length !== 0) throw new Error("valid");
 * if (validate({})[0] !== 'missing required argument "id"') throw new Error(validate({}).join());
 * if (validate({ id: 7, x: 1 })[0] !== 'unexpected argument "x" (not declared)') throw new Error();
 * ```
 */
export function compileSchema(schema: unknown): ValidateFn {
  const draft = checkSchema(schema);
  // Built on first use: checkSchema has already run everything that could make
  // construction fail (the shape, and the validator's own $ref/$id/$anchor
  // resolution), and a server with many tools starts faster without it.
  let validator: Validator | undefined;
  // The common shapes are accepted by a quick check first; anything it does not
  // vouch for (an invalid value, or a schema outside its subset) goes to the
  // full validator, which alone decides refusals and words their messages.
  // The check is also built on first use (it never throws): a server's start
  // then pays only for checkSchema (bench/README.md, "Cold start").
  let accept: ReturnType<typeof compileAcceptor> | null = null;
  return (value) => {
    if (accept === null) accept = compileAcceptor(schema, draft);
    if (accept?.(value)) return [];
    validator ??= new Validator(structuredClone(schema) as object, draft, false);
    let result;
    try {
      result = validator.validate(value);
    } catch (error) {
      // The validator writes instance locations with encodeURI, which throws
      // on a lone surrogate in a property name: a bad value, not a fault.
      if (error instanceof URIError) return [LONE_SURROGATE_NAME];
      throw error;
    }
    return result.valid ? [] : describeErrors(result.errors, schema);
  };
}

function escapePointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
