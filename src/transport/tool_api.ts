/**
 * A plain HTTP API over a server's tools: `POST <prefix><tool>` with the JSON
 * arguments object as the body, answered with the `CallToolResult` as JSON.
 * The call goes through exactly the validation and dispatch of `tools/call`.
 *
 * Statuses: 200 success; 400 body not one JSON object, or arguments refused
 * by the tool's schema; 403/413/405/415 from the inbound checks; 404 unknown
 * tool (or a path with more segments); otherwise the status the tool's
 * {@link ToolError} carries (a guard refusal 403, an upstream failure 502).
 * Every body is JSON with `Cache-Control: no-store` and
 * `X-Content-Type-Options: nosniff`.
 *
 * @module
 */
import type { McpServer } from "../mcp/server.ts";
import { parseArguments } from "../mcp/jsonrpc.ts";
import { CancelScope, RequestScopeContext } from "./cancel_scope.ts";
import { decodeUtf8 } from "./bytes.ts";
import {
  checkAfterBody,
  checkBeforeBody,
  checkOriginHost,
  DEFAULT_MAX_BODY_BYTES,
  type InboundOptions,
  pathOf,
  readBody,
  Refusal,
  refuseBeforeBody,
  requireInboundOptions,
  withCors,
} from "../inbound/checks.ts";
import { errorBody, plainRefusal } from "../inbound/refusal.ts";

const HEADERS = {
  "content-type": "application/json",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/** Options of {@link createToolApiHandler}: the inbound checks, and the path prefix. */
export interface ToolApiOptions extends InboundOptions {
  /** Path before the tool name (default `"/api/"`). */
  prefix?: string;
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: HEADERS });
}

/**
 * Build the tool API handler.
 *
 * @throws {TypeError} at construction when `authorize` or `allowedOrigins` is missing
 */
export function createToolApiHandler(
  server: McpServer,
  options: ToolApiOptions,
): (request: Request) => Promise<Response> {
  requireInboundOptions(options, "createToolApiHandler");
  const prefix = options.prefix ?? "/api/";
  const max = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const scope = options.cancel ? new CancelScope(options.cancel) : undefined;
  return withCors(options, async (request, origin) => {
    const path = pathOf(request) ?? "";
    const name = path.startsWith(prefix) ? decodeSegment(path.slice(prefix.length)) : null;
    // Host and Origin first, as on every route; then the path names one tool (404).
    const place = checkOriginHost(request, options, origin);
    if (place instanceof Refusal) return plainRefusal(place);
    if (name === null || name === "" || name.includes("/")) {
      return plainRefusal(
        refuseBeforeBody(
          request,
          options.log,
          404,
          "not_found",
          `Not Found: POST ${prefix}<tool> names one tool (its name percent-encoded as one ` +
            `path segment)`,
        ),
      );
    }
    const before = await checkBeforeBody(request, options, origin);
    if (before instanceof Refusal) return plainRefusal(before);
    if (before instanceof Response) return before;
    const body = await readBody(request, max, options.log, options.bodyDeadlineMs);
    if (body instanceof Refusal) return plainRefusal(body);
    const refused = await checkAfterBody(request, body, options, before.auth);
    if (refused) return plainRefusal(refused);
    let args: unknown;
    try {
      args = parseArguments(decodeUtf8(body));
    } catch {
      args = undefined;
    }
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      return new Response(
        errorBody(
          "invalid_body",
          "Bad Request: the body must be one JSON object of tool arguments (UTF-8 JSON text, " +
            "e.g. {} for none)",
          400,
        ),
        { status: 400, headers: HEADERS },
      );
    }
    const ctx = new RequestScopeContext(request, before.auth, scope);
    let outcome;
    try {
      outcome = await server.callTool(name, args, ctx);
    } finally {
      ctx.release();
    }
    return json(outcome.status, outcome.result);
  });
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
