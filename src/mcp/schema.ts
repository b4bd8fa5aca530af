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
 * written or the catalog does not start.
 *
 * @module
 */
import { dereference, type Schema, Validator } from "@cfworker/json-schema";
import { compileAcceptor } from "./fast_schema.ts";

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

/** How deep subschemas may nest before a schema is refused (bounds validation time). */
export const MAX_SCHEMA_DEPTH = 32;

/** A schema the validator cannot enforce exactly as written. */
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
  walk(schema, "#", 0, null);
  // Second pass, once the shape is known to be sound: every $ref must reach a
  // subschema, looked up exactly as the validator will look it up.
  const text = JSON.stringify(schema);
  if (text.includes('"$ref"') || text.includes('"$id"') || text.includes('"$anchor"')) {
    const { copy, lookup } = resolvable(schema);
    walk(copy, "#", 0, lookup);
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

function walk(schema: unknown, pointer: string, depth: number, lookup: Lookup | null): void {
  if (typeof schema === "boolean") return;
  if (!isObject(schema)) throw new SchemaError(`${pointer} is not a schema (object or boolean)`);
  if (depth > MAX_SCHEMA_DEPTH) {
    throw new SchemaError(`${pointer} nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  }
  for (const [keyword, value] of Object.entries(schema)) {
    const at = `${pointer}/${escapePointer(keyword)}`;
    if (keyword.startsWith("x-") || ANNOTATIONS.has(keyword)) continue;
    if (ONE_SCHEMA.has(keyword)) {
      walk(value, at, depth + 1, lookup);
    } else if (SCHEMA_ARRAY.has(keyword)) {
      if (!Array.isArray(value)) throw new SchemaError(`${at} must be an array of schemas`);
      value.forEach((sub, i) => walk(sub, `${at}/${i}`, depth + 1, lookup));
    } else if (SCHEMA_MAP.has(keyword)) {
      if (!isObject(value)) throw new SchemaError(`${at} must be an object of schemas`);
      for (const [name, sub] of Object.entries(value)) {
        walk(sub, `${at}/${escapePointer(name)}`, depth + 1, lookup);
      }
    } else if (keyword === "items") {
      if (Array.isArray(value)) {
        value.forEach((sub, i) => walk(sub, `${at}/${i}`, depth + 1, lookup));
      } else walk(value, at, depth + 1, lookup);
    } else if (keyword === "dependencies" && isObject(value)) {
      for (const [name, sub] of Object.entries(value)) {
        if (!Array.isArray(sub)) walk(sub, `${at}/${escapePointer(name)}`, depth + 1, lookup);
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
      try {
        new RegExp(String(value), "u");
      } catch {
        throw new SchemaError(`${at} ${JSON.stringify(value)} is not a valid regular expression`);
      }
    } else if (!ASSERTIONS.has(keyword)) {
      throw new SchemaError(
        `${at}: keyword "${keyword}" cannot be enforced by this server's validator; ` +
          `remove it or rename it "x-${keyword}" if it is only an annotation`,
      );
    }
  }
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

/** The refusal of a value whose property names are not well-formed UTF-16. */
const LONE_SURROGATE_NAME =
  "an argument name is not well-formed Unicode (it holds a lone surrogate): rename it";

interface OutputUnit {
  keyword: string;
  keywordLocation: string;
  instanceLocation: string;
  error: string;
}

/** Keywords whose error only says "a child failed": the child's own error says more. */
const CONTAINERS = new Set([
  "properties",
  "patternProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "false",
  "$ref",
  "allOf",
  "dependentSchemas",
  "unevaluatedItems",
]);

/**
 * Turn validator output into messages. A failed `not` says nothing useful on
 * its own ("matched a not schema"), so the subschema's own `description`, when
 * it has one, is the message: a schema author can word that rule.
 */
function describeErrors(errors: OutputUnit[], schema: unknown): string[] {
  const out: string[] = [];
  for (const e of errors) {
    if (CONTAINERS.has(e.keyword)) continue;
    const where = argumentPath(e.instanceLocation);
    const described = e.keyword === "not" ? resolvePointer(schema, e.keywordLocation) : undefined;
    if (isObject(described) && typeof described.description === "string") {
      out.push(where ? `argument "${where}": ${described.description}` : described.description);
    } else if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") {
      const m = /^Property "(.*)" does not match/.exec(e.error);
      const name = m ? join(where, clip(m[1])) : where;
      out.push(`unexpected argument "${name}" (not declared)`);
    } else if (e.keyword === "required") {
      const m = /required property "(.*)"/.exec(e.error);
      const name = m ? join(where, clip(m[1])) : where;
      out.push(`missing required argument "${name}"`);
    } else {
      out.push(where ? `argument "${where}": ${e.error}` : e.error);
    }
  }
  if (out.length === 0 && errors.length > 0) out.push(errors[0].error);
  return [...new Set(out)];
}

/** The value at a `#/a/b` JSON Pointer (RFC 6901) inside `root`, if any. */
function resolvePointer(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.replace(/^#\/?/, "").split("/").filter((p) => p !== "")) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[decodePointerToken(raw)];
  }
  return node;
}

function argumentPath(instanceLocation: string): string {
  const parts = instanceLocation.replace(/^#\/?/, "").split("/").filter((p) => p !== "");
  let path = "";
  for (const raw of parts) {
    const part = clip(decodePointerToken(raw));
    path = /^\d+$/.test(part) ? `${path}[${part}]` : join(path, part);
  }
  return path;
}

function decodePointerToken(raw: string): string {
  let text = raw;
  try {
    text = decodeURIComponent(raw);
  } catch {
    // Not percent-encoded after all: keep the token as it came.
  }
  return text.replaceAll("~1", "/").replaceAll("~0", "~");
}

function join(base: string, name: string): string {
  return base ? `${base}.${name}` : name;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function escapePointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
