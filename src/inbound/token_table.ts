/**
 * The tokens a server accepts now ({@link TokenTable}) and the caller each
 * token's holder is ({@link tokenCaller}): the token values themselves are read
 * by `./static_tokens.ts`. Apart from it so that a server without tokens (every
 * stdio server) loads no SHA-256: `weir serve` loads this module only when
 * tokens are given (src/ops/lazy.ts).
 *
 * @module
 */
// A synchronous SHA-256 without Node's crypto module, whose loading cost every start about
// 15 ms (bench/README.md, "Cold start").
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { bearerTokenMatch, type TokenGrant } from "./static_tokens.ts";

/**
 * The caller identity of a static token: `token:` and the first 16 hex digits
 * of its SHA-256 (never the token). Signed state a caller is given (a cursor,
 * a confirmation) is bound to it, so another token's holder cannot use it.
 */
export function tokenCaller(token: string): string {
  return `token:${bytesToHex(sha256(new TextEncoder().encode(token))).slice(0, 16)}`;
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
