/**
 * The controls a guardfile can put around grants: refusing blank arguments
 * before anything is sent, an outbound token bucket, a response cache, and
 * refusing empty answers. Each is a small piece the dispatch pipeline calls
 * in order; each is off unless the guardfile names it.
 *
 * @module
 */
import { ToolError } from "../mcp/server.ts";
import type { CallToolResult } from "../mcp/types.ts";

/**
 * Emptiness as the reference defines it: `null`, a blank string, `[]`, `{}`.
 * `false` and `0` are answers, not emptiness.
 */
export function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === "string") return value.trim() === "";
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}

/**
 * `reject-empty-argument`: refuse a named argument that is present but blank.
 * @throws {ToolError} 400, naming the argument, before any request
 */
export function checkBlankArguments(
  tool: string,
  fields: readonly string[],
  args: Record<string, unknown>,
): void {
  for (const field of fields) {
    if (Object.hasOwn(args, field) && isEmpty(args[field])) {
      throw new ToolError(
        `reject_empty_argument: "${field}" is present but blank; send a value or leave it out ` +
          `(${tool} sent nothing upstream)`,
        { status: 400 },
      );
    }
  }
}

/**
 * An outbound token bucket (`rate-limit "<count>/<window>"`): bursts up to
 * `count` calls, refills one call every `window / count`. A call waits its
 * turn (it is queued, not refused) unless the wait would pass its deadline.
 */
export class TokenBucket {
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
   * @throws {ToolError} 429 when the wait would exceed `maxWaitMs`, or the signal aborts
   */
  async take(maxWaitMs: number, signal: AbortSignal): Promise<void> {
    const now = this.#now();
    this.#tokens = Math.min(
      this.#capacity,
      this.#tokens + (now - this.#updated) / this.#intervalMs,
    );
    this.#updated = now;
    const wait = this.#tokens >= 1 ? 0 : (1 - this.#tokens) * this.#intervalMs;
    if (wait > maxWaitMs) {
      throw new ToolError(
        `rate_limited: the rate limit would delay this call ${
          Math.ceil(wait)
        } ms, past its deadline; ` +
          `try again later`,
        { status: 429 },
      );
    }
    this.#tokens -= 1; // reserve now, so waiters queue in arrival order
    if (wait <= 0) return;
    await new Promise<void>((resolve, reject) => {
      // A cancelled waiter gives its slot back; one that got through keeps it,
      // even if cancelled later (its request was sent).
      const onAbort = () => {
        clearTimeout(timer);
        this.#tokens += 1;
        reject(
          signal.reason instanceof ToolError ? signal.reason : new ToolError(
            "cancelled: the call was cancelled while waiting for the rate limit",
            { status: 499 },
          ),
        );
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, wait);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** At most this many answers are kept per tool; the soonest to expire goes first. */
export const CACHE_ENTRIES = 256;

/** `cache "<tool>" ttl=`: successful answers reused for `ttl`, keyed by the arguments. */
export class ResponseCache {
  readonly #entries = new Map<string, Map<string, { expires: number; result: CallToolResult }>>();
  readonly #now: () => number;

  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  /** The cache key: the arguments as JSON with keys sorted at every level. */
  static key(args: unknown): string {
    return JSON.stringify(canonical(args));
  }

  get(tool: string, key: string): CallToolResult | undefined {
    const entry = this.#entries.get(tool)?.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.#now()) {
      this.#entries.get(tool)!.delete(key);
      return undefined;
    }
    return entry.result;
  }

  set(tool: string, key: string, ttlMs: number, result: CallToolResult): void {
    let entries = this.#entries.get(tool);
    if (!entries) this.#entries.set(tool, entries = new Map());
    entries.set(key, { expires: this.#now() + ttlMs, result });
    if (entries.size > CACHE_ENTRIES) {
      let soonest: string | undefined;
      let at = Infinity;
      for (const [k, e] of entries) {
        if (e.expires < at) {
          at = e.expires;
          soonest = k;
        }
      }
      entries.delete(soonest!);
    }
  }
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      Object.defineProperty(out, k, {
        value: canonical((value as Record<string, unknown>)[k]),
        enumerable: true,
      });
    }
    return out;
  }
  return value;
}
