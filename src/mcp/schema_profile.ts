/**
 * Schema profiles: the dialect of JSON Schema a server advertises in
 * `tools/list`, for clients whose model vendor reads only part of JSON Schema.
 * The server always enforces the schema the host gave (JSON Schema 2020-12);
 * a profile changes only what is listed, so enforcement is the same under
 * every profile.
 *
 * - `full` (the default): the schema as given, JSON Schema 2020-12 (the MCP
 *   default dialect, MCP 2025-11-25 "JSON Schema Usage").
 * - `gemini`: what Google's Gemini function declarations read through the
 *   OpenAPI 3.0 subset of their `Schema` object (the `parameters` field, as the
 *   Vercel AI SDK's Google provider before 4.0, LangChain and `@google/genai`'s
 *   schema transformer send it): one `type` per schema (no type unions; a
 *   string-or-integer input is listed as a string), string
 *   `enum`s only, and only `type`, `description`, `enum`, `properties`,
 *   `required`, `items`, `minLength` and `format`, the keywords that also
 *   survive the AI SDK's converter. Bounds, lengths, patterns and item counts
 *   move into the description in words; an optional input is simply not
 *   required (the server still reads `null` as "not given").
 * - `openai-strict`: OpenAI's strict function calling (Structured Outputs
 *   "supported schemas"): every object closed (`additionalProperties: false`)
 *   with every property required, an optional one nullable by a type union
 *   with `"null"`; no `allOf`, `not`, `oneOf`, `if`, and the like. `minLength`
 *   and `maxLength` (not in OpenAI's supported list) move into words.
 *
 * Every schema a profile lists admits only arguments the enforced schema
 * admits, apart from what it states in words (a dialect's missing keyword),
 * so a model that follows the listed schema and its words is never refused by
 * the schema. A schema a profile cannot list that way is refused when the
 * server starts, naming the tool, the place and the keyword
 * ({@link ProfileError}).
 *
 * @module
 */
import type { JsonObject } from "./jsonrpc.ts";

/** A schema profile's name. */
export type SchemaProfile = "full" | "gemini" | "openai-strict";

/**
 * The profiles, default first.
 *
 * @example The default first
 * ```ts
 * import { SCHEMA_PROFILES } from "./schema_profile.ts";
 * if (SCHEMA_PROFILES[0] !== "full" || !SCHEMA_PROFILES.includes("openai-strict")) throw new Error();
 * ```
 */
export const SCHEMA_PROFILES: readonly SchemaProfile[] = ["full", "gemini", "openai-strict"];

/**
 * Whether `name` is a profile.
 *
 * @example A command-line value checked
 * ```ts
 * import { isSchemaProfile } from "./schema_profile.ts";
 * if (!isSchemaProfile("gemini") || isSchemaProfile("yaml")) throw new Error("wrong");
 * ```
 */
export function isSchemaProfile(name: unknown): name is SchemaProfile {
  return typeof name === "string" && (SCHEMA_PROFILES as readonly string[]).includes(name);
}

/**
 * A schema a profile cannot list without admitting what the server refuses unsaid.
 *
 * @example gemini cannot list a string-or-number input
 * ```ts
 * import { ProfileError, profileSchema } from "./schema_profile.ts";
 * let refused: unknown;
 * try {
 *   profileSchema(
 *     { type: "object", properties: { n: { type: ["string", "number"] } } },
 *     "gemini",
 *     'tool "t"',
 *   );
 * } catch (error) {
 *   refused = error;
 * }
 * if (!(refused instanceof ProfileError)) throw new Error("expected a ProfileError");
 * ```
 */
export class ProfileError extends Error {
  /**
   * Make the error.
   * @param message the place in the schema, the keyword, and what to do
   */
  constructor(message: string) {
    super(message);
    this.name = "ProfileError";
  }
}

/**
 * Keywords that only annotate (and `$schema`, which names the dialect, as an
 * MCP server's generated schemas do): restrict nothing, so a profile may keep
 * or drop them.
 */
const ANNOTATIONS = new Set(["description", "title", "default", "examples", "$comment", "$schema"]);

/** What the gemini profile keeps as keywords (the rest becomes words or is refused). */
const GEMINI_KEEPS = new Set(["type", "description", "enum", "properties", "required", "items"]);

/** Keywords OpenAI's strict mode reads (beside the structural ones handled apart). */
const OPENAI_KEEPS = new Set([
  "type",
  "description",
  "enum",
  "const",
  "properties",
  "required",
  "items",
  "additionalProperties",
  "anyOf",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
]);

/**
 * Keywords a profile may say in words instead, and how. `dropped` is the set
 * of keywords said in words at this place: a lower and an upper bound that
 * both are become one range ("1 to 50").
 */
const WORDS: Record<
  string,
  (v: unknown, s: JsonObject, dropped: Set<string>) => string | undefined
> = {
  minimum: (v, s, d) => (d.has("maximum") ? `${v} to ${s.maximum}` : `at least ${v}`),
  maximum: (v, _s, d) => (d.has("minimum") ? undefined : `at most ${v}`),
  exclusiveMinimum: (v) => `more than ${v}`,
  exclusiveMaximum: (v) => `less than ${v}`,
  multipleOf: (v) => `a multiple of ${v}`,
  minLength: (v, s, d) =>
    d.has("maxLength")
      ? `${v} to ${s.maxLength} characters`
      : v === 1
      ? "not empty"
      : `at least ${v} characters`,
  maxLength: (v, _s, d) => (d.has("minLength") ? undefined : `at most ${v} characters`),
  pattern: (v) => `matches the regular expression ${v}`,
  minItems: (
    v,
    s,
    d,
  ) => (d.has("maxItems") ? `${v} to ${s.maxItems} items` : `at least ${v} items`),
  maxItems: (v, _s, d) => (d.has("minItems") ? undefined : `at most ${v} items`),
  format: (v) => `format ${v}`,
};

/**
 * The schema a profile lists for a tool's input schema.
 *
 * @param schema the enforced input schema (JSON Schema 2020-12, root `type: "object"`)
 * @param profile the profile
 * @param where names the tool in messages, e.g. `tool "get_issue"`
 * @returns the schema to advertise (the same object for `full`)
 * @throws {ProfileError} when the profile cannot list it soundly
 *
 * @example Bounds in words for gemini
 * ```ts
 * import { profileSchema } from "./schema_profile.ts";
 * const listed = profileSchema(
 *   {
 *     type: "object",
 *     properties: { n: { type: "integer", minimum: 1, maximum: 50 } },
 *     required: ["n"],
 *     additionalProperties: false,
 *   },
 *   "gemini",
 *   'tool "t"',
 * );
 * const n = (listed.properties as Record<string, { description?: string }>).n;
 * if (n.description !== "1 to 50.") throw new Error(JSON.stringify(listed));
 * ```
 */
export function profileSchema(
  schema: JsonObject,
  profile: SchemaProfile,
  where: string,
): JsonObject {
  if (profile === "full") return schema;
  const out = profile === "gemini"
    ? gemini(schema, `${where} inputSchema`)
    : openaiStrict(schema, `${where} inputSchema`, true);
  return out;
}

/** The words for `keywords` of `schema` that a profile drops, as one sentence part. */
function wordsFor(schema: JsonObject, keywords: string[]): string[] {
  const words: string[] = [];
  const dropped = new Set(keywords);
  for (const k of keywords) {
    const say = WORDS[k]?.(schema[k], schema, dropped);
    if (say) words.push(say);
  }
  return words;
}

/** Append words to a description ("Text. Words; words."). */
function withWords(description: unknown, words: string[]): string | undefined {
  if (words.length === 0) return typeof description === "string" ? description : undefined;
  const said = words.join("; ");
  const sentence = `${said.charAt(0).toUpperCase()}${said.slice(1)}.`;
  return typeof description === "string" && description !== ""
    ? `${description} ${sentence}`
    : sentence;
}

/**
 * `allOf` as weir writes it: `not`s ("send at most one of"), each with a
 * `description` saying its rule, and further `pattern`s a value must also
 * match (a second `restrict` on one input); their words join the parent's.
 * Any other `allOf` is refused.
 */
function exclusionWords(schema: JsonObject, path: string): string[] {
  if (schema.allOf === undefined) return [];
  const all = schema.allOf;
  const alone = (s: unknown, key: string): s is JsonObject =>
    isObject(s) && Object.keys(s).length === 1 && Object.hasOwn(s, key);
  if (
    !Array.isArray(all) ||
    !all.every((s) =>
      (alone(s, "not") && isObject(s.not)) ||
      (alone(s, "pattern") && typeof s.pattern === "string")
    )
  ) {
    throw refuse(path, "allOf");
  }
  const words = new Set<string>();
  for (const s of all as JsonObject[]) {
    if (typeof s.pattern === "string") {
      words.add(WORDS.pattern(s.pattern, s, new Set())!);
      continue;
    }
    const text = (s.not as JsonObject).description;
    if (typeof text !== "string") throw refuse(`${path}/allOf`, "not (without a description)");
    words.add(text);
  }
  return [...words];
}

function gemini(schema: JsonObject, path: string): JsonObject {
  const out: JsonObject = {};
  const dropped: string[] = [];
  const words: string[] = [];
  let type = schema.type;
  // A string-or-integer input (a guard's untyped id) is listed as the string it
  // also is: narrower than enforced, never wider; its integer-only keywords go.
  let asString = false;
  if (Array.isArray(type)) {
    let kinds = type.filter((t) => t !== "null");
    if (kinds.length === 2 && kinds.includes("string") && kinds.includes("integer")) {
      kinds = ["string"];
      asString = true;
    }
    if (kinds.length !== 1) throw refuse(path, `type ${JSON.stringify(type)}`);
    type = kinds[0];
  }
  if (type === "null") throw refuse(path, `type "null"`);
  if (type !== undefined) out.type = type;
  for (const [key, value] of Object.entries(schema)) {
    if (key === "type" || key === "description") continue;
    if (asString && (key === "minimum" || key === "maximum")) continue;
    if (asString && key === "enum") {
      out.enum = (value as unknown[]).filter((v) => typeof v === "string");
      continue;
    }
    if (key === "allOf") {
      words.push(...exclusionWords(schema, path));
      continue;
    }
    if (key === "additionalProperties") {
      // Gemini's Schema has no such keyword: a function call carries only the
      // declared parameters. A schema for extra keys cannot be said.
      if (value !== false) throw refuse(path, "additionalProperties (a schema or true)");
      continue;
    }
    if (key === "enum") {
      const values = (value as unknown[]).filter((v) => v !== null);
      if (values.every((v) => typeof v === "string")) out.enum = values;
      else words.push(`one of ${values.map((v) => JSON.stringify(v)).join(", ")}`);
      continue;
    }
    if (key === "minLength") {
      // Kept by the AI SDK's converter and in Gemini's Schema.
      out.minLength = value;
      continue;
    }
    if (key === "properties") {
      const props: JsonObject = {};
      for (const [name, sub] of Object.entries(value as JsonObject)) {
        if (!isObject(sub)) throw refuse(`${path}/properties/${name}`, "a boolean schema");
        Object.defineProperty(props, name, {
          value: gemini(sub, `${path}/properties/${name}`),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      out.properties = props;
      continue;
    }
    if (key === "items") {
      if (!isObject(value)) throw refuse(path, "items (not one schema)");
      out.items = gemini(value, `${path}/items`);
      continue;
    }
    if (GEMINI_KEEPS.has(key) || ANNOTATIONS.has(key)) {
      if (GEMINI_KEEPS.has(key)) {
        out[key] = value;
      }
      continue;
    }
    if (key in WORDS) {
      dropped.push(key);
      continue;
    }
    throw refuse(path, key);
  }
  const description = withWords(schema.description, [...wordsFor(schema, dropped), ...words]);
  if (description !== undefined) out.description = description;
  return order(out);
}

function openaiStrict(schema: JsonObject, path: string, root = false): JsonObject {
  const out: JsonObject = {};
  const dropped: string[] = [];
  const words: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === "description") continue;
    if (key === "allOf") {
      words.push(...exclusionWords(schema, path));
      continue;
    }
    if (key === "minLength" || key === "maxLength") {
      dropped.push(key);
      continue;
    }
    if (key === "properties" || key === "additionalProperties" || key === "required") continue;
    if (key === "items") {
      if (!isObject(value)) throw refuse(path, "items (not one schema)");
      out.items = openaiStrict(value, `${path}/items`);
      continue;
    }
    if (key === "anyOf") {
      if (!Array.isArray(value) || !value.every(isObject)) throw refuse(path, "anyOf");
      out.anyOf = value.map((s, i) => openaiStrict(s as JsonObject, `${path}/anyOf/${i}`));
      continue;
    }
    if (OPENAI_KEEPS.has(key)) {
      out[key] = value;
      continue;
    }
    if (ANNOTATIONS.has(key)) {
      if (key === "title") out.title = value;
      continue;
    }
    throw refuse(path, key);
  }
  if (out.type === undefined && out.enum === undefined && out.const === undefined && !out.anyOf) {
    throw refuse(path, "no type (an input of any JSON value)");
  }
  const isObjectType = schema.type === "object" ||
    (Array.isArray(schema.type) && schema.type.includes("object"));
  if (isObjectType) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const closed = schema.additionalProperties === false;
    if (!closed && !(root && Object.keys(properties).length === 0)) {
      throw refuse(path, "an object open to undeclared keys");
    }
    // A root with no declared properties that takes anything (a withheld stub)
    // is listed as taking nothing: a smaller set than it admits.
    const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : []);
    const props: JsonObject = {};
    for (const [name, sub] of Object.entries(properties)) {
      if (!isObject(sub)) throw refuse(`${path}/properties/${name}`, "a boolean schema");
      let listed = openaiStrict(sub, `${path}/properties/${name}`);
      if (!required.has(name)) listed = nullableOrRefuse(sub, listed, `${path}/properties/${name}`);
      Object.defineProperty(props, name, {
        value: listed,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    out.properties = props;
    out.required = Object.keys(props);
    out.additionalProperties = false;
  }
  const description = withWords(schema.description, [...wordsFor(schema, dropped), ...words]);
  if (description !== undefined) out.description = description;
  return order(out);
}

/**
 * An optional property under strict mode is listed as required and nullable,
 * so its enforced schema must already take `null` (weir's optional inputs do:
 * `null` means "not given"); otherwise listing it so would invite a refusal.
 */
function nullableOrRefuse(enforced: JsonObject, listed: JsonObject, path: string): JsonObject {
  const type = enforced.type;
  const takesNull = type === "null" || (Array.isArray(type) && type.includes("null")) ||
    (Array.isArray(enforced.anyOf) &&
      enforced.anyOf.some((s) => isObject(s) && s.type === "null"));
  if (!takesNull) {
    throw new ProfileError(
      `${path}: an optional input that refuses null cannot be listed under openai-strict ` +
        `(strict mode sends every input, null for the ones left out); serve with the full ` +
        `schema profile, or make the input take null`,
    );
  }
  return listed;
}

function refuse(path: string, keyword: string): ProfileError {
  return new ProfileError(
    `${path}: ${keyword} cannot be listed under this schema profile without admitting ` +
      `arguments the server refuses; serve with the full schema profile (--schema-profile full)`,
  );
}

/** Keys in a fixed, readable order: type first, description last. */
function order(schema: JsonObject): JsonObject {
  const out: JsonObject = {};
  if ("type" in schema) out.type = schema.type;
  for (const [k, v] of Object.entries(schema)) {
    if (k !== "type" && k !== "description") {
      Object.defineProperty(out, k, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  if ("description" in schema) out.description = schema.description;
  return out;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
