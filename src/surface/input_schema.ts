/**
 * The input schema a grant advertises and is held to: JSON Schema 2020-12
 * (MCP's default dialect) derived from the grant's path, query and body,
 * every object closed with `additionalProperties: false` so an undeclared
 * argument is refused by name rather than dropped. Value rules (`pattern`,
 * `minLength`, `maxLength`, `enum`, bounds) appear as those keywords, and so
 * does a `restrict`: its globs as an anchored `pattern` with exactly their
 * meaning (src/guardfile/glob.ts), so a client that validates before calling
 * knows what the guard holds the raw value to. An optional input also admits
 * `null`, which means "not given" (nothing is sent for it). What the guard
 * enforces beyond the keywords is said on the input where it is particular,
 * in a few words: `slashes`, an input that opts out of the metacharacter gate
 * ({@link gateOff}), a `restrict` no `pattern` can state ("Matches acme-*");
 * what holds for every URL value (decoded forms, dot segments) is said once
 * in the server's instructions (src/guard/tools.ts `INSTRUCTIONS_PREAMBLE`).
 *
 * Part of the surface model's room: `weir describe`, `weir diff` and the
 * guard's `tools/list` all take a grant's schema from here. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantInputSchema } from "./input_schema.ts";
 * import { parseGuardfile } from "../guardfile/load.ts";
 * const { guardfile } = parseGuardfile(
 *   `wrap ward mcp t {\n  base-url "https://api.example"\n  auth none\n  can get item { path "/items/{id}" }\n}`,
 *   "t.mcp.kdl",
 * );
 * const schema = grantInputSchema(guardfile!.grants[0]);
 * assert.equal(JSON.stringify(schema.required), '["id"]');
 * ```
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import {
  type BodyField,
  type Grant,
  HEADER_VALUE_MAX_LENGTH,
  type Metacharacters,
  type PathParam,
  type Restrict,
  type ValueRules,
} from "../guardfile/model.ts";
import { SEGMENTS_MAX_LENGTH } from "../guardfile/rules.ts";
import { globsPattern } from "../guardfile/glob.ts";
import { integerForm } from "./untyped.ts";

/** The characters the metacharacter gate refuses, as one run (src/guard/request.ts). */
const GATED = "`$;&|<>(){}\\";

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
    const nodes = restricts.filter((r) => r.param === param.name).map((r) => r.globs);
    const { schema, unstated } = pathSchema(param, nodes);
    const words: string[] = [];
    if (unstated.length > 0) {
      words.push(`Matches ${unstated.map((g) => g.join(" or ")).join(", and ")}`);
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
  for (const h of grant.headers) {
    const schema: JsonObject = { type: h.type };
    if (h.minimum !== undefined) schema.minimum = h.minimum;
    if (h.maximum !== undefined) schema.maximum = h.maximum;
    if (h.type === "string") schema.minLength = 1;
    addRules(schema, h);
    if (h.type === "string") {
      schema.maxLength = Math.min(h.maxLength ?? HEADER_VALUE_MAX_LENGTH, HEADER_VALUE_MAX_LENGTH);
    }
    const words = [
      `sent as the ${h.wire} header`,
      ...(h.type === "string" ? ["printable ASCII, no space at either end"] : []),
      ...(gateOff(h, h.type, h.metacharacters) ? ["any characters"] : []),
    ];
    describeWith(schema, words);
    define(h.name, nullable(schema, h.required), h.required);
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

/**
 * A path parameter's schema, its `restrict` globs as `pattern`s (one node's
 * globs in one expression, each further node in `allOf`: nodes AND), and the
 * nodes no `pattern` states exactly (an integer parameter's, or a class naming
 * a character past U+FFFF: src/guardfile/glob.ts), said in words instead.
 * An untyped parameter under a `restrict` also takes integers only when each
 * node admits every one (a glob of `*` alone): a `pattern` says nothing of
 * integers, and the guard holds their decimal text to the globs.
 */
function pathSchema(
  param: PathParam,
  nodes: readonly string[][],
): { schema: JsonObject; unstated: string[][] } {
  if (param.type === "integer") {
    const schema: JsonObject = { type: "integer" };
    if (param.minimum !== undefined) schema.minimum = param.minimum;
    if (param.maximum !== undefined) schema.maximum = param.maximum;
    if (param.enum) schema.enum = param.enum;
    return { schema, unstated: [...nodes] };
  }
  const schema: JsonObject = { type: "string", minLength: 1 };
  addRules(schema, param);
  if (param.slashes !== "refuse") {
    schema.maxLength = Math.min(param.maxLength ?? SEGMENTS_MAX_LENGTH, SEGMENTS_MAX_LENGTH);
  }
  const unstated: string[][] = [];
  const patterns: string[] = [];
  for (const globs of nodes) {
    const pattern = globsPattern(globs);
    if (pattern === undefined) unstated.push(globs);
    else patterns.push(pattern);
  }
  addPatterns(schema, patterns);
  const integers = nodes.every((globs) => globs.some((g) => /^\*+$/.test(g)));
  return { schema: param.untyped && integers ? orInteger(schema, param) : schema, unstated };
}

/** Patterns a value must match, every one: the first as `pattern`, the rest in `allOf`. */
function addPatterns(schema: JsonObject, patterns: readonly string[]): void {
  for (const pattern of patterns) {
    if (schema.pattern === undefined) schema.pattern = pattern;
    else schema.allOf = [...(schema.allOf as JsonObject[] | undefined ?? []), { pattern }];
  }
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
