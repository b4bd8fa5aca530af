/**
 * The checks every inbound HTTP request passes before anything reads its body:
 * `Origin` and `Host` (DNS rebinding, MCP "Security Warning" of the Streamable
 * HTTP transport), the host's `authorize` hook, content negotiation (RFC 9110
 * section 12.5.1), and a body cap that refuses without reading past it.
 * Shared by the MCP endpoint, the tool API and every other route of weir's
 * listener, and composable around any `(Request) => Promise<Response>` handler.
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
import { FragmentedStreamError, type PieceBudget, readCapped } from "../transport/bytes.ts";
import { Deadline, withinDeadline } from "../outbound/deadline.ts";
import { type AfterRefusal, logRefusal, Refusal } from "./refusal.ts";

export { type AfterRefusal, Refusal } from "./refusal.ts";

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

/**
 * The read budget of a request body ({@link readBody}): 1,024 pieces free,
 * then one per 64 bytes (a 1 MiB body may arrive in up to 17,408 pieces;
 * ordinary clients send a few dozen). bench/chunked_body.ts measures both
 * sides of it.
 */
export const BODY_PIECES: Readonly<PieceBudget> = { free: 1024, minAverage: 64 };

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

/** Bodies at most this large are let drain; a larger or unknown one is dropped. */
const DRAIN_LIMIT = 64 * 1024;

/**
 * How to end a refusal issued before the body was read: `close` when no body
 * or a small declared one follows, `drop` for a large, chunked or
 * unparsable one.
 */
export function beforeBody(request: Request): AfterRefusal {
  // The HTTP/1.1 framing says what follows the head (RFC 9112 section 6.3),
  // whatever `request.body` shows (Deno hands a GET none even when one follows).
  if (request.headers.get("transfer-encoding") !== null) return "drop";
  const length = request.headers.get("content-length");
  if (length === null) return "close";
  return /^\d+$/.test(length) && Number(length) <= DRAIN_LIMIT ? "close" : "drop";
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

/**
 * Refuse a request with `rule` and write the audit line: the shared way every
 * route refuses before it reads a body (`connection: close`, or dropped when a
 * large or unknown body follows).
 */
export function refuseBeforeBody(
  request: Request,
  log: Logger | undefined,
  status: number,
  rule: Refusal["rule"],
  message: string,
  reason: string = message,
  headers: Record<string, string> = {},
): Refusal {
  const refusal = new Refusal(status, rule, message, beforeBody(request), headers);
  logRefusal(log, refusal, reason);
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
 * The media types of a JSON endpoint: `Content-Type` must name JSON (415),
 * and `Accept` must admit `application/json` (406, RFC 9110 section 12.5.1).
 * @returns a refusal (its audit line written), or `null`
 */
export function checkMediaTypes(request: Request, log: Logger | undefined): Refusal | null {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    return refuseBeforeBody(
      request,
      log,
      415,
      "media_type",
      "Unsupported Media Type: send Content-Type: application/json",
    );
  }
  return checkAccept(request, log);
}

/**
 * `Accept` must admit `application/json` (RFC 9110 section 12.5.1): else 406.
 * @returns a refusal (its audit line written), or `null`
 */
export function checkAccept(request: Request, log: Logger | undefined): Refusal | null {
  if (acceptsJson(request.headers.get("accept"))) return null;
  return refuseBeforeBody(
    request,
    log,
    406,
    "not_acceptable",
    "Not Acceptable: this endpoint answers application/json, which the Accept header " +
      "refuses; accept it (e.g. Accept: application/json)",
  );
}

/**
 * A route that reads no request body refuses one (413, rule `size`; the
 * connection closed, or dropped when the body is large or of unknown length).
 * Whether a body follows is read from its HTTP/1.1 framing (RFC 9112 section
 * 6.3: `Transfer-Encoding`, or a `Content-Length` above 0), as it came over
 * the wire: Deno hands a `GET` no body even when bytes follow, and a
 * `DELETE` an empty one when none do.
 * @returns a refusal (its audit line written), or `null`
 */
export function checkNoBody(request: Request, log: Logger | undefined): Refusal | null {
  const length = request.headers.get("content-length");
  if (request.headers.get("transfer-encoding") === null && (length === null || length === "0")) {
    return null;
  }
  return refuseBeforeBody(
    request,
    log,
    413,
    "size",
    "Content Too Large: this endpoint takes no request body; send none",
  );
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
  return refuseBeforeBody(
    request,
    undefined,
    500,
    "authorize_failed",
    "Internal Server Error: the authorization check failed; try again, and tell the server's " +
      "operator if it goes on (the server's log says why)",
  );
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
 * Cost: a body read in pieces (a chunked body, or one that arrives in many
 * small socket reads) costs one read per piece, whatever its size, so such a
 * body may take at most {@link BODY_PIECES}: `free` pieces, then one per
 * `minAverage` bytes. Past that it is refused (400, rule `framing`) and the
 * connection dropped, so reading a body never costs more than its size
 * allows (measured and explained in bench/chunked_body.ts).
 *
 * @param log receives the audit line of a 413 (rule `size`), 408 (rule
 *   `deadline`) or 400 (rules `framing`, `body_unreadable`)
 * @param deadlineMs whole-body deadline in milliseconds (0 disables)
 * @returns the exact bytes received, or a refusal
 */
export async function readBody(
  request: Request,
  max: number,
  log?: Logger,
  deadlineMs: number = DEFAULT_BODY_DEADLINE_MS,
): Promise<Uint8Array | Refusal> {
  const refused = (status: number, rule: Refusal["rule"], message: string, reason: string) => {
    const refusal = new Refusal(status, rule, message, "drop");
    logRefusal(log, refusal, reason);
    return refusal;
  };
  const tooLarge = () =>
    refused(
      413,
      "size",
      `Request body exceeds ${max} bytes; send a smaller one`,
      `body over ${max} bytes`,
    );
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
      pieces: BODY_PIECES,
    });
    return bytes ?? tooLarge();
  } catch (error) {
    if (error instanceof BodyDeadline) {
      request.body?.cancel().catch(() => {});
      return refused(
        408,
        "deadline",
        `Request Timeout: the body did not arrive within ${deadlineMs} ms; send it at once`,
        `body not received within ${deadlineMs} ms`,
      );
    }
    if (error instanceof FragmentedStreamError) {
      return refused(
        400,
        "framing",
        `Bad Request: the body arrived in ${error.reads} pieces for ${error.bytes} bytes; past ` +
          `the first ${BODY_PIECES.free}, a body may take one piece per ` +
          `${BODY_PIECES.minAverage} bytes. Send it with Content-Length, or in larger chunks`,
        `body in ${error.reads} pieces for ${error.bytes} bytes`,
      );
    }
    return refused(
      400,
      "body_unreadable",
      "Bad Request: the request body could not be read; send it again",
      `body read failed: ${error instanceof Error ? error.name : typeof error}`,
    );
  } finally {
    deadline?.clear();
  }
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
    return new Refusal(
      500,
      "authorize_failed",
      "Internal Server Error: the authorization check failed; try again, and tell the " +
        "server's operator if it goes on (the server's log says why)",
      "keep",
    );
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

/**
 * Whether an `Accept` value admits `application/json`, by RFC 9110 section
 * 12.5.1: of the media ranges that match it, the most specific one decides
 * (`application/json` over `application/*` over `*\/*`; among equally
 * specific ones, the highest weight), and it is acceptable when that weight
 * is above 0 (`q=0` means "not acceptable"). An absent or empty `Accept`
 * admits anything; one where no range matches admits nothing. Media type
 * parameters of a range (`;charset=utf-8`) do not narrow it here: JSON has
 * none (RFC 8259 section 11). A range whose weight is not a valid `qvalue`
 * (`q=2`, `q=abc`, `q=0.0001`) is ignored, as one the grammar does not allow.
 */
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

/** How specific a media range is for `application/json` (0: it does not match). */
const SPECIFICITY: Readonly<Record<string, number>> = {
  "application/json": 3,
  "application/*": 2,
  "*/*": 1,
};

/** RFC 9110 section 12.4.2 `qvalue`. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

function acceptsJsonUncached(value: string): boolean {
  let best = 0; // the specificity of the ranges that decide so far
  let weight = 0; // the highest weight among them
  let listed = false;
  for (const element of value.split(",")) {
    const [range, ...params] = element.split(";");
    const type = range.trim().toLowerCase();
    if (type === "") continue; // an empty list element (RFC 9110 section 5.6.1)
    listed = true;
    const specificity = SPECIFICITY[type] ?? 0;
    if (specificity === 0 || specificity < best) continue;
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf("=");
      if (param.slice(0, eq).trim().toLowerCase() !== "q") continue;
      const text = param.slice(eq + 1).trim();
      q = QVALUE.test(text) ? Number(text) : NaN;
      break; // the first q= is the weight; what follows are extension parameters
    }
    if (Number.isNaN(q)) continue;
    if (specificity > best) {
      best = specificity;
      weight = q;
    } else weight = Math.max(weight, q);
  }
  return listed ? weight > 0 : true;
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
