/**
 * Single-use records in Redis: the shared store behind the key service's
 * {@link SingleUseStore} (src/mcp/signed_state.ts), so a one-time value (the
 * nonce of an answered confirmation) is spent once across every weir replica
 * that shares the store, not once per replica.
 *
 * One sorted set (default key `weir:spent`) holds every record: a spent id
 * with its expiry as the score, and one member `generation:<g>@<run_id>` with
 * the score `+inf` naming the records' generation. Each `spend` is one Lua script
 * (atomic in Redis: it runs to completion before any other command) that
 * reads the generation (making one when there is none), refuses an id issued
 * in another generation as `"unrecorded"`, prunes expired records (Redis's own
 * clock, `TIME`) and adds the id with `ZADD NX`: of any number of concurrent
 * spends of one id exactly one adds it.
 *
 * Why one set and a generation: a record Redis loses (a restart without
 * persistence, `FLUSHALL`, a failover to a replica that had not received it,
 * eviction under `maxmemory`) would otherwise let an answer that already ran
 * run again. Every id carries the generation it was issued in; the set and its
 * generation live and die together (one key: evicted, flushed or lost whole),
 * so a set that lost its records has a new generation, and no id from before
 * is taken as unspent. A set can also come back with its generation but
 * without its latest records: a restart that reloads an RDB snapshot or an AOF
 * written every second, a failover to a replica that lagged (replication is
 * asynchronous). So a generation also names the redis-server process that
 * began it (`run_id` of `INFO server`, new at every start, its own on every
 * replica), and a set marked by another process starts a new generation. The
 * cost: a question asked before such a loss, restart or failover is asked
 * again. A store whose `INFO server` gives no `run_id` (a proxy that hides it)
 * cannot be used: every spend throws, and the gated call is refused. Each process learns the generation when it connects (and again after
 * each reconnect) and from every spend.
 *
 * A store that cannot be asked makes `spend` throw (the caller refuses what
 * the value guards; it never runs unrecorded). The connection is the
 * process's one client for the URL (shared with the rate limit, see
 * `src/store/redis.ts`), made on first use and redialled in the background.
 * Messages never carry the URL (it may hold a password).
 *
 * @module
 */
import {
  generationOf,
  randomToken,
  type SingleUseStore,
  type SpendOutcome,
} from "../mcp/signed_state.ts";
import { closeClient, connectedClient, describeStoreError } from "./redis.ts";

/**
 * KEYS[1] the set; ARGV[1] a generation to start if there is none, ARGV[2] the
 * id's generation ("" only to read the generation), ARGV[3] the id, ARGV[4] ms
 * to keep its record. Returns {generation, 1 spent | 0 used | 2 unrecorded}.
 *
 * The marker is `generation:<g>@<run_id>`: a generation holds only in the
 * redis-server process that began it (`run_id` of `INFO server`, new at every
 * start and different on every replica). A marker of another process (a
 * snapshot or AOF reloaded at a restart, a replica promoted by a failover:
 * the set came back, its latest records may not have) or of no process (a
 * marker written before the run_id was part of it) starts a new generation.
 */
const SPEND = `
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
if not run then return redis.error_reply('INFO server gives no run_id') end
local m = redis.call('ZRANGEBYSCORE', KEYS[1], '+inf', '+inf', 'LIMIT', 0, 1)[1]
local g, r
if m then g, r = string.match(m, '^generation:([^@]+)@(%x+)$') end
if r ~= run then
  if m then redis.call('ZREM', KEYS[1], m) end
  g = ARGV[1]
  redis.call('ZADD', KEYS[1], '+inf', 'generation:' .. g .. '@' .. run)
end
if ARGV[2] == '' then return {g, 0} end
if ARGV[2] ~= g then return {g, 2} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
return {g, redis.call('ZADD', KEYS[1], 'NX', now + tonumber(ARGV[4]), ARGV[3])}
`;

/** Options of {@link RedisSingleUse}. */
export interface RedisSingleUseOptions {
  /** `redis://` or `rediss://` URL. */
  url: string;
  /** The sorted set's key (default `weir:spent`). */
  key?: string;
  /** Longest wait for the command or the connection, in ms (default 2000). */
  commandTimeoutMs?: number;
}

type SpendClient = Awaited<ReturnType<typeof connectedClient>> & {
  weirSpend(key: string, ...args: string[]): Promise<[string, number]>;
};

/** An id's generation when the store could not be asked: never a store's, so refused later. */
const UNKNOWN = "unknown";

/**
 * Single use across every process sharing one Redis.
 *
 * @example
 * ```ts ignore
 * const store = new RedisSingleUse({ url: "redis://127.0.0.1:6379" });
 * const id = await store.issue();
 * await store.spend(id, Date.now() + 60_000); // "spent"
 * await store.spend(id, Date.now() + 60_000); // "used", on any replica
 * ```
 */
export class RedisSingleUse implements SingleUseStore {
  readonly kind = "redis";
  readonly #options: RedisSingleUseOptions;
  readonly #key: string;
  /** The generation last seen (at connect, reconnect or a spend). */
  #generation?: string;
  /** The client whose reconnects this store follows (a closed client is replaced by a new one). */
  #watched?: SpendClient;

  constructor(options: RedisSingleUseOptions) {
    this.#options = options;
    this.#key = options.key ?? "weir:spent";
  }

  async #client(): Promise<SpendClient> {
    const client = await connectedClient(
      this.#options.url,
      this.#options.commandTimeoutMs,
    ) as SpendClient;
    if (typeof client.weirSpend !== "function") {
      client.defineCommand("weirSpend", { numberOfKeys: 1, lua: SPEND });
    }
    if (this.#watched !== client) {
      this.#watched = client;
      // A reconnect may find a store that restarted empty: learn its generation at once.
      client.on("ready", () => {
        this.#generation = undefined;
        this.#read(client).catch(() => {});
      });
    }
    return client;
  }

  async #read(client: SpendClient): Promise<string> {
    const [generation] = await client.weirSpend(this.#key, randomToken(12), "", "", "0");
    this.#generation = generation;
    return generation;
  }

  /**
   * A fresh value `<random>.<generation>`. When the store cannot be asked the
   * generation is unknown: the value is made anyway (asking a person costs
   * nothing) and refused as `"unrecorded"` when it comes back.
   */
  async issue(): Promise<string> {
    let generation = this.#generation;
    if (generation === undefined) {
      generation = await this.#client().then((c) => this.#read(c)).catch(() => UNKNOWN);
    }
    return `${randomToken(16)}.${generation}`;
  }

  /**
   * @returns `"spent"` when this call spent `id` first (on any replica), `"used"`
   *   after, `"unrecorded"` when `id` was issued before the store's records began
   * @throws {Error} `single-use store unavailable (<reason>)`, never naming the URL
   */
  async spend(id: string, expiresAt: number): Promise<SpendOutcome> {
    const keepMs = Math.max(1_000, Math.ceil(expiresAt - Date.now()));
    let answer: [string, number];
    try {
      const client = await this.#client();
      answer = await client.weirSpend(
        this.#key,
        randomToken(12),
        generationOf(id) || UNKNOWN,
        id,
        String(keepMs),
      );
    } catch (error) {
      throw new Error(
        `single-use store unavailable (${describeStoreError(error, this.#options.url)})`,
      );
    }
    this.#generation = answer[0];
    return answer[1] === 1 ? "spent" : answer[1] === 2 ? "unrecorded" : "used";
  }

  /** Check the store answers now (start-up): resolves, or throws without naming the URL. */
  async ping(): Promise<void> {
    try {
      await this.#read(await this.#client());
    } catch (error) {
      throw new Error(
        `the store cannot be reached (${describeStoreError(error, this.#options.url)})`,
      );
    }
  }

  /** Close the process's connection to this store (shared with the rate limit). */
  async close(): Promise<void> {
    await closeClient(this.#options.url);
  }
}
