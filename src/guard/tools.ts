/**
 * Grant -> MCP tool: the name, the input schema derived from the grant's path,
 * query and body, a title, a description, annotations from the method and
 * verb, and the coverage envelope as `outputSchema`. Also the withheld stubs
 * and the info tool. The schema built here is the one advertised and the one
 * enforced.
 *
 * Schemas are JSON Schema 2020-12 (MCP's default dialect) and close every
 * object with `additionalProperties: false`, so an undeclared argument is
 * refused by name rather than dropped. Value rules (`pattern`, `minLength`,
 * `maxLength`, `enum`, bounds) appear as those keywords; an optional input
 * also admits `null`, which means "not given" (nothing is sent for it).
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolSpec } from "../mcp/types.ts";
import type {
  BodyField,
  Grant,
  Guardfile,
  PathParam,
  Restrict,
  ValueRules,
  Withhold,
} from "../guardfile/model.ts";
import { SEGMENTS_MAX_LENGTH } from "../guardfile/rules.ts";
import { ENVELOPE_SCHEMA } from "./coverage.ts";

/** `_meta` key marking a withheld stub. */
export const WITHHELD_META = "weir.dev/withheld";

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
    const rule = globs.length === 0
      ? ""
      : ` Allowed values: ${
        globs.map((g) => g.map((x) => JSON.stringify(x)).join(" or ")).join(", and ")
      }.`;
    define(param.name, {
      ...pathSchema(param),
      description: `Path parameter {${param.name}} (${PATH_FORM[param.slashes]}).${rule}` +
        gateNote(param.metacharacters),
    }, true);
  }
  for (const q of grant.query) {
    const item: JsonObject = { type: q.type };
    if (q.minimum !== undefined) item.minimum = q.minimum;
    if (q.maximum !== undefined) item.maximum = q.maximum;
    addRules(item, q);
    const wire = q.wire === q.name ? "" : ` (sent as "${q.wire}")`;
    const gated = q.type === "boolean" ? "" : gateNote(q.metacharacters);
    if (q.kind === "array") {
      const schema: JsonObject = {
        type: "array",
        items: item,
        description: `Query parameter, repeated once per item${wire}.${gated}`,
      };
      if (q.minItems !== undefined) schema.minItems = q.minItems;
      if (q.maxItems !== undefined) schema.maxItems = q.maxItems;
      define(q.name, nullable(schema, q.required), q.required);
    } else {
      define(
        q.name,
        nullable({ ...item, description: `Query parameter${wire}.${gated}` }, q.required),
        q.required,
      );
    }
  }
  for (const field of grant.body) {
    define(field.name, nullable(bodySchema(field), field.required), field.required);
  }
  for (const [root, schema] of mappedSchemas(grant)) define(root, schema, true);
  for (const v of grant.graphql?.variables ?? []) {
    define(v, { description: `GraphQL variable $${v}.` }, false);
  }
  grant.sql?.params.forEach((p, i) => {
    define(
      p.name,
      { type: p.type, description: `SQL parameter $${i + 1} (sent as a bound value).` },
      p.required,
    );
  });
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
            description: `send at most one of ${group.map((n) => `"${n}"`).join(", ")}`,
          },
        });
      }
    }
  }
  if (pairs.length > 0) schema.allOf = pairs;
  return schema;
}

const PATH_FORM: Record<PathParam["slashes"], string> = {
  refuse: "one path segment",
  segments: "a relative path of one or more segments separated by /",
  encoded: "one path segment; / is sent as %2F",
};

function gateNote(metacharacters: "refuse" | "allow"): string {
  return metacharacters === "allow"
    ? ""
    : " Refused if it contains any of ` $ ; & | < > ( ) { } \\.";
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
  return schema;
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
  const out: JsonObject = { ...schema, type: [schema.type as string, "null"] };
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  if (typeof out.description === "string") {
    out.description = `${out.description} Optional: null means not given.`;
  }
  return out;
}

function bodySchema(field: BodyField): JsonObject {
  switch (field.type) {
    case "array": {
      if (field.raw) return { type: "array", description: "Body field (any JSON array)." };
      const items: JsonObject = { type: field.items ?? "string" };
      addRules(items, field);
      return { type: "array", items, description: "Body field." };
    }
    case "object": {
      if (field.raw || !field.fields) {
        return { type: "object", description: "Body field (any JSON object)." };
      }
      const properties: JsonObject = {};
      const required: string[] = [];
      for (const f of field.fields) {
        properties[f.name] = nullable(bodySchema(f), f.required);
        if (f.required) required.push(f.name);
      }
      const schema: JsonObject = { type: "object", properties, description: "Body field." };
      if (required.length > 0) schema.required = required;
      schema.additionalProperties = false;
      return schema;
    }
    default: {
      const schema: JsonObject = { type: field.type, description: "Body field." };
      addRules(schema, field);
      return schema;
    }
  }
}

/** `map "a.b.c" to="k"` sources as nested required-string object schemas, merged per root. */
function mappedSchemas(grant: Grant): Map<string, JsonObject> {
  const roots = new Map<string, JsonObject>();
  for (const m of grant.bodyMap) {
    const [root, ...rest] = m.source;
    if (rest.length === 0) {
      roots.set(root, { type: "string", description: `Sent as body field "${m.target}".` });
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
        props[segment] = { type: "string", description: `Sent as body field "${m.target}".` };
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

/** The derived description when a grant has no `describe`. */
export function describeGrant(grant: Grant, server: string): string {
  const words = `${grant.verb} ${grant.resource}`.replace(/[_-]+/g, " ");
  if (grant.sql) {
    return `${words.charAt(0).toUpperCase()}${words.slice(1)} in the ${server} database ` +
      (grant.sql.reads
        ? `(a read-only query returning at most ${grant.sql.maxRows} rows).`
        : `(a write; returns rows_affected).`);
  }
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} on the ${server} upstream ` +
    `(${grant.method} ${grant.path}).`;
}

/** The tool a grant mints. */
export function grantTool(grant: Grant, guardfile: Guardfile): ToolSpec {
  // A sql read runs in a read-only transaction, so it is read-only in fact.
  const readOnly = grant.sql ? grant.sql.reads : grant.method === "GET" || grant.method === "HEAD";
  return {
    name: grant.tool,
    title: titleOf(grant.tool),
    description: grant.describe ?? describeGrant(grant, guardfile.name),
    inputSchema: grantInputSchema(grant, guardfile.restricts),
    outputSchema: ENVELOPE_SCHEMA,
    annotations: {
      title: titleOf(grant.tool),
      readOnlyHint: readOnly,
      destructiveHint: grant.destructive,
      idempotentHint: readOnly ||
        (!grant.sql && (grant.method === "PUT" || grant.method === "DELETE")),
      openWorldHint: true,
    },
  };
}

/** The stub a `withhold` lists: it states the reason and refuses every call. */
export function withheldTool(w: Withhold): ToolSpec {
  const instead = w.alternative ? ` Use "${w.alternative}" instead.` : "";
  const meta: JsonObject = { [WITHHELD_META]: true };
  if (w.alternative) meta[`${WITHHELD_META}/alternative`] = w.alternative;
  return {
    name: w.tool,
    title: `Withheld: ${w.tool}`,
    description: `NOT AVAILABLE: withheld by policy. ${w.reason}${instead} ` +
      `Calling it always fails and reaches nothing.`,
    inputSchema: { type: "object" },
    annotations: {
      title: `Withheld: ${w.tool}`,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    _meta: meta,
  };
}

/** The read-only info tool. */
export function infoTool(name: string, guardfile: Guardfile): ToolSpec {
  return {
    name,
    title: "Server info",
    description: `Describe the ${guardfile.name} guarded server: the tools it serves and the ` +
      `ones it withholds. Reads nothing upstream.`,
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    annotations: {
      title: "Server info",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  };
}
