/**
 * What belongs to the protocol hop between weir and an MCP server rather
 * than to a tool's call or result, shared by the official client's path
 * (`connection.ts`) and the short path (`fast_call.ts`):
 *
 * - {@link withoutHop}: of a result, the `_meta` keys of the hop itself
 *   (`io.modelcontextprotocol/...`, which carry the server's `serverInfo`)
 *   and the fields `resultType`, `ttlMs` and `cacheScope` are dropped: they
 *   describe the server, not the tool's result;
 * - {@link traceContext}: the W3C trace context (`traceparent`,
 *   `tracestate`, `baggage`: keys MCP reserves in a request's
 *   `params._meta`) of the current span, when telemetry is on.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { CallToolResult } from "../mcp/types.ts";
import { upstreamTracing } from "../ops/trace_hooks.ts";

/** W3C trace context keys a request's `params._meta` carries (MCP reserves them). */
const TRACE_KEYS = ["traceparent", "tracestate", "baggage"] as const;
/** Result fields that describe the protocol hop, not the tool's result. */
const HOP_FIELDS = ["resultType", "ttlMs", "cacheScope"] as const;

/** The result without what describes the protocol hop (see the module doc). */
export function withoutHop(result: CallToolResult): CallToolResult {
  const meta = result._meta as Record<string, unknown> | undefined;
  const hopMeta = meta && Object.keys(meta).some((k) => k.startsWith("io.modelcontextprotocol/"));
  if (!hopMeta && !HOP_FIELDS.some((f) => f in result)) return result;
  const out = { ...result } as Record<string, unknown>;
  for (const field of HOP_FIELDS) delete out[field];
  if (hopMeta) {
    const kept = Object.fromEntries(
      Object.entries(meta!).filter(([k]) => !k.startsWith("io.modelcontextprotocol/")),
    );
    if (Object.keys(kept).length > 0) out._meta = kept;
    else delete out._meta;
  }
  return out as unknown as CallToolResult;
}

/**
 * The current span's trace context as `params._meta` entries (the same
 * values go in the request's headers); `undefined` when telemetry is off or
 * there is none. Call it inside the request's CLIENT span.
 */
export function traceContext(): JsonObject | undefined {
  const tracing = upstreamTracing();
  if (!tracing) return undefined;
  const carrier = new Headers();
  tracing.inject(carrier);
  const meta: JsonObject = {};
  for (const key of TRACE_KEYS) {
    const value = carrier.get(key);
    if (value !== null) meta[key] = value;
  }
  return Object.keys(meta).length > 0 ? meta : undefined;
}
