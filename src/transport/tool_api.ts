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
  beforeBody,
  checkAfterBody,
  checkBeforeBody,
  DEFAULT_MAX_BODY_BYTES,
  type InboundOptions,
  isJsonContentType,
  pathOf,
  readBody,
  refuse,
  requireInboundOptions,
  withCors,
} from "../inbound/checks.ts";

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
    if (name === null || name === "" || name.includes("/")) {
      return refuse(404, "Not Found: POST /api/<tool> names one tool", beforeBody(request));
    }
    const before = await checkBeforeBody(request, options, origin);
    if (before instanceof Response) return before;
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return refuse(
        415,
        "Unsupported Media Type: send Content-Type: application/json",
        beforeBody(request),
      );
    }
    const body = await readBody(request, max, options.log, options.bodyDeadlineMs);
    if (body instanceof Response) return body;
    const refused = await checkAfterBody(request, body, options, before.auth);
    if (refused) return refused;
    let args: unknown;
    try {
      args = parseArguments(decodeUtf8(body));
    } catch {
      return json(400, { error: "The body must be one JSON object of tool arguments" });
    }
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      return json(400, { error: "The body must be one JSON object of tool arguments" });
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
