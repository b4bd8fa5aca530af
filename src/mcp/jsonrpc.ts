/**
 * JSON-RPC 2.0 envelopes as MCP uses them: one object per message, no batches.
 *
 * Follows https://www.jsonrpc.org/specification and the MCP "Base Protocol"
 * page of both revisions (2025-11-25, 2026-07-28): a request `id` is a string
 * or an integer, never `null`; `params`, when present, is an object.
 *
 * @module
 */
import { isRawJson, rawJSON } from "./text.ts";
import { MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "./depth.ts";

/**
 * Past this depth a value is not parsed a second time with a reviver (which
 * recurses, where `JSON.parse` alone does not): the core refuses it by its
 * depth before anything reads it (src/mcp/params.ts), so its numbers need no
 * exact reading.
 */
const REVIVER_DEPTH = MAX_ARGUMENT_DEPTH + 2;

/**
 * A JSON-RPC request id: a string or an integer (never `null` in MCP). An
 * integer JavaScript cannot hold exactly (beyond 2^53), or one spelled in a
 * form `JSON.stringify` would re-spell (`1.0`, `1e3`, `-0`), is kept as its
 * source text in a `JSON.rawJSON` value (TC39 "JSON.parse source text access"),
 * so the response carries the very id the request did.
 */
export type RequestId = string | number | RawId;

/** The exact source text of a number, as `JSON.rawJSON` makes it; serializes as that text. */
export interface RawId {
  /** The number exactly as the request spelled it. */
  readonly rawJSON: string;
}

/** Whether `value` is a `JSON.rawJSON` value. */
export const isRawId: (value: unknown) => value is RawId = isRawJson;

/** A key that tells ids apart as the wire does: `1`, `"1"` and `1.0` are three ids. */
export function idKey(id: RequestId): string | number {
  return isRawId(id) ? `\u0000${id.rawJSON}` : id;
}

/** An id or `requestId` written as a number JavaScript would round or re-spell. */
const INEXACT_ID = /"(?:id|requestId)"\s*:\s*-?(?:\d+[.eE]|0(?![\d.eE]))/;

function exact(value: unknown, source: string | undefined): unknown {
  if (typeof value !== "number" || source === undefined) return value;
  return String(value) === source ? value : rawJSON(source);
}

/**
 * Parse one JSON-RPC message, keeping its `id` (and a cancellation's
 * `params.requestId`) exact: see {@link RequestId}. Every other number is
 * parsed as `JSON.parse` does.
 * @throws {SyntaxError} when the text is not JSON
 */
export function parseMessage(text: string): unknown {
  const value = JSON.parse(text);
  if (!isPlainObject(value)) return value;
  const params = value.params;
  const requestId = isPlainObject(params) ? params.requestId : undefined;
  const unsafe = (n: unknown) => typeof n === "number" && !Number.isSafeInteger(n);
  // Only numbers inside `params.arguments` are checked for rounding (markRounded)
  // and for their spelling (RESPELLED): arguments without any number need no
  // scan of the text.
  const numbers = isPlainObject(params) && holdsNumber(params.arguments);
  const longNumber = numbers && LONG_NUMBER.test(text);
  const respelled = numbers && RESPELLED.test(text);
  if (
    !unsafe(value.id) && !unsafe(requestId) && !INEXACT_ID.test(text) && !longNumber &&
    !respelled
  ) {
    return value;
  }
  if (nestsDeeperThan(value, REVIVER_DEPTH)) return value;
  // Slow path: parse again, reading the source text of those two numbers (and,
  // when a long or re-spelled number is present, of every number, for the arguments).
  const every = longNumber || respelled;
  const sources = new Map<object, Record<string, string>>();
  const exactValue = JSON.parse(
    text,
    function (this: object, key: string, v: unknown, context?: { source?: string }) {
      if (
        typeof v === "number" && context?.source &&
        (every || key === "id" || key === "requestId")
      ) {
        const seen = sources.get(this) ?? {};
        seen[key] = context.source;
        sources.set(this, seen);
      }
      return v;
    },
  );
  if (!isPlainObject(exactValue)) return exactValue;
  if ("id" in exactValue) exactValue.id = exact(exactValue.id, sources.get(exactValue)?.id);
  const p = exactValue.params;
  if (isPlainObject(p) && "requestId" in p) {
    p.requestId = exact(p.requestId, sources.get(p)?.requestId);
  }
  if (every && isPlainObject(p) && p.arguments !== null && typeof p.arguments === "object") {
    if (longNumber) markRounded(p.arguments as object, sources);
    keepSpellings(p.arguments as object, sources);
  }
  return exactValue;
}

/** Arguments objects -> their twin holding each re-spelled number as its source text. */
const spellings = new WeakMap<object, Record<string, unknown>>();

/**
 * The arguments object as the caller spelled it: the same keys and values,
 * except that a number whose source text `JSON.stringify` would write
 * differently (`1e21`, `1.0`, `1E5`, `-0`, `0.0000001`) is a `JSON.rawJSON`
 * value of that text, so serializing it sends the very digits received.
 * `undefined` when the arguments hold no such number, or did not come from
 * {@link parseMessage} or {@link parseArguments} (the same object, not a copy).
 * A host that forwards arguments to another server (serve-upstream) sends
 * this twin; one that computes with the values reads `args` itself.
 *
 * @example A number forwarded with the digits received
 * ```ts
 * import { parseMessage, spelledArguments } from "./jsonrpc.ts";
 * const message = parseMessage(
 *   '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"price":1.50}}}',
 * ) as { params: { arguments: Record<string, unknown> } };
 * const args = message.params.arguments;
 * if (JSON.stringify(args) !== '{"price":1.5}') throw new Error("the value");
 * if (JSON.stringify(spelledArguments(args)) !== '{"price":1.50}') throw new Error("the spelling");
 * ```
 */
export function spelledArguments(args: object): Record<string, unknown> | undefined {
  return spellings.get(args);
}

/**
 * Record the spelled twin of `root` (see {@link spelledArguments}) when a
 * number in it is spelled unlike `JSON.stringify` would write it. Numbers
 * `markRounded` already replaced stay as they are (the core refuses them).
 */
function keepSpellings(root: object, sources: Map<object, Record<string, string>>): void {
  let found = false;
  // Deeper or larger arguments get no twin: the core refuses them by depth
  // (MAX_ARGUMENT_DEPTH) before any host sees them.
  let visited = 0;
  let tooBig = false;
  const copy = (holder: unknown, depth: number): unknown => {
    if (holder === null || typeof holder !== "object" || isRawId(holder)) return holder;
    if (++visited > 100_000 || depth > 128) {
      tooBig = true;
      return holder;
    }
    const seen = sources.get(holder as object);
    if (Array.isArray(holder)) {
      return holder.map((v, i) => respell(v, seen?.[String(i)]) ?? copy(v, depth + 1));
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(holder)) {
      const v = (holder as Record<string, unknown>)[key];
      // Own data properties, "__proto__" included (as JSON.parse makes them).
      Object.defineProperty(out, key, {
        value: respell(v, seen?.[key]) ?? copy(v, depth + 1),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return out;
  };
  const respell = (v: unknown, source: string | undefined): unknown => {
    if (typeof v !== "number" || source === undefined || JSON.stringify(v) === source) {
      return undefined;
    }
    found = true;
    return rawJSON(source);
  };
  const twin = copy(root, 0) as Record<string, unknown>;
  if (found && !tooBig) spellings.set(root, twin);
}

/**
 * Parse a JSON object of tool arguments (the HTTP tool API's body) as
 * {@link parseMessage} parses `params.arguments`: a number JSON.parse would
 * round comes back as its source text (a `JSON.rawJSON` value) so the core
 * refuses it by path instead of passing it on rounded.
 * @throws {SyntaxError} when the text is not JSON
 */
export function parseArguments(text: string): unknown {
  const value = JSON.parse(text);
  if (value === null || typeof value !== "object") return value;
  const longNumber = LONG_NUMBER.test(text);
  if (!longNumber && !RESPELLED.test(text)) return value;
  // Too deep to revive (the core refuses it by depth before reading it).
  if (nestsDeeperThan(value, MAX_ARGUMENT_DEPTH)) return value;
  const sources = new Map<object, Record<string, string>>();
  const again = JSON.parse(
    text,
    function (this: object, key: string, v: unknown, context?: { source?: string }) {
      if (typeof v === "number" && context?.source) {
        const seen = sources.get(this) ?? {};
        seen[key] = context.source;
        sources.set(this, seen);
      }
      return v;
    },
  );
  if (longNumber) markRounded(again as object, sources);
  keepSpellings(again as object, sources);
  return again;
}

/**
 * Whether a decoded value holds a number anywhere (iterative; past 10,000
 * containers it answers `true`, which only costs the text scan).
 */
function holdsNumber(root: unknown): boolean {
  if (typeof root === "number") return true;
  if (root === null || typeof root !== "object") return false;
  const stack: object[] = [root];
  let visited = 0;
  while (stack.length > 0) {
    if (++visited > 10_000) return true;
    const holder = stack.pop()! as Record<string, unknown>;
    for (const key in holder) {
      const v = holder[key];
      if (typeof v === "number") return true;
      if (v !== null && typeof v === "object") stack.push(v);
    }
  }
  return false;
}

/**
 * A number literal with more significant digits than a double is sure to
 * keep: a run of 16 digits, or of 16 digits and points (so the digits of
 * `1234567890.123456789` are counted across its point; a 15-digit number
 * with its point is a harmless false alarm), or a three-digit exponent.
 */
const LONG_NUMBER = /[0-9][0-9.]{15}|[0-9]\.?[0-9]*[eE][+-]?[0-9]{3}/;

/**
 * A number literal `JSON.stringify` may write otherwise: an exponent (`1e21`,
 * `1E5`), a fraction ending in zero (`1.0`, `2.50`), a negative zero, many
 * leading zeros after the point (`0.0000001` is written `1e-7`), or 16 or
 * more digits. A false alarm (such text inside a string) only costs a
 * second parse.
 */
const RESPELLED = /[0-9][eE]|\.[0-9]*0(?![0-9])|-0(?![.0-9])|0\.0{5}|[0-9][0-9.]{15}/;

/**
 * In tool or prompt arguments, put each number that `JSON.parse` rounded (its
 * source text names another value than the double it became, like
 * `1000000000000000000001` read as `1e21`) back as its source text, a
 * `JSON.rawJSON` value the core refuses by path rather than pass on rounded.
 * Iterative; the core bounds the depth of arguments before it looks.
 */
function markRounded(root: object, sources: Map<object, Record<string, string>>): void {
  const stack: object[] = [root];
  let visited = 0;
  while (stack.length > 0 && visited++ < 100_000) {
    const holder = stack.pop()! as Record<string, unknown>;
    const seen = sources.get(holder);
    for (const key of Object.keys(holder)) {
      const v = holder[key];
      if (typeof v === "number") {
        const source = seen?.[key];
        if (source !== undefined && !sameDecimal(source, v)) holder[key] = rawJSON(source);
      } else if (v !== null && typeof v === "object" && !isRawId(v)) {
        stack.push(v as object);
      }
    }
  }
}

/** Whether a number's source text names exactly the value of the double it became. */
function sameDecimal(source: string, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const a = decimal(source);
  const b = decimal(String(value));
  return a !== null && b !== null && a.digits === b.digits && a.exponent === b.exponent &&
    a.negative === b.negative;
}

/** A decimal literal as sign, significant digits (no leading or trailing zeros) and exponent. */
function decimal(text: string): { negative: boolean; digits: string; exponent: number } | null {
  const m = /^(-?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (!m) return null;
  const whole = m[2] + (m[3] ?? "");
  let exponent = Number(m[4] ?? 0) - (m[3] ?? "").length;
  let digits = whole.replace(/^0+/, "");
  const trimmed = digits.replace(/0+$/, "");
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  if (digits === "") return { negative: false, digits: "0", exponent: 0 };
  return { negative: m[1] === "-", digits, exponent };
}

/** Any JSON value. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** A request: it has an `id` and expects exactly one response. */
export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: RequestId;
  method: string;
  params?: Record<string, unknown>;
}

/** A notification: no `id`, never answered. */
export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: Record<string, unknown>;
}

/** The `error` member of an error response. */
export interface JsonRpcErrorObject {
  /** The JSON-RPC 2.0 error code (see {@link ErrorCode}). */
  code: number;
  /** A short description of the error. */
  message: string;
  /** Optional structured detail. */
  data?: unknown;
}

/**
 * JSON-RPC error codes used by MCP, by name. Numbers per both revisions' schemas.
 *
 * @example A code by name
 * ```ts
 * import { ErrorCode, McpError } from "./jsonrpc.ts";
 * const error = new McpError(ErrorCode.InvalidParams, "Unknown tool: nope");
 * if (error.toJSON().code !== -32602) throw new Error("wrong code");
 * ```
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** 2025-11-25 only: resource not found. 2026-07-28 uses InvalidParams. */
  ResourceNotFound: -32002,
  /** 2026-07-28: an HTTP header disagrees with the body it describes. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability it did not declare. */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the request's protocol version is not one this server serves. */
  UnsupportedProtocolVersion: -32022,
} as const;

/**
 * A protocol-level failure. Throw it from anywhere inside request handling and
 * the server turns it into a JSON-RPC error response with the same `code`,
 * `message` and `data`.
 *
 * @example Its wire form
 * ```ts
 * import { ErrorCode, McpError } from "./jsonrpc.ts";
 * const error = new McpError(ErrorCode.MethodNotFound, "Method not found", { method: "x/y" });
 * const wire = error.toJSON();
 * if (wire.code !== -32601 || (wire.data as { method: string }).method !== "x/y") throw new Error();
 * ```
 */
export class McpError extends Error {
  /** JSON-RPC error code (see {@link ErrorCode}). */
  readonly code: number;
  /** Optional structured detail sent as `error.data`. */
  readonly data?: unknown;

  /**
   * Make the error.
   * @param code the JSON-RPC error code sent as `error.code`
   * @param message sent as `error.message`
   * @param data optional detail sent as `error.data`
   */
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "McpError";
    this.code = code;
    this.data = data;
  }

  /** The wire form of this error. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** What one incoming message turned out to be. */
export type Incoming =
  | { kind: "request"; message: JsonRpcRequest }
  | { kind: "notification"; message: JsonRpcNotification }
  | { kind: "response"; id: RequestId | null; result?: unknown; error?: unknown }
  | { kind: "invalid"; id: RequestId | null; error: McpError };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A request id weir can echo: an integer, or a string of well-formed Unicode
 * (one holding a lone surrogate could not be written back as UTF-8, so it is
 * not "read": the error goes out with id null, JSON-RPC 2.0 section 5).
 */
function validId(id: unknown): id is RequestId {
  return (typeof id === "string" && id.isWellFormed()) ||
    (typeof id === "number" && Number.isInteger(id)) ||
    (isRawId(id) && Number.isInteger(Number(id.rawJSON)));
}

/**
 * Classify one decoded JSON value as a request, a notification, a response, or
 * an invalid envelope.
 *
 * A JSON array (a batch) is invalid in both revisions: no element is processed.
 * A top-level `_meta` is refused: MCP reads it at `params._meta` only.
 *
 * @param value the result of `JSON.parse` on one message
 * @returns the classification; `invalid` carries the `-32600` error to send and
 *   the request id when one could be read
 */
export function classifyMessage(value: unknown): Incoming {
  if (Array.isArray(value)) {
    return invalid(null, "JSON-RPC batches are not supported; send one message per request");
  }
  if (!isPlainObject(value)) return invalid(null, "a JSON-RPC message must be a JSON object");
  const id = "id" in value ? value.id : undefined;
  const readableId = validId(id) ? id : null;
  if (value.jsonrpc !== "2.0") return invalid(readableId, 'jsonrpc must be "2.0"');
  if ("_meta" in value) {
    return invalid(readableId, "_meta belongs in params._meta, not at the top level");
  }
  const isResponse = "result" in value || "error" in value;
  if (!("method" in value)) {
    if (isResponse) {
      return "error" in value
        ? { kind: "response", id: readableId, error: value.error }
        : { kind: "response", id: readableId, result: value.result };
    }
    return invalid(readableId, "a JSON-RPC message needs a method");
  }
  if (isResponse) {
    return invalid(
      readableId,
      "a message is a request or a response, not both (method with result/error)",
    );
  }
  if (typeof value.method !== "string") return invalid(readableId, "method must be a string");
  if (!value.method.isWellFormed()) {
    return invalid(readableId, "method is not well-formed Unicode (it holds a lone surrogate)");
  }
  if ("params" in value && !isPlainObject(value.params)) {
    return invalid(readableId, "params must be an object");
  }
  const params = value.params as Record<string, unknown> | undefined;
  if (!("id" in value)) {
    return { kind: "notification", message: { jsonrpc: "2.0", method: value.method, params } };
  }
  if (!validId(id)) {
    return invalid(
      null,
      typeof id === "string"
        ? "id is not well-formed Unicode (it holds a lone UTF-16 surrogate, which UTF-8 " +
          "cannot carry): send a well-formed string or an integer"
        : "id must be a string or an integer",
    );
  }
  return { kind: "request", message: { jsonrpc: "2.0", id, method: value.method, params } };
}

function invalid(id: RequestId | null, message: string): Incoming {
  return { kind: "invalid", id, error: new McpError(ErrorCode.InvalidRequest, message) };
}

/**
 * Serialize an error response. `id` is omitted when it could not be read
 * (JSON-RPC 2.0 section 5: "If there was an error in detecting the id").
 */
export function errorResponse(id: RequestId | null, error: JsonRpcErrorObject): string {
  const body = id === null ? { jsonrpc: "2.0", error } : { jsonrpc: "2.0", id, error };
  try {
    return JSON.stringify(body);
  } catch {
    // `data` that cannot be serialized (too deep, a cycle) is left out, never thrown.
    const bare = { code: error.code, message: String(error.message).slice(0, 1000) };
    return JSON.stringify(id === null ? { jsonrpc: "2.0", error: bare } : { ...body, error: bare });
  }
}

/**
 * Serialize a success response around an already-serialized `result`.
 *
 * Splicing lets a server serialize a static result (a list page) once and
 * answer every later request with two string concatenations.
 */
export function resultResponse(id: RequestId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}
