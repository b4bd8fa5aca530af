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
 * @module
 */
import { createHash } from "node:crypto";

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
    // The scheme is case-insensitive (RFC 9110 section 11.1).
    const got = encoder.encode(/^bearer /i.test(value) ? value.slice(7) : "");
    let found = -1;
    for (let i = 0; i < expected.length; i++) {
      const same = sameBytes(got, expected[i]);
      found = same && found < 0 ? i : found;
    }
    return found;
  };
}

/**
 * The caller identity of a static token: `token:` and the first 16 hex digits
 * of its SHA-256 (never the token). Signed state a caller is given (a cursor,
 * a confirmation) is bound to it, so another token's holder cannot use it.
 */
export function tokenCaller(token: string): string {
  return `token:${createHash("sha256").update(token).digest("hex").slice(0, 16)}`;
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

/** What a token's holder is allowed as: the `auth` a request carries to the core. */
export interface TokenCaller {
  kind: "token";
  /** `token:<hash prefix>` (see {@link tokenCaller}): what signed state is bound to. */
  caller: string;
  /** The grant's name, when it has one. */
  subject?: string;
  /**
   * The tools this token may see and call (read by the core's
   * `declaredToolAccess`): a set, or `"*"` (every tool, while other tokens
   * are limited: the tool list then depends on the caller); absent when no
   * token is limited.
   */
  tools?: ReadonlySet<string> | "*";
}

/**
 * The tokens a server accepts now, with what each may use. {@link set}
 * replaces them at once (a reload that changes `inbound-token` nodes).
 */
export class TokenTable {
  #match: (header: string | null) => number = () => -1;
  #callers: TokenCaller[] = [];

  /**
   * @throws {RangeError} as {@link TokenTable.set}
   */
  constructor(grants: readonly TokenGrant[]) {
    this.set(grants);
  }

  /**
   * Replace the tokens.
   * @throws {RangeError} when one token is in two grants (which tools would it get?)
   */
  set(grants: readonly TokenGrant[]): void {
    const tokens: string[] = [];
    const callers: TokenCaller[] = [];
    const limited = grants.some((g) => g.tools !== undefined);
    for (const grant of grants) {
      const tools = grant.tools ? new Set(grant.tools) : limited ? "*" as const : undefined;
      for (const token of grant.tokens) {
        if (tokens.includes(token)) {
          throw new RangeError(
            `the same inbound token is given twice${
              grant.name ? ` (again for ${grant.name})` : ""
            }: each token gets one set of tools; give each caller its own token`,
          );
        }
        tokens.push(token);
        callers.push(Object.freeze({
          kind: "token" as const,
          caller: tokenCaller(token),
          ...(grant.name ? { subject: `token:${grant.name}` } : {}),
          ...(tools ? { tools } : {}),
        }));
      }
    }
    this.#match = bearerTokenMatch(tokens);
    this.#callers = callers;
  }

  /**
   * One caller of each distinct set of tools the tokens are limited to (none
   * when no token is limited): what an operator compares surfaces per access
   * set with (`McpServer.surfaceDigest({auth})`).
   */
  limitedCallers(): TokenCaller[] {
    const seen = new Set<string>();
    return this.#callers.filter((c) => {
      if (!(c.tools instanceof Set)) return false;
      const key = JSON.stringify([...c.tools].sort());
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  /** The caller an `Authorization` header value presents, or `undefined` (constant time). */
  callerOf(header: string | null): TokenCaller | undefined {
    const i = this.#match(header);
    return i >= 0 ? this.#callers[i] : undefined;
  }

  /** How many tokens are accepted. */
  get size(): number {
    return this.#callers.length;
  }
}
