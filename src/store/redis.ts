/**
 * A token bucket kept in Redis, shared by every weir process that names the
 * same bucket: N replicas behind a load balancer spend one budget, not N.
 *
 * One Lua script (run by its SHA-1 with `EVALSHA`, sent with `EVAL` only when
 * Redis does not have it yet; atomic in Redis: Redis runs a
 * script to completion before any other command) refills the bucket from
 * Redis's own clock (`TIME`, so replicas with skewed clocks agree), and either
 * reserves a slot, reporting how long the caller must wait for it, or, when
 * that wait would pass the caller's deadline, leaves the bucket as it was and
 * says so. The hash lives at `weir:ratelimit:<bucket>` with a TTL of
 * max(2 x window, 60 s), so an idle bucket disappears (and comes back full).
 *
 * A store that cannot be asked (down, unreachable, too slow) refuses the call
 * (`rate_limit_store_unavailable`, status 503). There is no fallback to an
 * in-process bucket: that would silently multiply the rate by the number of
 * replicas. The client connects on the first call, not at start-up, and
 * reconnects in the background, so a restarted Redis is used again without
 * restarting weir. Messages never carry the store URL (it may hold a password).
 *
 * Client: `npm:ioredis` (loaded only when a guardfile names a Redis store).
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import type { RateLimiter } from "./limiter.ts";
import { MAX_TIMER_MS } from "../guardfile/duration.ts";
import { waitForSlot } from "./wait.ts";
import type { Redis } from "ioredis";
import { WeirError } from "../errors/kinds.ts";

/** KEYS[1] bucket; ARGV capacity, ms per token, ttl ms, longest wait ms. Returns {ok, wait ms}. */
const TAKE = `
local capacity = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local maxwait = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
if now > at then tokens = math.min(capacity, tokens + (now - at) / interval) end
local wait = 0
if tokens < 1 then wait = math.ceil((1 - tokens) * interval) end
if wait > maxwait then return {0, wait} end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - 1), 'at', tostring(math.max(now, at)))
redis.call('PEXPIRE', KEYS[1], ttl)
return {1, wait}
`;

/** KEYS[1] bucket; ARGV capacity. Gives one reserved slot back (a cancelled waiter). */
const GIVE_BACK = `
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
if tokens then
  redis.call('HSET', KEYS[1], 'tokens', tostring(math.min(tonumber(ARGV[1]), tokens + 1)))
end
return 1
`;

/** Options of {@link RedisBucket}. */
export interface RedisBucketOptions {
  /** `redis://` or `rediss://` URL (user, password and database number as in the URL). */
  url: string;
  /** Bucket key; the Redis key is `weir:ratelimit:<bucket>`. */
  bucket: string;
  /** Calls per window (the burst). */
  count: number;
  /** Window in milliseconds. */
  windowMs: number;
  /** Where to say the store went away or came back (never the URL). */
  log?: Logger;
  /** Longest wait for one store command or connection, in ms (default 2000). */
  commandTimeoutMs?: number;
  /** Named in messages so an operator knows which setting to fix, e.g. `env "REDIS_URL"`. */
  origin?: string;
}

/**
 * The scripts as commands (ioredis `defineCommand`): sent once, then run by
 * their SHA-1 with `EVALSHA`, and sent again (`EVAL`) only when Redis answers
 * `NOSCRIPT` (after a restart or `SCRIPT FLUSH`).
 */
type RedisClient = Redis & {
  weirTake(key: string, ...args: string[]): Promise<unknown>;
  weirGiveBack(key: string, ...args: string[]): Promise<unknown>;
};
type Script = "weirTake" | "weirGiveBack";

/** One client per store URL for the whole process, and its dial in progress. */
interface SharedClient {
  client: Promise<RedisClient>;
  dialing?: Promise<void>;
  /** Why the last connection attempt failed (cleared once connected). */
  lastError?: unknown;
}
const CLIENTS = new Map<string, SharedClient>();

/**
 * The shared token bucket.
 *
 * @example
 * ```ts ignore
 * const bucket = new RedisBucket({ url: "redis://127.0.0.1:6379", bucket: "github", count: 60, windowMs: 60_000 });
 * await bucket.take(30_000, AbortSignal.timeout(30_000)); // resolves when the call may go
 * await bucket.close();
 * ```
 */
export class RedisBucket implements RateLimiter {
  readonly #options: RedisBucketOptions;
  readonly #key: string;
  readonly #intervalMs: number;
  readonly #ttlMs: number;
  #down = false;

  constructor(options: RedisBucketOptions) {
    this.#options = options;
    this.#key = `weir:ratelimit:${options.bucket}`;
    this.#intervalMs = options.windowMs / options.count;
    this.#ttlMs = Math.max(2 * options.windowMs, 60_000);
  }

  /** The Redis key of this bucket. */
  get key(): string {
    return this.#key;
  }

  /**
   * Take one slot, waiting for it when the bucket is empty.
   * @throws {WeirError} `rate_limited` 429, `cancelled` 499, `rate_limit_store_unavailable` 503
   */
  async take(maxWaitMs: number, signal: AbortSignal): Promise<void> {
    // A wait past MAX_TIMER_MS cannot be scheduled (it would fire at once): refused.
    const limit = Math.max(0, Math.floor(Math.min(maxWaitMs, MAX_TIMER_MS)));
    const [ok, wait] = await this.#run(
      "weirTake",
      this.#options.count,
      this.#intervalMs,
      this.#ttlMs,
      limit,
    ) as [number, number];
    if (ok !== 1) {
      throw new WeirError(
        "rate_limited",
        `the shared rate limit would delay this call ${wait} ms, past its ` +
          `deadline; try again later`,
        { status: 429 },
      );
    }
    if (wait <= 0) return;
    // Best effort: on abort the slot goes back to the shared bucket.
    await waitForSlot(wait, signal, () => {
      this.#run("weirGiveBack", this.#options.count).catch(() => {});
    });
  }

  /** Give back one slot a call took but did not use (best effort: a store that is down keeps it). */
  giveBack(): void {
    this.#run("weirGiveBack", this.#options.count).catch(() => {});
  }

  /** Close the connection to this bucket's store (shared by every bucket on the same URL). */
  async close(): Promise<void> {
    await closeClient(this.#options.url);
  }

  async #run(script: Script, ...args: (number | string)[]): Promise<unknown> {
    try {
      const client = await connectedClient(this.#options.url, this.#options.commandTimeoutMs);
      const result = await client[script](this.#key, ...args.map(String));
      if (this.#down) {
        this.#down = false;
        this.#options.log?.({ level: "info", event: "rate_limit_store_up", bucket: this.#key });
      }
      return result;
    } catch (error) {
      if (!this.#down) {
        this.#down = true;
        this.#options.log?.({
          level: "warn",
          event: "rate_limit_store_down",
          bucket: this.#key,
          reason: describeStoreError(error, this.#options.url),
        });
      }
      const origin = this.#options.origin ? ` (${this.#options.origin})` : "";
      const reason = describeStoreError(error, this.#options.url);
      throw new WeirError(
        "rate_limit_store_unavailable",
        `the shared rate-limit store${origin} cannot be reached (${reason}); the call ` +
          `was refused, not sent unmetered: ${storeFix(reason)}; weir reconnects on its own`,
        { status: 503 },
      );
    }
  }
}

/**
 * ioredis, loaded only when a Redis store is configured. Held in a constant so
 * that Deno fetches the package only when this import runs (a string-literal
 * `import()` is fetched before any command starts); the version deno.json
 * pins, held to it by tests/release/lazy_npm_test.ts.
 */
const IOREDIS_MODULE = "npm:ioredis@6.0.0";

/**
 * The process's one client for a store URL, connected (or dialling, shared by
 * every call that arrives before the connection is up): a reload that builds
 * a new server (and a new bucket), and the single-use store
 * (`src/store/single_use.ts`), reuse the connection rather than opening another.
 * @param timeoutMs longest wait for one command or the connection (default 2000)
 * @throws {Error} when the store cannot be reached now (weir keeps redialling)
 */
export async function connectedClient(url: string, timeoutMs = 2_000): Promise<RedisClient> {
  let shared = CLIENTS.get(url);
  if (!shared) {
    const it: SharedClient = { client: Promise.resolve(undefined as never) };
    it.client = (async () => {
      const { Redis }: typeof import("ioredis") = await import(IOREDIS_MODULE);
      const client = new Redis(url, {
        lazyConnect: true,
        // Refuse at once while disconnected rather than queueing calls.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: timeoutMs,
        commandTimeout: timeoutMs,
        // Keep trying in the background, at most a second apart.
        retryStrategy: (times: number) => Math.min(100 * times, 1_000),
      });
      // Without a listener a lost connection is reported as an unhandled error;
      // kept, since a call refused while disconnected only says "not connected".
      client.on("error", (error: unknown) => it.lastError = error);
      client.on("ready", () => it.lastError = undefined);
      client.defineCommand("weirTake", { numberOfKeys: 1, lua: TAKE });
      client.defineCommand("weirGiveBack", { numberOfKeys: 1, lua: GIVE_BACK });
      return client as RedisClient;
    })();
    shared = it;
    CLIENTS.set(url, shared);
  }
  const client = await shared.client;
  if (client.status === "wait" || client.status === "end") {
    // One dial for every call that arrives before the connection is up.
    const it = shared;
    it.dialing ??= client.connect().finally(() => it.dialing = undefined);
  }
  if (shared.dialing) await shared.dialing;
  return client;
}

/** Close the process's client for a store URL (shared by everything using that URL). */
export async function closeClient(url: string): Promise<void> {
  const shared = CLIENTS.get(url);
  CLIENTS.delete(url);
  if (shared) (await shared.client.catch(() => null))?.disconnect();
}

/**
 * A short reason that carries no URL: the error's code, or its class of
 * failure; for a call refused while disconnected, why the connection failed
 * (when `url`'s client saw it).
 */
export function describeStoreError(error: unknown, url?: string): string {
  const reason = storeErrorReason(error);
  const last = url === undefined ? undefined : CLIENTS.get(url)?.lastError;
  return reason === "not connected" && last !== undefined ? storeErrorReason(last) : reason;
}

/**
 * What to check for a store failure {@link describeStoreError} named, in words
 * that name no URL (the message beside them says where the URL comes from).
 * @param reason what {@link describeStoreError} returned
 * @returns e.g. "check the user and password in its URL"
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { storeFix } from "./redis.ts";
 * assert.equal(storeFix("ENOTFOUND"), "check the host in its URL (it does not resolve)");
 * ```
 */
export function storeFix(reason: string): string {
  if (reason === "ENOTFOUND" || reason === "EAI_AGAIN") {
    return "check the host in its URL (it does not resolve)";
  }
  if (reason === "authentication failed") {
    return "check the user and password in its URL (redis://USER:PASSWORD@HOST:PORT)";
  }
  return "check that Redis is up at the host and port its URL names";
}

function storeErrorReason(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && /^[A-Z_]+$/.test(code)) return code;
  const message = error instanceof Error ? error.message : String(error);
  if (/timed? ?out/i.test(message)) return "timed out";
  if (/writeable|offline|closed|connect/i.test(message)) return "not connected";
  if (/NOAUTH|WRONGPASS|auth/i.test(message)) return "authentication failed";
  return "store error";
}
