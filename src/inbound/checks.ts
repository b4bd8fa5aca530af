/**
 * The checks every inbound HTTP request passes before anything reads its body:
 * `Origin` and `Host` (DNS rebinding, MCP "Security Warning" of the Streamable
 * HTTP transport), the HTTP method, the host's `authorize` hook, then the
 * media types (src/inbound/media_types.ts), in that order; after the body is
 * read (src/inbound/body.ts), `authorizeBody`. Shared by the MCP endpoint,
 * the tool API and every other route of weir's listener, and composable
 * around any `(Request) => Promise<Response>` handler. This module re-exports
 * the body and media-type checks, so one import serves a route.
 *
 * Each check that refuses returns a {@link Refusal} (src/inbound/refusal.ts):
 * the rule, the status and a message that says what to do, with its audit
 * line already written (the log also gets the reason, which the caller does
 * not: it may name what an attacker should not learn). The route renders it.
 * A refusal issued before the body is read carries `connection: close`, so
 * the server does not go on reading a body for a caller it has refused.
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import { type AfterRefusal, logRefusal, Refusal } from "./refusal.ts";
import { beforeBody, refuseBeforeBody } from "./body.ts";
import { checkMediaTypes } from "./media_types.ts";

export { type AfterRefusal, Refusal } from "./refusal.ts";
export {
  beforeBody,
  BODY_PIECES,
  checkNoBody,
  DEFAULT_BODY_DEADLINE_MS,
  DEFAULT_MAX_BODY_BYTES,
  readBody,
  refuseBeforeBody,
} from "./body.ts";
export { acceptsJson, checkAccept, checkMediaTypes, isJsonContentType } from "./media_types.ts";

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

/**
 * The `Host` values of a server bound to loopback on `port`: `localhost`,
 * `127.0.0.1` and `[::1]`, with and without the port, and the bound address
 * itself when it is another loopback address (`127.0.0.2`, any of 127/8).
 *
 * @example The Host values of 127.0.0.1:8787
 * ```ts
 * import { loopbackHosts } from "./checks.ts";
 * const hosts = loopbackHosts(8787);
 * if (!hosts.includes("localhost:8787") || !hosts.includes("[::1]") || hosts.includes("evil.example")) {
 *   throw new Error(hosts.join());
 * }
 * ```
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

/**
 * Whether a listen address is a loopback address (so `Host` should be checked).
 *
 * @example Which listen addresses are loopback
 * ```ts
 * import { isLoopback } from "./checks.ts";
 * if (!isLoopback("127.0.0.1") || !isLoopback("[::1]") || isLoopback("0.0.0.0")) throw new Error();
 * ```
 */
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

/** What the pre-body checks say of a request they do not refuse. */
export type BeforeBody = { auth: unknown };

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
 * The refusal of a refusing verdict, its audit line written (naming the
 * subject and tool when the verdict knows them): its own 401/403 and
 * challenge, else 403.
 */
function authRefusal(
  verdict: Verdict,
  after: AfterRefusal,
  log: Logger | undefined,
  fallback: string,
): Refusal {
  const status = verdict.status === 401 ? 401 : 403;
  const message = verdict.message ??
    (status === 401
      ? "Unauthorized: this server needs credentials it did not get; send them as its operator " +
        "says"
      : "Forbidden: the credentials sent do not allow this request; ask the server's operator " +
        "for access");
  const refusal = new Refusal(
    status,
    "auth",
    message,
    after,
    verdict.challenge === undefined ? {} : { "www-authenticate": verdict.challenge },
  );
  logRefusal(log, refusal, verdict.reason ?? fallback, {
    ...(verdict.subject === undefined ? {} : { subject: verdict.subject }),
    ...(verdict.tool === undefined ? {} : { tool: verdict.tool.slice(0, 64) }),
  });
  return refusal;
}

/** What the `Host` and `Origin` refusals tell the caller. */
const ORIGIN_HOST_MESSAGES = {
  host: "Forbidden: this server does not answer requests addressed to that Host name; call it " +
    "by the address it listens on, or have its operator allow the name (weir: --allow-host)",
  origin: "Forbidden: browser requests from this Origin are not allowed; have the server's " +
    "operator allow the origin (weir: --allow-origin)",
} as const;

/**
 * The `Host` and `Origin` check alone, for routes that need no more (and as
 * the first step of {@link checkBeforeBody}).
 * @returns a refusal (403, its audit line written), or the verdict to go on with
 */
export function checkOriginHost(
  request: Request,
  options: Pick<InboundOptions, "allowedOrigins" | "allowedHosts" | "log">,
  origin: string | null = request.headers.get("origin"),
): Refusal | null | { origin: string } {
  const verdict = originVerdict(request, options, origin);
  if (verdict !== "host" && verdict !== "origin") return verdict;
  const refusal = new Refusal(403, verdict, ORIGIN_HOST_MESSAGES[verdict], beforeBody(request));
  // The audit line names the refused header's value (bounded), never anything else.
  logRefusal(options.log, refusal, `${verdict} not allowed`, {
    [verdict]: (request.headers.get(verdict) ?? "").slice(0, 200),
  });
  return refusal;
}

/**
 * Run the pre-body checks in order: Origin and Host (403), HTTP method (405:
 * both endpoints take POST only), `authorize` (401/403; a hook that throws:
 * 500), then the media types: a JSON `Content-Type` (415) and an `Accept`
 * that admits JSON (406). Synchronous when `authorize` is (no promise per
 * request for `() => true`); a promise when it returns one.
 * @param origin the request's `Origin` header, when the caller has read it already
 * @returns a refusal (its audit line written), the `204` answer to a CORS
 *   preflight, or `{auth}` to go on with
 */
export function checkBeforeBody(
  request: Request,
  options: InboundOptions,
  origin: string | null = request.headers.get("origin"),
): Refusal | Response | BeforeBody | Promise<Refusal | BeforeBody> {
  const log = options.log;
  const verdict = checkOriginHost(request, options, origin);
  if (verdict instanceof Refusal) return verdict;
  if (request.method === "OPTIONS" && verdict !== null && isPreflight(request)) {
    return preflight(request, verdict);
  }
  if (request.method !== "POST") {
    return refuseBeforeBody(
      request,
      log,
      405,
      "method",
      `Method Not Allowed: this endpoint takes POST only, not ${request.method.slice(0, 16)}`,
      undefined,
      { allow: "POST" },
    );
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

/**
 * What `authorize`'s verdict makes of the request: a refusal, or, once the
 * media types pass, `{auth}`.
 */
function afterAuthorize(
  request: Request,
  options: InboundOptions,
  answer: AuthVerdict,
): Refusal | BeforeBody {
  let verdict: Verdict;
  try {
    verdict = verdictOf(answer);
  } catch (error) {
    return authorizeFailed(request, options, error);
  }
  if (!verdict.allow) {
    return authRefusal(verdict, beforeBody(request), options.log, "authorize refused");
  }
  return checkMediaTypes(request, options.log) ?? { auth: verdict.auth };
}

/**
 * A route answered to `GET` and `HEAD` only (405 otherwise, with `Allow`).
 * @returns a refusal (its audit line written), or `null`
 */
export function checkGetOnly(request: Request, log: Logger | undefined): Refusal | null {
  if (request.method === "GET" || request.method === "HEAD") return null;
  return refuseBeforeBody(
    request,
    log,
    405,
    "method",
    `Method Not Allowed: this endpoint takes GET (or HEAD), not ${request.method.slice(0, 16)}`,
    undefined,
    { allow: "GET, HEAD" },
  );
}

/** An `authorize` hook that threw (or rejected): 500, the error to the log only. */
function authorizeFailed(request: Request, options: InboundOptions, error: unknown): Refusal {
  options.log?.({ level: "error", event: "authorize_failed", error: String(error) });
  // The audit line too (rule authorize_failed): every refusal has one; the error's words
  // stay on the line above, never in the answer.
  return refuseBeforeBody(
    request,
    options.log,
    500,
    "authorize_failed",
    "Internal Server Error: the authorization check failed; try again, and tell the server's " +
      "operator if it goes on (the server's log says why)",
  );
}

/**
 * Run the post-read hook, if any.
 * @returns a refusal (401/403, or 500 when the hook threw; connection kept)
 *   or `null` to go on
 */
export async function checkAfterBody(
  request: Request,
  body: Uint8Array,
  options: InboundOptions,
  auth?: unknown,
): Promise<Refusal | null> {
  if (!options.authorizeBody) return null;
  try {
    const verdict = verdictOf(await options.authorizeBody(request, body, auth));
    if (verdict.allow) return null;
    return authRefusal(verdict, "keep", options.log, "authorizeBody refused");
  } catch (error) {
    options.log?.({ level: "error", event: "authorize_body_failed", error: String(error) });
    const refusal = new Refusal(
      500,
      "authorize_failed",
      "Internal Server Error: the authorization check failed; try again, and tell the " +
        "server's operator if it goes on (the server's log says why)",
      "keep",
    );
    logRefusal(options.log, refusal, "the authorizeBody hook threw");
    return refusal;
  }
}

/**
 * The request's path, or `null` when the URL cannot be parsed (Deno builds
 * `request.url` from the `Host` header, which a client controls).
 */
export function pathOf(request: Request): string | null {
  let url: string;
  try {
    url = request.url;
  } catch {
    return null;
  }
  // A client sends every request to the same URL: the last one's path is kept
  // (it depends on the URL text alone, so the memo cannot differ).
  if (url === lastUrl.url) return lastUrl.path;
  let path: string | null;
  try {
    path = new URL(url).pathname;
  } catch {
    path = null;
  }
  lastUrl = { url, path };
  return path;
}

/** The last URL {@link pathOf} parsed, and its path (`""` makes no URL: `null`). */
let lastUrl: { url: string; path: string | null } = { url: "", path: null };

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
