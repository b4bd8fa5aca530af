/**
 * The caller's identity on its way upstream: for one call, the token to send
 * the upstream as `Authorization: Bearer <token>`, exchanged from the
 * caller's own access token (RFC 8693; `token_exchange.ts`) and kept per
 * caller, scope set and upstream until it expires (`exchange_cache.ts`).
 * Every mode that sends upstream asks the same function: spec mode's
 * `auth token-exchange`, the `token-exchange` block of `mcp-server http`, and
 * serve-upstream's `--token-exchange-*` flags.
 *
 * - The caller's own token is never the answer: a call whose caller holds
 *   no OAuth token (stdio, a static token) is refused, and an exchange that
 *   hands back the same token is refused.
 * - Exchange down: `token_exchange_unavailable` (503); exchange refused:
 *   `token_exchange_refused` (403); in both, nothing is sent upstream and
 *   the message names no secret.
 * - Each outcome is logged as `{"event": "token_exchange", "outcome":
 *   "exchanged" | "reused" | "refused" | "unavailable", "subject", "audience",
 *   "tool"}` (`error` and the provider's cleaned `description` on a failure),
 *   never a token byte; the call's own audit line follows as usual.
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import { WeirError } from "../errors/kinds.ts";
import { ExchangeCache, type ExchangeCacheOptions } from "./exchange_cache.ts";
import type { ExchangeTarget } from "./profiles.ts";
import { TokenExchangeError, type TokenExchanger } from "./token_exchange.ts";
import { callerTokenOf } from "./resource_server.ts";

/** Options of {@link upstreamCredentials}. */
export interface UpstreamCredentialOptions {
  /** The exchange client (`createTokenExchanger`). */
  exchange: TokenExchanger;
  /** The upstream at the provider: audience, resource, subject token type. */
  target: Omit<ExchangeTarget, "scopes">;
  /** Scopes always asked for; absent: each call asks for its tool's scopes. */
  scopes?: readonly string[];
  log: Logger;
  cache?: ExchangeCacheOptions;
}

/**
 * For one call: the token to send upstream.
 * @param auth the transport's verdict for the call (`CallContext.auth`)
 * @param tool the called tool (for the log)
 * @param toolScopes the tool's scopes (asked for when no fixed scopes are set)
 * @throws {WeirError} `token_exchange_refused` (403) or `token_exchange_unavailable` (503)
 */
export type UpstreamCredential = (
  auth: unknown,
  tool: string,
  toolScopes: readonly string[],
  signal?: AbortSignal,
) => Promise<string>;

/**
 * Build the per-call credential (see the module doc).
 *
 * @example
 * ```ts
 * import { upstreamCredentials } from "./upstream_credential.ts";
 * import { WeirError } from "../errors/kinds.ts";
 * const credential = upstreamCredentials({
 *   exchange: () => Promise.reject(new Error("never asked")),
 *   target: { audience: "https://api.example.com" },
 *   log: () => {},
 * });
 * // A call without an OAuth caller (stdio, a static token) has nothing to exchange.
 * const refused = await credential({ kind: "token" }, "get_ticket", []).catch((e) => e);
 * if (!(refused instanceof WeirError) || refused.kind !== "token_exchange_unavailable") throw refused;
 * ```
 */
export function upstreamCredentials(options: UpstreamCredentialOptions): UpstreamCredential {
  const cache = new ExchangeCache(options.exchange, options.cache);
  const { log } = options;
  const audience = options.target.audience ?? options.target.resource ?? "";
  return async (auth, tool, toolScopes, signal) => {
    const subject = subjectOf(auth);
    const held = callerTokenOf(auth);
    const line = (outcome: string, extra: Record<string, unknown> = {}) => ({
      event: "token_exchange",
      outcome,
      ...(subject === undefined ? {} : { subject }),
      audience,
      tool: tool.slice(0, 64),
      ...extra,
    });
    if (!held) {
      log({ level: "warn", ...line("unavailable", { reason: "no OAuth access token" }) });
      throw new WeirError(
        "token_exchange_unavailable",
        `${tool} sends the caller's identity upstream, but this call carries no OAuth access ` +
          `token to exchange; call it over HTTP with a token from the OAuth issuer (nothing was ` +
          `sent upstream)`,
      );
    }
    const target: ExchangeTarget = { ...options.target, scopes: options.scopes ?? toolScopes };
    try {
      const { token, reused } = await cache.get(held.token, target, signal, held.expiresAt);
      log({ level: reused ? "debug" : "info", ...line(reused ? "reused" : "exchanged") });
      return token.accessToken;
    } catch (error) {
      if (!(error instanceof TokenExchangeError)) throw error;
      log({
        level: "warn",
        ...line(error.outcome, {
          ...(error.error === undefined ? {} : { error: error.error }),
          ...(error.description === undefined ? {} : { description: error.description }),
        }),
      });
      throw error.outcome === "refused"
        ? new WeirError("token_exchange_refused", error.message, { cause: error })
        : new WeirError("token_exchange_unavailable", error.message, { cause: error });
    }
  };
}

function subjectOf(auth: unknown): string | undefined {
  const subject = (auth as { subject?: unknown } | null)?.subject;
  return typeof subject === "string" ? subject : undefined;
}
