/**
 * A guardfile's `token-exchange` setting (or serve-upstream's flags, read
 * into the same shape) made into the per-call credential
 * (`upstream_credential.ts`): the token endpoint (the setting's, else the
 * issuer's metadata `token_endpoint`), weir's client authentication with its
 * secret or key read from its source at each exchange, and the profile's way
 * of asking; with `client-credentials`, weir's own token for its connection
 * to the MCP server too (`client_credentials.ts`), from the same endpoint as
 * the same client. Checked when serving starts, so a setting that cannot work
 * stops weir with a message instead of refusing every call.
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import type { TokenExchangeSetting, ValueSource } from "../guardfile/model.ts";
import type { IssuerMetadata } from "./access_tokens.ts";
import { checkTarget, type ExchangeTarget, type IdentityProfile } from "./profiles.ts";
import { isAcceptableIssuerUrl } from "./resource_server.ts";
import { type ClientAuthentication, importAssertionKey, tokenEndpoint } from "./token_request.ts";
import { createTokenExchanger } from "./token_exchange.ts";
import { type UpstreamCredential, upstreamCredentials } from "./upstream_credential.ts";
import { clientCredentialsToken, type ConnectionToken } from "./client_credentials.ts";

/** What a token-exchange setting sends upstream. */
export interface ExchangeCredentials {
  /** Each call's token, exchanged from its caller's. */
  perCall: UpstreamCredential;
  /** `client-credentials`: weir's own token for its connection to the MCP server. */
  connection?: ConnectionToken;
}

/** What {@link exchangeCredential} needs besides the setting. */
export interface ExchangeContext {
  /** The OAuth issuer's metadata (its `token_endpoint` when the setting names none). */
  metadata: IssuerMetadata;
  /** The inbound OAuth's profile: the exchange is asked its way. */
  profile: IdentityProfile;
  /** Reads a secret's source now (env or file); throws naming the source, never a value. */
  read: (source: ValueSource, what: string) => Promise<string>;
  log: Logger;
  fetch?: typeof fetch;
}

/**
 * Build the per-call credential of a token-exchange setting (and weir's own
 * connection token, with `client-credentials`), after reading its secret (and
 * importing its key) once, so one that cannot be read stops start-up.
 * @throws {Error} naming the fix: no token endpoint, a target the profile
 *   cannot ask for, a secret or key that cannot be read
 */
export async function exchangeCredential(
  setting: TokenExchangeSetting,
  context: ExchangeContext,
): Promise<ExchangeCredentials> {
  const target = {
    ...(setting.audience === undefined ? {} : { audience: setting.audience }),
    ...(setting.resource === undefined ? {} : { resource: setting.resource }),
    ...(setting.subjectTokenType === undefined
      ? {}
      : { subjectTokenType: setting.subjectTokenType }),
  };
  const problem = checkTarget(context.profile, {
    ...target,
    scopes: [],
    ...(setting.clientCredentials ? { clientCredentials: setting.clientCredentials } : {}),
  });
  if (problem) throw new Error(`token exchange: ${problem}`);
  const endpoint = setting.tokenEndpoint ?? context.metadata.token_endpoint;
  if (!endpoint) {
    throw new Error(
      `token exchange: ${context.metadata.issuer} advertises no token_endpoint ` +
        `(${context.metadata.source}); set token-endpoint`,
    );
  }
  if (!URL.canParse(endpoint) || !isAcceptableIssuerUrl(new URL(endpoint))) {
    throw new Error(
      `token exchange: the token endpoint ${endpoint} must be https (http on loopback)`,
    );
  }
  warnUnlistedGrant(context, target);
  const c = setting.client;
  const client: ClientAuthentication = c.method === "private_key_jwt"
    ? {
      method: "private_key_jwt",
      clientId: setting.clientId,
      key: () => context.read(c.key, "the token exchange's private key"),
      ...(c.alg === undefined ? {} : { alg: c.alg }),
      ...(c.kid === undefined ? {} : { kid: c.kid }),
      ...(c.x5t === undefined ? {} : { x5t: c.x5t }),
    }
    : {
      method: c.method,
      clientId: setting.clientId,
      secret: () => context.read(c.secret, "the token exchange's client secret"),
    };
  // Pre-flight: the secret or key as the first exchange would read it.
  if (client.method === "private_key_jwt") {
    await importAssertionKey(await client.key(), client.alg);
  } else await client.secret();
  const endpointOptions = {
    tokenEndpoint: endpoint,
    client,
    ...(context.fetch ? { fetch: context.fetch } : {}),
  };
  const perCall = upstreamCredentials({
    exchange: createTokenExchanger({ ...endpointOptions, profile: context.profile }),
    target,
    ...(setting.scopes === undefined ? {} : { scopes: setting.scopes }),
    log: context.log,
  });
  const own = setting.clientCredentials;
  if (!own) return { perCall };
  return {
    perCall,
    connection: clientCredentialsToken({
      post: tokenEndpoint(endpointOptions),
      profile: context.profile,
      target: {
        ...(setting.audience === undefined ? {} : { audience: setting.audience }),
        ...(setting.resource === undefined ? {} : { resource: setting.resource }),
        scopes: own.scopes,
      },
      clientId: setting.clientId,
      log: context.log,
    }),
  };
}

/**
 * Warn at start when the issuer lists its grant types (RFC 8414 section 2) and
 * the exchange's grant is not among them: a provider that does not offer it
 * refuses every exchange (`unsupported_grant_type`), so every call would be
 * refused. A warning, not a refusal: the list is optional and may be stale.
 */
function warnUnlistedGrant(context: ExchangeContext, target: Omit<ExchangeTarget, "scopes">): void {
  const offered = context.metadata.grant_types_supported;
  if (!offered) return;
  const grant = context.profile.exchangeFields("subject", { ...target, scopes: [] })
    .find(([name]) => name === "grant_type")?.[1];
  if (grant === undefined || offered.includes(grant)) return;
  context.log({
    level: "warn",
    event: "token_exchange_grant_unlisted",
    grant,
    message: `${context.metadata.issuer} does not list ${grant} in its grant_types_supported ` +
      `(${context.metadata.source}): if it does not offer token exchange, every exchange is ` +
      `refused (unsupported_grant_type) and so is every call; enable it at the provider, or ` +
      `set the oauth profile to the provider's (docs/oauth.md#identity-provider-profiles)`,
  });
}
