/**
 * `rate-limit` -> the limiter the dispatch pipeline takes a slot from: the
 * in-process bucket, or, with `store redis ...`, the bucket shared in Redis
 * (keyed on `bucket`, else the server name).
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import type { RateLimit } from "../guardfile/model.ts";
import { type RateLimiter, RedisBucket, TokenBucket } from "../store/mod.ts";
import type { ValueResolver } from "./values.ts";
import { WeirError } from "../errors/kinds.ts";

/**
 * Build the limiter of a guardfile's `rate-limit`.
 *
 * The store URL is read now (at start-up); the connection is opened on the
 * first call. A URL that cannot be read yields a limiter that refuses every
 * call (the loader already refuses an unset variable, so this is a backstop).
 */
export function rateLimiter(
  limit: RateLimit,
  server: string,
  resolver: ValueResolver,
  log: Logger,
): RateLimiter {
  if (!limit.store) return new TokenBucket(limit.count, limit.windowMs);
  const { provider, address } = limit.store.url;
  const origin = provider === "env" ? `redis from env "${address}"` : "redis from a literal URL";
  const url = provider === "env" ? resolver.env(address) : address;
  if (!url) {
    return {
      take: () =>
        Promise.reject(
          new WeirError(
            "rate_limit_store_unavailable",
            `the shared rate-limit store (${origin}) has no URL; ` +
              `set the variable and restart`,
            { status: 503 },
          ),
        ),
      giveBack: () => {},
    };
  }
  return new RedisBucket({
    url,
    bucket: limit.store.bucket ?? server,
    count: limit.count,
    windowMs: limit.windowMs,
    log,
    origin,
  });
}
