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
import { decodeJwt, importJWK, importPKCS8, type JWK, SignJWT } from "jose";
import { clientFor } from "../outbound/once.ts";
import { connectFailure } from "../outbound/connect_failure.ts";
import { readJson, refusalOf } from "./answers.ts";
import { ASSERTION_ALGORITHMS } from "../guardfile/token_exchange.ts";
import type { ExchangeTarget, IdentityProfile } from "./profiles.ts";

/** How weir authenticates to the token endpoint. */
export type ClientAuthentication =
  | {
    /** RFC 6749 section 2.3.1: HTTP Basic (`client_secret_basic`) or form fields (`client_secret_post`). */
    method: "client_secret_basic" | "client_secret_post";
    clientId: string;
    /** Reads the secret now (a rotated one takes effect at the next exchange). */
    secret: () => Promise<string>;
  }
  | {
    /** RFC 7523 section 2.2: a JWT signed with weir's private key. */
    method: "private_key_jwt";
    clientId: string;
    /** Reads the key now: PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) or a private JWK (JSON). */
    key: () => Promise<string>;
    /** The JWS algorithm (default: the JWK's `alg`, else RS256); asymmetric only. */
    alg?: string;
    /** `kid` header: the key's ID as registered at the provider. */
    kid?: string;
    /** `x5t` header: the certificate's SHA-1 thumbprint, base64url (Entra's certificate credentials). */
    x5t?: string;
  };

/** Options of {@link createTokenExchanger}. */
export interface TokenExchangeOptions {
  /** The provider's token endpoint (https, or http on loopback). */
  tokenEndpoint: string;
  /** How requests are shaped for this provider. */
  profile: IdentityProfile;
  /** weir's own client at the provider. */
  client: ClientAuthentication;
  /** Bound on one exchange, in milliseconds (default 5000). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** The clock, in milliseconds (tests). */
  now?: () => number;
}

/** A token the provider issued for the upstream. */
export interface ExchangedToken {
  /** The access token, sent upstream as `Authorization: Bearer <token>`. */
  accessToken: string;
  /** When it expires, in milliseconds since the epoch (the earlier of `expires_in` and a JWT's `exp`); unknown: absent. */
  expiresAt?: number;
  /** The scopes granted, when the provider says (`scope`). */
  scope?: string;
}

/** Why an exchange did not yield a token (see the module doc). */
export class TokenExchangeError extends Error {
  /** `refused`: this caller's token was refused; `unavailable`: no exchange could be made. */
  readonly outcome: "refused" | "unavailable";
  /** The OAuth `error` code, when the provider sent one (RFC 6749 section 5.2 characters only). */
  readonly error?: string;
  /** The provider's `error_description`, cleaned and clipped, for the log only. */
  readonly description?: string;

  constructor(
    outcome: "refused" | "unavailable",
    message: string,
    details: { error?: string; description?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.name = "TokenExchangeError";
    this.outcome = outcome;
    this.error = details.error;
    this.description = details.description;
  }
}

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

/** RFC 7523 section 2.2 `client_assertion_type`. */
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** RFC 8693 section 3 token types an issued bearer token may have. */
const ISSUED_TYPES = new Set([
  "urn:ietf:params:oauth:token-type:access_token",
  "urn:ietf:params:oauth:token-type:jwt",
]);
/** RFC 6750 section 2.1 b64token: what may follow `Bearer ` in a header. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** Bounds of an issued token: shorter cannot be redacted safely; longer is no token. */
const MIN_TOKEN_CHARS = 8;
const MAX_TOKEN_CHARS = 16 * 1024;

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
  const endpoint = options.tokenEndpoint;
  const origin = new URL(endpoint).origin;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 5000;
  const now = options.now ?? Date.now;
  const keys = assertionKeys();

  return async (subjectToken, target, signal) => {
    const form = new URLSearchParams(options.profile.exchangeFields(subjectToken, target));
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    // What this request carries that no message or log line may: redacted from the description.
    const sent = [subjectToken, await authenticate(options.client, endpoint, form, headers, keys)];
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await doFetch(endpoint, {
        method: "POST",
        headers,
        body: form,
        redirect: "manual",
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        // A fresh connection: fetch never re-sends the POST (src/outbound/once.ts).
        ...clientFor("POST"),
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      const why = timeout.aborted
        ? `no answer within ${timeoutMs} ms`
        : connectFailure(error) ?? "the request failed";
      throw new TokenExchangeError(
        "unavailable",
        `the token endpoint at ${origin} could not be reached (${why}); nothing was sent upstream`,
        { cause: error },
      );
    }
    let body: unknown;
    try {
      body = response.status >= 300 && response.status < 400
        ? await response.body?.cancel()
        : await readJson(response, "the token endpoint's answer");
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      body = undefined;
    }
    const answer = typeof body === "object" && body !== null && !Array.isArray(body)
      ? body as Record<string, unknown>
      : undefined;
    if (!response.ok) throw refusal(response, answer, origin, target, sent);
    return issued(answer, subjectToken, origin, now());
  };
}

/** A token endpoint's refusal as a {@link TokenExchangeError}. */
function refusal(
  response: Response,
  answer: Record<string, unknown> | undefined,
  origin: string,
  target: ExchangeTarget,
  sent: readonly string[],
): TokenExchangeError {
  const error = typeof answer?.error === "string" && /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(
      answer.error,
    )
    ? answer.error
    : undefined;
  const description = typeof answer?.error_description === "string"
    ? cleanDescription(answer.error_description, sent)
    : undefined;
  const at = `the token endpoint at ${origin}`;
  if (response.status >= 300 && response.status < 400) {
    return new TokenExchangeError("unavailable", `${at} ${refusalOf(response, origin)}`);
  }
  if (error !== undefined && response.status < 500 && CALLER_ERRORS.has(error)) {
    const upstream = target.audience ?? target.resource ?? "the upstream";
    return new TokenExchangeError(
      "refused",
      `the identity provider (${origin}) refused to exchange the caller's token for ` +
        `${upstream} (${error}); the caller needs a token the provider will exchange for it ` +
        `(sign in again, or have the scopes and consent granted); nothing was sent upstream`,
      { error, description },
    );
  }
  const own = error === "invalid_client" || error === "unauthorized_client" ||
      error === "unsupported_grant_type" || response.status === 401
    ? `: it refused weir's own client${error ? ` (${error})` : ""}; check the client ID, its ` +
      `secret or key, and that the client may use this grant`
    : `: ${refusalOf(response, origin)}${error ? ` (${error})` : ""}`;
  return new TokenExchangeError(
    "unavailable",
    `${at} could not exchange the token${own}; nothing was sent upstream`,
    { error, description },
  );
}

/** The issued token of a 2xx answer, or why it is not usable. */
function issued(
  answer: Record<string, unknown> | undefined,
  subjectToken: string,
  origin: string,
  now: number,
): ExchangedToken {
  const bad = (why: string) =>
    new TokenExchangeError(
      "unavailable",
      `the token endpoint at ${origin} answered without a usable token (${why}); nothing was ` +
        `sent upstream`,
    );
  if (!answer) throw bad("not a JSON object");
  const token = answer.access_token;
  if (typeof token !== "string" || token === "") throw bad("no access_token");
  if (token.length < MIN_TOKEN_CHARS || token.length > MAX_TOKEN_CHARS || !B64TOKEN.test(token)) {
    throw bad("the access_token is not a bearer token value");
  }
  if (token === subjectToken) throw bad("it handed back the caller's own token");
  if (typeof answer.token_type !== "string" || answer.token_type.toLowerCase() !== "bearer") {
    throw bad(`token_type ${clip(String(answer.token_type), 20)}, not Bearer`);
  }
  const type = answer.issued_token_type;
  if (type !== undefined && (typeof type !== "string" || !ISSUED_TYPES.has(type))) {
    throw bad(`issued_token_type ${clip(String(type), 60)} is not an access token`);
  }
  // The earlier of expires_in and a JWT's own exp: exp counts whole seconds from a rounded-down
  // issue time, so a token can end up to a second before expires_in says, and the upstream
  // holds it to exp.
  const ends: number[] = [];
  const expiresIn = answer.expires_in;
  const seconds = typeof expiresIn === "string" && /^\d{1,9}$/.test(expiresIn)
    ? Number(expiresIn)
    : expiresIn;
  if (typeof seconds === "number" && Number.isFinite(seconds) && seconds > 0) {
    ends.push(now + seconds * 1000);
  }
  try {
    const exp = decodeJwt(token).exp;
    if (typeof exp === "number" && Number.isFinite(exp)) ends.push(exp * 1000);
  } catch {
    // Opaque: expires_in alone (none: used for this call only).
  }
  const expiresAt = ends.length > 0 ? Math.min(...ends) : undefined;
  return {
    accessToken: token,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(typeof answer.scope === "string" ? { scope: answer.scope } : {}),
  };
}

/**
 * Put weir's client authentication on the request.
 * @returns the secret it sent (the client secret, or the signed assertion)
 */
async function authenticate(
  client: ClientAuthentication,
  endpoint: string,
  form: URLSearchParams,
  headers: Record<string, string>,
  keys: (text: string, alg: string | undefined) => Promise<{ key: CryptoKey; alg: string }>,
): Promise<string> {
  if (client.method === "private_key_jwt") {
    const { key, alg } = await keys(await readSecret(client.key, "the private key"), client.alg);
    const header: { alg: string; typ: string; kid?: string; x5t?: string } = { alg, typ: "JWT" };
    if (client.kid !== undefined) header.kid = client.kid;
    if (client.x5t !== undefined) header.x5t = client.x5t;
    const assertion = await new SignJWT({})
      .setProtectedHeader(header)
      .setIssuer(client.clientId)
      .setSubject(client.clientId)
      .setAudience(endpoint)
      .setJti(crypto.randomUUID())
      .setIssuedAt()
      .setExpirationTime("60s")
      .sign(key);
    form.set("client_id", client.clientId);
    form.set("client_assertion_type", ASSERTION_TYPE);
    form.set("client_assertion", assertion);
    return assertion;
  }
  const secret = await readSecret(client.secret, "the client secret");
  if (client.method === "client_secret_post") {
    form.set("client_id", client.clientId);
    form.set("client_secret", secret);
    return secret;
  }
  // RFC 6749 section 2.3.1: each part form-urlencoded before Basic encoding.
  const part = (s: string) => new URLSearchParams({ s }).toString().slice(2);
  headers.authorization = `Basic ${btoa(`${part(client.clientId)}:${part(secret)}`)}`;
  return secret;
}

async function readSecret(read: () => Promise<string>, what: string): Promise<string> {
  let value: string;
  try {
    value = await read();
  } catch (error) {
    throw new TokenExchangeError(
      "unavailable",
      `${what} for the token exchange could not be read: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (value.trim() === "") {
    throw new TokenExchangeError("unavailable", `${what} for the token exchange is empty`);
  }
  return value;
}

/** Imports a client-assertion key, keeping the last one imported (the same text is read each time). */
function assertionKeys(): (text: string, alg: string | undefined) => Promise<
  { key: CryptoKey; alg: string }
> {
  let last: {
    text: string;
    alg: string | undefined;
    key: Promise<{ key: CryptoKey; alg: string }>;
  };
  return (text, alg) => {
    if (last?.text !== text || last.alg !== alg) {
      last = { text, alg, key: importAssertionKey(text, alg) };
      // A failed import is not kept: the next exchange reads and tries again.
      last.key.catch(() => last = undefined!);
    }
    return last.key;
  };
}

/**
 * Read a private key for `private_key_jwt`: PKCS#8 PEM or a private JWK.
 * @param alg the JWS algorithm (default: the JWK's `alg`, else RS256)
 * @throws {TokenExchangeError} (`unavailable`) naming what to change; never the key
 */
export async function importAssertionKey(
  text: string,
  alg: string | undefined,
): Promise<{ key: CryptoKey; alg: string }> {
  const trimmed = text.trim();
  const fail = (why: string) =>
    new TokenExchangeError("unavailable", `the private key for private_key_jwt ${why}`);
  let jwk: JWK | undefined;
  if (trimmed.startsWith("{")) {
    try {
      jwk = JSON.parse(trimmed) as JWK;
    } catch {
      throw fail("is neither PKCS#8 PEM nor a JSON Web Key");
    }
    if (typeof jwk !== "object" || jwk === null || typeof jwk.d !== "string") {
      throw fail("is a JSON Web Key without its private part (d)");
    }
  } else if (/-----BEGIN (RSA|EC) PRIVATE KEY-----/.test(trimmed)) {
    throw fail(
      "is PKCS#1/SEC1 PEM; convert it to PKCS#8: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY8",
    );
  } else if (!trimmed.startsWith("-----BEGIN PRIVATE KEY-----")) {
    throw fail("is neither PKCS#8 PEM (-----BEGIN PRIVATE KEY-----) nor a JSON Web Key");
  }
  const algorithm = alg ?? (typeof jwk?.alg === "string" ? jwk.alg : "RS256");
  if (!ASSERTION_ALGORITHMS.includes(algorithm)) {
    throw fail(`cannot sign with ${clip(algorithm, 20)}: use one of ${ASSERTION_ALGORITHMS}`);
  }
  try {
    const key = jwk
      ? await importJWK(jwk, algorithm)
      : await importPKCS8(trimmed, algorithm, { extractable: false });
    if (!(key instanceof CryptoKey) || key.type !== "private") throw new Error("not a private key");
    return { key, alg: algorithm };
  } catch (error) {
    throw fail(
      `does not fit ${algorithm} (${clip((error as Error).message, 80)}); set alg to the key's ` +
        `algorithm (RS256 for RSA, ES256 for P-256, EdDSA for Ed25519)`,
    );
  }
}

function clip(text: string, max: number): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, " ");
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

/**
 * A provider's free text, for the log: what the request carried (`sent`) and
 * anything token-like redacted, control characters out, clipped.
 */
function cleanDescription(text: string, sent: readonly string[]): string {
  for (const secret of sent) if (secret.length >= 4) text = text.split(secret).join("[redacted]");
  return clip(
    text.replace(/[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, "[redacted]")
      .replace(/[A-Za-z0-9+/_=-]{40,}/g, "[redacted]"),
    200,
  );
}
