/**
 * Exchanged tokens kept per caller, scope set and upstream until they
 * expire, so a caller's calls cost one exchange per token lifetime rather
 * than one per call.
 *
 * - The key is the SHA-256 of the caller's token (never the token), the
 *   upstream's audience and resource, the subject token type and the sorted
 *   scopes: two callers, or one caller's two tokens, never share an entry.
 * - An entry is reused until a margin before its expiry (30 s, or a quarter
 *   of its lifetime when that is shorter), and never past the caller's own
 *   token's expiry; then the next call exchanges again (the refresh). A token
 *   whose expiry is unknown is used for its call only.
 * - At most `maxEntries` entries (default 10,000): the least recently used
 *   goes first. Refusals and failures are never kept.
 * - Concurrent calls for the same key share one exchange; each still stops
 *   waiting when its own signal aborts.
 *
 * @module
 */
import { sha256Hex } from "../transport/bytes.ts";
import { untilAborted } from "../outbound/deadline.ts";
import type { ExchangeTarget } from "./profiles.ts";
import type { ExchangedToken, TokenExchanger } from "./token_exchange.ts";

/** Options of {@link ExchangeCache}. */
export interface ExchangeCacheOptions {
  /** Most entries kept (default 10,000). */
  maxEntries?: number;
  /** Longest margin before expiry at which a token is exchanged anew, in ms (default 30,000). */
  refreshBeforeMs?: number;
  /** The clock, in milliseconds since the epoch (tests). */
  now?: () => number;
}

/** What {@link ExchangeCache.get} hands back. */
export interface CachedExchange {
  token: ExchangedToken;
  /** `true` when this call reused a token exchanged earlier. */
  reused: boolean;
}

interface Entry {
  token: ExchangedToken;
  /** Reuse until this instant (ms). */
  until: number;
}

/** See the module doc. */
export class ExchangeCache {
  readonly #exchange: TokenExchanger;
  readonly #max: number;
  readonly #margin: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #pending = new Map<string, Promise<ExchangedToken>>();

  constructor(exchange: TokenExchanger, options: ExchangeCacheOptions = {}) {
    this.#exchange = exchange;
    this.#max = Math.max(1, options.maxEntries ?? 10_000);
    this.#margin = options.refreshBeforeMs ?? 30_000;
    this.#now = options.now ?? Date.now;
  }

  /** How many tokens are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The token for this caller and upstream: a kept one still fresh, else a
   * new exchange.
   * @param subjectToken the caller's access token (hashed for the key; never kept)
   * @param notAfter the caller's token's expiry (ms since the epoch), when known
   * @throws what the exchanger throws (`TokenExchangeError`); the signal's reason when it aborts
   */
  async get(
    subjectToken: string,
    target: ExchangeTarget,
    signal?: AbortSignal,
    notAfter?: number,
  ): Promise<CachedExchange> {
    const key = await this.#keyOf(subjectToken, target);
    const now = this.#now();
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      if (hit.until > now) {
        this.#entries.set(key, hit);
        return { token: hit.token, reused: true };
      }
    }
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = this.#exchange(subjectToken, target).then((token) => {
        this.#keep(key, token, notAfter);
        return token;
      }).finally(() => this.#pending.delete(key));
      // Waiters that gave up (their signal aborted) leave no unhandled rejection behind.
      pending.catch(() => {});
      this.#pending.set(key, pending);
    }
    return { token: await (signal ? untilAborted(pending, signal) : pending), reused: false };
  }

  #keep(key: string, token: ExchangedToken, notAfter: number | undefined): void {
    if (token.expiresAt === undefined) return;
    const now = this.#now();
    const margin = Math.min(this.#margin, Math.max(0, (token.expiresAt - now) / 4));
    const until = Math.min(token.expiresAt - margin, notAfter ?? Infinity);
    if (until <= now) return;
    this.#entries.delete(key);
    this.#entries.set(key, { token, until });
    while (this.#entries.size > this.#max) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }

  async #keyOf(subjectToken: string, target: ExchangeTarget): Promise<string> {
    const scopes = [...new Set(target.scopes)].sort().join(" ");
    return JSON.stringify([
      await sha256Hex(subjectToken),
      target.audience ?? "",
      target.resource ?? "",
      target.subjectTokenType ?? "",
      scopes,
    ]);
  }
}
