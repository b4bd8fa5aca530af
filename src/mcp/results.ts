/**
 * Results and errors on their way out: the 2026-07-28 decoration of a result
 * (`resultType`, cache hints, `serverInfo` in `_meta`), clean text out for
 * every result a handler returns, error results, an unforeseen failure as
 * `-32603`, and the small helpers the method families share.
 *
 * @module
 */
import { ErrorCode, type JsonObject, McpError } from "./jsonrpc.ts";
import { type Era, ERAS, MetaKey, type MethodRule } from "./revisions.ts";
import { cleanDeep, cleanText, jsonTextIsClean } from "./text.ts";
import type { CacheHint, Logger, ServerOptions } from "./options.ts";
import type { CallToolResult } from "./types.ts";

/** What result decoration reads of a server (see src/mcp/setup.ts). */
export interface Decorating {
  readonly options: Pick<ServerOptions, "cache">;
  readonly serverInfo: JsonObject;
}

/** What {@link asMcpError} needs of a server: where to log. */
export interface Logging {
  readonly log: Logger;
}

const DEFAULT_HINT: CacheHint = { ttlMs: 0, cacheScope: "private" };

/**
 * A result as the request's revision carries it: unchanged under 2025-11-25;
 * under 2026-07-28 with `resultType: "complete"`, the family's cache hint
 * (made private for a list narrowed to one caller) and `serverInfo` in `_meta`.
 */
export function decorate(
  s: Decorating,
  era: Era,
  rule: MethodRule,
  result: object,
  narrowed = false,
): object {
  if (!ERAS[era].decorateResults) return result;
  const own = (result as { _meta?: JsonObject })._meta;
  const decorated: Record<string, unknown> = { ...result, resultType: "complete" };
  if (rule.cacheable) {
    const hint = cacheHint(s, rule.cacheable);
    // A list narrowed to one caller's access is never shared between callers.
    if (narrowed) hint.cacheScope = "private";
    Object.assign(decorated, hint);
  }
  decorated._meta = { ...own, [MetaKey.serverInfo]: s.serverInfo };
  return decorated;
}

/** The host's cache hint for a list family (`ServerOptions.cache`), or `{ttlMs: 0, private}`. */
export function cacheHint(
  s: Decorating,
  family: "tools" | "resources" | "prompts" | "discover",
): CacheHint {
  const hint = s.options.cache?.[family] ?? DEFAULT_HINT;
  return { ttlMs: hint.ttlMs, cacheScope: hint.cacheScope };
}

/**
 * A handler's failure as a JSON-RPC error: an `McpError` as thrown; anything
 * else is logged (its message, clipped) and answered as `-32603 Internal error`.
 */
export function asMcpError(s: Logging, error: unknown, method: string): McpError {
  if (error instanceof McpError) return error;
  s.log({
    level: "error",
    event: "internal_error",
    method: method.slice(0, 120),
    error: error instanceof Error ? error.message.slice(0, 500) : typeof error,
  });
  return new McpError(ErrorCode.InternalError, "Internal error");
}

/** How deep a result may nest for {@link cleanOut} to walk it. */
export const MAX_RESULT_DEPTH = 256;

/**
 * Clean text out (src/mcp/text.ts): every string of a result a handler
 * returned, keys included, is made well-formed and free of terminal control
 * sequences before it is sent, whatever the mode or host.
 * @throws {Error} when the value nests deeper than {@link MAX_RESULT_DEPTH}
 */
export function cleanOut<T>(value: T): T {
  // One walk: cleanDeep refuses (RangeError) past the depth instead of recursing on.
  return cleanDeep(value, MAX_RESULT_DEPTH);
}

/**
 * The mark {@link structuredResult} puts on a result whose JSON text proved it
 * clean and within {@link MAX_RESULT_DEPTH}: {@link cleanResult} returns such
 * a result as it is instead of walking it again. A symbol key, not a
 * `WeakSet` (measured: a `WeakSet` entry per call cost about 0.3 µs, its
 * weak table walked by every garbage collection); `JSON.stringify` skips it,
 * and this module never exports it.
 */
const CLEAN_BY_TEXT = Symbol("clean by its JSON text");

/** A result {@link structuredResult} made, with its mark. */
type Marked = CallToolResult & { [CLEAN_BY_TEXT]?: boolean };

/**
 * A tool result carrying `value` twice, as MCP asks of structured content
 * (2025-11-25 and 2026-07-28 "Structured Content": the same JSON serialized
 * in a text block): `{content: [{type: "text", text: JSON.stringify(value)}],
 * structuredContent: value}`. When that text shows every string and key of
 * `value` clean (src/mcp/text.ts: no raw control or lone surrogate, no escape
 * that decodes to one) and is too short to nest {@link MAX_RESULT_DEPTH}
 * levels (each level takes two brackets), the core does not walk the result
 * again on its way out: {@link cleanResult} would return it unchanged. Any
 * other value is walked and cleaned as every result is. Neither the result
 * nor `value` may be changed afterwards.
 *
 * @throws {TypeError} when `value` cannot be serialized (a cycle, a BigInt)
 * @example A structured result, its text the value's JSON
 * ```ts
 * import { structuredResult } from "./results.ts";
 * const result = structuredResult({ id: 7, state: "open" });
 * const block = result.content[0];
 * if (block.type !== "text" || block.text !== '{"id":7,"state":"open"}') throw new Error(String(block));
 * ```
 */
export function structuredResult(value: JsonObject): CallToolResult {
  const text = JSON.stringify(value);
  const result: Marked = {
    content: [{ type: "text", text }],
    structuredContent: value,
    // The result's own keys and "text" type are clean; `value` sits one level down.
    [CLEAN_BY_TEXT]: text.length < 2 * MAX_RESULT_DEPTH && jsonTextIsClean(text),
  };
  return result;
}

/** {@link cleanOut} for a tool result: too deep becomes an error result, not a throw. */
export function cleanResult(result: CallToolResult, name: string): CallToolResult {
  if ((result as Marked)[CLEAN_BY_TEXT] === true) return result;
  try {
    return cleanOut(result);
  } catch {
    return errorResult(
      `Tool "${name}" returned a result nested deeper than ${MAX_RESULT_DEPTH} levels`,
    );
  }
}

/**
 * A `CallToolResult` reporting a failure as text.
 *
 * @example A failure as the text a model reads
 * ```ts
 * import { errorResult } from "./results.ts";
 * const result = errorResult("ticket 7 is closed: reopen it first");
 * if (result.isError !== true || result.content[0].type !== "text") throw new Error("not an error result");
 * ```
 */
export function errorResult(message: string): CallToolResult {
  return { content: [{ type: "text", text: cleanText(message) }], isError: true };
}

/** A caller's text as an error may quote it: at most 120 characters, clean (src/mcp/text.ts). */
export function clip(text: string): string {
  return cleanText(text.length > 120 ? `${text.slice(0, 117)}...` : text);
}

/** Whether a value is a plain JSON object (not `null`, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Copy only the declared keys, as own data properties: a key such as
 * `__proto__` or `constructor` becomes a plain property and changes no prototype.
 */
export function pick(
  source: Record<string, unknown>,
  keys: readonly string[],
): Record<string, unknown> {
  // An assignment makes an own data property for every key but `__proto__`,
  // the one accessor Object.prototype has; that key is defined instead (as
  // CreateDataProperty would). Cheaper than building entries for fromEntries.
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (!Object.hasOwn(source, key)) continue;
    if (key === "__proto__") {
      Object.defineProperty(out, key, {
        value: source[key],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    } else out[key] = source[key];
  }
  return out;
}

/** Whether a value is a thenable (what `await` would wait for). */
export function isThenable<T>(value: unknown): value is PromiseLike<T> {
  return typeof value === "object" && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}
