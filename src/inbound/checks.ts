/**
 * The checks every inbound HTTP request passes before anything reads its body:
 * `Origin` and `Host` (DNS rebinding, MCP "Security Warning" of the Streamable
 * HTTP transport), the host's `authorize` hook, and a body cap that refuses
 * without reading past it. Shared by the MCP endpoint and the tool API, and
 * composable around any `(Request) => Promise<Response>` handler.
 *
 * A refusal says nothing of its reason to the caller (the reason goes to the
 * log). A refusal issued before the body is read carries `connection: close`,
 * so the server does not go on reading a body for a caller it has refused.
 *
 * @module
 */
import type { LogEvent, Logger } from "../mcp/server.ts";
import { readCapped } from "../transport/bytes.ts";
import { Deadline, withinDeadline } from "../outbound/deadline.ts";

/**
 * The verdict of an `authorize` hook: `true`/`false`, or an object that can
 * carry the caller's identity through to handlers (`auth`) or a reason for
 * the log (never sent to the caller).
 *
 * A refusal is 403 unless it names its own `status` (401 or 403: an OAuth
 * resource server answers 401 for a missing or invalid token, RFC 6750
 * section 3.1) and `challenge`, the `WWW-Authenticate` value to send with it.
 * `message` replaces the default body text; it is sent, so it must name no
 * secret. `subject` and `tool` (never a credential) go to the audit line.
 */
export type AuthVerdict =
  | boolean
  | { allow: true; auth?: unknown }
  | {
    allow: false;
    reason?: string;
    status?: 401 | 403;
    challenge?: string;
    message?: string;
    subject?: string;
    tool?: string;
  };

/** Options shared by the MCP endpoint and the tool API. */
export interface InboundOptions {
  /**
   * Decides, from the request line and headers only, whether this caller may
   * be served. Required: to accept everyone, say so with `() => true`.
   * It runs before the body is read and must not read it.
   */
  authorize: (request: Request) => AuthVerdict | Promise<AuthVerdict>;
  /**
   * Origins a browser-borne request may come from (exact `scheme://host[:port]`),
   * or `"any"`. Required. A request without `Origin` (not from a browser) passes.
   * When `allowedHosts` is a list, a same-origin request (an `Origin` of
   * `http://` or `https://` followed by the `Host` the request names, a host on
   * that list) passes too: a page the server itself serves is no rebinding risk.
   * A listed (or `"any"`) origin is answered with CORS headers, and its
   * `OPTIONS` preflight with 204 (Fetch standard, "CORS protocol").
   */
  allowedOrigins: readonly string[] | "any";
  /**
   * Optional second hook, after the body is read and before it is decoded,
   * given the exact bytes received (for body signatures). Refusal: 403, and the
   * connection stays open (the body has been read). `auth` is what
   * `authorize` allowed the request with.
   */
  authorizeBody?: (
    request: Request,
    body: Uint8Array,
    auth: unknown,
  ) => AuthVerdict | Promise<AuthVerdict>;
  /**
   * Values the `Host` header may take (`host` or `host:port`, compared without
   * case), or `"any"` (the default). A server bound to loopback should list its
   * loopback names: see {@link loopbackHosts}.
   */
  allowedHosts?: readonly string[] | "any";
  /** Largest body accepted, in bytes (default 1 MiB = 1,048,576). Larger: 413. */
  maxBodyBytes?: number;
  /**
   * Milliseconds the whole body may take to arrive, counted from when the
   * handler starts reading it (default 15,000). Slower: 408 with
   * `Connection: close`; the handler's slot and the body read so far are
   * released at once. Under Deno.serve (2.9.6, measured) the socket itself
   * is closed only once the client has sent the rest of its declared body
   * (never kept alive for another request) or goes away: no API drops a
   * connection whose body is unfinished. Deno.serve sets no deadline of its
   * own on request headers either; see docs/operating.md, "Slow clients, and the
   * reverse proxy in front".
   */
  bodyDeadlineMs?: number;
  /** Where refusal reasons go. */
  log?: Logger;
  /**
   * Aborts every call in flight, e.g. at a shutdown's drain deadline. A
   * handler sees it through its call's `signal`; when the abort reason is a
   * `ToolError`, that error is the call's result.
   */
  cancel?: AbortSignal;
}

/** 1 MiB, the default body cap. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** 15 s, the default whole-body deadline. */
export const DEFAULT_BODY_DEADLINE_MS = 15_000;

class BodyDeadline extends Error {}
const bodyDeadline = () => new BodyDeadline();

/**
 * The `Host` values of a server bound to loopback on `port`: `localhost`,
 * `127.0.0.1` and `[::1]`, with and without the port, and the bound address
 * itself when it is another loopback address (`127.0.0.2`, any of 127/8).
 */
export function loopbackHosts(port: number, bound?: string): string[] {
  const names = ["localhost", "127.0.0.1", "[::1]"];
  if (bound !== undefined) {
    const h = bound.toLowerCase().replace(/^\[(.*)\]$/, "$1");
    const name = h.includes(":") ? `[${h}]` : h;
    if (!names.includes(name)) names.push(name);
  }
  return names.flatMap((h) => [h, `${h}:${port}`]);
}

/** Whether a listen address is a loopback address (so `Host` should be checked). */
export function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^(?:::ffff:)?127\.\d+\.\d+\.\d+$/.test(h);
}

/** Check that the two required options were given; throws at construction, not per request. */
export function requireInboundOptions(options: InboundOptions, what: string): void {
  if (typeof options?.authorize !== "function") {
    throw new TypeError(
      `${what}: "authorize" is required. To accept every caller, pass authorize: () => true`,
    );
  }
  const origins = options.allowedOrigins;
  if (origins !== "any" && !Array.isArray(origins)) {
    throw new TypeError(
      `${what}: "allowedOrigins" is required: a list of origins, or "any" to accept every origin`,
    );
  }
  if (options.authorizeBody !== undefined && typeof options.authorizeBody !== "function") {
    throw new TypeError(`${what}: "authorizeBody" must be a function (request, bytes) => verdict`);
  }
}

/**
 * What becomes of the connection after a refusal:
 * - `keep`: the body was read; an ordinary response.
 * - `close`: `connection: close`, for a request with no body worth reading.
 * - `drop`: the response is sent, then the connection is reset, so the server
 *   reads no more of a body it refused. (Deno's HTTP server drains an unread
 *   request body before honouring `connection: close`; measured: a 64 MiB
 *   body was read in full. Ending the response stream with an error is the
 *   Web-standard way to make it drop the connection instead.)
 */
export type AfterRefusal = "keep" | "close" | "drop";

/** Bodies at most this large are let drain; a larger or unknown one is dropped. */
const DRAIN_LIMIT = 64 * 1024;

/** How to end a refusal issued before the body was read. */
export function beforeBody(request: Request): AfterRefusal {
  if (request.body === null) return "close";
  const length = request.headers.get("content-length");
  return length !== null && Number(length) <= DRAIN_LIMIT ? "close" : "drop";
}

/**
 * A refusal: a JSON-RPC-shaped error body without id, ended as `after` says.
 * `challenge` becomes the `WWW-Authenticate` header (RFC 6750 section 3).
 */
export function refuse(
  status: number,
  message: string,
  after: AfterRefusal = "close",
  challenge?: string,
): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (after !== "keep") headers.connection = "close";
  if (status === 405) headers.allow = "POST";
  if (challenge !== undefined) headers["www-authenticate"] = challenge;
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32600, message } });
  if (after !== "drop") return new Response(body, { status, headers });
  const bytes = new TextEncoder().encode(body);
  let sent = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(bytes);
        return;
      }
      // Let the refusal reach the client, then reset the connection.
      await new Promise((resolve) => setTimeout(resolve, 20));
      controller.error(
        JSON.stringify({
          time: new Date().toISOString(),
          level: "warn",
          event: "connection_dropped",
          status,
          reason: message,
        }),
      );
    },
  });
  return new Response(stream, { status, headers });
}

/** An {@link AuthVerdict} as one object: `allow`, with a refusal's fields when it refuses. */
type Verdict =
  & { allow: boolean; auth?: unknown }
  & Omit<Extract<AuthVerdict, { allow: false }>, "allow">;

function verdictOf(verdict: AuthVerdict): Verdict {
  if (typeof verdict === "boolean") return { allow: verdict };
  if (verdict && typeof verdict === "object" && "allow" in verdict) return verdict;
  return { allow: false, reason: "authorize returned neither a boolean nor {allow}" };
}

/**
 * The audit line of an `auth` refusal (the shape of `src/ops/audit.ts`),
 * naming the subject and tool when the verdict knows them.
 */
function refusedLine(verdict: Verdict, fallback: string): LogEvent {
  return {
    level: "warn",
    event: "refused",
    decision: "refuse",
    rule: "auth",
    status: verdict.status === 401 ? 401 : 403,
    ...(verdict.subject === undefined ? {} : { subject: verdict.subject }),
    ...(verdict.tool === undefined ? {} : { tool: verdict.tool.slice(0, 64) }),
    reason: verdict.reason ?? fallback,
  };
}

/** The response for a refusing verdict: its own 401/403 and challenge, else a bare 403. */
function refusal(verdict: Verdict, after: AfterRefusal): Response {
  const status = verdict.status === 401 ? 401 : 403;
  const message = verdict.message ?? (status === 401 ? "Unauthorized" : "Forbidden");
  return refuse(status, message, after, verdict.challenge);
}

/**
 * Run the pre-body checks in order: Origin and Host (403), HTTP method (405:
 * both endpoints take POST only), `authorize` (403; a hook that throws: 500).
 * Synchronous when `authorize` is (no promise per request for `() => true`);
 * a promise when it returns one.
 * @param origin the request's `Origin` header, when the caller has read it already
 * @returns a refusal `Response`, or `{auth}` to go on with
 */
export function checkBeforeBody(
  request: Request,
  options: InboundOptions,
  origin: string | null = request.headers.get("origin"),
): Response | { auth: unknown } | Promise<Response | { auth: unknown }> {
  const log = options.log;
  const verdict = originVerdict(request, options, origin);
  if (verdict === "host" || verdict === "origin") {
    // The audit line names the refused header's value (bounded), never anything else.
    log?.({
      level: "warn",
      event: "refused",
      decision: "refuse",
      rule: verdict,
      status: 403,
      reason: `${verdict} not allowed`,
      [verdict]: (request.headers.get(verdict) ?? "").slice(0, 200),
    });
    return refuse(403, "Forbidden", beforeBody(request));
  }
  if (request.method === "OPTIONS" && verdict !== null && isPreflight(request)) {
    return preflight(request, verdict);
  }
  if (request.method !== "POST") {
    return refuse(405, "Method Not Allowed: this endpoint takes POST only", beforeBody(request));
  }
  try {
    const answer = options.authorize(request);
    if (isThenable(answer)) {
      return Promise.resolve(answer).then(
        (settled) => afterAuthorize(request, options, settled),
        (error) => authorizeFailed(request, options, error),
      );
    }
    return afterAuthorize(request, options, answer);
  } catch (error) {
    return authorizeFailed(request, options, error);
  }
}

function isThenable(value: unknown): value is PromiseLike<AuthVerdict> {
  return typeof value === "object" && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}

/** What `authorize`'s verdict makes of the request: a refusal, or `{auth}`. */
function afterAuthorize(
  request: Request,
  options: InboundOptions,
  answer: AuthVerdict,
): Response | { auth: unknown } {
  try {
    const verdict = verdictOf(answer);
    if (!verdict.allow) {
      options.log?.(refusedLine(verdict, "authorize refused"));
      return refusal(verdict, beforeBody(request));
    }
    return { auth: verdict.auth };
  } catch (error) {
    return authorizeFailed(request, options, error);
  }
}

/** An `authorize` hook that threw (or rejected): 500, the error to the log only. */
function authorizeFailed(request: Request, options: InboundOptions, error: unknown): Response {
  options.log?.({ level: "error", event: "authorize_failed", error: String(error) });
  return refuse(500, "Internal Server Error", beforeBody(request));
}

/**
 * Read the whole body, refusing with 413 as soon as it passes `max` bytes
 * (before reading further: the stream is cancelled and the connection
 * dropped), and with 408 when it has not all arrived within `deadlineMs`.
 *
 * Memory: a small declared body (64 KiB or less) is read in one
 * `request.bytes()` call, which is the cheapest under load. A larger or
 * chunked one is read straight into one buffer sized from its
 * `Content-Length` (grown by doubling when there is none), with
 * {@link readCapped}: measured on Deno 2.9.6, `request.bytes()` held about
 * 3.7 MiB per unfinished 1 MiB body, a list of the chunks as delivered about
 * 1.5 MiB (and 50 times the bytes received for a client dripping small
 * pieces: each read allocates a 64 KiB chunk), one buffer about 1.2 MiB
 * (bench/slow_clients.ts; the rest is the HTTP server's per-connection
 * buffering, below JavaScript).
 *
 * @param log receives the audit line of a 413 (rule `size`) or 408 (rule `deadline`)
 * @param deadlineMs whole-body deadline in milliseconds (0 disables)
 * @returns the exact bytes received, or a refusal
 */
export async function readBody(
  request: Request,
  max: number,
  log?: Logger,
  deadlineMs: number = DEFAULT_BODY_DEADLINE_MS,
): Promise<Uint8Array | Response> {
  const tooLarge = () => {
    log?.({
      level: "warn",
      event: "refused",
      decision: "refuse",
      rule: "size",
      status: 413,
      reason: `body over ${max} bytes`,
    });
    return refuse(413, `Request body exceeds ${max} bytes`, "drop");
  };
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > max) {
    await request.body?.cancel().catch(() => {});
    return tooLarge();
  }
  // A small declared body is read with request.bytes() before request.body is
  // touched: reading the body getter first makes Deno build a stream and
  // collect it chunk by chunk instead of taking the whole body at once.
  const small = declared !== null && /^\d+$/.test(declared) && Number(declared) <= DRAIN_LIMIT;
  const stream = small ? null : request.body;
  if (!small && !stream) return new Uint8Array(0);
  // A shared slot timer, not a setTimeout per request (src/outbound/deadline.ts);
  // the small path needs no signal, only a deadline on one promise.
  const deadline = small ? null : new Deadline(undefined, deadlineMs, bodyDeadline);
  try {
    if (small) {
      // A small declared length: HTTP framing holds the body to it, so read it
      // in one call (a stream reader allocates a 64 KiB chunk per read;
      // measured: peak RSS 110 MiB instead of 47 under load).
      const bytes = await (deadlineMs > 0
        ? withinDeadline(request.bytes(), deadlineMs, bodyDeadline)
        : request.bytes());
      // Only a Request built in code can carry more than it declares.
      return bytes.byteLength > max ? tooLarge() : bytes;
    }
    const bytes = await readCapped(stream!, max, {
      sizeHint: declared !== null && /^\d+$/.test(declared) ? Number(declared) : undefined,
      signal: deadline!.signal,
    });
    return bytes ?? tooLarge();
  } catch (error) {
    if (error instanceof BodyDeadline) {
      request.body?.cancel().catch(() => {});
      log?.({
        level: "warn",
        event: "refused",
        decision: "refuse",
        rule: "deadline",
        status: 408,
        reason: `body not received within ${deadlineMs} ms`,
      });
      return refuse(
        408,
        `Request Timeout: the body did not arrive within ${deadlineMs} ms`,
        "drop",
      );
    }
    return refuse(400, "The request body could not be read", "drop");
  } finally {
    deadline?.clear();
  }
}

/**
 * Run the post-read hook, if any.
 * @returns a refusal (403, connection kept) or `null` to go on
 */
export async function checkAfterBody(
  request: Request,
  body: Uint8Array,
  options: InboundOptions,
  auth?: unknown,
): Promise<Response | null> {
  if (!options.authorizeBody) return null;
  try {
    const verdict = verdictOf(await options.authorizeBody(request, body, auth));
    if (verdict.allow) return null;
    options.log?.(refusedLine(verdict, "authorizeBody refused"));
    return refusal(verdict, "keep");
  } catch (error) {
    options.log?.({ level: "error", event: "authorize_body_failed", error: String(error) });
    return refuse(500, "Internal Server Error", "keep");
  }
}

/**
 * The request's path, or `null` when the URL cannot be parsed (Deno builds
 * `request.url` from the `Host` header, which a client controls).
 */
export function pathOf(request: Request): string | null {
  try {
    return new URL(request.url).pathname;
  } catch {
    return null;
  }
}

/** Whether a `Content-Type` value names JSON (`application/json`, parameters allowed). */
export function isJsonContentType(value: string | null): boolean {
  if (value === "application/json") return true; // the common spelling, decided without copies
  return value !== null && value.split(";")[0].trim().toLowerCase() === "application/json";
}

/** Whether an `Accept` value admits `application/json` (absent Accept admits anything). */
export function acceptsJson(value: string | null): boolean {
  if (value === null) return true;
  // A client sends the same Accept on every request: the last answer is kept
  // (the function depends on the value alone, so the memo cannot differ).
  if (value === lastAccept.value) return lastAccept.ok;
  const ok = acceptsJsonUncached(value);
  lastAccept = { value, ok };
  return ok;
}

let lastAccept: { value: string; ok: boolean } = { value: "", ok: true };

function acceptsJsonUncached(value: string): boolean {
  if (value.trim() === "") return true;
  return value.split(",").some((part) => {
    const type = part.split(";")[0].trim().toLowerCase();
    return type === "application/json" || type === "application/*" || type === "*/*";
  });
}

/**
 * Whether the request's `Host` and `Origin` may be served.
 * @returns `"host"` or `"origin"` naming what is refused; `null` for a request
 *   without `Origin`; else the allowed origin (to echo in CORS headers)
 */
export function originVerdict(
  request: Request,
  options: Pick<InboundOptions, "allowedOrigins" | "allowedHosts">,
  origin: string | null = request.headers.get("origin"),
): "host" | "origin" | null | { origin: string } {
  const hosts = options.allowedHosts ?? "any";
  const host = (request.headers.get("host") ?? "").toLowerCase();
  // `host` is lower case, so an exact hit is a hit; only a miss compares without case.
  if (hosts !== "any" && !hosts.includes(host) && !hosts.some((h) => h.toLowerCase() === host)) {
    return "host";
  }
  if (origin === null) return null;
  if (options.allowedOrigins === "any" || options.allowedOrigins.includes(origin)) {
    return { origin };
  }
  // Same origin: the page was served under the very Host this server vouched for.
  const lower = origin.toLowerCase();
  if (
    hosts !== "any" && host !== "" && (lower === `http://${host}` || lower === `https://${host}`)
  ) {
    return { origin };
  }
  return "origin";
}

function isPreflight(request: Request): boolean {
  return request.headers.get("access-control-request-method") !== null;
}

/** Header names a preflight may ask for: a comma-separated list of RFC 9110 tokens. */
const TOKEN_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

/**
 * Answer a CORS preflight from an allowed origin: 204, POST allowed, the
 * request headers asked for (when they are well-formed names) allowed, for 10
 * minutes. A preflight carries no credentials, so it is answered before
 * `authorize` (Fetch standard, "CORS-preflight request").
 */
function preflight(request: Request, allowed: { origin: string }): Response {
  const headers = new Headers({
    "access-control-allow-origin": allowed.origin,
    "access-control-allow-methods": "POST",
    "access-control-max-age": "600",
    "vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
  });
  const asked = request.headers.get("access-control-request-headers")?.trim();
  if (asked && asked.length <= 2048 && TOKEN_LIST.test(asked)) {
    headers.set("access-control-allow-headers", asked);
  }
  if (request.body !== null) headers.set("connection", "close");
  return new Response(null, { status: 204, headers });
}

/** Response headers a browser script may read besides the CORS-safelisted ones. */
const EXPOSED = "WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version";

/**
 * Wrap a handler so that every answer to an allowed browser origin carries
 * `Access-Control-Allow-Origin` (that origin), `Vary: Origin` and the exposed
 * headers, refusals included (so a page can read why it was refused). A
 * request without `Origin`, or from an origin that is refused, gets none.
 */
export function withCors(
  options: Pick<InboundOptions, "allowedOrigins" | "allowedHosts">,
  handler: (request: Request, origin: string | null) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    // Read once and handed to the handler (each header read is an op call on
    // a served request). get, not has: on a served request, get reads one
    // header through a fast path, while has makes Deno copy the whole header
    // list (measured ~1 µs).
    const origin = request.headers.get("origin");
    const response = await handler(request, origin);
    if (origin === null) return response;
    const verdict = originVerdict(request, options, origin);
    if (verdict === null || typeof verdict === "string") return response;
    if (response.headers.has("access-control-allow-origin")) return response;
    try {
      return addCors(response, verdict.origin);
    } catch {
      // Immutable headers (a Response.error or redirect): answer with a copy.
      return addCors(new Response(response.body, response), verdict.origin);
    }
  };
}

function addCors(response: Response, origin: string): Response {
  response.headers.set("access-control-allow-origin", origin);
  response.headers.append("vary", "Origin");
  response.headers.set("access-control-expose-headers", EXPOSED);
  return response;
}
