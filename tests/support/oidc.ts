/**
 * A real OpenID provider for tests: `npm:oidc-provider` (pinned in deno.json)
 * on 127.0.0.1 at a port chosen at run time, with:
 * - one public client (PKCE, no secret) for the MCP clients, pre-registered,
 *   and one confidential client weir may use for RFC 7662 introspection;
 * - RFC 8707 resource indicators: tokens for `resource` carry it as `aud` and
 *   the granted ones of `tickets:read tickets:write`, as JWTs signed ES256 by
 *   a key this module makes (so a test can also sign tokens with bad claims),
 *   or opaque when `format` says so;
 * - automatic login and consent: the account in `login` logs in and is granted
 *   the requested scopes its entry in `accounts` allows (the rest refused).
 *
 * {@link authorizeLikeABrowser} plays the user agent: it follows the
 * authorization URL's redirects with a cookie jar until the provider sends the
 * browser to the client's redirect URI, and returns the code.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { encodeBase64Url } from "./base64url.ts";

export { freePort } from "./port.ts";

export const CLIENT_ID = "weir-test-client";
export const REDIRECT_URI = "http://127.0.0.1/callback";
export const INTROSPECTION_CLIENT = { clientId: "weir-rs", clientSecret: "rs-secret-0123456789" };
export const RESOURCE_SCOPES = ["tickets:read", "tickets:write"];

export interface Oidc {
  issuer: string;
  /** Account -> scopes it may be granted. */
  accounts: Record<string, string[]>;
  /** The account the next automatic login picks. */
  login: string;
  /** Access token format for the next tokens. */
  format: "jwt" | "opaque";
  /** Requests received, by path (e.g. `/token/introspection`). */
  hits: Map<string, number>;
  /** The provider's signing key (private JWK with `kid`), to sign test tokens. */
  signingKey: JWK;
  /** The running `oidc-provider` (to register grant types). */
  provider: Provider;
  /**
   * Reshapes the claims of every JWT access token the provider issues (a
   * provider's token shapes: tests/support/oidc_exchange.ts), when set.
   */
  customize?: (
    payload: Record<string, unknown>,
    token: { gty?: string; clientId?: string; kind?: string },
  ) => void;
  /** Lifetime of the access tokens issued for a resource (weir's, or another API's), in seconds. */
  resourceTtl: number;
  /** When set, the token endpoint answers this status with no body (the provider is "down"). */
  tokenEndpointDown?: number;
  close(): Promise<void>;
}

/** Options of {@link startOidc}. */
export interface OidcOptions {
  /**
   * The issuer's path: the provider is mounted there (`/<tenant>/v2.0`,
   * `/realms/weir`, `/oauth2/default`); `/` gives an issuer ending in `/`
   * (Auth0's form). Default: none.
   */
  path?: string;
  /** More statically registered clients (e.g. weir's own, for token exchange). */
  clients?: Record<string, unknown>[];
}

/** Start the provider for tokens bound to `resource`. */
export async function startOidc(resource: string, options: OidcOptions = {}): Promise<Oidc> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const signingKey: JWK = { ...(await exportJWK(privateKey)), kid: "test-es256", alg: "ES256" };
  const holder: { provider?: Provider } = {};
  const state: Oidc = {
    issuer: "",
    accounts: { writer: [...RESOURCE_SCOPES], reader: ["tickets:read"] },
    login: "writer",
    format: "jwt",
    hits: new Map(),
    resourceTtl: 300,
    signingKey,
    provider: undefined as unknown as Provider,
    close: () => Promise.resolve(),
  };
  const mount = (options.path ?? "").replace(/\/$/, "");

  const server = http.createServer((req, res) => {
    const provider = holder.provider!;
    // Mounted at the issuer's path: the provider sees the rest (and finds its mount in originalUrl).
    if (mount && req.url?.startsWith(`${mount}/`)) {
      (req as { originalUrl?: string }).originalUrl = req.url;
      req.url = req.url.slice(mount.length);
    }
    const path = (req.url ?? "").split("?")[0];
    state.hits.set(path, (state.hits.get(path) ?? 0) + 1);
    if (path === "/token" && state.tokenEndpointDown) {
      res.statusCode = state.tokenEndpointDown;
      res.end();
      return;
    }
    if (req.url?.startsWith("/interaction/")) {
      interact(provider, state, req, res).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  state.issuer = `http://127.0.0.1:${port}${options.path ?? ""}`;

  holder.provider = new Provider(state.issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        application_type: "native",
        id_token_signed_response_alg: "ES256",
        token_endpoint_auth_method: "none",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
      {
        client_id: INTROSPECTION_CLIENT.clientId,
        client_secret: INTROSPECTION_CLIENT.clientSecret,
        id_token_signed_response_alg: "ES256",
        redirect_uris: [],
        grant_types: [],
        response_types: [],
      },
      ...(options.clients ?? []),
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: ["weir-test-cookie-key"] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id }),
    }),
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) =>
        `${mount}/interaction/${interaction.uid}`,
    },
    formats: {
      customizers: {
        jwt: (
          _ctx: unknown,
          token: { gty?: string; clientId?: string; kind?: string },
          jwt: { payload: Record<string, unknown> },
        ) => state.customize?.(jwt.payload, token),
      },
    },
    features: {
      devInteractions: { enabled: false },
      introspection: { enabled: true },
      // RFC 6749 section 4.4, for the clients that may use it (weir's own token).
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A client credentials request may name its API by `audience` (as Auth0 and the
        // exchange here take it); anything else is for weir's resource.
        defaultResource: (ctx: { oidc: { body?: Record<string, unknown> } }) =>
          ctx.oidc.body?.grant_type === "client_credentials" &&
            typeof ctx.oidc.body.audience === "string"
            ? ctx.oidc.body.audience
            : resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => ({
          scope: RESOURCE_SCOPES.join(" "),
          audience: indicator,
          accessTokenTTL: state.resourceTtl,
          accessTokenFormat: state.format,
          ...(state.format === "jwt" ? { jwt: { sign: { alg: "ES256" } } } : {}),
        }),
      },
    },
    // deno-lint-ignore no-explicit-any
  } as any);
  state.provider = holder.provider;
  // Keep the provider's own warnings (development keys and adapter) out of test output.
  holder.provider.on("server_error", (_ctx: unknown, error: Error) => console.error(error));

  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  return state;
}

async function interact(
  provider: Provider,
  state: Oidc,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  let result: Record<string, unknown>;
  if (prompt.name === "login") {
    result = { login: { accountId: state.login } };
  } else {
    const accountId = session!.accountId;
    const grant = details.grantId
      ? (await provider.Grant.find(details.grantId))!
      : new provider.Grant({ accountId, clientId: params.client_id as string });
    const asked = prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (asked.missingOIDCScope) grant.addOIDCScope(asked.missingOIDCScope.join(" "));
    const allowed = state.accounts[accountId] ?? [];
    for (const [indicator, scopes] of Object.entries(asked.missingResourceScopes ?? {})) {
      const yes = scopes.filter((s) => allowed.includes(s));
      const no = scopes.filter((s) => !allowed.includes(s));
      if (yes.length) grant.addResourceScope(indicator, yes.join(" "));
      if (no.length) grant.rejectResourceScope(indicator, no.join(" "));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

/**
 * Follow an authorization URL as a browser would (cookies kept, at most 12
 * redirects) until the provider redirects to {@link REDIRECT_URI}.
 * @returns the authorization code and state, and the callback's parameters (`iss` too)
 * @throws when the provider answers anything else (e.g. an error page)
 */
export async function authorizeLikeABrowser(
  url: URL | string,
): Promise<{ code: string; state: string | null; callback: URLSearchParams }> {
  const jar = new Map<string, string>();
  let next = String(url);
  for (let hop = 0; hop < 12; hop++) {
    const response = await fetch(next, {
      redirect: "manual",
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const eq = pair.indexOf("=");
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = response.headers.get("location");
    const body = await response.text();
    if (!location) {
      const said = body.replace(/<style[\s\S]*?<\/style>/g, "").replace(/<[^>]+>/g, " ")
        .replace(/\s+/g, " ").trim();
      throw new Error(`the provider answered ${response.status} at ${next}: ${said.slice(0, 500)}`);
    }
    const target = new URL(location, next);
    if (target.href.startsWith(REDIRECT_URI)) {
      const error = target.searchParams.get("error");
      if (error) {
        throw new Error(
          `authorization refused: ${error} ${target.searchParams.get("error_description")}`,
        );
      }
      return {
        code: target.searchParams.get("code")!,
        state: target.searchParams.get("state"),
        callback: target.searchParams,
      };
    }
    next = target.href;
  }
  throw new Error("too many redirects");
}

/**
 * Authorization code + PKCE by hand (RFC 7636, RFC 8707): the account in
 * `oidc.login` authorizes `scope` for `resource`; returns the access token.
 */
export async function tokenFor(oidc: Oidc, resource: string, scope: string): Promise<string> {
  const verifier = encodeBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = encodeBase64Url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  const base = oidc.issuer.replace(/\/$/, "");
  const auth = new URL(`${base}/auth`);
  auth.search = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    scope,
    resource,
    code_challenge: challenge,
    code_challenge_method: "S256",
  }).toString();
  const { code } = await authorizeLikeABrowser(auth);
  const response = await fetch(`${base}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      code_verifier: verifier,
      resource,
    }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`token request refused: ${JSON.stringify(body)}`);
  return body.access_token;
}
