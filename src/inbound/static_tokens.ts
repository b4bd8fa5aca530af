/**
 * Static bearer tokens: several accepted at once (rotation) from one
 * environment variable, compared in constant time.
 *
 * The variable holds one or more tokens separated by commas, spaces or
 * newlines (`NEW_TOKEN,OLD_TOKEN` while clients move over). A presented
 * token is compared with every configured one, each comparison touching
 * every byte, so the time taken does not depend on where the first
 * difference is nor on which token matched (RFC 6750 section 2.1 for the
 * `Authorization: Bearer` form).
 *
 * The table of tokens a server accepts, with each holder's caller identity
 * (a SHA-256 prefix), is `./token_table.ts`: loaded only where tokens are
 * (a stdio server never has one).
 *
 * @module
 */
/** Shortest token accepted: a shorter one is guessable and refused at start-up. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Split a variable's value into tokens.
 * @throws {RangeError} when there is none, or one is shorter than {@link MIN_TOKEN_LENGTH}
 *   or holds a character outside RFC 6750's `b64token` set (the message never repeats a token)
 */
export function parseTokens(value: string | undefined, name: string): string[] {
  const tokens = (value ?? "").split(/[\s,]+/).filter((t) => t !== "");
  if (tokens.length === 0) {
    throw new RangeError(
      `${name}: the variable is not set or holds no token; set it to one or more bearer ` +
        `tokens of at least ${MIN_TOKEN_LENGTH} characters, separated by commas ` +
        `(e.g. openssl rand -hex 32)`,
    );
  }
  tokens.forEach((t, i) => {
    if (t.length < MIN_TOKEN_LENGTH) {
      throw new RangeError(
        `${name}: token ${i + 1} is ${t.length} characters; use at least ${MIN_TOKEN_LENGTH} ` +
          `(e.g. openssl rand -hex 32)`,
      );
    }
    if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(t)) {
      throw new RangeError(
        `${name}: token ${i + 1} has a character a bearer token cannot carry (RFC 6750 b64token)`,
      );
    }
  });
  return tokens;
}

/**
 * An `Authorization` value that is a bearer credential: `Bearer` (any case:
 * RFC 9110 section 11.1), one or more spaces and a `b64token` (RFC 6750
 * section 2.1); the token is group 1.
 */
export const BEARER_CREDENTIAL = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** A bearer challenge's error code (RFC 6750 section 3.1), when it has one. */
export type BearerError = "invalid_request" | "invalid_token";

/**
 * The error code of the Bearer challenge refusing a request whose
 * `Authorization` is `header` (RFC 6750 section 3.1), in one place for every
 * 401 weir answers (static tokens, the admin endpoints, OAuth):
 *
 * - `undefined` (no error code, no error information) when the request
 *   carries no bearer credential: no header, or another scheme (`Basic`,
 *   `Token`...), "an unsupported authentication method";
 * - `invalid_request` for a `Bearer` credential that is malformed (no token,
 *   or not a `b64token`);
 * - `invalid_token` for a well-formed bearer token that does not pass.
 * @example
 * ```ts
 * import { bearerChallengeError } from "./static_tokens.ts";
 * bearerChallengeError(null); // undefined
 * bearerChallengeError("Basic dXNlcjpwYXNz"); // undefined
 * bearerChallengeError("Bearer"); // "invalid_request"
 * bearerChallengeError("Bearer wrong-token"); // "invalid_token"
 * ```
 */
export function bearerChallengeError(header: string | null): BearerError | undefined {
  if (header === null || !/^bearer(?: |$)/i.test(header)) return undefined;
  return BEARER_CREDENTIAL.test(header) ? "invalid_token" : "invalid_request";
}

/**
 * What a refused request gets, by {@link bearerChallengeError}: the challenge
 * (`Bearer <params>`, with `error` and `error_description` when there is an
 * error code), the log's reason and the caller's message, each saying what
 * to send.
 * @param params the challenge's own parameters (`realm`, `scope`, `resource_metadata`), in order
 * @param what the credential asked for, for the message (`<token>`, `<access token>`)
 */
export function bearerRefusal(
  header: string | null,
  params: Record<string, string | undefined>,
  what: string,
  invalid: string,
): { challenge: string; reason: string; message: string; error?: BearerError } {
  const error = bearerChallengeError(header);
  const description = error === undefined
    ? undefined
    : error === "invalid_request"
    ? `the Authorization header is not Bearer followed by a token`
    : invalid;
  const all = { ...params, error, error_description: description };
  const challenge = "Bearer " +
    Object.entries(all)
      .filter(([, v]) => v !== undefined && v !== "")
      .map(([k, v]) => `${k}="${v!.replace(/["\\]/g, "")}"`)
      .join(", ");
  const send = `send Authorization: Bearer ${what}`;
  if (error === undefined) {
    return {
      challenge,
      reason: header === null ? "no bearer token" : "not a Bearer credential",
      message: header === null
        ? `Unauthorized: ${send}`
        : `Unauthorized: the Authorization header is not a bearer credential; ${send}`,
    };
  }
  return error === "invalid_request"
    ? {
      challenge,
      error,
      reason: "malformed bearer credential",
      message: `Unauthorized: the Authorization header is not Bearer followed by a token; ${send}`,
    }
    : {
      challenge,
      error,
      reason: "bearer token refused",
      message: `Unauthorized: ${invalid}; ${send}`,
    };
}

const encoder = new TextEncoder();

/** Compare two byte strings in time that depends only on `expected`'s length. */
function sameBytes(got: Uint8Array, expected: Uint8Array): boolean {
  let diff = got.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) diff |= (got[i] ?? 0) ^ expected[i];
  return diff === 0;
}

/**
 * A check of an `Authorization` header value against the tokens.
 * @returns a function: `true` when the header is `Bearer <one of the tokens>`
 */
export function bearerTokenCheck(tokens: readonly string[]): (header: string | null) => boolean {
  const match = bearerTokenMatch(tokens);
  return (header) => match(header) >= 0;
}

/**
 * Which token an `Authorization` header value carries, comparing with every
 * token whichever matches.
 * @returns a function: the index in `tokens` of the token presented as
 *   `Bearer <token>`, or -1
 */
export function bearerTokenMatch(tokens: readonly string[]): (header: string | null) => number {
  const expected = tokens.map((t) => encoder.encode(t));
  return (header) => {
    const value = header ?? "";
    // The scheme is case-insensitive (RFC 9110 section 11.1), then 1*SP (RFC 6750 section 2.1).
    const got = encoder.encode(BEARER_CREDENTIAL.exec(value)?.[1] ?? "");
    let found = -1;
    for (let i = 0; i < expected.length; i++) {
      const same = sameBytes(got, expected[i]);
      found = same && found < 0 ? i : found;
    }
    return found;
  };
}

/**
 * Static tokens and the tools each may use: `tools` absent means every tool
 * the server serves; `name` (a guardfile's `inbound-token` caller) is what
 * audit lines call its holder.
 */
export interface TokenGrant {
  /** The tokens (several: rotation), each at least {@link MIN_TOKEN_LENGTH} characters. */
  tokens: readonly string[];
  /** The served tools these tokens may see and call; absent: every tool. */
  tools?: readonly string[];
  /** The caller's name, for audit lines (`subject`). */
  name?: string;
}
