/**
 * The HTTP app every mode serves, as one Web-standard handler: MCP at
 * `POST /mcp`, the tool API at `POST /api/<tool>`, liveness at
 * `GET /healthz`, readiness at `GET /readyz`, the admin endpoints and the
 * OAuth metadata when configured, everything else 404; with the inbound
 * checks (Origin, loopback `Host`, a static bearer token or OAuth), shutdown's
 * 503 and `--max-concurrent`. src/serving/listen.ts serves it.
 *
 * Every route passes the same inbound checks (src/inbound/checks.ts), in
 * the same order, unless the table says otherwise:
 *
 * | route | Host | Origin | method | auth | body | Accept |
 * | --- | --- | --- | --- | --- | --- | --- |
 * | `/mcp`, `/api/<tool>` | checked | allowed origins | POST | inbound token or OAuth | cap, deadline, framing | JSON |
 * | `/admin/reload`, `/admin/describe` | checked | none (any `Origin` is refused) | POST / GET | admin token | none | JSON |
 * | `/.well-known/oauth-protected-resource[/mcp]` | checked | any (public, RFC 9728) | GET, HEAD | none | none | JSON |
 * | `/healthz`, `/readyz` | **not checked** | allowed origins | GET, HEAD | none | none | JSON |
 * | anything else: 404 | checked | allowed origins | - | - | none read | - |
 *
 * `/healthz` and `/readyz` answer whatever `Host` they are asked under:
 * probes (Kubernetes, load balancers) address a server by its IP, which a
 * `--allow-host` list does not name, and the answer (`{"status":"ok",
 * "surface":"<16 hex digits>"}`) tells a rebinding page nothing it can use (the
 * surface digest can at most confirm a guess of the whole served surface). Refusals carry the error shape of their route (src/inbound/refusal.ts).
 *
 * @module
 */
import { type Logger, type McpServer, stderrLogger } from "../mcp/server.ts";
import { createHttpHandler, isLoopback, loopbackHosts } from "../transport/http.ts";
import {
  checkAccept,
  checkGetOnly,
  checkNoBody,
  checkOriginHost,
  type InboundOptions,
  pathOf,
  Refusal,
  refuseBeforeBody,
} from "../inbound/checks.ts";
import { apiRefusal, mcpRefusal, plainRefusal } from "../inbound/refusal.ts";
import { createToolApiHandler } from "../transport/tool_api.ts";
import type { Drain } from "../ops/shutdown.ts";
import { bearerRefusal } from "../inbound/static_tokens.ts";
import { TokenTable } from "../inbound/token_table.ts";
import {
  type OAuthResourceServer,
  protectedResourceMetadataAnswer,
} from "../oauth/resource_server.ts";

/** Options of the HTTP app. */
export interface HttpAppOptions {
  /** The bound port, for the loopback `Host` check. */
  port: number;
  /** The bound hostname. When loopback, `Host` must name loopback (DNS rebinding). */
  hostname: string;
  /** Browser origins allowed to call, with CORS (default none besides the server's own). */
  allowedOrigins?: readonly string[];
  /**
   * More `Host` values to answer (`host` or `host:port`), e.g. the name a
   * Host-preserving reverse proxy forwards. Bound to loopback, these add to the
   * loopback names; bound beyond loopback, giving any makes the list exclusive.
   */
  allowedHosts?: readonly string[];
  /**
   * Require `Authorization: Bearer <token>` from callers, any one of these
   * (rotation), compared in constant time (default: no inbound auth). A
   * {@link TokenTable} limits tokens to some tools each (and can be swapped
   * by a reload).
   */
  inboundToken?: string | readonly string[] | TokenTable;
  /** Largest request body, in bytes (default 1 MiB); also the stdio line cap. */
  maxBodyBytes?: number;
  /**
   * Act as an OAuth 2.1 resource server (`src/oauth/resource_server.ts`): its hooks
   * check tokens and scopes, and its RFC 9728 metadata is served. Never
   * together with `inboundToken`.
   */
  oauth?: OAuthResourceServer;
  log?: Logger;
  /**
   * Shutdown: `GET /readyz` answers 503 from its start (grace included); new
   * requests get 503 while draining; calls are cancelled at its deadline.
   * Without it `/readyz` always answers 200.
   */
  drain?: Drain;
  /** Whole-body deadline in milliseconds (default 15,000; 0 disables): 408 past it. */
  bodyDeadlineMs?: number;
  /**
   * Requests handled at once (default none): past it, 503 with `Retry-After`
   * (`/healthz` is exempt). Counted with `drain`, so it needs one.
   */
  maxConcurrent?: number;
  /** Routes under `/admin/` (src/ops/admin.ts); without it they are 404. */
  admin?: (request: Request, pathname: string) => Promise<Response>;
}

/**
 * The HTTP routes of `weir serve --http`, as one Web-standard handler.
 */
export function guardedHttpApp(
  server: McpServer,
  options: HttpAppOptions,
): (request: Request) => Promise<Response> {
  if (options.oauth && options.inboundToken !== undefined) {
    throw new TypeError("a static inbound token and OAuth cannot be combined: choose one");
  }
  const inbound: InboundOptions = {
    authorize: options.oauth
      ? options.oauth.authorize
      : options.inboundToken === undefined
      ? () => true
      : bearerCheck(options.inboundToken),
    authorizeBody: options.oauth?.authorizeBody,
    allowedOrigins: options.allowedOrigins ?? [],
    allowedHosts: hostsFor(options),
    maxBodyBytes: options.maxBodyBytes,
    log: options.log ?? stderrLogger,
    cancel: options.drain?.cancel,
    bodyDeadlineMs: options.bodyDeadlineMs,
  };
  const mcp = createHttpHandler(server, inbound);
  const api = createToolApiHandler(server, { ...inbound, prefix: "/api/" });
  const drain = options.drain;
  const log = inbound.log!;
  const oauth = options.oauth;
  /** A refusal in the shape of the route it answers for. */
  const render = (refusal: Refusal, pathname: string | null) =>
    pathname === "/mcp"
      ? mcpRefusal(refusal)
      : pathname?.startsWith("/api/")
      ? apiRefusal(refusal)
      : plainRefusal(refusal);
  const route = (request: Request): Promise<Response> => {
    const pathname = pathOf(request);
    if (pathname === null) {
      return Promise.resolve(plainRefusal(refuseBeforeBody(
        request,
        log,
        400,
        "bad_host",
        "Bad Request: the Host header does not make a URL; send the host (and port) this " +
          "server was called by",
      )));
    }
    // The MCP endpoint and the tool API run every check themselves.
    if (pathname === "/mcp") return mcp(request);
    if (pathname.startsWith("/api/")) return api(request);
    return Promise.resolve(otherRoute(request, pathname));
  };
  /** Every route but MCP and the tool API: the same checks, then the route's own. */
  const otherRoute = (request: Request, pathname: string): Response | Promise<Response> => {
    const metadata = oauth !== undefined && oauth.metadataPaths.includes(pathname);
    const probe = pathname === "/healthz" || pathname === "/readyz";
    const shared = checkOriginHost(request, {
      allowedHosts: probe ? "any" : inbound.allowedHosts,
      allowedOrigins: metadata ? "any" : inbound.allowedOrigins,
      log,
    });
    if (shared instanceof Refusal) return plainRefusal(shared);
    const admin = options.admin !== undefined && pathname.startsWith("/admin/");
    if (!admin && !metadata && !probe) {
      // Unknown routes read no body.
      return plainRefusal(refuseBeforeBody(
        request,
        log,
        404,
        "not_found",
        "Not Found: this server answers POST /mcp (MCP), POST /api/<tool> (the tool API), " +
          "GET /healthz and GET /readyz",
        `no route ${pathname.slice(0, 200)}`,
      ));
    }
    if (metadata) return protectedResourceMetadataAnswer(request, oauth!, log);
    const refused = (probe ? checkGetOnly(request, log) : null) ?? checkNoBody(request, log) ??
      checkAccept(request, log);
    if (refused) return plainRefusal(refused);
    if (admin) return options.admin!(request, pathname);
    if (pathname === "/healthz") return probeAnswer(request, 200, "ok", server);
    // Ready until shutdown begins; 503 through the grace period and the drain.
    return !drain || drain.ready
      ? probeAnswer(request, 200, "ready", server)
      : probeAnswer(request, 503, "shutting_down", server);
  };
  if (!drain) return route;
  const max = options.maxConcurrent ?? 0;
  return async (request) => {
    if (drain.draining) {
      return render(
        refuseBeforeBody(
          request,
          log,
          503,
          "shutting_down",
          "Service Unavailable: the server is shutting down; try again shortly (another " +
            "instance, or this one once it is back)",
          "shutting down",
          { "retry-after": "1" },
        ),
        pathOf(request),
      );
    }
    if (max > 0 && drain.inFlight >= max) {
      const pathname = pathOf(request);
      if (pathname !== "/healthz" && pathname !== "/readyz") {
        return render(
          refuseBeforeBody(
            request,
            log,
            503,
            "overload",
            `Service Unavailable: ${max} requests are being handled at once, the most this ` +
              `server takes; try again in a second`,
            "over --max-concurrent",
            { "retry-after": "1" },
          ),
          pathname,
        );
      }
    }
    const leave = drain.enter();
    try {
      return await route(request);
    } finally {
      leave();
    }
  };
}

/**
 * The JSON answer of `/healthz` or `/readyz`, `{"status", "surface"}` (no body
 * to a `HEAD`): `surface` is the digest of the whole surface served now
 * (`McpServer.surfaceDigest`), equal on replicas that serve the same.
 */
async function probeAnswer(
  request: Request,
  status: number,
  word: string,
  server: McpServer,
): Promise<Response> {
  let surface: string | undefined;
  try {
    surface = request.method === "HEAD" ? undefined : await server.surfaceDigest();
  } catch {
    // A host's catalog that cannot be read now: the probe still answers.
  }
  const body = request.method === "HEAD" ? null : JSON.stringify({ status: word, surface });
  return new Response(body, {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/**
 * The `Host` values a listener answers: on loopback, its loopback names (the
 * bound address included, e.g. 127.0.0.2) plus `--allow-host`; beyond loopback,
 * `--allow-host` alone, or any Host when none is given.
 */
function hostsFor(options: HttpAppOptions): readonly string[] | "any" {
  const extra = (options.allowedHosts ?? []).map((h) => h.toLowerCase());
  if (isLoopback(options.hostname)) {
    return [...loopbackHosts(options.port, options.hostname), ...extra];
  }
  return extra.length > 0 ? extra : "any";
}

/**
 * The static-token check: a request with one of the tokens is allowed as that
 * token's caller (`auth.caller`, see `tokenCaller`), which signed state is
 * bound to; a token limited to some tools carries them (`auth.tools`), which
 * the core holds `tools/list` and `tools/call` to. A request without one, or
 * with another, is refused 401 with a Bearer challenge (RFC 6750 section 3.1,
 * `bearerRefusal`: no error code without a bearer credential, none or another
 * scheme; `invalid_request` for a malformed one; `invalid_token` for a wrong
 * token) and a message saying what to send.
 */
function bearerCheck(token: string | readonly string[] | TokenTable): InboundOptions["authorize"] {
  const table = token instanceof TokenTable
    ? token
    : new TokenTable([{ tokens: typeof token === "string" ? [token] : token }]);
  // One frozen verdict per caller, made once: nothing is allocated per request.
  const verdicts = new WeakMap<object, { allow: true; auth: unknown }>();
  return (request) => {
    const header = request.headers.get("authorization");
    const auth = table.callerOf(header);
    if (auth) {
      let verdict = verdicts.get(auth);
      if (!verdict) verdicts.set(auth, verdict = Object.freeze({ allow: true as const, auth }));
      return verdict;
    }
    // RFC 6750 section 3.1: no error code without a bearer credential (none, another scheme).
    const refusal = bearerRefusal(
      header,
      { realm: "weir" },
      "<token>, the token this server's operator gave you",
      "the bearer token is not one this server accepts",
    );
    return {
      allow: false,
      status: 401,
      reason: refusal.reason,
      message: refusal.message,
      challenge: refusal.challenge,
    };
  };
}
