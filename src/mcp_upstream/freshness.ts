/**
 * When serve-upstream must verify the MCP server's tool definitions again
 * before forwarding a call, instead of listing them before every call.
 *
 * A verification is a listing of every page of `tools/list`, compared with
 * the fingerprints; it is as old as the moment its first request was sent.
 * A call is never forwarded on a verification older than the bound, where
 * the bound is the operator's maximum staleness (`--max-staleness`, guardfile
 * `max-staleness`; default {@link DEFAULT_MAX_STALENESS_MS}; `0` verifies
 * before every call), shortened by the MCP server's own signals:
 *
 * - `notifications/tools/list_changed` makes the current verification void
 *   at once: the next call waits for one begun after the notice;
 * - a 2026-07-28 `tools/list` result's `ttlMs`, when positive and shorter
 *   than the operator's bound, is the bound until the next verification
 *   (`ttlMs: 0`, the SDKs' default, promises nothing and changes nothing:
 *   the operator's bound holds).
 *
 * So that steady traffic never waits, a call made once half the bound has
 * passed goes ahead and starts a verification in the background
 * (`refresh`); only a call past the bound (or after a change notice) waits
 * (`stale`).
 *
 * @module
 */

/** The default maximum staleness of the MCP server's definitions, in ms. */
export const DEFAULT_MAX_STALENESS_MS = 5_000;

/** What a call must do about the definitions now. */
export type FreshnessState =
  /** Forward: the last verification is well within the bound. */
  | "fresh"
  /** Forward, and start a verification in the background. */
  | "refresh"
  /** Wait for a verification begun now. */
  | "stale";

/** See the module doc. */
export class Freshness {
  readonly #maxStalenessMs: number;
  readonly #now: () => number;
  /** When the last counted verification began; -Infinity before any. */
  #verifiedAt = -Infinity;
  /** The bound that verification set (the operator's, or a shorter `ttlMs`). */
  #bound: number;
  /** When the MCP server last said its list changed. */
  #changedAt = -Infinity;

  /**
   * @param maxStalenessMs the operator's bound, in ms (0: every call verifies)
   * @param now the clock, in ms (default `performance.now`)
   */
  constructor(maxStalenessMs: number, now: () => number = () => performance.now()) {
    if (!(maxStalenessMs >= 0)) throw new RangeError("maxStalenessMs must be 0 or more");
    this.#maxStalenessMs = maxStalenessMs;
    this.#bound = maxStalenessMs;
    this.#now = now;
  }

  /** The clock's reading, for {@link verified}'s `startedAt`. */
  now(): number {
    return this.#now();
  }

  /** The operator's bound, in ms. */
  get maxStalenessMs(): number {
    return this.#maxStalenessMs;
  }

  /**
   * A verification that began at `startedAt` found the definitions as
   * expected (or stubbed what drifted).
   * @param ttlMs the `ttlMs` of its `tools/list` answer, if it had one
   */
  verified(startedAt: number, ttlMs?: number): void {
    // A verification begun before (or as) a change notice came proves nothing after it,
    // and an older one than the counted one changes nothing.
    if (startedAt <= this.#changedAt || startedAt <= this.#verifiedAt) return;
    this.#verifiedAt = startedAt;
    this.#bound = typeof ttlMs === "number" && ttlMs > 0
      ? Math.min(this.#maxStalenessMs, ttlMs)
      : this.#maxStalenessMs;
  }

  /** The MCP server said its tool list changed (`notifications/tools/list_changed`). */
  changed(): void {
    this.#changedAt = this.#now();
  }

  /** What a call arriving now must do (see {@link FreshnessState}). */
  state(): FreshnessState {
    const now = this.#now();
    if (this.#changedAt >= this.#verifiedAt) return "stale";
    const age = now - this.#verifiedAt;
    if (age >= this.#bound) return "stale";
    return age >= this.#bound / 2 ? "refresh" : "fresh";
  }
}
