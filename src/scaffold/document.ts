/**
 * Read an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML text) into the
 * list of its operations, each with its parameters, request body and security
 * resolved: what `weir scaffold` derives grants from.
 *
 * Parsing, `$ref` resolution and the Swagger 2.0 upgrade are
 * `@scalar/openapi-parser`'s. It was measured against `@readme/openapi-parser`
 * 9.0.0 and `@apidevtools/swagger-parser` 13.1.0 on GitHub's REST document
 * (`@octokit/openapi`, 1,223 operations, 13 MB) and the 51 JSON documents of
 * `@readme/oas-examples` (Swagger 2.0, OpenAPI 3.0 and 3.1, circular schemas
 * included): all three dereference every one of them; on GitHub's they take
 * 2.1 s (scalar), 2.3 s (readme) and 3.2 s (apidevtools), on the small ones
 * scalar is 5-30 times faster. It was chosen because it is the only one that
 * upgrades Swagger 2.0 to OpenAPI 3.1 (body and formData parameters become a
 * `requestBody`, `host`/`basePath`/`schemes` become `servers`,
 * `securityDefinitions` become `securitySchemes`), so the derivation reads one
 * shape; and because it resolves only references inside the document unless
 * given plugins, so reading a document never reaches the network or another
 * file. It leaves a `$ref` inside an example value alone (OpenAPI says an
 * example is literal data); weir reads no examples.
 *
 * The derivation from operations to grants is weir's own (`derive.ts`).
 *
 * @module
 */
import type { dereference as Dereference } from "@scalar/openapi-parser";

/**
 * The OpenAPI parser and the YAML parser, loaded by `weir scaffold` only. Held
 * in constants so that Deno fetches them only when this import runs (a
 * string-literal `import()`, like a static import, is fetched before any
 * command starts); the versions deno.json pins, held to them by
 * tests/release/lazy_npm_test.ts.
 */
const PARSER_MODULES = {
  openapi: "npm:@scalar/openapi-parser@0.29.22",
  yaml: "npm:yaml@2.9.1",
} as const;

/** JSON as read: a loose record (the document's own shapes, after `$ref` resolution). */
export type Json = Record<string, unknown>;

/** The HTTP methods an OpenAPI path item may hold, in the order weir lists them. */
export const OPERATION_METHODS = [
  "get",
  "head",
  "post",
  "put",
  "patch",
  "delete",
  "options",
  "trace",
] as const;

/** One operation of the document. */
export interface Operation {
  /** Upper-case HTTP method (`GET`, `POST`, ...). */
  method: string;
  /** The path as the document writes it, e.g. `/repos/{owner}/{repo}/issues`. */
  path: string;
  /** `operationId`, when the document gives one. */
  operationId?: string;
  /** `summary`, or the first sentence of `description`, on one line. */
  summary?: string;
  /** The first tag, or `""`. */
  tag: string;
  /** Path-level parameters merged with the operation's (the operation's win, by `in` + `name`). */
  parameters: Json[];
  /** The request body object (OpenAPI 3), if any. */
  requestBody?: Json;
  /**
   * The security requirement alternatives that apply (the operation's, else
   * the document's): each alternative maps scheme names to scopes. `[]` or an
   * alternative `{}` means no credential is needed.
   */
  security: Record<string, string[]>[];
  /** `servers` of the operation or its path item, when they differ from the document's. */
  servers?: Json[];
  /** `deprecated: true`. */
  deprecated: boolean;
}

/** A document, read and resolved. */
export interface OpenApiDocument {
  /** `openapi` or `swagger` as written in the input (`2.0`, `3.0.3`, `3.1.0`). */
  version: string;
  /** `info.title`. */
  title: string;
  /** `info.version`. */
  apiVersion: string;
  /** Document-level `servers` (after the 2.0 upgrade: from host, basePath, schemes). */
  servers: Json[];
  /** `components.securitySchemes`, by name. */
  securitySchemes: Record<string, Json>;
  /** Every operation, in document order. */
  operations: Operation[];
}

/** The input is not an OpenAPI or Swagger document weir can read; the message says why. */
export class DocumentError extends Error {
  override name = "DocumentError";
}

/**
 * Parse and resolve a document.
 * @param text the document, JSON or YAML (YAML 1.2)
 * @param source the file name, used only in messages
 * @returns its operations with every internal `$ref` resolved (circular
 *   schemas stay circular objects: walk them with a visited set)
 * @throws {DocumentError} on text that is neither JSON nor YAML, a document
 *   nested deeper than {@link MAX_DOCUMENT_DEPTH}, a document
 *   without `openapi: 3.x` or `swagger: "2.0"`, or a `$ref` that does not resolve
 */
export async function readOpenApi(text: string, source: string): Promise<OpenApiDocument> {
  const { dereference, upgrade }: typeof import("@scalar/openapi-parser") = await import(
    PARSER_MODULES.openapi
  );
  const YAML: typeof import("yaml") = await import(PARSER_MODULES.yaml);
  let raw: unknown;
  const trimmed = text.trimStart();
  try {
    raw = trimmed.startsWith("{") ? JSON.parse(text) : YAML.parse(text, { maxAliasCount: 1000 });
  } catch (error) {
    throw new DocumentError(
      `${source}: not JSON or YAML: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  if (!isObject(raw)) {
    throw new DocumentError(`${source}: not an OpenAPI document (the top level is not an object)`);
  }
  if (depthOf(raw) > MAX_DOCUMENT_DEPTH) {
    throw new DocumentError(
      `${source}: nested more than ${MAX_DOCUMENT_DEPTH} levels deep (real API documents ` +
        `nest about 25): weir scaffold does not read it; flatten the schemas with $ref`,
    );
  }
  const declared = typeof raw.openapi === "string"
    ? raw.openapi
    : typeof raw.swagger === "string"
    ? raw.swagger
    : undefined;
  if (!declared || !/^(?:2\.0|3\.[01](?:\.\d+)?)$/.test(declared)) {
    throw new DocumentError(
      `${source}: not an OpenAPI 3.0/3.1 or Swagger 2.0 document (it declares ` +
        (declared ? `version "${declared}"` : `neither "openapi" nor "swagger"`) +
        `); weir scaffold reads those`,
    );
  }
  let spec: Json;
  let resolved: Awaited<ReturnType<typeof Dereference>>;
  const tooDeep = `${source}: its $ref chains nest too deeply to resolve (a reference to a ` +
    `reference to ... hundreds of levels down): weir scaffold does not read it`;
  try {
    spec = upgrade(raw).specification as Json;
  } catch (error) {
    throw new DocumentError(
      error instanceof RangeError
        ? tooDeep
        : `${source}: cannot upgrade to OpenAPI 3.1: ${(error as Error).message}`,
    );
  }
  try {
    resolved = await dereference(spec);
  } catch (error) {
    throw new DocumentError(
      error instanceof RangeError
        ? tooDeep
        : `${source}: cannot resolve the document's references: ${(error as Error).message}`,
    );
  }
  const unresolved = (resolved.errors ?? []).filter((e) => e.code !== undefined);
  if (!isObject(resolved.schema)) {
    throw new DocumentError(
      `${source}: cannot resolve the document: ${
        unresolved.map((e) => e.message).join("; ") || "unknown error"
      }`,
    );
  }
  if (unresolved.length > 0) {
    const message = unresolved[0].message;
    throw new DocumentError(
      /reference: #/.test(message)
        ? `${source}: ${message}: it points to nothing in the document, or ends a chain of ` +
          `references too deep to follow (weir scaffold does not read it)`
        : `${source}: ${message}; weir resolves only references inside the document`,
    );
  }
  const doc = resolved.schema as Json;
  const info = isObject(doc.info) ? doc.info : {};
  const servers = Array.isArray(doc.servers) ? doc.servers.filter(isObject) : [];
  const components = isObject(doc.components) ? doc.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const rootSecurity = securityOf(doc.security) ?? [];
  const operations: Operation[] = [];
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters.filter(isObject) : [];
    for (const method of OPERATION_METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const own = Array.isArray(op.parameters) ? op.parameters.filter(isObject) : [];
      const key = (p: Json) => `${p.in}\u0000${p.name}`;
      const ownKeys = new Set(own.map(key));
      const parameters = [...shared.filter((p) => !ownKeys.has(key(p))), ...own];
      const opServers = Array.isArray(op.servers)
        ? op.servers.filter(isObject)
        : Array.isArray(item.servers)
        ? item.servers.filter(isObject)
        : undefined;
      const tags = Array.isArray(op.tags) ? op.tags.filter((t) => typeof t === "string") : [];
      operations.push({
        method: method.toUpperCase(),
        path,
        ...(typeof op.operationId === "string" && op.operationId !== ""
          ? { operationId: op.operationId }
          : {}),
        ...summaryOf(op),
        tag: (tags[0] as string | undefined) ?? "",
        parameters,
        ...(isObject(op.requestBody) ? { requestBody: op.requestBody } : {}),
        security: securityOf(op.security) ?? rootSecurity,
        ...(opServers && opServers.length > 0 && !sameServers(opServers, servers)
          ? { servers: opServers }
          : {}),
        deprecated: op.deprecated === true,
      });
    }
  }
  return {
    version: declared,
    title: typeof info.title === "string" ? info.title : "",
    apiVersion: typeof info.version === "string" ? info.version : "",
    servers,
    securitySchemes: Object.fromEntries(
      Object.entries(schemes).filter(([, v]) => isObject(v)),
    ) as Record<string, Json>,
    operations,
  };
}

function summaryOf(op: Json): { summary?: string } {
  const text = typeof op.summary === "string" && op.summary.trim() !== ""
    ? op.summary
    : typeof op.description === "string"
    ? op.description.split(/(?<=[.!?])\s|\n\n/)[0]
    : "";
  const line = text.replace(/\s+/g, " ").trim();
  return line === "" ? {} : { summary: line };
}

function securityOf(value: unknown): Record<string, string[]>[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isObject).map((req) =>
    Object.fromEntries(
      Object.entries(req).map(([k, v]) => [
        k,
        Array.isArray(v) ? v.filter((s) => typeof s === "string") : [],
      ]),
    )
  );
}

function sameServers(a: Json[], b: Json[]): boolean {
  return a.length === b.length && a.every((s, i) => s.url === b[i]?.url);
}

/**
 * Nesting weir reads in a document. GitHub's REST document and every document
 * of `@readme/oas-examples` nest at most 24 levels; parsing, upgrading and
 * dereferencing recurse, so a far deeper document would exhaust the stack.
 */
export const MAX_DOCUMENT_DEPTH = 256;

/**
 * The deepest nesting of objects and arrays in a parsed value (a scalar is 0),
 * without recursion. Shared values (YAML aliases) are measured once; a value
 * reached again while it is being measured (a circular alias) adds nothing.
 */
function depthOf(root: unknown): number {
  const height = new Map<object, number>();
  const stack: { node: object; expanded: boolean }[] = [];
  if (typeof root === "object" && root !== null) stack.push({ node: root, expanded: false });
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (!top.expanded && height.has(top.node)) {
      stack.pop(); // measured already, or being measured (reached twice)
      continue;
    }
    const kids = Object.values(top.node).filter(
      (v): v is object => typeof v === "object" && v !== null,
    );
    if (!top.expanded) {
      top.expanded = true;
      height.set(top.node, -1); // being measured
      for (const k of kids) if (!height.has(k)) stack.push({ node: k, expanded: false });
      continue;
    }
    stack.pop();
    let h = 0;
    for (const k of kids) h = Math.max(h, height.get(k) ?? 0);
    height.set(top.node, h + 1);
    if (h + 1 > MAX_DOCUMENT_DEPTH) return h + 1;
  }
  return typeof root === "object" && root !== null ? height.get(root) ?? 0 : 0;
}

/** A plain object (not an array, not null). */
export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
