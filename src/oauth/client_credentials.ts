/**
 * weir's own token for its connection to a protected MCP server: the OAuth
 * client credentials grant (RFC 6749 section 4.4), asked of the identity
 * provider that exchanges the callers' tokens, as the same client and with
 * the same client authentication (`token_request.ts`). A wrapped MCP server
 * protected as the MCP authorization spec asks wants a bearer token on every
 * request; weir's own requests (the handshake, `tools/list` at start and at
 * each re-verification, `resources/list`) are made before and apart from any
 * caller, so they carry this token, and a caller's request carries that
 * caller's exchanged token, never this one (src/wrap/identity.ts).
 *
 * - The request is the profile's (`IdentityProfile.clientCredentialsFields`):
 *   `resource` and `audience` (generic), `audience` (Auth0), neither (Okta,
 *   Keycloak: the authorization server or its mappers decide `aud`), Entra's
 *   `<application ID URI>/.default`; the block's `client-credentials` scopes.
 * - One token is kept and reused until a margin before it expires (30 s, or
 *   a quarter of its lifetime when that is shorter); then the next request
 *   asks anew (the refresh). A token whose expiry the provider does not say is
 *   reused for 60 s. Concurrent requests share one token request. A token the
 *   MCP server refused (401) is dropped at once ({@link ConnectionToken.refused}).
 * - Each token request is logged as `{"event": "client_credentials",
 *   "outcome": "issued" | "refused" | "unavailable", "client", "audience"}`
 *   (`error` and the provider's cleaned `description` on a failure), never a
 *   token byte. A failure is a {@link TokenEndpointError} whose message names
 *   the provider, the OAuth error and what to change; `refused` when the
 *   provider refused weir's client (retrying cannot help), `unavailable` when
 *   it could not be asked.
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import { refusalOf } from "./answers.ts";
import { redactingEach } from "../outbound/once.ts";
import type { IdentityProfile, OwnTokenTarget } from "./profiles.ts";
import {
  issuedToken,
  oauthError,
  type TokenAnswer,
  TokenEndpointError,
  type TokenRequest,
} from "./token_request.ts";

/** weir's own token for its connection (see the module doc). */
export interface ConnectionToken {
  /**
   * The token to send now: a kept one still fresh, else a new one.
   * @throws {TokenEndpointError} when none can be had; the signal's reason when it aborts
   */
  token(signal?: AbortSignal): Promise<string>;
  /** The MCP server refused `token` (401): it is not used again. */
  refused(token: string): void;
}

/** Options of {@link clientCredentialsToken}. */
export interface ClientCredentialsOptions {
  /** The token endpoint as weir's client (`tokenEndpoint` of `token_request.ts`). */
  post: TokenRequest;
  profile: IdentityProfile;
  target: OwnTokenTarget;
  /** weir's client ID (for the log and messages). */
  clientId: string;
  log: Logger;
  /** Longest margin before expiry at which a token is asked anew, in ms (default 30,000). */
  refreshBeforeMs?: number;
  /** The clock, in milliseconds since the epoch (tests). */
  now?: () => number;
}

/** How long a token whose expiry the provider does not say is reused, in ms. */
export const UNKNOWN_EXPIRY_REUSE_MS = 60_000;

/**
 * weir's own token by the client credentials grant (see the module doc).
 *
 * @example
 * ```ts
 * import { clientCredentialsToken } from "./client_credentials.ts";
 * import { tokenEndpoint } from "./token_request.ts";
 * import { profileOf } from "./profiles.ts";
 * let asked = 0;
 * const post = tokenEndpoint({
 *   tokenEndpoint: "https://id.example.com/oauth2/token",
 *   client: { method: "client_secret_basic", clientId: "weir", secret: () => Promise.resolve("s3cret-value") },
 *   fetch: () => {
 *     asked++;
 *     return Promise.resolve(Response.json({ access_token: "own-token-1", token_type: "Bearer", expires_in: 300 }));
 *   },
 * });
 * const own = clientCredentialsToken({
 *   post,
 *   profile: profileOf("generic"),
 *   target: { audience: "https://mcp.example.com", scopes: [] },
 *   clientId: "weir",
 *   log: () => {},
 * });
 * // Kept until it nears its expiry: one token request for both.
 * if (await own.token() !== "own-token-1" || await own.token() !== "own-token-1") throw new Error("token");
 * if (asked !== 1) throw new Error(`asked ${asked} times`);
 * ```
 */
export function clientCredentialsToken(options: ClientCredentialsOptions): ConnectionToken {
  const { post, profile, target, log } = options;
  const now = options.now ?? Date.now;
  const margin = options.refreshBeforeMs ?? 30_000;
  const audience = target.audience ?? target.resource ?? "";
  let kept: { token: string; until: number } | undefined;
  let pending: Promise<string> | undefined;
  const line = (outcome: string, extra: Record<string, unknown> = {}) => ({
    event: "client_credentials",
    outcome,
    client: options.clientId,
    audience,
    ...extra,
  });

  const ask = async (): Promise<string> => {
    try {
      const got = await post(
        profile.clientCredentialsFields(target),
        [],
        "weir's client credentials request",
      );
      if (!got.response.ok) throw refusal(got, options.clientId, audience);
      const issued = issuedToken(got);
      const at = now();
      const until = issued.expiresAt === undefined
        ? at + UNKNOWN_EXPIRY_REUSE_MS
        : issued.expiresAt - Math.min(margin, Math.max(0, (issued.expiresAt - at) / 4));
      if (until > at) kept = { token: issued.accessToken, until };
      log({ level: "info", ...line("issued") });
      return issued.accessToken;
    } catch (error) {
      if (error instanceof TokenEndpointError) {
        log({
          level: "warn",
          ...line(error.outcome, {
            ...(error.error === undefined ? {} : { error: error.error }),
            ...(error.description === undefined ? {} : { description: error.description }),
          }),
        });
      }
      throw error;
    }
  };

  return {
    token: (signal) => {
      if (kept && kept.until > now()) return Promise.resolve(kept.token);
      kept = undefined;
      if (!pending) {
        pending = ask().finally(() => pending = undefined);
        // A waiter that gave up leaves no unhandled rejection behind.
        pending.catch(() => {});
      }
      if (!signal) return pending;
      return new Promise<string>((resolve, reject) => {
        const stop = () => reject(signal.reason);
        if (signal.aborted) return stop();
        signal.addEventListener("abort", stop, { once: true });
        pending!.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
      });
    },
    refused: (token) => {
      if (kept?.token === token) kept = undefined;
    },
  };
}

/**
 * The provider's refusal of weir's client credentials request: `refused`
 * for an answer naming weir's client or request (a setting to change),
 * `unavailable` for a redirect or a server error.
 */
function refusal(got: TokenAnswer, clientId: string, audience: string): TokenEndpointError {
  const { response, origin } = got;
  const { error, description } = oauthError(got);
  const at = `the token endpoint at ${origin}`;
  if (response.status >= 500 || (response.status >= 300 && response.status < 400)) {
    return new TokenEndpointError(
      "unavailable",
      `${at} ${refusalOf(response, origin, redactingEach(got.sent))}${
        error ? ` (${error})` : ""
      }; weir asked for its ` +
        `own token (client credentials) and sent nothing to the MCP server`,
      { error, description },
    );
  }
  // invalid_client (or a bare 401): weir's client did not authenticate (RFC 6749 section 5.2).
  const fix = error === "invalid_client" || (error === undefined && response.status === 401)
    ? `check the client ID and its secret or key (client-secret or private-key-jwt in the ` +
      `token-exchange block, --token-exchange-secret-env/-file or --token-exchange-key-file)`
    : error === "invalid_scope"
    ? `ask for scopes that client may have (client-credentials' scope, ` +
      `--token-exchange-client-credentials-scope), or grant them to it`
    : `allow that client the client_credentials grant for this audience and the ` +
      `client-credentials scopes, or correct them`;
  return new TokenEndpointError(
    "refused",
    `the identity provider (${origin}) refused weir's own token for ${audience} (client ` +
      `credentials grant, RFC 6749 section 4.4, as client ${clientId}; ${
        error ?? `HTTP ${response.status}`
      }): ${fix}; weir sent nothing to the MCP server`,
    { error, description },
  );
}
