/**
 * Shared state behind one small interface: the outbound rate limit of a
 * guarded server. {@link TokenBucket} keeps the bucket in this process;
 * {@link RedisBucket} keeps it in Redis, so every replica that names the same
 * bucket draws from one budget.
 *
 * @module
 */

export type { RateLimiter } from "./limiter.ts";
export { TokenBucket } from "./memory.ts";
export { RedisBucket, type RedisBucketOptions } from "./redis.ts";
