/**
 * Exact numbers through serve-upstream. The official SDK client parses the
 * upstream's answers with `JSON.parse`, which rounds integers beyond 2^53 and
 * re-spells `1.0` as `1` before weir sees them. The transports weir hands the
 * client see the raw answer first: for a `tools/call`, they parse it again
 * with `parseJsonExact` (src/mcp/text.ts) and keep its `result` in the
 * call's request scope (`scope.ts`).
 * {@link withExactNumbers} then puts the exact `structuredContent` in place of
 * the client's, but only when the two are the same value once numbers are
 * read as JavaScript reads them (so nothing but digits can differ). Text
 * content is a string and needs none of this.
 *
 * @module
 */
import { isRawJson, parseJsonExact } from "../mcp/text.ts";
import type { CallToolResult } from "../mcp/types.ts";

/** The id of a JSON-RPC `tools/call` request message, if it is one. */
export function toolsCallId(message: unknown): string | number | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const m = message as { method?: unknown; id?: unknown };
  return m.method === "tools/call" && (typeof m.id === "string" || typeof m.id === "number")
    ? m.id
    : undefined;
}

/**
 * The exact `result` of the answer to `id` in a JSON-RPC text (one message or
 * a batch), or `undefined` when the text holds no such answer.
 */
export function exactResult(text: string, id: string | number): unknown {
  let value: unknown;
  try {
    value = parseJsonExact(text);
  } catch {
    return undefined;
  }
  for (const message of Array.isArray(value) ? value : [value]) {
    if (
      typeof message === "object" && message !== null && (message as { id?: unknown }).id === id &&
      "result" in message
    ) {
      return (message as { result: unknown }).result;
    }
  }
  return undefined;
}

/** Whether a decoded value holds a number kept as its source text. */
function holdsRawNumber(value: unknown, depth = 0): boolean {
  if (isRawJson(value)) return true;
  if (typeof value !== "object" || value === null || depth > 64) return false;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (holdsRawNumber(child, depth + 1)) return true;
  }
  return false;
}

/**
 * The client's result with the exact `structuredContent`, when `exactResult`
 * (the answer's `result` as `parseJsonExact` read it) holds one that equals the client's once its numbers are rounded as
 * `JSON.parse` rounds them; otherwise the client's result unchanged.
 */
export function withExactNumbers(result: CallToolResult, exactResult: unknown): CallToolResult {
  const exact = exactResult as { structuredContent?: unknown } | undefined;
  if (!exact || typeof exact !== "object" || !("structuredContent" in result)) return result;
  const precise = exact.structuredContent;
  if (!holdsRawNumber(precise)) return result;
  const rounded = JSON.stringify(JSON.parse(JSON.stringify(precise)));
  if (rounded !== JSON.stringify(result.structuredContent)) return result;
  return { ...result, structuredContent: precise as CallToolResult["structuredContent"] };
}
