/**
 * The in-process token bucket: one per server process. Right for one replica;
 * behind a load balancer N replicas each allow the full rate, so use the
 * shared store ({@link RedisBucket} in `./redis.ts`) there.
 *
 * @module
 */
import type { RateLimiter } from "./limiter.ts";
import { MAX_TIMER_MS } from "../guardfile/duration.ts";
import { waitForSlot } from "./wait.ts";
import { WeirError } from "../errors/kinds.ts";

/**
 * An outbound token bucket (`rate-limit "<count>/<window>"`): bursts up to
 * `count` calls, refills one call every `window / count`. A call waits its
 * turn (it is queued, not refused) unless the wait would pass its deadline.
 */
export class TokenBucket implements RateLimiter {
  readonly #capacity: number;
  readonly #intervalMs: number;
  #tokens: number;
  #updated: number;
  readonly #now: () => number;

  /**
   * @param count calls per window
   * @param windowMs window in milliseconds
   * @param now clock in milliseconds (injectable for tests)
   */
  constructor(count: number, windowMs: number, now: () => number = () => performance.now()) {
    this.#capacity = count;
    this.#intervalMs = windowMs / count;
    this.#tokens = count;
    this.#now = now;
    this.#updated = now();
  }

  /**
   * Take one call's slot, waiting for it when the bucket is empty.
   * @param maxWaitMs longest acceptable wait (the call's remaining deadline)
   * @throws {WeirError} 429 when the wait would exceed `maxWaitMs`, or the signal aborts
   */
  async take(maxWaitMs: number, signal: AbortSignal): Promise<void> {
    // A longer wait cannot be scheduled (it would fire at once): refused as past the deadline.
    maxWaitMs = Math.min(maxWaitMs, MAX_TIMER_MS);
    const now = this.#now();
    this.#tokens = Math.min(
      this.#capacity,
      this.#tokens + (now - this.#updated) / this.#intervalMs,
    );
    this.#updated = now;
    const wait = this.#tokens >= 1 ? 0 : (1 - this.#tokens) * this.#intervalMs;
    if (wait > maxWaitMs) {
      throw new WeirError(
        "rate_limited",
        `the rate limit would delay this call ${Math.ceil(wait)} ms, past its deadline; ` +
          `try again later`,
        { status: 429 },
      );
    }
    this.#tokens -= 1; // reserve now, so waiters queue in arrival order
    if (wait <= 0) return;
    // A cancelled waiter gives its slot back; one that got through keeps it,
    // even if cancelled later (its request was sent).
    await waitForSlot(wait, signal, () => this.#tokens += 1);
  }

  /** Give back one slot a call took but did not use (never past the bucket's capacity). */
  giveBack(): void {
    this.#tokens = Math.min(this.#capacity, this.#tokens + 1);
  }
}
