/**
 * A plain HTTP API over a server's tools: `POST <prefix><tool>` with the JSON
 * arguments object as the body, answered with the `CallToolResult` as JSON.
 * The call goes through exactly the validation and dispatch of `tools/call`.
 *
 * Every answer is a `CallToolResult`. A success is 200 with the tool's
 * result; every other answer is an error result that also names what went
 * wrong (src/inbound/refusal.ts, `apiErrorBody`):
 *
 * ```json
 * {"content": [{"type": "text", "text": "policy_denied: ..."}], "isError": true,
 *  "error": {"code": "<kind>", "message": "<what happened and what to do>", "status": 403}}
 * ```
 *
 * `code` is the inbound rule that refused (`host`, `origin`, `method`,
 * `auth`, `not_acceptable`, `media_type`, `size`, `deadline`, `framing`,
 * `not_found`, ...), `invalid_body` for a body that is not one JSON object,
 * or the kind of the tool's failure (`unknown_tool`, `invalid_arguments`, a
 * {@link ToolError}'s `kind`, ...); `content` and `structuredContent` are the
 * tool's own error result when the call reached the tool layer, else the
 * message as one text block.
 * Statuses: 400 body or arguments refused; 401/403 the inbound checks or a
 * guard refusal; 404 unknown tool (or a path with more segments);
 * 405/406/408/413/415 the inbound checks; otherwise the status the tool's
 * {@link ToolError} carries (an upstream failure 502). Every body is JSON with
 * `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`.
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
import { apiErrorBody, apiRefusal } from "../inbound/refusal.ts";

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
 *
 * @example POST /api/echo
 * ```ts
 * import { createToolApiHandler } from "./tool_api.ts";
 * import { loopbackHosts } from "../inbound/checks.ts";
 * import { McpServer } from "../mcp/server.ts";
 * const server = new McpServer({
 *   name: "echo",
 *   version: "1.0.0",
 *   catalog: {
 *     tools: [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }],
 *     resources: [],
 *     prompts: [],
 *   },
 *   dispatch: (_tool, { text }) => ({ content: [{ type: "text", text: String(text) }] }),
 * });
 * const api = createToolApiHandler(server, {
 *   authorize: () => true,
 *   allowedOrigins: [],
 *   allowedHosts: loopbackHosts(8787),
 * });
 * const response = await api(
 *   new Request("http://127.0.0.1:8787/api/echo", {
 *     method: "POST",
 *     headers: { host: "127.0.0.1:8787", "content-type": "application/json" },
 *     body: JSON.stringify({ text: "hi" }),
 *   }),
 * );
 * const body = await response.json();
 * if (response.status !== 200 || body.content[0].text !== "hi") throw new Error(JSON.stringify(body));
 * ```
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
    if (place instanceof Refusal) return apiRefusal(place);
    if (name === null || name === "" || name.includes("/")) {
      return apiRefusal(
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
    if (before instanceof Refusal) return apiRefusal(before);
    if (before instanceof Response) return before;
    const body = await readBody(request, max, options.log, options.bodyDeadlineMs);
    if (body instanceof Refusal) return apiRefusal(body);
    const refused = await checkAfterBody(request, body, options, before.auth);
    if (refused) return apiRefusal(refused);
    let args: unknown;
    try {
      args = parseArguments(decodeUtf8(body));
    } catch {
      args = undefined;
    }
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      options.log?.({
        level: "warn",
        event: "refused",
        decision: "refuse",
        rule: "invalid_body",
        status: 400,
        tool: name.slice(0, 64),
        reason: args === undefined ? "not UTF-8 JSON text" : "not a JSON object",
      });
      return new Response(
        apiErrorBody(
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
    if (outcome.status >= 200 && outcome.status < 300) return json(outcome.status, outcome.result);
    const text = outcome.result.content?.find((c) => c.type === "text");
    return new Response(
      apiErrorBody(
        outcome.code ?? "tool_error",
        text && "text" in text ? String(text.text) : `the tool failed (${outcome.status})`,
        outcome.status,
        outcome.result,
      ),
      { status: outcome.status, headers: HEADERS },
    );
  });
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
