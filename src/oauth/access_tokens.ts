/**
 * Checking OAuth 2.1 access tokens as a resource server (OAuth 2.1 draft
 * section 5.2; the MCP authorization spec, "Token Handling"): find the
 * authorization server's metadata (RFC 8414 / OpenID Connect Discovery 1.0),
 * then verify JWT access tokens (RFC 9068) against its JWKS with `npm:jose`,
 * or ask its introspection endpoint (RFC 7662) about opaque ones.
 *
 * What a JWT must satisfy: a signature by a key of the issuer's JWKS with an
 * algorithm from {@link DEFAULT_ALGORITHMS} (never `none`, never an HMAC
 * algorithm: the key set is public), `iss` equal to the issuer, `aud` naming
 * this server's resource (RFC 8707 section 2), and `exp` (required) and `nbf`
 * (an identity-provider profile, `profiles.ts`, widens `iss` and `aud` to the
 * provider's other forms and says where the scopes sit)
 * within a small clock skew; a `typ`, when present, must name an access token
 * (see {@link ACCESS_TOKEN_TYPES}). The JWKS is fetched when first needed, cached,
 * fetched again for an unknown `kid` at most once per cooldown, and each fetch
 * is bounded in time (jose's `createRemoteJWKSet`).
 *
 * Nothing here logs or returns a token; errors carry a reason for the log.
 *
 * @module
 */
import { readAtMost, sha256Hex } from "../transport/bytes.ts";
import { MAX_ANSWER_BYTES as MAX_METADATA_BYTES, readJson, refusalOf } from "./answers.ts";
import { createRemoteJWKSet, customFetch, type JWTPayload, jwtVerify } from "jose";
import { clientFor, NOTHING_SENT, redactingEach } from "../outbound/once.ts";
import { connectFailure } from "../outbound/connect_failure.ts";
import { ASSERTION_ALGORITHMS } from "../guardfile/token_exchange.ts";
import { checkInbound, type IdentityProfile, type InboundSettings, profileOf } from "./profiles.ts";
import { fetchHeadTooLarge, MAX_HEAD_BYTES } from "../outbound/fetch_head.ts";
import {
  type AccessToken,
  isAcceptableIssuerUrl,
  TokenError,
  type TokenVerifier,
} from "./resource_server.ts";

export { type AccessToken, TokenError, type TokenVerifier };

/** The authorization server metadata fields weir uses (RFC 8414 section 2). */
export interface IssuerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
  /** Where weir exchanges tokens (RFC 8693), when it does. */
  token_endpoint?: string;
  /** The grant types the server says it offers (RFC 8414 section 2), when it lists them. */
  grant_types_supported?: string[];
  /** Where it was read from. */
  source: string;
}

/**
 * Asymmetric JWS algorithms accepted by default (RFC 7518, RFC 8037): those a
 * client assertion may use (src/guardfile/token_exchange.ts), and `Ed25519`
 * (RFC 9864's fully-specified name for EdDSA over Ed25519).
 */
export const DEFAULT_ALGORITHMS: readonly string[] = [...ASSERTION_ALGORITHMS, "Ed25519"];

/** Seconds of clock skew allowed on `exp` and `nbf` (default). */
export const DEFAULT_CLOCK_SKEW_SECONDS = 30;

/**
 * The metadata URLs to try for an issuer, in the order the MCP authorization
 * spec ("Authorization Server Metadata Discovery") gives: RFC 8414 with path
 * insertion, OpenID Connect Discovery with path insertion, then appended.
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  const origin = url.origin;
  if (path === "") {
    return [
      `${origin}/.well-known/oauth-authorization-server`,
      `${origin}/.well-known/openid-configuration`,
    ];
  }
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/**
 * The `fetch` jose uses for the JWKS: no redirect followed (a 3xx named, as
 * {@link refusalOf} says it), the answer read up to {@link MAX_METADATA_BYTES}
 * and no further (jose itself would read any size), its head at most 64 KiB
 * (src/outbound/fetch_head.ts).
 */
const jwksFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, { ...init, redirect: "manual" });
  const url = input instanceof Request ? input.url : String(input);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`the JWKS ${refusalOf(response, url, NOTHING_SENT)}`);
  }
  if (await fetchHeadTooLarge(response)) {
    throw new Error(`the JWKS answer's head is over ${MAX_HEAD_BYTES} bytes`);
  }
  const bytes = response.body
    ? await readAtMost(response.body, MAX_METADATA_BYTES)
    : new Uint8Array();
  if (bytes === null) throw new Error(`the JWKS is over ${MAX_METADATA_BYTES} bytes`);
  return new Response(bytes as Uint8Array<ArrayBuffer>, {
    status: response.status,
    headers: response.headers,
  });
};

/**
 * Read the issuer's metadata: the first discovery URL answering 200 with a
 * JSON object whose `issuer` is exactly `issuer` (RFC 8414 section 3.3).
 *
 * @param timeoutMs per request
 * @throws {Error} naming every URL tried and what each answered
 */
export async function discoverIssuer(
  issuer: string,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<IssuerMetadata> {
  const doFetch = options.fetch ?? fetch;
  const problems: string[] = [];
  for (const source of metadataUrls(issuer)) {
    try {
      const response = await doFetch(source, {
        headers: { accept: "application/json" },
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      if (!response.ok) {
        await response.body?.cancel();
        problems.push(`${source}: ${refusalOf(response, source, NOTHING_SENT)}`);
        continue;
      }
      const doc = await readJson(response);
      if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
        problems.push(`${source}: not a JSON object`);
        continue;
      }
      const meta = doc as Record<string, unknown>;
      if (meta.issuer !== issuer) {
        problems.push(
          `${source}: its issuer ${JSON.stringify(meta.issuer)} is not ${JSON.stringify(issuer)}`,
        );
        continue;
      }
      const found: IssuerMetadata = { issuer, source };
      for (const key of ["jwks_uri", "introspection_endpoint", "token_endpoint"] as const) {
        const value = meta[key];
        if (typeof value === "string" && URL.canParse(value)) {
          if (!isAcceptableIssuerUrl(new URL(value))) {
            throw new Error(`${source}: ${key} ${value} is neither https nor loopback`);
          }
          found[key] = value;
        }
      }
      const grants = meta.grant_types_supported;
      if (Array.isArray(grants) && grants.every((g) => typeof g === "string")) {
        found.grant_types_supported = grants;
      }
      return found;
    } catch (error) {
      if (error instanceof Error && error.message.startsWith(source)) throw error;
      problems.push(`${source}: ${connectFailure(error) ?? (error as Error).message}`);
    }
  }
  throw new Error(
    `no authorization server metadata for ${issuer}: ${problems.join("; ")}; weir reads it ` +
      `at start: check the issuer URL (exactly the tokens' iss) and that weir can reach it`,
  );
}

/** Options of {@link createTokenVerifier}. */
export interface TokenVerifierOptions {
  /** The issuer's metadata ({@link discoverIssuer}). */
  metadata: IssuerMetadata;
  /** This server's canonical URI: the audience tokens must name (RFC 8707). */
  resource: string;
  /**
   * The identity provider's profile (`profiles.ts`, default `generic`): which
   * issuers and audiences pass and where the scopes sit.
   */
  profile?: IdentityProfile;
  /** The provider's own audience for this server, passed beside `resource` (see the profile). */
  audience?: string;
  /** Allowed JWS algorithms (default {@link DEFAULT_ALGORITHMS}; HMAC and `none` are refused). */
  algorithms?: readonly string[];
  /** Clock skew on `exp`/`nbf`, in seconds (default 30). */
  clockSkewSeconds?: number;
  /** RFC 7662 client credentials: opaque tokens are introspected only when given. */
  introspection?: { clientId: string; clientSecret: string };
  fetch?: typeof fetch;
  /** Per request to the authorization server, in milliseconds (default 5000). */
  timeoutMs?: number;
  /**
   * After a JWKS fetch, no other for this long, in milliseconds (default
   * 30,000): a token with an unknown `kid` makes weir fetch the JWKS again
   * (the issuer rotated its keys) at most this often.
   */
  jwksCooldownMs?: number;
}

/**
 * `typ` values accepted on a JWT access token. RFC 9068 section 4 asks for
 * `at+jwt`; many providers send `JWT` or nothing, so those pass too (a
 * departure, for interoperability). Any other type (`logout+jwt`,
 * `secevent+jwt`, `dpop+jwt`, ...) is another kind of token and is refused.
 */
export const ACCESS_TOKEN_TYPES: ReadonlySet<string> = new Set([
  "at+jwt",
  "application/at+jwt",
  "jwt",
]);

const JWS_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

/**
 * Build the token check for one issuer and resource.
 * @throws {Error} when an algorithm is not asymmetric, or the issuer offers
 *   neither a JWKS nor (with introspection credentials) an introspection endpoint
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const algorithms = [...(options.algorithms ?? DEFAULT_ALGORITHMS)];
  for (const alg of algorithms) {
    if (!DEFAULT_ALGORITHMS.includes(alg)) {
      throw new Error(
        `algorithm ${alg} is not allowed: use asymmetric ones (${DEFAULT_ALGORITHMS})`,
      );
    }
  }
  const { metadata, resource } = options;
  const profile = options.profile ?? profileOf("generic");
  const settings: InboundSettings = {
    issuer: metadata.issuer,
    resource,
    ...(options.audience === undefined ? {} : { audience: options.audience }),
  };
  const problem = checkInbound(profile, settings);
  if (problem) throw new Error(problem);
  const accepted: Accepted = {
    issuers: profile.issuers(settings),
    audiences: profile.audiences(settings),
    scopes: (claims) => profile.scopes(claims, settings),
  };
  const skew = options.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  const timeoutMs = options.timeoutMs ?? 5000;
  const introspect = options.introspection && metadata.introspection_endpoint
    ? introspector(metadata, options.introspection, accepted, skew, timeoutMs, options.fetch)
    : undefined;
  if (options.introspection && !metadata.introspection_endpoint) {
    throw new Error(
      `${metadata.issuer} advertises no introspection_endpoint (${metadata.source}); ` +
        `drop the introspection credentials or use an issuer that offers RFC 7662`,
    );
  }
  if (!metadata.jwks_uri && !introspect) {
    throw new Error(`${metadata.issuer} advertises no jwks_uri (${metadata.source})`);
  }
  const jwks = metadata.jwks_uri
    ? createRemoteJWKSet(new URL(metadata.jwks_uri), {
      [customFetch]: jwksFetch,
      timeoutDuration: timeoutMs,
      cooldownDuration: options.jwksCooldownMs ?? 30_000,
      cacheMaxAge: 10 * 60_000,
    })
    : undefined;

  return async (token) => {
    if (JWS_SHAPE.test(token) && jwks) {
      let payload: JWTPayload;
      let typ: unknown;
      try {
        ({ payload, protectedHeader: { typ } } = await jwtVerify(token, jwks, {
          algorithms,
          issuer: accepted.issuers,
          audience: accepted.audiences,
          clockTolerance: skew,
          requiredClaims: ["exp"],
        }));
      } catch (error) {
        throw new TokenError(`JWT refused: ${joseReason(error)}`);
      }
      if (typ !== undefined && !ACCESS_TOKEN_TYPES.has(String(typ).toLowerCase())) {
        throw new TokenError(
          `JWT refused: typ ${JSON.stringify(String(typ).slice(0, 40))} is not an access token`,
        );
      }
      return accessTokenOf(payload, "jwt", accepted);
    }
    if (introspect) return await introspect(token);
    throw new TokenError("not a JWT, and no introspection is configured for opaque tokens");
  };
}

function joseReason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return `${e.code ?? "error"}: ${String(e.message ?? error).slice(0, 200)}`;
}

/** What passes, as the profile says for these settings. */
interface Accepted {
  issuers: string[];
  audiences: string[];
  scopes: (claims: Record<string, unknown>) => string[];
}

function accessTokenOf(
  claims: Record<string, unknown>,
  via: AccessToken["via"],
  accepted: Accepted,
): AccessToken {
  const scopes = accepted.scopes(claims);
  const clientId = typeof claims.client_id === "string" ? claims.client_id : undefined;
  const subject = typeof claims.sub === "string" ? claims.sub : clientId;
  if (!subject) throw new TokenError("the token names neither sub nor client_id");
  const expiresAt = typeof claims.exp === "number" && Number.isFinite(claims.exp)
    ? claims.exp * 1000
    : undefined;
  return { subject, scopes, clientId, via, ...(expiresAt === undefined ? {} : { expiresAt }) };
}

/** RFC 7662 section 2: POST the token, read `active` and the claims. */
function introspector(
  metadata: IssuerMetadata,
  client: { clientId: string; clientSecret: string },
  accepted: Accepted,
  skew: number,
  timeoutMs: number,
  doFetch: typeof fetch = fetch,
): TokenVerifier {
  const basic = btoa(
    `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`,
  );
  // Active answers are reused for a short while (RFC 7662 section 4 leaves
  // the trade-off to the resource server): keyed by the token's SHA-256, never
  // the token, for at most INTROSPECTION_CACHE_MS and never past `exp`;
  // bounded in entries (the oldest goes first). A refusal is never cached.
  const cache = new Map<string, { token: AccessToken; until: number }>();
  return async (token) => {
    const key = await sha256Hex(token);
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.token;
    if (hit) cache.delete(key);
    const checked = await ask(token);
    const exp = checked.exp === undefined ? Infinity : checked.exp * 1000;
    cache.set(key, {
      token: checked.token,
      until: Math.min(Date.now() + INTROSPECTION_CACHE_MS, exp),
    });
    while (cache.size > INTROSPECTION_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    return checked.token;
  };

  async function ask(token: string): Promise<{ token: AccessToken; exp?: number }> {
    let claims: Record<string, unknown>;
    try {
      const response = await doFetch(metadata.introspection_endpoint!, {
        method: "POST",
        headers: {
          authorization: `Basic ${basic}`,
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }),
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
        // A fresh connection: fetch never re-sends the POST (src/outbound/once.ts).
        ...clientFor("POST"),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(
          `introspection ${
            refusalOf(
              response,
              metadata.introspection_endpoint!,
              redactingEach([basic, client.clientSecret, token]),
            )
          }`,
        );
      }
      claims = await readJson(response) as Record<string, unknown>;
    } catch (error) {
      throw new TokenError(`introspection failed: ${(error as Error).message}`);
    }
    if (typeof claims !== "object" || claims === null || claims.active !== true) {
      throw new TokenError("introspection: the token is not active");
    }
    if (claims.iss !== undefined && !accepted.issuers.includes(claims.iss as string)) {
      throw new TokenError("introspection: the token's iss is not the issuer");
    }
    const aud = typeof claims.aud === "string" ? [claims.aud] : claims.aud;
    if (!Array.isArray(aud) || !aud.some((a) => accepted.audiences.includes(a))) {
      throw new TokenError("introspection: the token's aud does not name this resource");
    }
    const now = Date.now() / 1000;
    if (typeof claims.exp === "number" && claims.exp + skew <= now) {
      throw new TokenError("introspection: the token has expired");
    }
    if (typeof claims.nbf === "number" && claims.nbf - skew > now) {
      throw new TokenError("introspection: the token is not valid yet");
    }
    return {
      token: accessTokenOf(claims, "introspection", accepted),
      exp: typeof claims.exp === "number" ? claims.exp : undefined,
    };
  }
}

/** How long an active introspection answer is reused, in milliseconds (30 s). */
export const INTROSPECTION_CACHE_MS = 30_000;
/** How many introspection answers are kept at most. */
export const INTROSPECTION_CACHE_ENTRIES = 1000;
