/**
 * weir as an OAuth 2.1 resource server at the HTTP edge, per the MCP
 * authorization spec (2025-11-25 and 2026-07-28, "Authorization"):
 *
 * - RFC 9728 protected resource metadata at
 *   `/.well-known/oauth-protected-resource` and at the path-suffixed form for
 *   the resource's path (e.g. `/.well-known/oauth-protected-resource/mcp`).
 * - No bearer token, or one that does not pass: 401 with
 *   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (RFC 6750
 *   section 3, RFC 9728 section 5.1): no error code when no bearer credential
 *   came (none, or another scheme: section 3.1), `error="invalid_request"` for
 *   a malformed one, `error="invalid_token"` for a token that does not pass.
 * - A valid token without a scope the called tool needs: 403 with
 *   `error="insufficient_scope"` and the tool's scopes, decided from the
 *   request line (tool API) or the JSON body (`tools/call`) before the MCP
 *   core or the tool runs.
 * - The tools a token may see: {@link OAuthResourceServer.toolAccess}, handed
 *   to the core as its `toolAccess` option.
 *
 * The scopes per tool come in as data (a map), so this module knows nothing
 * of guardfiles. It composes with the transport through the `authorize` and
 * `authorizeBody` hooks of {@link InboundOptions}, and with the app through
 * {@link protectedResourceMetadataAnswer}. The token itself is checked by a
 * {@link TokenVerifier} (`access_tokens.ts`, loaded only when used) and is never logged, echoed, or passed on: audit lines
 * name the subject, the decision and the reason.
 *
 * @module
 */
import type { Logger, ToolAccess } from "../mcp/server.ts";
import type { AuthVerdict, InboundOptions } from "../inbound/checks.ts";
import { checkAccept, checkGetOnly, checkNoBody, isLoopback, pathOf } from "../inbound/checks.ts";
import { plainRefusal } from "../inbound/refusal.ts";
import { BEARER_CREDENTIAL, bearerRefusal } from "../inbound/static_tokens.ts";

/** What a checked token says about its bearer. */
export interface AccessToken {
  /** `sub`, else `client_id` (a client acting for itself). */
  subject: string;
  /** Granted scopes: `scope` (space-separated, RFC 9068/7662) or `scp` (a list). */
  scopes: string[];
  /** `client_id`, when the token names one. */
  clientId?: string;
  /** How it was checked. */
  via: "jwt" | "introspection";
  /** Its `exp`, in milliseconds since the epoch, when it names one. */
  expiresAt?: number;
}

/** A token that does not pass; `reason` is for the log and names no secret. */
export class TokenError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "TokenError";
  }
}

/** Checks one bearer token; throws {@link TokenError} when it does not pass. */
export type TokenVerifier = (token: string) => Promise<AccessToken>;

/** Who a request was allowed as: handed to handlers as `auth`. */
export interface OAuthCaller {
  kind: "oauth";
  subject: string;
  /**
   * `oauth:<subject>`: the identity signed state (a cursor, a confirmation's
   * `requestState`) is bound to, read by the core's `callerOf`.
   */
  caller: string;
  clientId?: string;
  scopes: ReadonlySet<string>;
}

/** Options of {@link createOAuthResourceServer}. */
export interface OAuthResourceOptions {
  /**
   * This server's canonical URI (RFC 8707 section 2; the MCP spec's
   * "Canonical Server URI"): absolute, no fragment, e.g.
   * `https://mcp.example.com/mcp`. Tokens must name it in `aud`.
   */
  resource: string;
  /** The authorization server's issuer identifier, listed in `authorization_servers`. */
  issuer: string;
  /** Checks a bearer token (see `access_tokens.ts`). */
  verify: TokenVerifier;
  /**
   * Tool name -> the scopes a token must all carry to see and call it (absent:
   * none); a function is asked per request (so a reload can change them).
   */
  toolScopes:
    | ReadonlyMap<string, readonly string[]>
    | (() => ReadonlyMap<string, readonly string[]>);
  /** Path of the MCP endpoint (default `/mcp`). */
  mcpPath?: string;
  /** Path prefix of the tool API (default `/api/`). */
  apiPrefix?: string;
  /** Audit sink: one line per decision, naming the subject, never the token. */
  log: Logger;
  /**
   * How a client asks the provider for a scope (the profile's
   * `requestScope`: Entra wants `api://<GUID>/name`): used in
   * `scopes_supported` and the `scope` of challenges. Tokens are still
   * checked for the scope's own name. Default: as written.
   */
  requestScope?: (scope: string) => string;
  /**
   * Keep each allowed caller's token beside its verdict for
   * {@link callerTokenOf} (a token exchange needs it). Default false.
   */
  keepCallerToken?: boolean;
}

/**
 * The caller's own bearer token and its expiry, kept beside an allowed
 * verdict's `auth` (never on it, so nothing that logs or serialises the
 * verdict can carry it) when the server keeps them.
 */
const CALLER_TOKENS = new WeakMap<object, { token: string; expiresAt?: number }>();

/**
 * The bearer token an OAuth caller was allowed with, and its expiry (ms since
 * the epoch), for exchanging it (RFC 8693); `undefined` for any other `auth`
 * or when the resource server does not keep tokens.
 */
export function callerTokenOf(auth: unknown): { token: string; expiresAt?: number } | undefined {
  return typeof auth === "object" && auth !== null ? CALLER_TOKENS.get(auth) : undefined;
}

/** The pieces an HTTP app composes in. */
export interface OAuthResourceServer {
  /** The RFC 9728 document served (its `scopes_supported` follows the current scopes). */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Its URL, as sent in `resource_metadata` (path-suffixed form). */
  readonly metadataUrl: string;
  /** Paths the metadata is served at. */
  readonly metadataPaths: readonly string[];
  /** Pre-body check: the bearer token (401) and, for the tool API, the tool's scopes (403). */
  authorize: InboundOptions["authorize"];
  /** Post-read check of the MCP endpoint: `tools/call` of a tool the token may not call (403). */
  authorizeBody: NonNullable<InboundOptions["authorizeBody"]>;
  /** What a caller may see and call, for the core's `toolAccess` option. */
  toolAccess: (auth: unknown) => ToolAccess | undefined;
}

/**
 * Whether a URL may name an authorization server: `https:`, or `http:` on a
 * loopback host only (OAuth 2.1 section 1.5: TLS everywhere else).
 */
export function isAcceptableIssuerUrl(url: URL): boolean {
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && isLoopback(url.hostname);
}

/**
 * Check a canonical resource URI: absolute `https:` (or `http:` on loopback),
 * no fragment, no query.
 * @returns a problem to report, or `null`
 */
export function resourceProblem(resource: string): string | null {
  if (!URL.canParse(resource)) return "is not an absolute URL";
  const url = new URL(resource);
  if (url.hash || resource.includes("#")) return "must not carry a #fragment (RFC 8707 section 2)";
  if (url.search) return "must not carry a ?query";
  if (!isAcceptableIssuerUrl(url)) {
    return "must be https (http only on a loopback host)";
  }
  return null;
}

const WELL_KNOWN = "/.well-known/oauth-protected-resource";
/** RFC 6750 section 2.1: `Bearer` then a b64token. */
const BEARER = BEARER_CREDENTIAL;

/**
 * Build the resource server pieces.
 * @throws {TypeError} when `resource` or `issuer` is not an acceptable URL
 *
 * @example
 * ```ts
 * import { createOAuthResourceServer } from "./resource_server.ts";
 * const rs = createOAuthResourceServer({
 *   resource: "https://mcp.example.com/mcp",
 *   issuer: "https://id.example.com",
 *   verify: () => Promise.reject(new Error("no tokens in this example")),
 *   toolScopes: new Map([["create_ticket", ["tickets:write"]]]),
 *   log: () => {},
 * });
 * if (rs.metadataUrl !== "https://mcp.example.com/.well-known/oauth-protected-resource/mcp") {
 *   throw new Error(rs.metadataUrl);
 * }
 * ```
 */
export function createOAuthResourceServer(options: OAuthResourceOptions): OAuthResourceServer {
  const problem = resourceProblem(options.resource);
  if (problem) throw new TypeError(`OAuth resource ${options.resource} ${problem}`);
  if (!URL.canParse(options.issuer)) {
    throw new TypeError(`OAuth issuer ${options.issuer} is not an absolute URL`);
  }
  const resource = new URL(options.resource);
  const suffix = resource.pathname === "/" ? "" : resource.pathname.replace(/\/$/, "");
  const metadataPaths = suffix ? [WELL_KNOWN + suffix, WELL_KNOWN] : [WELL_KNOWN];
  const metadataUrl = `${resource.origin}${WELL_KNOWN}${suffix}`;
  // The scopes per tool may change (a reload): read them per request, derive once per map.
  const scopesNow = typeof options.toolScopes === "function"
    ? options.toolScopes
    : () => options.toolScopes as ReadonlyMap<string, readonly string[]>;
  const unions = new WeakMap<object, string[]>();
  const unionOf = (map: ReadonlyMap<string, readonly string[]>) => {
    let union = unions.get(map);
    if (!union) unions.set(map, union = [...new Set([...map.values()].flat())].sort());
    return union;
  };
  const asked = options.requestScope ?? ((scope: string) => scope);
  const askedAll = (scopes: readonly string[]) => scopes.map(asked).join(" ");
  const mcpPath = options.mcpPath ?? "/mcp";
  const apiPrefix = options.apiPrefix ?? "/api/";
  const log = options.log;

  const challenge = (params: Record<string, string | undefined>) =>
    "Bearer " +
    Object.entries({ ...params, resource_metadata: metadataUrl })
      .filter(([, v]) => v !== undefined && v !== "")
      .map(([k, v]) => `${k}="${v!.replace(/["\\]/g, "")}"`)
      .join(", ");

  const needs = (tool: string) => scopesNow().get(tool) ?? [];
  const missing = (caller: OAuthCaller, tool: string) =>
    needs(tool).filter((s) => !caller.scopes.has(s));

  const insufficient = (caller: OAuthCaller, tool: string): AuthVerdict | null => {
    const lacking = missing(caller, tool);
    if (lacking.length === 0) return null;
    const scope = askedAll(needs(tool));
    return {
      allow: false,
      status: 403,
      subject: caller.subject,
      tool,
      reason: `insufficient_scope: lacks ${lacking.join(" ")}`,
      message: `Forbidden: insufficient_scope: ${tool} needs scope ${scope}`,
      challenge: challenge({
        error: "insufficient_scope",
        scope,
        error_description: `${tool} needs scope ${scope}`,
      }),
    };
  };

  const apiTool = (request: Request): string | null => {
    const path = pathOf(request) ?? "";
    if (!path.startsWith(apiPrefix)) return null;
    try {
      return decodeURIComponent(path.slice(apiPrefix.length));
    } catch {
      return null;
    }
  };

  const authorize = async (request: Request): Promise<AuthVerdict> => {
    const tool = apiTool(request);
    // The scopes this request needs: the tool's, or (MCP endpoint) all of them.
    const scope = askedAll(
      tool !== null && scopesNow().has(tool) ? needs(tool) : unionOf(scopesNow()),
    );
    const header = request.headers.get("authorization");
    const match = header === null ? null : BEARER.exec(header);
    if (!match) {
      // RFC 6750 section 3.1: no error code without a bearer credential (none, another
      // scheme); invalid_request for a malformed one.
      const refusal = bearerRefusal(header, {}, "<access token>", "");
      return {
        allow: false,
        status: 401,
        reason: refusal.reason,
        message: refusal.message,
        challenge: challenge({
          error: refusal.error,
          scope,
          ...(refusal.error
            ? { error_description: "the Authorization header is not Bearer followed by a token" }
            : {}),
        }),
      };
    }
    let caller: OAuthCaller;
    try {
      const token = await options.verify(match[1]);
      caller = {
        kind: "oauth",
        subject: token.subject,
        caller: `oauth:${token.subject}`,
        clientId: token.clientId,
        scopes: new Set(token.scopes),
      };
      if (options.keepCallerToken) {
        CALLER_TOKENS.set(caller, { token: match[1], expiresAt: token.expiresAt });
      }
    } catch (error) {
      const reason = error instanceof TokenError ? error.message : "token check failed";
      if (!(error instanceof TokenError)) {
        log({ level: "error", event: "token_check_failed", error: String(error).slice(0, 300) });
      }
      return {
        allow: false,
        status: 401,
        reason,
        message: "Unauthorized: the access token is invalid, expired, or not for this server",
        challenge: challenge({
          error: "invalid_token",
          scope,
          error_description: "the access token is invalid, expired, or not for this server",
        }),
      };
    }
    if (tool !== null && scopesNow().has(tool)) {
      const refused = insufficient(caller, tool);
      if (refused) return refused;
    }
    log({
      level: "debug",
      event: "authorized",
      decision: "allow",
      subject: caller.subject,
      ...(caller.clientId === undefined ? {} : { client: caller.clientId }),
      ...(tool !== null ? { tool: tool.slice(0, 64) } : {}),
    });
    return { allow: true, auth: caller };
  };

  const decoder = new TextDecoder();
  const authorizeBody = (request: Request, body: Uint8Array, auth: unknown): AuthVerdict => {
    if (!isCaller(auth) || pathOf(request) !== mcpPath) return true;
    let message: unknown;
    try {
      message = JSON.parse(decoder.decode(body));
    } catch {
      return true; // the core answers a parse error
    }
    if (typeof message !== "object" || message === null) return true;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    if (method !== "tools/call" || typeof params?.name !== "string") return true;
    if (!scopesNow().has(params.name)) return true;
    return insufficient(auth, params.name) ?? true;
  };

  const toolAccess = (auth: unknown): ToolAccess | undefined => {
    if (!isCaller(auth)) return undefined;
    // Callers holding the same declared scopes see the same tools.
    const held = unionOf(scopesNow()).filter((s) => auth.scopes.has(s));
    return {
      key: held.join(" "),
      allows: (name) => missing(auth, name).length === 0,
    };
  };

  return {
    get metadata() {
      const supported = unionOf(scopesNow()).map(asked);
      return {
        resource: options.resource,
        authorization_servers: [options.issuer],
        bearer_methods_supported: ["header"],
        ...(supported.length > 0 ? { scopes_supported: supported } : {}),
      };
    },
    metadataUrl,
    metadataPaths,
    authorize,
    authorizeBody,
    toolAccess,
  };
}

function isCaller(auth: unknown): auth is OAuthCaller {
  return typeof auth === "object" && auth !== null && (auth as OAuthCaller).kind === "oauth";
}

/**
 * The answer to a request for the RFC 9728 document at one of its paths
 * (any origin may read it: `Access-Control-Allow-Origin: *`; cacheable for 5
 * minutes, the same for every caller). The caller has already passed the
 * listener's shared checks (`Host`); this checks what the route itself
 * needs: `GET` or `HEAD` (405), no body (413) and an `Accept` that admits
 * JSON (406), each refusal in the error shape of weir's routes.
 */
export function protectedResourceMetadataAnswer(
  request: Request,
  server: Pick<OAuthResourceServer, "metadata">,
  log?: Logger,
): Response {
  const refused = checkGetOnly(request, log) ?? checkNoBody(request, log) ??
    checkAccept(request, log);
  if (refused) return plainRefusal(refused);
  return new Response(request.method === "HEAD" ? null : JSON.stringify(server.metadata), {
    headers: {
      "content-type": "application/json",
      "cache-control": "max-age=300",
      "access-control-allow-origin": "*",
    },
  });
}
