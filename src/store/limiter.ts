/**
 * The interface every rate-limit bucket implements (in-process or shared). It
 * lives in its own module so the buckets and `mod.ts` import it without
 * importing each other.
 *
 * @module
 */

/**
 * An outbound rate limit: a call takes one slot before its request is sent.
 *
 * Implementations queue a call (resolve later) rather than refuse it, unless
 * the wait would pass `maxWaitMs`; they throw a `ToolError` (from the MCP
 * core) whose message starts with a stable code: `rate_limited` (429, the
 * wait would pass the deadline), `cancelled` (499, `signal` aborted while
 * waiting) or `rate_limit_store_unavailable` (503, a shared store could not
 * be asked: the call is refused, never let through unmetered).
 */
export interface RateLimiter {
  /**
   * Take one slot, waiting for it when the bucket is empty.
   * @param maxWaitMs longest acceptable wait in milliseconds (the call's deadline)
   * @param signal aborts the wait (the slot is given back)
   */
  take(maxWaitMs: number, signal: AbortSignal): Promise<void>;
  /**
   * Give back a slot {@link take} gave, when its call was not sent after all
   * (refused by a later stage, or answered from the cache): a refused call
   * spends no budget. Best effort and never throws (a shared store that
   * cannot be reached keeps the slot spent).
   */
  giveBack(): void;
  /** Release connections (a no-op for the in-process bucket). */
  close?(): Promise<void>;
}
