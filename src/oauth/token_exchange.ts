/**
 * OAuth 2.0 Token Exchange (RFC 8693) as a client: weir trades a caller's
 * access token at the identity provider's token endpoint for a token meant
 * for the upstream, so the upstream sees who asked (its `sub`, and `act`
 * where the provider adds one) and never the caller's own token (the MCP
 * authorization spec forbids passing it through).
 *
 * The request's grant fields come from the identity-provider profile
 * (`profiles.ts`: RFC 8693 with `resource`/`audience`, or Entra's
 * on-behalf-of flow). weir authenticates itself to the token endpoint with
 * a client secret (RFC 6749 section 2.3.1, HTTP Basic or form fields) or a
 * signed JWT (`private_key_jwt`, RFC 7523 section 2.2, signed with
 * `npm:jose`); the secret or key is read at each exchange, so a rotated one
 * takes effect at the next.
 *
 * Outcomes, as {@link TokenExchangeError.outcome}:
 * - `unavailable`: the endpoint could not be reached, timed out, redirected,
 *   answered 5xx, refused weir's own client (`invalid_client`,
 *   `unauthorized_client`, `unsupported_grant_type`), or answered something
 *   that is not a usable bearer token (including the caller's own token
 *   back). The call must be refused with nothing sent upstream.
 * - `refused`: the provider refused this caller's token for this upstream
 *   (`invalid_grant`, `invalid_scope`, `invalid_target`, `access_denied`,
 *   `invalid_request`, `consent_required`, `interaction_required`).
 *
 * Error messages name the endpoint's origin, the OAuth `error` code and what
 * to do; never a token, a secret or the provider's free text (that goes in
 * {@link TokenExchangeError.description}, cleaned and clipped, for the log).
 *
 * @module
 */
import {
  type IssuedToken,
  issuedToken,
  oauthError,
  type TokenAnswer,
  tokenEndpoint,
  TokenEndpointError,
  type TokenEndpointOptions,
} from "./token_request.ts";
import { refusalOf } from "./answers.ts";
import { redactingEach } from "../outbound/once.ts";
import type { ExchangeTarget, IdentityProfile } from "./profiles.ts";

export {
  type ClientAuthentication,
  importAssertionKey,
  TokenEndpointError as TokenExchangeError,
} from "./token_request.ts";

/** Options of {@link createTokenExchanger}. */
export interface TokenExchangeOptions extends TokenEndpointOptions {
  /** How requests are shaped for this provider. */
  profile: IdentityProfile;
}

/** A token the provider issued for the upstream. */
export type ExchangedToken = IssuedToken;

/** Exchanges one caller's token for one upstream (see the module doc). */
export type TokenExchanger = (
  subjectToken: string,
  target: ExchangeTarget,
  signal?: AbortSignal,
) => Promise<ExchangedToken>;

/** OAuth errors that refuse this caller's token (the rest say weir cannot exchange at all). */
const CALLER_ERRORS: ReadonlySet<string> = new Set([
  "invalid_grant",
  "invalid_scope",
  "invalid_target",
  "access_denied",
  "invalid_request",
  "consent_required",
  "interaction_required",
]);

/**
 * The exchange client for one token endpoint and client.
 *
 * @example
 * ```ts
 * import { createTokenExchanger, TokenExchangeError } from "./token_exchange.ts";
 * import { profileOf } from "./profiles.ts";
 * // A token endpoint that refuses every subject token.
 * const fake: typeof fetch = () =>
 *   Promise.resolve(Response.json({ error: "invalid_grant" }, { status: 400 }));
 * const exchange = createTokenExchanger({
 *   tokenEndpoint: "https://id.example.com/oauth2/token",
 *   profile: profileOf("generic"),
 *   client: { method: "client_secret_basic", clientId: "weir", secret: () => Promise.resolve("s3cret-value") },
 *   fetch: fake,
 * });
 * const outcome = await exchange("caller-token", { audience: "https://api.example.com", scopes: [] })
 *   .catch((e) => e);
 * if (!(outcome instanceof TokenExchangeError) || outcome.outcome !== "refused") throw outcome;
 * ```
 */
export function createTokenExchanger(options: TokenExchangeOptions): TokenExchanger {
  const post = tokenEndpoint(options);
  return async (subjectToken, target, signal) => {
    const got = await post(
      options.profile.exchangeFields(subjectToken, target),
      [subjectToken],
      "the token exchange",
      signal,
    );
    if (!got.response.ok) throw refusal(got, target);
    return issuedToken(got, subjectToken);
  };
}

/** A token endpoint's refusal of an exchange as a {@link TokenEndpointError}. */
function refusal(got: TokenAnswer, target: ExchangeTarget): TokenEndpointError {
  const { response, origin } = got;
  const { error, description } = oauthError(got);
  const at = `the token endpoint at ${origin}`;
  if (response.status >= 300 && response.status < 400) {
    return new TokenEndpointError(
      "unavailable",
      `${at} ${refusalOf(response, origin, redactingEach(got.sent))}`,
    );
  }
  if (error !== undefined && response.status < 500 && CALLER_ERRORS.has(error)) {
    const upstream = target.audience ?? target.resource ?? "the upstream";
    return new TokenEndpointError(
      "refused",
      `the identity provider (${origin}) refused to exchange the caller's token for ` +
        `${upstream} (${error}); the caller needs a token the provider will exchange for it ` +
        `(sign in again, or have the scopes and consent granted); nothing was sent upstream`,
      { error, description },
    );
  }
  // RFC 6749 section 5.2: the server does not support the grant at all (no client could use it).
  const own = error === "unsupported_grant_type"
    ? ": the identity provider does not offer this grant (unsupported_grant_type); enable " +
      "token exchange there (RFC 8693, or Entra ID's on-behalf-of flow), or set the oauth " +
      "node's profile= (--oauth-profile) to the provider's (docs/oauth.md#identity-provider-profiles)"
    : error === "invalid_client" || error === "unauthorized_client" || response.status === 401
    ? `: it refused weir's own client${error ? ` (${error})` : ""}; check the client ID, its ` +
      `secret or key, and that the client may use this grant`
    : `: ${refusalOf(response, origin, redactingEach(got.sent))}${error ? ` (${error})` : ""}`;
  return new TokenEndpointError(
    "unavailable",
    `${at} could not exchange the token${own}; nothing was sent upstream`,
    { error, description },
  );
}
