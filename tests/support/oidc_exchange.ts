/**
 * The test OpenID provider (tests/support/oidc.ts, `npm:oidc-provider`) set
 * up to exchange tokens and to issue the token shapes of real providers:
 *
 * - weir's own confidential clients: one authenticating with a client secret
 *   (HTTP Basic), one with form fields, one with `private_key_jwt` (RFC 7523;
 *   its private key, PKCS#8 PEM, is {@link ExchangeProvider.privateKeyPem}).
 *   oidc-provider itself checks each client's authentication.
 * - a token exchange grant, registered as oidc-provider's custom grant type:
 *   RFC 8693 (`urn:ietf:params:oauth:grant-type:token-exchange`), or for
 *   Entra ID the on-behalf-of flow (the RFC 7523 JWT bearer grant with
 *   `requested_token_use=on_behalf_of`). The subject token must be one this
 *   provider signed for weir; the issued token is the provider's own JWT
 *   access token for the asked audience, its `sub` the caller's and (RFC 8693
 *   section 4.1) `act.sub` weir's client, lasting {@link ExchangeProvider.ttl}.
 *   Each request is recorded; subjects in {@link ExchangeProvider.refuse} are
 *   refused (`invalid_grant`).
 * - weir's own token (the client credentials grant, RFC 6749 section 4.4):
 *   oidc-provider's own grant, for the API the request names (`resource`, or
 *   `audience`), `sub` weir's client; each token endpoint answer to it is
 *   recorded in {@link ExchangeProvider.ownTokens}. {@link EXCHANGE_CLIENT}
 *   and {@link EXCHANGE_JWT_CLIENT} may use the grant; {@link EXCHANGE_POST_CLIENT}
 *   may not (the provider answers `unauthorized_client`).
 * - per profile, as the real providers do: the issuer's path (Entra
 *   `/<tenant>/v2.0`, Okta `/oauth2/default`, Auth0 a trailing `/`, Keycloak
 *   `/realms/<realm>`), where scopes and roles sit (`scp` string + `roles`,
 *   `scp` list, `scope` + `permissions`, `scope` + realm and client roles),
 *   `aud` (Entra's GUID in v2 tokens and `api://<GUID>` in v1 tokens, issued
 *   by `https://sts.windows.net/<tenant>/`), and what each refuses: Entra and
 *   Okta, Auth0 and Keycloak refuse the RFC 8707 `resource` parameter, Auth0
 *   a standard `subject_token_type`.
 */
import { createLocalJWKSet, exportJWK, exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import { errors } from "oidc-provider";
import { type Oidc, startOidc } from "./oidc.ts";

export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
/** weir's clients at the provider. */
export const EXCHANGE_CLIENT = {
  clientId: "weir-exchange",
  clientSecret: "exchange-secret-0123456789",
};
export const EXCHANGE_POST_CLIENT = {
  clientId: "weir-exchange-post",
  clientSecret: "exchange-post-secret-0123456789",
};
export const EXCHANGE_JWT_CLIENT = "weir-exchange-jwt";
/** The custom subject token type Auth0's custom token exchange profile names. */
export const AUTH0_SUBJECT_TYPE = "https://weir.example/mcp-access-token";
/** An Entra tenant and application (client) IDs. */
export const TENANT = "7f0d3e9a-4c55-4c36-9a8b-2b9d8f1c0a11";
export const WEIR_APP = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";
export const UPSTREAM_APP = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d";

export type ProfileShape = "generic" | "entra" | "okta" | "auth0" | "keycloak";

/** One exchange request as the provider received it. */
export interface ExchangeRecord {
  grant: string;
  client: string;
  /** How weir's client authenticated (oidc-provider's method name). */
  authMethod: string;
  subject: string;
  params: Record<string, string>;
  /** `invalid_grant` etc. when refused; absent when a token was issued. */
  error?: string;
}

/** A running provider that exchanges tokens. */
export interface ExchangeProvider {
  oidc: Oidc;
  profile: ProfileShape;
  /** weir's `audience` for inbound tokens (the resource for generic). */
  weirAudience: string;
  /** What the exchange should be asked for (the upstream's audience). */
  upstreamAudience: string;
  /** The Entra token version issued at the next login (v1 tokens have another issuer and aud). */
  entraVersion: "1.0" | "2.0";
  exchanges: ExchangeRecord[];
  /** Subjects whose tokens the provider refuses to exchange. */
  refuse: Set<string>;
  /** Lifetime of exchanged tokens, in seconds. */
  ttl: number;
  /** weir's own token requests (client credentials), in order. */
  ownTokens: { client: string; params: Record<string, string>; error?: string }[];
  /** The private key of {@link EXCHANGE_JWT_CLIENT}, PKCS#8 PEM. */
  privateKeyPem: string;
  close(): Promise<void>;
}

const PATHS: Record<ProfileShape, string> = {
  generic: "",
  entra: `/${TENANT}/v2.0`,
  okta: "/oauth2/default",
  auth0: "/",
  keycloak: "/realms/weir",
};

/** Start a provider for weir at `resource`, shaping tokens as `profile` does. */
export async function startExchangeProvider(
  resource: string,
  profile: ProfileShape = "generic",
): Promise<ExchangeProvider> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const clients = [
    {
      client_id: EXCHANGE_CLIENT.clientId,
      client_secret: EXCHANGE_CLIENT.clientSecret,
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: "ES256",
      grant_types: [TOKEN_EXCHANGE, JWT_BEARER, "client_credentials"],
      redirect_uris: [],
      response_types: [],
    },
    {
      client_id: EXCHANGE_POST_CLIENT.clientId,
      client_secret: EXCHANGE_POST_CLIENT.clientSecret,
      token_endpoint_auth_method: "client_secret_post",
      id_token_signed_response_alg: "ES256",
      grant_types: [TOKEN_EXCHANGE, JWT_BEARER],
      redirect_uris: [],
      response_types: [],
    },
    {
      client_id: EXCHANGE_JWT_CLIENT,
      token_endpoint_auth_method: "private_key_jwt",
      id_token_signed_response_alg: "ES256",
      token_endpoint_auth_signing_alg: "ES256",
      jwks: {
        keys: [{ ...(await exportJWK(publicKey)), kid: "weir-1", alg: "ES256", use: "sig" }],
      },
      grant_types: [TOKEN_EXCHANGE, JWT_BEARER, "client_credentials"],
      redirect_uris: [],
      response_types: [],
    },
  ];
  const oidc = await startOidc(resource, { path: PATHS[profile], clients });
  const weirAudience = profile === "generic"
    ? resource
    : profile === "entra"
    ? `api://${WEIR_APP}`
    : profile === "okta"
    ? "api://default"
    : profile === "auth0"
    ? "https://mcp.weir.example/"
    : "weir-mcp";
  const upstreamAudience = profile === "entra"
    ? `api://${UPSTREAM_APP}`
    : profile === "keycloak"
    ? "tickets-api"
    : "https://tickets.example/api";
  const state: ExchangeProvider = {
    oidc,
    profile,
    weirAudience,
    upstreamAudience,
    entraVersion: "2.0",
    exchanges: [],
    refuse: new Set(),
    ttl: 300,
    ownTokens: [],
    privateKeyPem: await exportPKCS8(privateKey),
    close: () => oidc.close(),
  };
  const v1Issuer = `https://sts.windows.net/${TENANT}/`;
  const exchanged = new WeakMap<object, { audience: string; scopes: string[]; actor: string }>();
  oidc.customize = (payload, token) => {
    // weir's own token: for the API it asked for (its aud as the resource server says).
    if (token.kind === "ClientCredentials") return;
    const swap = exchanged.get(token);
    if (swap) {
      payload.aud = swap.audience;
      payload.scope = swap.scopes.join(" ") || undefined;
      if (profile === "generic" || profile === "okta" || profile === "auth0") {
        payload.act = { sub: swap.actor };
      }
    } else {
      payload.aud = weirAudience;
    }
    shape(payload, profile, state.entraVersion, oidc.issuer, v1Issuer, swap !== undefined);
  };
  // deno-lint-ignore no-explicit-any
  const ownRequest = (ctx: any, error?: string) => {
    if (ctx.oidc?.params?.grant_type !== "client_credentials") return;
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(ctx.oidc.body ?? {})) {
      if (typeof v === "string" && !/secret|assertion/.test(k)) params[k] = v;
    }
    state.ownTokens.push({
      client: ctx.oidc.client?.clientId ?? "",
      params,
      ...(error ? { error } : {}),
    });
  };
  oidc.provider.on("grant.success", (ctx: unknown) => ownRequest(ctx));
  oidc.provider.on(
    "grant.error",
    (ctx: unknown, error: { error?: string }) => ownRequest(ctx, error.error ?? "server_error"),
  );
  const keys = createLocalJWKSet({ keys: [{ ...oidc.signingKey, d: undefined }] });
  const weirAudiences = profile === "entra" ? [WEIR_APP, `api://${WEIR_APP}`] : [weirAudience];

  /** The caller's token, checked as this provider's own for weir. */
  const subjectOf = async (token: string | undefined): Promise<string> => {
    if (!token) throw new errors.InvalidRequest("subject_token is missing");
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: [oidc.issuer, v1Issuer],
        audience: weirAudiences,
      });
      return payload.sub!;
    } catch (error) {
      throw new errors.InvalidGrant(`the subject token is not valid: ${(error as Error).message}`);
    }
  };

  const issue = async (
    ctx: { oidc: { client: { clientId: string }; params: Record<string, unknown> }; body: unknown },
    subject: string,
    audience: string,
    scopes: string[],
  ) => {
    const { AccessToken, ResourceServer } = oidc.provider as unknown as {
      AccessToken: new (init: Record<string, unknown>) => { save(): Promise<string> } & object;
      ResourceServer: new (id: string, data: Record<string, unknown>) => object;
    };
    const token = new AccessToken({
      accountId: subject,
      client: ctx.oidc.client,
      scope: scopes.join(" ") || undefined,
      gty: "token-exchange",
      expiresWithSession: false,
    });
    (token as { resourceServer?: object }).resourceServer = new ResourceServer(audience, {
      audience,
      scope: scopes.join(" "),
      accessTokenTTL: state.ttl,
      accessTokenFormat: "jwt",
      jwt: { sign: { alg: "ES256" } },
    });
    exchanged.set(token, { audience, scopes, actor: ctx.oidc.client.clientId });
    const value = await token.save();
    ctx.body = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      expires_in: state.ttl,
      ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {}),
    };
  };

  const record = (
    ctx: {
      oidc: {
        client: { clientId: string; tokenEndpointAuthMethod?: string };
        params: Record<string, unknown>;
      };
    },
    grant: string,
    subject: string,
    error?: string,
  ) => {
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(ctx.oidc.params)) if (typeof v === "string") params[k] = v;
    state.exchanges.push({
      grant,
      client: ctx.oidc.client.clientId,
      authMethod: ctx.oidc.client.tokenEndpointAuthMethod ?? "",
      subject,
      params,
      ...(error ? { error } : {}),
    });
  };

  // deno-lint-ignore no-explicit-any
  const handler = (grant: string, run: (ctx: any) => Promise<void>) => async (ctx: any) => {
    try {
      await run(ctx);
    } catch (error) {
      record(ctx, grant, "", (error as { error?: string }).error ?? "server_error");
      throw error;
    }
  };

  // RFC 8693 token exchange, as generic, Okta, Auth0 and Keycloak speak it.
  oidc.provider.registerGrantType(
    TOKEN_EXCHANGE,
    handler(TOKEN_EXCHANGE, async (ctx) => {
      const p = ctx.oidc.params as Record<string, string | undefined>;
      if (profile === "entra") {
        throw new errors.UnsupportedGrantType("use the on-behalf-of flow (jwt-bearer)");
      }
      if (p.resource !== undefined && profile !== "generic") {
        throw new errors.InvalidTarget(
          `${profile} takes no resource parameter in a token exchange`,
        );
      }
      const wantType = profile === "auth0" ? AUTH0_SUBJECT_TYPE : ACCESS_TOKEN_TYPE;
      if (p.subject_token_type !== wantType) {
        throw new errors.InvalidRequest(`subject_token_type must be ${wantType}`);
      }
      const subject = await subjectOf(p.subject_token);
      if (state.refuse.has(subject)) {
        throw new errors.InvalidGrant("exchange not allowed for this subject");
      }
      const audience = p.audience ?? (profile === "generic" ? p.resource : undefined);
      if (!audience) throw new errors.InvalidTarget("audience is required");
      if (audience !== upstreamAudience && p.resource !== upstreamAudience) {
        throw new errors.InvalidTarget(`unknown audience ${audience}`);
      }
      const scopes = (p.scope ?? "").split(" ").filter(Boolean);
      record(ctx, TOKEN_EXCHANGE, subject);
      await issue(ctx, subject, audience, scopes);
    }),
    [
      "subject_token",
      "subject_token_type",
      "requested_token_type",
      "audience",
      "resource",
      "scope",
      "actor_token",
      "actor_token_type",
    ],
  );

  // Entra ID's on-behalf-of flow: the JWT bearer grant, scopes under the API's URI, no resource.
  oidc.provider.registerGrantType(
    JWT_BEARER,
    handler(JWT_BEARER, async (ctx) => {
      const p = ctx.oidc.params as Record<string, string | undefined>;
      if (p.resource !== undefined) {
        throw new errors.InvalidRequest(
          "AADSTS901002: the 'resource' request parameter isn't supported",
        );
      }
      if (p.requested_token_use !== "on_behalf_of") {
        throw new errors.InvalidRequest("requested_token_use must be on_behalf_of");
      }
      const subject = await subjectOf(p.assertion);
      if (state.refuse.has(subject)) throw new errors.InvalidGrant("AADSTS65001: consent required");
      const asked = (p.scope ?? "").split(" ").filter(Boolean);
      const prefix = `${upstreamAudience}/`;
      if (asked.length === 0 || asked.some((s) => !s.startsWith(prefix))) {
        throw new errors.InvalidScope(`scopes must be ${prefix}<name> or ${prefix}.default`);
      }
      const scopes = asked.map((s) => s.slice(prefix.length)).filter((s) => s !== ".default");
      record(ctx, JWT_BEARER, subject);
      await issue(ctx, subject, upstreamAudience, scopes);
    }),
    ["assertion", "requested_token_use", "scope", "resource"],
  );
  return state;
}

/** Reshape a JWT access token's claims as the profile's provider writes them. */
function shape(
  payload: Record<string, unknown>,
  profile: ProfileShape,
  entraVersion: "1.0" | "2.0",
  issuer: string,
  v1Issuer: string,
  exchanged: boolean,
): void {
  const scopes = typeof payload.scope === "string" ? payload.scope.split(" ") : [];
  // Writes ride in each provider's other claim (roles, permissions), reads in its scope claim.
  const reads = scopes.filter((s) => !s.endsWith(":write"));
  const writes = scopes.filter((s) => s.endsWith(":write"));
  const client = payload.client_id;
  if (profile === "entra") {
    delete payload.scope;
    delete payload.client_id;
    payload.scp = reads.join(" ");
    payload.roles = writes;
    payload.tid = TENANT;
    payload.oid = payload.sub;
    payload.ver = exchanged ? "2.0" : entraVersion;
    payload.azp = client;
    if (!exchanged && entraVersion === "1.0") {
      payload.iss = v1Issuer;
      payload.appid = client;
      delete payload.azp;
    } else {
      payload.iss = issuer;
      // v2 tokens name the API by its application (client) ID.
      payload.aud = String(payload.aud).replace(/^api:\/\//, "");
    }
  } else if (profile === "okta") {
    delete payload.scope;
    delete payload.client_id;
    payload.scp = scopes;
    payload.cid = client;
    payload.uid = `00u${String(payload.sub)}`;
  } else if (profile === "auth0") {
    payload.aud = exchanged ? payload.aud : [payload.aud, `${issuer}userinfo`];
    payload.scope = ["openid", ...reads].join(" ");
    payload.permissions = scopes;
    payload.azp = client;
    delete payload.client_id;
  } else if (profile === "keycloak") {
    const aud = String(payload.aud);
    payload.azp = client;
    payload.typ = "Bearer";
    payload.scope = "profile email";
    payload.realm_access = { roles: ["offline_access", ...reads] };
    payload.resource_access = { [aud]: { roles: writes }, account: { roles: ["view-profile"] } };
    delete payload.client_id;
  }
}
