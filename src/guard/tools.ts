/**
 * Grant -> MCP tool: the name, the input schema derived from the grant's path,
 * query and body, a title, a description, annotations from the method and
 * verb, and the coverage envelope as `outputSchema`. Also the withheld stubs
 * and the info tool. The schema built here is the one advertised and the one
 * enforced.
 *
 * Schemas are JSON Schema 2020-12 (MCP's default dialect) and close every
 * object with `additionalProperties: false`, so an undeclared argument is
 * refused by name rather than dropped.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolSpec } from "../mcp/types.ts";
import type { BodyField, Grant, Guardfile, Restrict, Withhold } from "../guardfile/model.ts";
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
  for (const param of grant.pathParams) {
    const globs = restricts.filter((r) => r.param === param).map((r) => r.globs);
    const rule = globs.length === 0
      ? ""
      : ` Allowed values: ${
        globs.map((g) => g.map((x) => JSON.stringify(x)).join(" or ")).join(", and ")
      }.`;
    define(param, {
      type: "string",
      minLength: 1,
      description: `Path parameter {${param}} (one path segment).${rule}`,
    }, true);
  }
  for (const q of grant.query) {
    const item: JsonObject = { type: q.type };
    if (q.minimum !== undefined) item.minimum = q.minimum;
    if (q.maximum !== undefined) item.maximum = q.maximum;
    const wire = q.wire === q.name ? "" : ` (sent as "${q.wire}")`;
    if (q.kind === "array") {
      const schema: JsonObject = {
        type: "array",
        items: item,
        description: `Query parameter, repeated once per item${wire}.`,
      };
      if (q.minItems !== undefined) schema.minItems = q.minItems;
      if (q.maxItems !== undefined) schema.maxItems = q.maxItems;
      define(q.name, schema, q.required);
    } else {
      define(q.name, { ...item, description: `Query parameter${wire}.` }, q.required);
    }
  }
  for (const field of grant.body) define(field.name, bodySchema(field), field.required);
  for (const [root, schema] of mappedSchemas(grant)) define(root, schema, true);
  for (const v of grant.graphql?.variables ?? []) {
    define(v, { description: `GraphQL variable $${v}.` }, false);
  }
  const schema: JsonObject = { type: "object", properties };
  if (required.length > 0) schema.required = required;
  schema.additionalProperties = false;
  const pairs: JsonObject[] = [];
  for (const group of grant.exclusive) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        pairs.push({
          not: {
            required: [group[i], group[j]],
            description: `send at most one of ${group.map((n) => `"${n}"`).join(", ")}`,
          },
        });
      }
    }
  }
  if (pairs.length > 0) schema.allOf = pairs;
  return schema;
}

function bodySchema(field: BodyField): JsonObject {
  switch (field.type) {
    case "array":
      return field.raw
        ? { type: "array", description: "Body field (any JSON array)." }
        : { type: "array", items: { type: field.items ?? "string" }, description: "Body field." };
    case "object": {
      if (field.raw || !field.fields) {
        return { type: "object", description: "Body field (any JSON object)." };
      }
      const properties: JsonObject = {};
      const required: string[] = [];
      for (const f of field.fields) {
        properties[f.name] = bodySchema(f);
        if (f.required) required.push(f.name);
      }
      const schema: JsonObject = { type: "object", properties, description: "Body field." };
      if (required.length > 0) schema.required = required;
      schema.additionalProperties = false;
      return schema;
    }
    default:
      return { type: field.type, description: "Body field." };
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
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} on the ${server} upstream ` +
    `(${grant.method} ${grant.path}).`;
}

/** The tool a grant mints. */
export function grantTool(grant: Grant, guardfile: Guardfile): ToolSpec {
  const readOnly = grant.method === "GET" || grant.method === "HEAD";
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
      idempotentHint: readOnly || grant.method === "PUT" || grant.method === "DELETE",
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
