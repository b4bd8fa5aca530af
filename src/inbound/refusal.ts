/**
 * Inbound refusals as values: which rule refused, the status, a message that
 * says what to do, and what becomes of the connection. A refusal is decided
 * (and its audit line written) once, where the check runs, and rendered at
 * the edge in the shape of the route that answers it:
 *
 * - the MCP endpoint: a JSON-RPC error object (`code` -32600, `message`,
 *   `data: {rule, status}`), carrying the request's `id` when it could be
 *   read (JSON-RPC 2.0 section 5; MCP transports answer HTTP errors this way);
 * - the tool API: its one answer shape, a `CallToolResult`; a refusal is an
 *   error result (`isError: true`, the message as its text) that also carries
 *   `error: {code, message, status}` ({@link apiErrorBody});
 * - every other route (`/admin/*`, `/healthz`, the OAuth metadata, unknown
 *   paths): `{"error": {"code": <rule>, "message": <what happened and what to
 *   do>, "status": <HTTP status>}}` ({@link errorBody}).
 *
 * Every refusal answers `Cache-Control: no-store` (it depends on the caller)
 * and `X-Content-Type-Options: nosniff`. A refusal issued before the body was
 * read says `Connection: close`; one that must not let the server go on
 * reading a body it refused is marked to be dropped ({@link dropsConnection}),
 * which only a listener can do ({@link withConnectionDrop}): the `Response`
 * itself is an ordinary one, safe to read, clone or compress.
 *
 * @module
 */
import type { LogEvent, Logger } from "../mcp/server.ts";
import type { RequestId } from "../mcp/jsonrpc.ts";

/**
 * The closed set of inbound rules (the audit line's `rule`, the body's
 * `code`): `host` and `origin` (DNS rebinding, CORS), `method` (405),
 * `auth` (401/403), `authorize_failed` (500: the hook threw), `media_type`
 * (415), `not_acceptable` (406), `size` (413), `deadline` (408), `framing`
 * (400: a body in more pieces than its size allows), `body_unreadable`
 * (400), `not_found` (404), `bad_host` (400: a `Host` that makes no URL),
 * `shutting_down` and `overload` (503).
 */
export type InboundRule =
  | "host"
  | "origin"
  | "method"
  | "auth"
  | "authorize_failed"
  | "media_type"
  | "not_acceptable"
  | "size"
  | "deadline"
  | "framing"
  | "body_unreadable"
  | "not_found"
  | "bad_host"
  | "shutting_down"
  | "overload";

/**
 * What becomes of the connection after a refusal:
 * - `keep`: the body was read; an ordinary response.
 * - `close`: `connection: close`, for a request with no body worth reading.
 * - `drop`: `connection: close`, and the listener resets the connection once
 *   the answer is sent, so the server reads no more of a body it refused.
 *   (Deno's HTTP server drains an unread request body before honouring
 *   `connection: close`; measured: a 64 MiB body was read in full.) Only when
 *   no read of the body is pending: on Deno 2.9.6 a reset answered while one
 *   is leaves the connection open for good, neither closed nor served (so the
 *   408 of a body still arriving is `close`: src/inbound/body.ts readBody).
 */
export type AfterRefusal = "keep" | "close" | "drop";

/** One inbound refusal, before it is rendered. */
export class Refusal {
  /**
   * @param status the HTTP status
   * @param rule the rule that refused
   * @param message what happened and what to do (sent: names no secret)
   * @param after what becomes of the connection
   * @param headers extra response headers (`allow`, `retry-after`, `www-authenticate`)
   */
  constructor(
    readonly status: number,
    readonly rule: InboundRule,
    readonly message: string,
    readonly after: AfterRefusal = "close",
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/** Responses a listener must end by dropping the connection. */
const toDrop = new WeakSet<Response>();

/** Whether `response` is a refusal whose connection should be dropped once it is sent. */
export function dropsConnection(response: Response): boolean {
  return toDrop.has(response);
}

function headersOf(refusal: Refusal): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    ...refusal.headers,
  };
  if (refusal.after !== "keep") headers.connection = "close";
  return headers;
}

function respond(refusal: Refusal, body: string): Response {
  const response = new Response(body, { status: refusal.status, headers: headersOf(refusal) });
  if (refusal.after === "drop") toDrop.add(response);
  return response;
}

/**
 * Render a refusal for the MCP endpoint: a JSON-RPC error response,
 * `{"jsonrpc": "2.0", "id"?: id, "error": {"code": -32600, "message", "data":
 * {"rule", "status"}}}`. `id` is left out when the request's could not be read.
 */
export function mcpRefusal(refusal: Refusal, id?: RequestId | null): Response {
  const error = {
    code: -32600,
    message: refusal.message,
    data: { rule: refusal.rule, status: refusal.status },
  };
  const body = id === undefined || id === null
    ? { jsonrpc: "2.0", error }
    : { jsonrpc: "2.0", id, error };
  return respond(refusal, JSON.stringify(body));
}

/**
 * The error body of weir's HTTP routes other than MCP and the tool API:
 * `{"error": {"code", "message", "status"}}`.
 */
export function errorBody(code: string, message: string, status: number): string {
  return JSON.stringify({ error: { code, message, status } });
}

/**
 * The tool API's error body: a `CallToolResult` with `isError: true` (the
 * tool's own error result when it has one, else `message` as its one text
 * block) that also carries `error: {code, message, status}`, so a caller
 * reads every answer of the tool API the same way.
 */
export function apiErrorBody(
  code: string,
  message: string,
  status: number,
  result?: { content: unknown[]; structuredContent?: unknown },
): string {
  return JSON.stringify({
    content: result?.content ?? [{ type: "text", text: message }],
    ...(result?.structuredContent === undefined
      ? {}
      : { structuredContent: result.structuredContent }),
    isError: true,
    error: { code, message, status },
  });
}

/** Render a refusal for any route but MCP and the tool API, in the shape of {@link errorBody}. */
export function plainRefusal(refusal: Refusal): Response {
  return respond(refusal, errorBody(refusal.rule, refusal.message, refusal.status));
}

/** Render a refusal for the tool API, in the shape of {@link apiErrorBody}. */
export function apiRefusal(refusal: Refusal): Response {
  return respond(refusal, apiErrorBody(refusal.rule, refusal.message, refusal.status));
}

/**
 * Write a refusal's audit line (the shape of `src/ops/audit.ts`): event
 * `refused`, the rule, the status and `reason` (for the log only), plus
 * `extra` fields (a refused header's bounded value, the subject).
 */
export function logRefusal(
  log: Logger | undefined,
  refusal: Refusal,
  reason: string,
  extra: Record<string, unknown> = {},
): void {
  const line: LogEvent = {
    level: refusal.status >= 500 && refusal.rule === "authorize_failed" ? "error" : "warn",
    event: "refused",
    decision: "refuse",
    rule: refusal.rule,
    status: refusal.status,
    ...extra,
    reason,
  };
  log?.(line);
}

/** How long the listener lets a dropped refusal travel before resetting the connection. */
const DROP_AFTER_MS = 20;

/**
 * Wrap a `Deno.serve` handler so that a refusal marked to drop its
 * connection ({@link dropsConnection}) is sent, then the connection reset:
 * its body becomes a stream that delivers the refusal and errors
 * {@link DROP_AFTER_MS} ms later, which makes Deno's HTTP server abort the
 * connection instead of draining the rest of a request body it was refused.
 * The error is a string, a JSON log line (`"event":"connection_dropped"`),
 * because Deno prints a response stream's error on stderr as it is.
 * Only a listener should do this (an erroring body is a connection-level
 * trick: a host that reads, clones or compresses the `Response` would see
 * the error), so the handlers themselves return ordinary `Response`s and
 * weir's own listener (`src/serving/listen.ts`) applies this wrapper. A host
 * serving the handlers with `Deno.serve` directly may apply it too.
 *
 * @example
 * ```ts
 * import { withConnectionDrop } from "./refusal.ts";
 * const handler = withConnectionDrop(() => Promise.resolve(new Response("ok")));
 * if ((await handler(new Request("http://127.0.0.1/"))).status !== 200) throw new Error();
 * ```
 */
export function withConnectionDrop(
  handler: (request: Request) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const response = await handler(request);
    if (!toDrop.has(response) || response.body === null) return response;
    const source = response.body.getReader();
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await source.read();
        if (!done) {
          controller.enqueue(value);
          return;
        }
        // Let the refusal reach the client, then reset the connection. Deno
        // prints the stream's error on stderr: it is a log line of its own.
        await new Promise((resolve) => setTimeout(resolve, DROP_AFTER_MS));
        controller.error(JSON.stringify({
          time: new Date().toISOString(),
          level: "warn",
          event: "connection_dropped",
          status: response.status,
          message: `connection dropped after a ${response.status} refusal`,
        }));
      },
      cancel(reason) {
        return source.cancel(reason);
      },
    });
    return new Response(stream, { status: response.status, headers: response.headers });
  };
}
