/**
 * Single-use records in Redis: the shared store behind the key service's
 * {@link SingleUseStore} (src/mcp/signed_state.ts), so a one-time value (the
 * nonce of an answered confirmation) is spent once across every weir replica
 * that shares the store, not once per replica.
 *
 * One command per spend: `SET weir:spent:<id> 1 NX PX <ms until expiry>`
 * (Redis `SET`, options `NX` and `PX`). Redis runs commands one at a time, so
 * of any number of concurrent spends of one id exactly one gets `OK`; the
 * record disappears when the value it guards has expired anyway.
 *
 * A store that cannot be asked makes `spend` throw (the caller refuses what
 * the value guards; it never runs unrecorded). The connection is the
 * process's one client for the URL (shared with the rate limit, see
 * `src/store/redis.ts`), made on first use and redialled in the background.
 * Messages never carry the URL (it may hold a password).
 *
 * @module
 */
import type { SingleUseStore } from "../mcp/signed_state.ts";
import { closeClient, connectedClient, describeStoreError } from "./redis.ts";

/** Options of {@link RedisSingleUse}. */
export interface RedisSingleUseOptions {
  /** `redis://` or `rediss://` URL. */
  url: string;
  /** Key prefix (default `weir:spent:`). */
  prefix?: string;
  /** Longest wait for the command or the connection, in ms (default 2000). */
  commandTimeoutMs?: number;
}

/**
 * Single use across every process sharing one Redis.
 *
 * @example
 * ```ts ignore
 * const store = new RedisSingleUse({ url: "redis://127.0.0.1:6379" });
 * await store.spend("n1", Date.now() + 60_000); // true
 * await store.spend("n1", Date.now() + 60_000); // false, on any replica
 * ```
 */
export class RedisSingleUse implements SingleUseStore {
  readonly kind = "redis";
  readonly #options: RedisSingleUseOptions;
  readonly #prefix: string;

  constructor(options: RedisSingleUseOptions) {
    this.#options = options;
    this.#prefix = options.prefix ?? "weir:spent:";
  }

  /**
   * @returns `true` when this call spent `id` first (on any replica)
   * @throws {Error} `single-use store unavailable (<reason>)`, never naming the URL
   */
  async spend(id: string, expiresAt: number): Promise<boolean> {
    const ttl = Math.max(1_000, Math.ceil(expiresAt - Date.now()));
    try {
      const client = await connectedClient(this.#options.url, this.#options.commandTimeoutMs);
      const answer = await client.set(`${this.#prefix}${id}`, "1", "PX", ttl, "NX");
      return answer === "OK";
    } catch (error) {
      throw new Error(`single-use store unavailable (${describeStoreError(error)})`);
    }
  }

  /** Check the store answers now (start-up): resolves, or throws without naming the URL. */
  async ping(): Promise<void> {
    try {
      const client = await connectedClient(this.#options.url, this.#options.commandTimeoutMs);
      await client.ping();
    } catch (error) {
      throw new Error(`the store cannot be reached (${describeStoreError(error)})`);
    }
  }

  /** Close the process's connection to this store (shared with the rate limit). */
  async close(): Promise<void> {
    await closeClient(this.#options.url);
  }
}
