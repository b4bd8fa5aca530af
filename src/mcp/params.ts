/**
 * The shape of a request's `params` as both revisions' schemas define it,
 * checked before anything reads or walks them: how deep they nest (bounded
 * without recursion, so no later code can exhaust the stack on them), and the
 * JSON type of every protocol field the schemas define for the method
 * (`_meta.progressToken` a string or an integer, `cursor` a string,
 * `inputResponses` an object of objects, ...). A field of the wrong type is
 * refused with `-32602` naming it, never coerced, ignored or stringified.
 *
 * The table follows `schema.json` of 2025-11-25 and 2026-07-28
 * (`RequestParams`, `RequestMetaObject`, `PaginatedRequestParams`,
 * `InitializeRequestParams`, `CallToolRequestParams`,
 * `ReadResourceRequestParams`, `GetPromptRequestParams`); a field only one
 * revision defines is held to its type under both (it means nothing else).
 * Fields the schemas do not define are left alone (MCP lets `_meta` carry
 * any key, and params may grow).
 *
 * @module
 */
import { ErrorCode, McpError } from "./jsonrpc.ts";
import { LOG_LEVELS, MetaKey } from "./revisions.ts";
import { MAX_ARGUMENT_DEPTH } from "./depth.ts";
import { illFormedAt, isRawJson } from "./text.ts";

/**
 * Methods whose `params.arguments` the core checks for ill-formed text itself
 * (src/mcp/tools.ts, src/mcp/prompts.ts), with messages that name the tool or prompt.
 */
const OWN_ARGUMENT_CHECK = new Set(["tools/call", "prompts/get"]);

/**
 * How deep a message's `params` (and a client response's `result` or
 * `error`) may nest: tool arguments' own bound, one level further down.
 */
export const MAX_PARAMS_DEPTH = MAX_ARGUMENT_DEPTH + 1;

/** The JSON types of protocol fields (`implementation`: an `Implementation` object). */
type FieldType =
  | "string"
  | "object"
  | "string-or-integer"
  | "log-level"
  | "implementation"
  | "input-responses";

/** `params._meta` fields, every request of either revision. */
const META: Readonly<Record<string, FieldType>> = {
  progressToken: "string-or-integer",
  [MetaKey.protocolVersion]: "string",
  [MetaKey.clientCapabilities]: "object",
  [MetaKey.clientInfo]: "implementation",
  [MetaKey.logLevel]: "log-level",
};

/** `params` fields per method (beside `_meta`). */
const PARAMS: Readonly<Record<string, Readonly<Record<string, FieldType>>>> = {
  "initialize": {
    protocolVersion: "string",
    capabilities: "object",
    clientInfo: "implementation",
  },
  "tools/list": { cursor: "string" },
  "resources/list": { cursor: "string" },
  "resources/templates/list": { cursor: "string" },
  "prompts/list": { cursor: "string" },
  "tools/call": {
    name: "string",
    arguments: "object",
    inputResponses: "input-responses",
    requestState: "string",
    task: "object",
  },
  "resources/read": { uri: "string", inputResponses: "input-responses", requestState: "string" },
  "tasks/get": { taskId: "string" },
  "tasks/result": { taskId: "string" },
  "tasks/cancel": { taskId: "string" },
  "prompts/get": {
    name: "string",
    arguments: "object",
    inputResponses: "input-responses",
    requestState: "string",
  },
};

const WHAT: Readonly<Record<FieldType, string>> = {
  "string": "a string",
  "object": "an object",
  "string-or-integer": "a string or an integer",
  "log-level": `one of ${[...LOG_LEVELS].join(", ")}`,
  "implementation": "an object with a string name and version",
  "input-responses": "a JSON object whose every value is an object",
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fits(type: FieldType, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "object":
      return isObject(value);
    case "string-or-integer":
      return typeof value === "string" || Number.isInteger(value);
    case "log-level":
      return typeof value === "string" && LOG_LEVELS.has(value);
    case "implementation":
      return isObject(value) && typeof value.name === "string" &&
        typeof value.version === "string";
    case "input-responses":
      return isObject(value) && Object.values(value).every(isObject);
  }
}

/** A key as a path segment: `.name` when it is an identifier, else `["..."]` (clipped). */
function segment(key: string | number): string {
  if (typeof key === "number") return `[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key) && key.length <= 64) return `.${key}`;
  return `[${JSON.stringify(key.length > 64 ? `${key.slice(0, 61)}...` : key)}]`;
}

/**
 * The path of the first container nested `limit` levels or more below
 * `value` (`value` itself is level 0), or `null` when there is none. Walks
 * without recursion; the path shows at most its first 8 and last 2 segments.
 *
 * @example
 * ```ts
 * import { tooDeepAt } from "./params.ts";
 * if (tooDeepAt({ a: [[1]] }, 2, "params") !== "params.a[0]") throw new Error();
 * if (tooDeepAt({ a: [1] }, 2, "params") !== null) throw new Error();
 * ```
 */
export function tooDeepAt(value: unknown, limit: number, root: string): string | null {
  // Most values are shallow: a read-only walk (recursion bounded by `limit`, nothing
  // allocated) says so; only a value that does reach `limit` is walked again for its path.
  if (!reachesDepth(value, 0, limit)) return null;
  // Each entry: the value, its depth, and the index of its parent entry and its key in it.
  const seen: { parent: number; key: string | number }[] = [];
  const stack: [unknown, number, number][] = [[value, 0, -1]];
  while (stack.length > 0) {
    const [v, depth, at] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= limit) {
      const keys: (string | number)[] = [];
      for (let i = at; i >= 0; i = seen[i].parent) keys.push(seen[i].key);
      keys.reverse();
      const shown = keys.length > 10
        ? [...keys.slice(0, 8).map(segment), "...", ...keys.slice(-2).map(segment)]
        : keys.map(segment);
      return root + shown.join("");
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        seen.push({ parent: at, key: i });
        stack.push([v[i], depth + 1, seen.length - 1]);
      }
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        seen.push({ parent: at, key: keys[i] });
        stack.push([(v as Record<string, unknown>)[keys[i]], depth + 1, seen.length - 1]);
      }
    }
  }
  return null;
}

/** Whether a container sits `limit` levels or more below `v`, counted as {@link tooDeepAt} counts. */
function reachesDepth(v: unknown, depth: number, limit: number): boolean {
  if (v === null || typeof v !== "object") return false;
  if (depth >= limit) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (reachesDepth(v[i], depth + 1, limit)) return true;
    return false;
  }
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    if (reachesDepth((v as Record<string, unknown>)[keys[i]], depth + 1, limit)) return true;
  }
  return false;
}

/**
 * Whether every string and key in `v` is well-formed, visiting what
 * `illFormedAt` visits; read-only, nothing allocated. `false` also past
 * {@link MAX_PARAMS_DEPTH} levels (params are bounded before): it says only
 * "look closer", and `illFormedAt` then names the place.
 */
function wellFormedDeep(v: unknown, depth: number): boolean {
  if (typeof v === "string") return v.isWellFormed();
  if (v === null || typeof v !== "object" || isRawJson(v)) return true;
  if (depth > MAX_PARAMS_DEPTH) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!wellFormedDeep(v[i], depth + 1)) return false;
    return true;
  }
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (!key.isWellFormed()) return false;
    if (!wellFormedDeep((v as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/**
 * Check a request's `params` before anything else reads them: depth first
 * (at most {@link MAX_PARAMS_DEPTH} levels), then the type of every protocol
 * field present, in `_meta` and for `method`.
 *
 * @throws {McpError} `-32602` naming the field, or the path that nests too deep
 */
export function checkParams(method: string, params: Record<string, unknown>): void {
  const deep = tooDeepAt(params, MAX_PARAMS_DEPTH, "params");
  if (deep !== null) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `${deep} nests deeper than ${MAX_PARAMS_DEPTH} levels below params; send a flatter value`,
      { path: deep, maxDepth: MAX_PARAMS_DEPTH },
    );
  }
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isObject(meta)) refuse(method, "params._meta", "object", meta);
    for (const key in META) {
      // (`undefined` is what a host's object may hold for an absent field: JSON has none.)
      if (meta[key] !== undefined && !fits(META[key], meta[key])) {
        refuse(method, `params._meta${segment(key)}`, META[key], meta[key]);
      }
    }
  }
  const fields = PARAMS[method];
  if (fields) {
    for (const key in fields) {
      if (params[key] !== undefined && !fits(fields[key], params[key])) {
        refuse(method, `params${segment(key)}`, fields[key], params[key]);
      }
    }
  }
  checkWellFormed(method, params);
}

/**
 * Every string and key in `params` (a `progressToken`, any `_meta` value, a
 * cursor, a URI, a tool name) is well-formed Unicode: one with a lone UTF-16
 * surrogate could not be echoed (in a progress notification, an error, a log
 * line) as UTF-8 (RFC 8259 section 8.2, RFC 7493 section 2.1). Tool and
 * prompt arguments are checked where they are read, naming the tool.
 * @throws {McpError} `-32602` naming the path
 */
function checkWellFormed(method: string, params: Record<string, unknown>): void {
  for (const key of Object.keys(params)) {
    if (key === "arguments" && OWN_ARGUMENT_CHECK.has(method)) continue;
    let path: string | undefined;
    if (!key.isWellFormed()) path = `params${segment(key)}`;
    else if (!wellFormedDeep(params[key], 0)) {
      const found = illFormedAt(params[key]);
      if (found) {
        const below = found.at === "" ? "" : found.at.startsWith("[") ? found.at : `.${found.at}`;
        path = `params${segment(key)}${below}${found.key ? " (a key)" : ""}`;
      }
    }
    if (path === undefined) continue;
    throw new McpError(
      ErrorCode.InvalidParams,
      `${path} is not well-formed Unicode (it holds a lone UTF-16 surrogate, which UTF-8 ` +
        `cannot carry): send well-formed text`,
      { path },
    );
  }
}

function refuse(method: string, path: string, type: FieldType, value: unknown): never {
  // The value itself is quoted only when it is a short string (never walked or stringified).
  const quoted = typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : null;
  const message = path === "params.cursor"
    ? `Invalid cursor for ${method}: a cursor is a string (params.cursor)`
    : type === "log-level" && quoted !== null
    ? `Unknown log level ${quoted}: ${path} must be ${WHAT[type]}`
    : `${path} must be ${WHAT[type]}`;
  throw new McpError(ErrorCode.InvalidParams, message, { path });
}
