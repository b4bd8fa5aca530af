/**
 * MCP over stateless Streamable HTTP as one Web-standard function,
 * `(Request) => Promise<Response>`: hand it to `Deno.serve`, call it from a
 * test, or mount it under a path of another router. It serves whatever path
 * it is given; routing is the caller's business.
 *
 * Per request, in this order (the 2026-07-28 transport page and the dual-era
 * checklist): Origin and Host (403), HTTP method (405 for anything but POST),
 * `authorize` (403), media types (415, 406), body cap (413), `authorizeBody`
 * (403), JSON (`-32700`), then the server core. Every answer is one JSON
 * object (`application/json`); notifications get 202 with no body. No
 * sessions, no SSE: `Mcp-Session-Id` and `Last-Event-ID` are ignored.
 *
 * @module
 */
import type { McpServer, MessageContext } from "../mcp/server.ts";
import { parseMessage } from "../mcp/jsonrpc.ts";
import {
  acceptsJson,
  beforeBody,
  checkAfterBody,
  checkBeforeBody,
  DEFAULT_MAX_BODY_BYTES,
  type InboundOptions,
  isJsonContentType,
  readBody,
  refuse,
  requireInboundOptions,
  withCors,
} from "../inbound/checks.ts";

import { CancelScope, RequestScopeContext } from "./cancel_scope.ts";
import { decodeUtf8 } from "./bytes.ts";

export type { AuthVerdict, InboundOptions } from "../inbound/checks.ts";
export { isLoopback, loopbackHosts } from "../inbound/checks.ts";

const JSON_HEADERS = { "content-type": "application/json" };

/**
 * What the core learns about one HTTP request. `signal` is read from the
 * request only when a handler asks for it: a served request's signal costs a
 * pending operation, and most answers never look at it. (A class getter, not
 * an object-literal getter closing over the request: measured on Deno 2.9.6,
 * that closure doubled the server's peak RSS under load.)
 */
class HttpMessageContext extends RequestScopeContext implements MessageContext {
  readonly headers: Headers;

  constructor(request: Request, auth: unknown, scope?: CancelScope) {
    super(request, auth, scope);
    this.headers = request.headers;
  }
}

/**
 * Build the MCP HTTP handler for a server.
 *
 * @param server the core that answers messages
 * @param options `authorize` and `allowedOrigins` are required (no defaults)
 * @throws {TypeError} at construction when a required option is missing
 *
 * @example
 * ```ts
 * import { McpServer } from "../mcp/server.ts";
 * import { createHttpHandler } from "./http.ts";
 * const server = new McpServer({ name: "x", catalog: { tools: [], resources: [], prompts: [] } });
 * const handler = createHttpHandler(server, { authorize: () => true, allowedOrigins: [] });
 * const res = await handler(new Request("http://127.0.0.1/mcp", { method: "GET" }));
 * if (res.status !== 405) throw new Error("GET must be refused");
 * ```
 */
export function createHttpHandler(
  server: McpServer,
  options: InboundOptions,
): (request: Request) => Promise<Response> {
  requireInboundOptions(options, "createHttpHandler");
  const max = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const scope = options.cancel ? new CancelScope(options.cancel) : undefined;
  return withCors(options, async (request, origin) => {
    let before = checkBeforeBody(request, options, origin);
    if (before instanceof Promise) before = await before;
    if (before instanceof Response) return before;
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return refuse(
        415,
        "Unsupported Media Type: send Content-Type: application/json",
        beforeBody(request),
      );
    }
    if (!acceptsJson(request.headers.get("accept"))) {
      return refuse(
        406,
        "Not Acceptable: this endpoint answers application/json",
        beforeBody(request),
      );
    }
    const body = await readBody(request, max, options.log, options.bodyDeadlineMs);
    if (body instanceof Response) return body;
    const refused = options.authorizeBody
      ? await checkAfterBody(request, body, options, before.auth)
      : null;
    if (refused) return refused;

    let message: unknown;
    try {
      message = parseMessage(decodeUtf8(body));
    } catch {
      const reply = server.parseError();
      return new Response(reply.body, { status: reply.status, headers: JSON_HEADERS });
    }
    const ctx = new HttpMessageContext(request, before.auth, scope);
    let reply;
    try {
      reply = await server.handle(message, ctx);
    } finally {
      ctx.release();
    }
    if (reply.body === null) return new Response(null, { status: 202 });
    return new Response(reply.body, { status: reply.status, headers: JSON_HEADERS });
  });
}
