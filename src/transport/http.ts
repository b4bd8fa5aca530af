/**
 * MCP over stateless Streamable HTTP as one Web-standard function,
 * `(Request) => Promise<Response>`: hand it to `Deno.serve`, call it from a
 * test, or mount it under a path of another router. It serves whatever path
 * it is given; routing is the caller's business.
 *
 * Per request, in this order (the 2026-07-28 transport page and the dual-era
 * checklist): Origin and Host (403), HTTP method (405 for anything but POST),
 * `authorize` (401/403), media types (415, 406), body cap (413), body
 * deadline (408), body framing (400), `authorizeBody` (401/403), JSON
 * (`-32700`), then the server core. An answer is one JSON object
 * (`application/json`); notifications get 202 with no body. One exception:
 * a `tools/call` whose `_meta.progressToken` asks for progress, from a client
 * that accepts `text/event-stream`, is answered with an event stream as soon
 * as the tool reports progress (the 2025-11-25 and 2026-07-28 transport
 * pages let the server pick per request): each `notifications/progress` is
 * one event, the answer the last, then the stream ends. A tool that reports
 * none is answered with JSON as usual. No sessions, no resumption:
 * `Mcp-Session-Id` and `Last-Event-ID` are ignored, events carry no id.
 *
 * Every refusal is a JSON-RPC error object naming its rule and what to do
 * (src/inbound/refusal.ts), with the request's `id` when the body was read
 * and the id could be. An answer that may depend on the caller says
 * `Cache-Control: no-store` (RFC 9111 section 5.2.2.5), so that no HTTP cache
 * between client and server (one told to cache POST, say) hands one caller's
 * answer to another: every refusal, and every answer to a request `authorize`
 * allowed with an identity (`auth`: an OAuth caller, whose `tools/list` is
 * narrowed to its scopes and whose signed state is bound to it). An answer to
 * an anonymous request is the same for every caller and carries only
 * `Content-Type` (one header keeps Deno's fast path: bench/run.ts).
 * The connection-level end of a refusal (dropping the connection rather than
 * draining a refused body) is the listener's business: the `Response`s
 * returned here are ordinary ones, safe to read, clone or compress; see
 * {@link withConnectionDrop}.
 *
 * @module
 */
import type { McpServer, MessageContext } from "../mcp/server.ts";
import { classifyMessage, parseMessage, type RequestId } from "../mcp/jsonrpc.ts";
import {
  checkAfterBody,
  checkBeforeBody,
  DEFAULT_MAX_BODY_BYTES,
  type InboundOptions,
  readBody,
  Refusal,
  requireInboundOptions,
  withCors,
} from "../inbound/checks.ts";
import { mcpRefusal } from "../inbound/refusal.ts";

import { CancelScope, RequestScopeContext } from "./cancel_scope.ts";
import { decodeUtf8 } from "./bytes.ts";

export type { AuthVerdict, InboundOptions } from "../inbound/checks.ts";
export { isLoopback, loopbackHosts } from "../inbound/checks.ts";
export { withConnectionDrop } from "../inbound/refusal.ts";

const JSON_HEADERS = { "content-type": "application/json" };
/** The headers of an answer that may depend on the caller. */
const CALLER_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };
/** An event stream that may depend on the caller: never stored by a cache. */
const CALLER_SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-store" };
const encoder = new TextEncoder();
/** `text/event-stream` in an `Accept` field (as a whole media range, any parameters). */
const ACCEPTS_SSE = /(?:^|,)\s*text\/event-stream\s*(?:;|,|$)/i;

/**
 * What the core learns about one HTTP request. `signal` is read from the
 * request only when a handler asks for it: a served request's signal costs a
 * pending operation, and most answers never look at it. (A class getter, not
 * an object-literal getter closing over the request: measured on Deno 2.9.6,
 * that closure doubled the server's peak RSS under load.)
 */
class HttpMessageContext extends RequestScopeContext implements MessageContext {
  /** Set for a call that asked for progress (see the module doc). */
  notify?: (message: object) => void = undefined;
}

/** Whether a decoded message is a `tools/call` asking for progress notifications. */
function asksForProgress(message: unknown): boolean {
  const m = message as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
  return m?.method === "tools/call" && m.params?._meta?.progressToken !== undefined;
}

/** One event of an event stream carrying one JSON-RPC message. */
function event(json: string): Uint8Array {
  return encoder.encode(`event: message\ndata: ${json}\n\n`);
}

/**
 * Build the MCP HTTP handler for a server.
 *
 * @param server the core that answers messages
 * @param options `authorize` and `allowedOrigins` are required (no defaults)
 * @returns the handler; its refusals are ordinary `Response`s (see
 *   {@link withConnectionDrop} for the listener-side connection drop)
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
    if (before instanceof Refusal) return mcpRefusal(before);
    if (before instanceof Response) return before;
    const body = await readBody(request, max, options.log, options.bodyDeadlineMs);
    if (body instanceof Refusal) return mcpRefusal(body);

    let message: unknown;
    let parsed = true;
    try {
      message = parseMessage(decodeUtf8(body));
    } catch {
      parsed = false;
    }
    const refused = options.authorizeBody
      ? await checkAfterBody(request, body, options, before.auth)
      : null;
    if (refused) return mcpRefusal(refused, parsed ? requestIdOf(message) : undefined);
    if (!parsed) {
      const reply = server.parseError();
      return new Response(reply.body, {
        status: reply.status,
        headers: before.auth === undefined ? JSON_HEADERS : CALLER_HEADERS,
      });
    }
    const ctx = new HttpMessageContext(request, before.auth, scope);
    if (asksForProgress(message) && ACCEPTS_SSE.test(request.headers.get("accept") ?? "")) {
      return await answerStreaming(server, message, ctx, before.auth !== undefined);
    }
    let reply;
    try {
      reply = await server.handle(message, ctx);
    } finally {
      ctx.release();
    }
    if (reply.body === null) return new Response(null, { status: 202 });
    return new Response(reply.body, {
      status: reply.status,
      headers: before.auth === undefined ? JSON_HEADERS : CALLER_HEADERS,
    });
  });
}

/** The `id` of a JSON-RPC message, when it has one that could be read (JSON-RPC 2.0 section 5). */
function requestIdOf(message: unknown): RequestId | undefined {
  const incoming = classifyMessage(message);
  if (incoming.kind === "request") return incoming.message.id;
  return incoming.kind === "invalid" && incoming.id !== null ? incoming.id : undefined;
}

/**
 * Answer a call that asked for progress: JSON when the answer comes before
 * any progress; otherwise an event stream from the first progress on, the
 * answer its last event.
 */
async function answerStreaming(
  server: McpServer,
  message: unknown,
  ctx: HttpMessageContext,
  forCaller: boolean,
): Promise<Response> {
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  let settled = false;
  let upgrade!: (response: Response) => void;
  const upgraded = new Promise<Response>((resolve) => upgrade = resolve);
  ctx.notify = (note) => {
    if (settled) return;
    const bytes = event(JSON.stringify(note));
    if (stream) {
      stream.enqueue(bytes);
      return;
    }
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        stream = controller;
        controller.enqueue(bytes);
      },
    });
    upgrade(
      new Response(body, { status: 200, headers: forCaller ? CALLER_SSE_HEADERS : SSE_HEADERS }),
    );
  };
  const replying = server.handle(message, ctx).finally(() => ctx.release());
  const first = await Promise.race([replying, upgraded]);
  if (!(first instanceof Response)) {
    settled = true;
    if (first.body === null) return new Response(null, { status: 202 });
    return new Response(first.body, {
      status: first.status,
      headers: forCaller ? CALLER_HEADERS : JSON_HEADERS,
    });
  }
  // Streaming: the answer is the last event, then the stream ends.
  replying.then((reply) => {
    settled = true;
    try {
      if (reply.body !== null) stream!.enqueue(event(reply.body));
      stream!.close();
    } catch {
      // The client went away: nothing to end.
    }
  }, () => {
    settled = true;
    try {
      stream!.close();
    } catch { /* gone */ }
  });
  return first;
}
