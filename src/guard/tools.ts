/**
 * Grant -> MCP tool: the name, the input schema derived from the grant's path,
 * query and body, a description, annotations from the method and verb. Also
 * the withheld stubs and the info tool. The schema built here is the one
 * advertised and the one enforced.
 *
 * Schemas are JSON Schema 2020-12 (MCP's default dialect) and close every
 * object with `additionalProperties: false`, so an undeclared argument is
 * refused by name rather than dropped. Value rules (`pattern`, `minLength`,
 * `maxLength`, `enum`, bounds) appear as those keywords; an optional input
 * also admits `null`, which means "not given" (nothing is sent for it).
 *
 * The surface is lean because a model reads every token of it on every turn
 * (docs/performance.md, "Context"): what every tool shares is said once, in the
 * server's `instructions` ({@link INSTRUCTIONS_PREAMBLE}: the result envelope,
 * `null` as "not given"), not per tool; a tool carries no `outputSchema`
 * (the envelope is the same for every grant) and no `title` that only repeats
 * its name; annotations carry only values that differ from the MCP defaults
 * (`readOnlyHint` false, `destructiveHint` true, `idempotentHint` false,
 * `openWorldHint` true, MCP 2025-11-25 `ToolAnnotations`). What the guard
 * enforces beyond the schema keywords is said once where it holds for every
 * URL value (the metacharacter gate; a path value is one segment) and on the
 * input where it is particular, in a few words: a `restrict` ("Matches
 * acme-*"), `slashes`, an input that opts out of the gate ({@link gateOff}).
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolAnnotations, ToolSpec } from "../mcp/types.ts";
import type {
  BodyField,
  Grant,
  Guardfile,
  Metacharacters,
  PathParam,
  Restrict,
  ValueRules,
  Withhold,
} from "../guardfile/model.ts";
import { SEGMENTS_MAX_LENGTH } from "../guardfile/rules.ts";
import { grantReadsOnly } from "../guardfile/surface.ts";
import { integerForm } from "./untyped.ts";
import { WeirError } from "../errors/kinds.ts";

/** `_meta` key marking a withheld stub. */
export const WITHHELD_META = "weir.dev/withheld";

/**
 * The fixed preamble of a guardfile server's `instructions`: what every tool
 * shares, said once instead of on each tool.
 */
export const INSTRUCTIONS_PREAMBLE: string =
  "This server exposes only the policy-approved tools of one upstream API, each exactly as " +
  "granted. A tool whose description starts NOT AVAILABLE was withheld on purpose: do not try " +
  "to reach that operation another way. Optional inputs may be null, which means not given. " +
  "A value sent in the URL (a {name} in a tool's path, or a query parameter) may not contain " +
  "` $ ; & | < > ( ) { } \\ unless its description says any characters, and a path value is " +
  'one segment (no /) unless its description says otherwise. Each result is {"coverage": ' +
  '{...}, "result": ...}: read coverage first. It gives the answer\'s bytes, over_budget ' +
  "(over 8 KiB), the length of every array (items, by dotted path), truncated, and for " +
  "documents and feeds pages/entries {shown, total}.";

/** The characters the metacharacter gate refuses, as one run (src/guard/request.ts). */
const GATED = "`$;&|<>(){}\\";

/** `get_issue` -> `Get issue` (underscores and hyphens become spaces). */
export function titleOf(tool: string): string {
  const spaced = tool.replace(/[_-]+/g, " ").trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** The input schema of a grant. */
export function grantInputSchema(grant: Grant, restricts: Restrict[] = []): JsonObject {
  const properties: JsonObject = {};
  const required: string[] = [];
  const define = (name: string, schema: JsonObject, isRequired: boolean) => {
    Object.defineProperty(properties, name, {
      value: schema,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    if (isRequired) required.push(name);
  };
  for (const param of grant.params) {
    const globs = restricts.filter((r) => r.param === param.name).map((r) => r.globs);
    const schema = pathSchema(param);
    const words: string[] = [];
    if (globs.length > 0) {
      words.push(`Matches ${globs.map((g) => g.join(" or ")).join(", and ")}`);
    }
    if (param.slashes === "segments") words.push("a relative path, segments joined by /");
    if (param.slashes === "encoded") words.push("/ is sent as %2F");
    if (gateOff(param, param.type, param.metacharacters)) words.push("any characters");
    describeWith(schema, words);
    define(param.name, schema, true);
  }
  for (const q of grant.query) {
    const item: JsonObject = { type: q.type };
    if (q.minimum !== undefined) item.minimum = q.minimum;
    if (q.maximum !== undefined) item.maximum = q.maximum;
    addRules(item, q);
    const gated = gateOff(q, q.type, q.metacharacters) ? ["any characters"] : [];
    if (q.kind === "array") {
      const schema: JsonObject = { type: "array", items: item };
      if (q.minItems !== undefined) schema.minItems = q.minItems;
      if (q.maxItems !== undefined) schema.maxItems = q.maxItems;
      describeWith(schema, gated);
      define(q.name, nullable(schema, q.required), q.required);
    } else {
      const typed = q.untyped ? orInteger(item, q) : item;
      describeWith(typed, gated);
      define(q.name, nullable(typed, q.required), q.required);
    }
  }
  for (const field of grant.body) {
    define(field.name, nullable(bodySchema(field), field.required), field.required);
  }
  for (const [root, schema] of mappedSchemas(grant)) define(root, schema, true);
  for (const v of grant.graphql?.variables ?? []) define(v, {}, false);
  for (const p of grant.sql?.params ?? []) {
    // An untyped sql parameter takes a string or an integer (bound as its decimal text).
    define(p.name, { type: p.untyped ? ["string", "integer"] : p.type }, p.required);
  }
  const schema: JsonObject = { type: "object", properties };
  if (required.length > 0) schema.required = required;
  schema.additionalProperties = false;
  const pairs: JsonObject[] = [];
  const given = { not: { type: "null" } };
  for (const group of grant.exclusive) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        // Both present and neither null (null means "not given").
        pairs.push({
          not: {
            required: [group[i], group[j]],
            properties: { [group[i]]: given, [group[j]]: given },
            description: `send at most one of ${group.join(", ")}`,
          },
        });
      }
    }
  }
  if (pairs.length > 0) schema.allOf = pairs;
  return schema;
}

/** Append `words` (joined, capitalised, ending in a full stop) as the schema's description. */
function describeWith(schema: JsonObject, words: string[]): void {
  if (words.length === 0) return;
  const text = words.join("; ");
  schema.description = `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/**
 * Whether an input opts out of the metacharacter gate (`metacharacters="allow"`)
 * where that changes what it takes: a text value (numbers and booleans never
 * hold a gated character) that is not confined to an `enum` free of them.
 * Such an input says "any characters"; every other URL value is gated, as the
 * server's instructions say once.
 */
export function gateOff(rules: ValueRules, type: string, metacharacters: Metacharacters): boolean {
  if (metacharacters !== "allow" || type !== "string") return false;
  return rules.enum === undefined ||
    rules.enum.some((v) => typeof v === "string" && [...GATED].some((c) => v.includes(c)));
}

function pathSchema(param: PathParam): JsonObject {
  if (param.type === "integer") {
    const schema: JsonObject = { type: "integer" };
    if (param.minimum !== undefined) schema.minimum = param.minimum;
    if (param.maximum !== undefined) schema.maximum = param.maximum;
    if (param.enum) schema.enum = param.enum;
    return schema;
  }
  const schema: JsonObject = { type: "string", minLength: 1 };
  addRules(schema, param);
  if (param.slashes !== "refuse") {
    schema.maxLength = Math.min(param.maxLength ?? SEGMENTS_MAX_LENGTH, SEGMENTS_MAX_LENGTH);
  }
  return param.untyped ? orInteger(schema, param) : schema;
}

/**
 * An untyped input's schema (src/guard/untyped.ts): the string schema also
 * admits the integers whose decimal text keeps its rules, when there are any
 * (`type: ["string", "integer"]`, with the bounds and enum values the string
 * rules imply for integers).
 */
function orInteger(schema: JsonObject, rules: ValueRules): JsonObject {
  const form = integerForm(rules);
  if (!form) return schema;
  const out: JsonObject = { ...schema, type: ["string", "integer"] };
  if (form.minimum !== undefined) out.minimum = form.minimum;
  if (form.maximum !== undefined) out.maximum = form.maximum;
  if (form.enum !== undefined) out.enum = [...(schema.enum as string[]), ...form.enum];
  return out;
}

/** Copy value rules onto a schema as their JSON Schema keywords. */
function addRules(schema: JsonObject, rules: ValueRules): void {
  if (rules.pattern !== undefined) schema.pattern = rules.pattern;
  if (rules.minLength !== undefined) {
    schema.minLength = Math.max(rules.minLength, (schema.minLength as number | undefined) ?? 0);
  }
  if (rules.maxLength !== undefined) schema.maxLength = rules.maxLength;
  if (rules.enum !== undefined) schema.enum = [...rules.enum];
}

/** An optional input also admits `null` ("not given"); a required one does not. */
function nullable(schema: JsonObject, required: boolean): JsonObject {
  if (required) return schema;
  const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string];
  const out: JsonObject = { ...schema, type: [...types, "null"] };
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

function bodySchema(field: BodyField): JsonObject {
  switch (field.type) {
    case "array": {
      if (field.raw) return { type: "array" };
      const items: JsonObject = { type: field.items ?? "string" };
      addRules(items, field);
      return { type: "array", items };
    }
    case "object": {
      if (field.raw || !field.fields) return { type: "object" };
      const properties: JsonObject = {};
      const required: string[] = [];
      for (const f of field.fields) {
        properties[f.name] = nullable(bodySchema(f), f.required);
        if (f.required) required.push(f.name);
      }
      const schema: JsonObject = { type: "object", properties };
      if (required.length > 0) schema.required = required;
      schema.additionalProperties = false;
      return schema;
    }
    default: {
      const schema: JsonObject = { type: field.type };
      addRules(schema, field);
      return field.untyped ? orInteger(schema, field) : schema;
    }
  }
}

/** `map "a.b.c" to="k"` sources as nested required-string object schemas, merged per root. */
function mappedSchemas(grant: Grant): Map<string, JsonObject> {
  const roots = new Map<string, JsonObject>();
  for (const m of grant.bodyMap) {
    const [root, ...rest] = m.source;
    if (rest.length === 0) {
      roots.set(root, { type: "string" });
      continue;
    }
    let node = roots.get(root) ??
      { type: "object", properties: {}, required: [], additionalProperties: false };
    roots.set(root, node);
    rest.forEach((segment, i) => {
      const props = node.properties as JsonObject;
      const req = node.required as string[];
      if (!req.includes(segment)) req.push(segment);
      if (i === rest.length - 1) {
        props[segment] = { type: "string" };
      } else {
        props[segment] ??= {
          type: "object",
          properties: {},
          required: [],
          additionalProperties: false,
        };
        node = props[segment] as JsonObject;
      }
    });
  }
  return roots;
}

/**
 * The derived description when a grant has no `describe`: the verb and the
 * resource, and the HTTP request (a model that knows the API knows it by
 * its path) or, for sql, what kind of statement it runs.
 */
export function describeGrant(grant: Grant, server: string): string {
  const words = `${grant.verb} ${grant.resource}`.replace(/[_-]+/g, " ");
  const head = `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
  if (grant.sql) {
    return `${head} in the ${server} database ` +
      (grant.sql.reads
        ? `(a read-only query returning at most ${grant.sql.maxRows} rows).`
        : `(a write; returns rows_affected).`);
  }
  return `${head}: ${grant.method} ${grant.path}.`;
}

/** The tool a grant mints. */
export function grantTool(grant: Grant, guardfile: Guardfile): ToolSpec {
  const readOnly = grantReadsOnly(grant);
  const idempotent = readOnly ||
    (!grant.sql && (grant.method === "PUT" || grant.method === "DELETE"));
  return {
    name: grant.tool,
    description: grant.describe ?? describeGrant(grant, guardfile.name),
    inputSchema: grantInputSchema(grant, guardfile.restricts),
    annotations: leanAnnotations({
      readOnlyHint: readOnly,
      destructiveHint: grant.destructive,
      idempotentHint: idempotent,
      openWorldHint: true,
    }),
  };
}

/** The MCP defaults of `ToolAnnotations` (2025-11-25 schema). */
const ANNOTATION_DEFAULTS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
} as const;

/**
 * Annotations with only what differs from the MCP defaults, so a client reads
 * the same hints from fewer tokens. `destructiveHint` and `idempotentHint` are
 * meaningful only when `readOnlyHint` is false (the schema says so), so a
 * read-only tool carries neither.
 */
export function leanAnnotations(hints: Required<Omit<ToolAnnotations, "title">>): ToolAnnotations {
  const out: ToolAnnotations = {};
  for (const key of Object.keys(ANNOTATION_DEFAULTS) as (keyof typeof ANNOTATION_DEFAULTS)[]) {
    if (hints.readOnlyHint && (key === "destructiveHint" || key === "idempotentHint")) continue;
    if (hints[key] !== ANNOTATION_DEFAULTS[key]) out[key] = hints[key];
  }
  return out;
}

/**
 * The refusal of a call to a withheld tool (kind `verb_withheld`, 403): the
 * reason and, when the guardfile names one, the tool to use instead, in the
 * text and in `structuredContent` (`{error, tool, reason, alternative?}`).
 */
export function withheldCallError(name: string, w: Withhold): WeirError {
  const structured: JsonObject = { error: "verb_withheld", tool: name, reason: w.reason };
  if (w.alternative) structured.alternative = w.alternative;
  return new WeirError(
    "verb_withheld",
    `"${name}" is withheld by policy and reaches nothing. ${w.reason}` +
      (w.alternative ? ` Use "${w.alternative}" instead.` : ""),
    { structuredContent: structured },
  );
}

/** The stub a `withhold` lists: it states the reason and refuses every call. */
export function withheldTool(w: Withhold): ToolSpec {
  return withheldStub(w.tool, w.reason, w.alternative);
}

/**
 * A withheld stub: listed so a model knows the operation exists and is not
 * for it, refusing every call. `reason` is the guardfile's (or the mode's,
 * e.g. "read-only mode").
 */
export function withheldStub(tool: string, reason: string, alternative?: string): ToolSpec {
  const instead = alternative ? ` Use ${alternative} instead.` : "";
  const meta: JsonObject = { [WITHHELD_META]: true };
  if (alternative) meta[`${WITHHELD_META}/alternative`] = alternative;
  return {
    name: tool,
    description: `NOT AVAILABLE: ${reason}${instead}`,
    inputSchema: { type: "object" },
    annotations: { readOnlyHint: true, openWorldHint: false },
    _meta: meta,
  };
}

/** The read-only info tool. */
export function infoTool(name: string, _guardfile: Guardfile): ToolSpec {
  return {
    name,
    description: "This server's tools and withheld operations; reads nothing upstream.",
    inputSchema: { type: "object", additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}
