/**
 * Checking a host's catalog once and preparing it for fast answers.
 *
 * A malformed catalog stops the server at startup with a message naming the
 * entry, never at the first request: a missing list, a repeated name or URI,
 * a URI that is not an RFC 3986 URI, a listed resource or prompt with no
 * reader, a template expression beyond `{var}`/`{+var}`, a schema the
 * validator cannot enforce or its dialect's meta-schema refuses, a field the
 * MCP schemas of both revisions refuse (src/mcp/wire_fields.ts).
 *
 * @module
 */
import type { JsonObject } from "./jsonrpc.ts";
import { compileSchema, SchemaError, type ValidateFn } from "./schema.ts";
import type { Catalog, PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec } from "./types.ts";
import { parseUriTemplate, type UriTemplate, UriTemplateError } from "./uri_template.ts";
import { ProfileError, profileSchema, type SchemaProfile } from "./schema_profile.ts";
import { wireProblem } from "./wire_fields.ts";

/**
 * A catalog the core refuses to serve; the message names the entry and what to change.
 *
 * @example A tool with no name is refused when the server is made
 * ```ts
 * import { CatalogError } from "./catalog.ts";
 * import { McpServer } from "./server.ts";
 * let refused: unknown;
 * try {
 *   new McpServer({
 *     name: "x",
 *     version: "1.0.0",
 *     catalog: { tools: [{ name: "" }], resources: [], prompts: [] },
 *   });
 * } catch (error) {
 *   refused = error;
 * }
 * if (!(refused instanceof CatalogError)) throw new Error(`expected a CatalogError: ${refused}`);
 * ```
 */
export class CatalogError extends Error {
  /**
   * Make the error.
   * @param message which entry is wrong and what to change
   */
  constructor(message: string) {
    super(message);
    this.name = "CatalogError";
  }
}

/** A tool ready to be listed and called. */
export interface PreparedTool {
  /**
   * The wire form listed by `tools/list` (with the default input schema filled
   * in), its input schema in the server's schema profile (src/mcp/schema_profile.ts).
   */
  wire: ToolSpec & { inputSchema: JsonObject };
  /** The enforced input schema (as the host gave it), compiled. */
  validate: ValidateFn;
  /** The advertised output schema, compiled; `structuredContent` of a success is held to it. */
  validateOutput?: ValidateFn;
  /**
   * Whether arguments reach dispatch: `false` for a tool listed without an
   * `inputSchema` (it takes none, and dispatch is handed `{}`).
   */
  takesArguments: boolean;
  /** Modern HTTP: `Mcp-Param-<name>` (lower-cased) -> the argument it mirrors. */
  headerParams: ReadonlyMap<string, HeaderParam>;
}

/** An argument a 2026-07-28 client mirrors into an `Mcp-Param-*` header (`x-mcp-header`). */
export interface HeaderParam {
  /** The header name as declared. */
  header: string;
  /** Property names from the arguments object down to the value (`["meta", "kind"]`). */
  path: readonly string[];
  /** The property's JSON type: `string`, `integer` or `boolean`. */
  type: string;
}

/** A template ready to match URIs. */
export interface PreparedTemplate {
  wire: ResourceTemplateSpec;
  template: UriTemplate;
}

/** A prompt ready to be listed and rendered. */
export interface PreparedPrompt {
  wire: PromptSpec;
  validate: ValidateFn;
  declared: readonly string[];
}

/** The checked, sorted, indexed form of a {@link Catalog}. */
export interface PreparedCatalog {
  tools: PreparedTool[];
  toolsByName: Map<string, PreparedTool>;
  resources: ResourceSpec[];
  resourcesByUri: Map<string, ResourceSpec>;
  templates: PreparedTemplate[];
  prompts: PreparedPrompt[];
  promptsByName: Map<string, PreparedPrompt>;
  /**
   * Serialized list pages, keyed by revision, list (and tool access) and the
   * item the page starts after; filled on demand. A page with a next page is
   * kept as `head` + `tail` around its `nextCursor`, which is signed per caller.
   */
  pages: Map<string, { json: string; nextAfter?: string; head?: string; tail?: string }>;
}

/** Which readers the host supplied, to check listed entries against. */
export interface Readers {
  dispatch: boolean;
  readResource: boolean;
  getPrompt: boolean;
  /** The dialect tools' input schemas are listed in (default `full`: as given). */
  schemaProfile?: SchemaProfile;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
/** RFC 3986 characters (unreserved, reserved, percent-encoded): `format: "uri"` in both schemas. */
const URI_TEXT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#[\]]|%[0-9A-Fa-f]{2})*$/;
const URI_RULE = "percent-encode anything but ASCII letters, digits and -._~:/?#[]@!$&'()*+,;=";
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const OPEN_OBJECT: JsonObject = { type: "object" };

/**
 * Check a catalog and index it.
 *
 * @param catalog the host's catalog
 * @param readers which host functions exist (a listed entry needs its reader)
 * @throws {CatalogError} naming the first malformed entry
 */
export function prepareCatalog(catalog: Catalog, readers: Readers): PreparedCatalog {
  if (typeof catalog !== "object" || catalog === null) {
    throw new CatalogError("the catalog must be an object with tools, resources and prompts lists");
  }
  for (const list of ["tools", "resources", "prompts"] as const) {
    if (!Array.isArray(catalog[list])) {
      throw new CatalogError(
        `catalog.${list} is ${catalog[list] === undefined ? "missing" : "not a list"}: ` +
          `an absent list is a malformed catalog, not an empty one (pass ${list}: [] for none)`,
      );
    }
  }
  const tools = catalog.tools.map((spec, i) => prepareTool(spec, i, readers.schemaProfile));
  const toolsByName = indexUnique(tools, (t) => t.wire.name, "tool name");
  if (tools.length > 0 && !readers.dispatch) {
    throw new CatalogError(
      `tool "${tools[0].wire.name}" is listed but no dispatch function was given`,
    );
  }

  const resources: ResourceSpec[] = [];
  const templates: PreparedTemplate[] = [];
  catalog.resources.forEach((entry, i) => {
    if (isObject(entry) && "uriTemplate" in entry) {
      templates.push(prepareTemplate(entry as ResourceTemplateSpec, i));
    } else resources.push(checkResource(entry as ResourceSpec, i));
  });
  const resourcesByUri = indexUnique(resources, (r) => r.uri, "resource uri");
  indexUnique(templates, (t) => t.wire.uriTemplate, "resource uriTemplate");
  if ((resources.length > 0 || templates.length > 0) && !readers.readResource) {
    const first = resources[0]?.uri ?? templates[0].wire.uriTemplate;
    throw new CatalogError(`resource "${first}" is listed but no readResource function was given`);
  }

  const prompts = catalog.prompts.map((spec, i) => preparePrompt(spec, i));
  const promptsByName = indexUnique(prompts, (p) => p.wire.name, "prompt name");
  if (prompts.length > 0 && !readers.getPrompt) {
    throw new CatalogError(
      `prompt "${prompts[0].wire.name}" is listed but no getPrompt function was given`,
    );
  }

  return {
    tools: tools.sort((a, b) => compare(a.wire.name, b.wire.name)),
    toolsByName,
    resources: resources.sort((a, b) => compare(a.uri, b.uri)),
    resourcesByUri,
    templates: templates.sort((a, b) => compare(a.wire.uriTemplate, b.wire.uriTemplate)),
    prompts: prompts.sort((a, b) => compare(a.wire.name, b.wire.name)),
    promptsByName,
    pages: new Map(),
  };
}

/** Code-unit order: stable across locales, the same order cursors compare in. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function prepareTool(
  spec: ToolSpec,
  index: number,
  profile: SchemaProfile = "full",
): PreparedTool {
  if (!isObject(spec)) throw new CatalogError(`tools[${index}] is not an object`);
  const name = spec.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new CatalogError(
      `tools[${index}] has name ${JSON.stringify(name)}: a tool name is 1-128 characters ` +
        `of A-Z a-z 0-9 _ - .`,
    );
  }
  const where = `tool "${name}"`;
  const wrong = wireProblem("Tool", spec, where);
  if (wrong) throw new CatalogError(wrong);
  const inputSchema = spec.inputSchema ?? OPEN_OBJECT;
  checkObjectRoot(inputSchema, `${where} inputSchema`);
  const validate = compileOrRefuse(inputSchema, `${where} inputSchema`);
  let validateOutput: ValidateFn | undefined;
  if (spec.outputSchema !== undefined) {
    checkObjectRoot(spec.outputSchema, `${where} outputSchema`);
    validateOutput = compileOrRefuse(spec.outputSchema, `${where} outputSchema`);
  }
  let listed = inputSchema;
  try {
    listed = profileSchema(inputSchema, profile, where);
  } catch (error) {
    if (error instanceof ProfileError) throw new CatalogError(error.message);
    throw error;
  }
  return {
    wire: { ...spec, inputSchema: listed },
    validate,
    validateOutput,
    takesArguments: spec.inputSchema !== undefined,
    headerParams: headerParams(inputSchema, where),
  };
}

function checkObjectRoot(schema: unknown, where: string): void {
  if (!isObject(schema) || schema.type !== "object") {
    throw new CatalogError(
      `${where} must be a JSON Schema object whose root has "type": "object" ` +
        `(tool arguments and structured results are JSON objects in both revisions)`,
    );
  }
}

function compileOrRefuse(schema: unknown, where: string): ValidateFn {
  try {
    return compileSchema(schema);
  } catch (error) {
    if (error instanceof SchemaError) throw new CatalogError(`${where}: ${error.message}`);
    throw new CatalogError(`${where}: the validator refused it: ${(error as Error).message}`);
  }
}

/** Subschemas a `properties`-only chain does not reach (an `x-mcp-header` there is invalid). */
const UNREACHABLE = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "dependencies",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
] as const;
/** Of those, the ones whose value is a `name -> subschema` object. */
const NAMED_SUBSCHEMAS = new Set([
  "patternProperties",
  "dependentSchemas",
  "dependencies",
  "$defs",
  "definitions",
]);

/**
 * The `x-mcp-header` rules of the 2026-07-28 transport and tools pages, checked
 * at load so that no tool vanishes: clients drop a tool that breaks them.
 * A declaration sits on a `string`, `integer` or `boolean` property reached
 * from the root through `properties` keys alone (at any depth; not under
 * `items`, composition, conditionals or `$defs`), names an RFC 9110 token, and
 * is unique ignoring case.
 */
function headerParams(schema: JsonObject, where: string): Map<string, HeaderParam> {
  const out = new Map<string, HeaderParam>();
  const visit = (node: unknown, path: string[], reachable: boolean) => {
    if (!isObject(node)) return;
    if ("x-mcp-header" in node) {
      const header = node["x-mcp-header"];
      const at = `${where} ${
        path.length === 0 ? "root" : `property "${path.join(".")}"`
      } x-mcp-header`;
      if (!reachable || path.length === 0) {
        throw new CatalogError(
          `${at} is only allowed on a property reached from the root through "properties" ` +
            `alone (not under items, additionalProperties, oneOf/anyOf/allOf/not, ` +
            `if/then/else or $defs); clients drop such a tool`,
        );
      }
      if (typeof header !== "string" || !HEADER_TOKEN.test(header)) {
        throw new CatalogError(`${at} must be a non-empty HTTP token (RFC 9110)`);
      }
      const type = node.type;
      if (type !== "string" && type !== "integer" && type !== "boolean") {
        throw new CatalogError(`${at} is only allowed on string, integer or boolean properties`);
      }
      const key = header.toLowerCase();
      if (out.has(key)) throw new CatalogError(`${at} "${header}" is used twice (ignoring case)`);
      out.set(key, { header, path, type });
    }
    if (isObject(node.properties)) {
      for (const [name, child] of Object.entries(node.properties)) {
        visit(child, [...path, name], reachable);
      }
    }
    for (const keyword of UNREACHABLE) {
      const sub = node[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub)
        ? sub
        : NAMED_SUBSCHEMAS.has(keyword) && isObject(sub)
        ? Object.values(sub)
        : [sub];
      for (const branch of branches) visit(branch, [...path, `<${keyword}>`], false);
    }
  };
  visit(schema, [], true);
  return out;
}

function checkResource(spec: ResourceSpec, index: number): ResourceSpec {
  if (!isObject(spec)) throw new CatalogError(`resources[${index}] is not an object`);
  if (typeof spec.uri !== "string" || !URI_SCHEME.test(spec.uri)) {
    throw new CatalogError(
      `resources[${index}] has uri ${JSON.stringify(spec.uri)}: a resource needs an absolute URI ` +
        `with a scheme (e.g. "weather://places")`,
    );
  }
  if (!URI_TEXT.test(spec.uri)) {
    throw new CatalogError(
      `resource "${spec.uri}" is not an RFC 3986 URI (the schema's format "uri"): ${URI_RULE}`,
    );
  }
  if (typeof spec.name !== "string" || spec.name === "") {
    throw new CatalogError(`resource "${spec.uri}" needs a non-empty name`);
  }
  const wrong = wireProblem("Resource", spec, `resource "${spec.uri}"`);
  if (wrong) throw new CatalogError(wrong);
  return spec;
}

function prepareTemplate(spec: ResourceTemplateSpec, index: number): PreparedTemplate {
  if (typeof spec.uriTemplate !== "string" || !URI_SCHEME.test(spec.uriTemplate)) {
    throw new CatalogError(
      `resources[${index}] has uriTemplate ${JSON.stringify(spec.uriTemplate)}: ` +
        `a template needs an absolute URI with a scheme`,
    );
  }
  if (typeof spec.name !== "string" || spec.name === "") {
    throw new CatalogError(`resource template "${spec.uriTemplate}" needs a non-empty name`);
  }
  const wrong = wireProblem("ResourceTemplate", spec, `resource template "${spec.uriTemplate}"`);
  if (wrong) throw new CatalogError(wrong);
  let template: UriTemplate;
  try {
    template = parseUriTemplate(spec.uriTemplate);
  } catch (error) {
    if (error instanceof UriTemplateError) {
      throw new CatalogError(`resource template "${spec.uriTemplate}": ${error.message}`);
    }
    throw error;
  }
  if (!URI_TEXT.test(spec.uriTemplate.replace(/\{[^{}]*\}/g, ""))) {
    throw new CatalogError(
      `resource template "${spec.uriTemplate}": every URI it matches must be an RFC 3986 URI, ` +
        `so its literal text must be one too: ${URI_RULE}`,
    );
  }
  return { wire: spec, template };
}

function preparePrompt(spec: PromptSpec, index: number): PreparedPrompt {
  if (!isObject(spec)) throw new CatalogError(`prompts[${index}] is not an object`);
  if (typeof spec.name !== "string" || spec.name === "") {
    throw new CatalogError(`prompts[${index}] needs a non-empty name`);
  }
  const schema = promptArgumentSchema(spec);
  const wrong = wireProblem("Prompt", spec, `prompt "${spec.name}"`);
  if (wrong) throw new CatalogError(wrong);
  return {
    wire: spec,
    validate: compileOrRefuse(schema, `prompt "${spec.name}" arguments`),
    declared: Object.keys(schema.properties as JsonObject),
  };
}

/**
 * The JSON Schema of a prompt's arguments: one `string` property per declared
 * argument, `required` from the flags, nothing undeclared admitted.
 *
 * @throws {CatalogError} on a malformed or repeated argument
 *
 * @example A prompt's arguments as the schema they are held to
 * ```ts
 * import { promptArgumentSchema } from "./catalog.ts";
 * const schema = promptArgumentSchema({
 *   name: "triage",
 *   arguments: [{ name: "id", required: true }, { name: "note" }],
 * });
 * if (JSON.stringify(schema.required) !== '["id"]' || schema.additionalProperties !== false) {
 *   throw new Error(JSON.stringify(schema));
 * }
 * ```
 */
export function promptArgumentSchema(spec: PromptSpec): JsonObject {
  const properties: JsonObject = {};
  const required: string[] = [];
  const args = spec.arguments ?? [];
  if (!Array.isArray(args)) throw new CatalogError(`prompt "${spec.name}" arguments is not a list`);
  for (const arg of args) {
    if (!isObject(arg) || typeof arg.name !== "string" || arg.name === "") {
      throw new CatalogError(`prompt "${spec.name}" has an argument without a name`);
    }
    if (Object.hasOwn(properties, arg.name)) {
      throw new CatalogError(`prompt "${spec.name}" declares argument "${arg.name}" twice`);
    }
    if (arg.required !== undefined && typeof arg.required !== "boolean") {
      throw new CatalogError(
        `prompt "${spec.name}" argument "${arg.name}": required must be a boolean`,
      );
    }
    const property: JsonObject = { type: "string" };
    if (arg.description) property.description = arg.description;
    Object.defineProperty(properties, arg.name, {
      value: property,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    if (arg.required) required.push(arg.name);
  }
  const schema: JsonObject = { type: "object", properties, additionalProperties: false };
  if (required.length > 0) schema.required = required;
  return schema;
}

function indexUnique<T>(items: T[], key: (item: T) => string, what: string): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    if (map.has(k)) throw new CatalogError(`${what} ${JSON.stringify(k)} appears twice`);
    map.set(k, item);
  }
  return map;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
