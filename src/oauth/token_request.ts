/**
 * One request to an OAuth token endpoint as weir's own client (RFC 6749
 * section 3.2), shared by the grants weir asks for: the token exchange on a
 * caller's behalf (RFC 8693, `token_exchange.ts`) and weir's own token by the
 * client credentials grant (RFC 6749 section 4.4, `client_credentials.ts`).
 *
 * - Client authentication: a client secret (RFC 6749 section 2.3.1, HTTP
 *   Basic or form fields) or a signed JWT (`private_key_jwt`, RFC 7523
 *   section 2.2, signed with `npm:jose`); the secret or key is read at each
 *   request, so a rotated one takes effect at the next.
 * - The request: a form `POST`, never re-sent, no redirect followed, bounded
 *   in time; the answer read as JSON of bounded size (`answers.ts`).
 * - An endpoint that cannot be reached is a {@link TokenEndpointError}
 *   (`unavailable`) naming its origin and why; each grant words the
 *   provider's refusals itself. An issued token ({@link issuedToken}) must be
 *   a bearer token value; its expiry is the earlier of `expires_in` and a
 *   JWT's own `exp`.
 * - Messages never carry a token, a secret or the provider's free text
 *   (that goes in {@link TokenEndpointError.description}, cleaned of what the
 *   request carried and clipped, for the log).
 *
 * @module
 */
import { decodeJwt, importJWK, importPKCS8, type JWK, SignJWT } from "jose";
import { clientFor, redactingEach } from "../outbound/once.ts";
import { connectFailure } from "../outbound/connect_failure.ts";
import { readJson } from "./answers.ts";
import { ASSERTION_ALGORITHMS } from "../guardfile/token_exchange.ts";

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

/** A token the provider issued. */
export interface IssuedToken {
  /** The access token, sent upstream as `Authorization: Bearer <token>`. */
  accessToken: string;
  /** When it expires, in milliseconds since the epoch (the earlier of `expires_in` and a JWT's `exp`); unknown: absent. */
  expiresAt?: number;
  /** The scopes granted, when the provider says (`scope`). */
  scope?: string;
}

/** Why a token request did not yield a token. */
export class TokenEndpointError extends Error {
  /** `refused`: the provider refused this request's subject; `unavailable`: no token could be had. */
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
    this.name = "TokenEndpointError";
    this.outcome = outcome;
    this.error = details.error;
    this.description = details.description;
  }
}

/** Where and as whom weir asks for tokens. */
export interface TokenEndpointOptions {
  /** The provider's token endpoint (https, or http on loopback). */
  tokenEndpoint: string;
  /** weir's own client at the provider. */
  client: ClientAuthentication;
  /** Bound on one request, in milliseconds (default 5000). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** The clock, in milliseconds (tests). */
  now?: () => number;
}

/** What the token endpoint answered to one request. */
export interface TokenAnswer {
  response: Response;
  /** Its JSON object, when it was one. */
  answer?: Record<string, unknown>;
  /** The endpoint's origin, for messages. */
  origin: string;
  /** What the request carried that no message or log line may hold (to clean a description). */
  sent: readonly string[];
  /** The clock when the answer came, in milliseconds. */
  at: number;
}

/** Sends one token request (see {@link tokenEndpoint}). */
export type TokenRequest = (
  fields: [string, string][],
  secrets: readonly string[],
  purpose: string,
  signal?: AbortSignal,
) => Promise<TokenAnswer>;

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
 * The token endpoint of one provider and client: each call posts one
 * request with `fields` (the grant's) and weir's client authentication.
 * `secrets` are what the fields carry that no log line may (a caller's
 * token); `purpose` names the request in messages ("the token exchange").
 * @throws {TokenEndpointError} `unavailable` when the endpoint cannot be reached
 *   in time, or weir's secret or key cannot be read; the signal's reason when it aborts
 *
 * @example
 * ```ts
 * import { tokenEndpoint } from "./token_request.ts";
 * const fake: typeof fetch = (_url, init) =>
 *   Promise.resolve(Response.json({ got: String(init?.body) }));
 * const post = tokenEndpoint({
 *   tokenEndpoint: "https://id.example.com/oauth2/token",
 *   client: { method: "client_secret_post", clientId: "weir", secret: () => Promise.resolve("s3cret-value") },
 *   fetch: fake,
 * });
 * const { answer } = await post([["grant_type", "client_credentials"]], [], "a test");
 * if (!String(answer?.got).includes("client_id=weir")) throw new Error("no client authentication");
 * ```
 */
export function tokenEndpoint(options: TokenEndpointOptions): TokenRequest {
  const endpoint = options.tokenEndpoint;
  const origin = new URL(endpoint).origin;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 5000;
  const now = options.now ?? Date.now;
  const keys = assertionKeys();
  return async (fields, secrets, purpose, signal) => {
    const form = new URLSearchParams(fields);
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    const sent = [
      ...secrets,
      await authenticate(options.client, endpoint, form, headers, keys, purpose),
    ];
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
      throw new TokenEndpointError(
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
    return { response, ...(answer ? { answer } : {}), origin, sent, at: now() };
  };
}

/**
 * The OAuth `error` code of a refusal (RFC 6749 section 5.2's characters
 * only) and its cleaned description, for the log.
 */
export function oauthError(
  got: TokenAnswer,
): { error?: string; description?: string } {
  const a = got.answer;
  const error = typeof a?.error === "string" &&
      /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(a.error)
    ? a.error
    : undefined;
  const description = typeof a?.error_description === "string"
    ? cleanDescription(a.error_description, got.sent)
    : undefined;
  return {
    ...(error === undefined ? {} : { error }),
    ...(description === undefined ? {} : { description }),
  };
}

/**
 * The token of a 2xx answer, or why it is not usable (`unavailable`).
 * @param echoed a token the answer must not hand back (the caller's own)
 */
export function issuedToken(got: TokenAnswer, echoed?: string): IssuedToken {
  return issued(got.answer, echoed, got.origin, got.at);
}

/** The issued token of a 2xx answer, or why it is not usable. */
function issued(
  answer: Record<string, unknown> | undefined,
  subjectToken: string | undefined,
  origin: string,
  now: number,
): IssuedToken {
  const bad = (why: string) =>
    new TokenEndpointError(
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
  if (subjectToken !== undefined && token === subjectToken) {
    throw bad("it handed back the caller's own token");
  }
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
  purpose: string,
): Promise<string> {
  if (client.method === "private_key_jwt") {
    const { key, alg } = await keys(
      await readSecret(client.key, `the private key for ${purpose}`),
      client.alg,
    );
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
  const secret = await readSecret(client.secret, `the client secret for ${purpose}`);
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
    throw new TokenEndpointError(
      "unavailable",
      `${what} could not be read: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (value.trim() === "") {
    throw new TokenEndpointError("unavailable", `${what} is empty`);
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
 * @throws {TokenEndpointError} (`unavailable`) naming what to change; never the key
 */
export async function importAssertionKey(
  text: string,
  alg: string | undefined,
): Promise<{ key: CryptoKey; alg: string }> {
  const trimmed = text.trim();
  const fail = (why: string) =>
    new TokenEndpointError("unavailable", `the private key for private_key_jwt ${why}`);
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

export function clip(text: string, max: number): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, " ");
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

/**
 * A provider's free text, for the log: what the request carried (`sent`) and
 * anything token-like redacted, control characters out, clipped.
 */
function cleanDescription(text: string, sent: readonly string[]): string {
  return clip(
    redactingEach(sent).text(text).replace(
      /[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
      "[redacted]",
    )
      .replace(/[A-Za-z0-9+/_=-]{40,}/g, "[redacted]"),
    200,
  );
}
