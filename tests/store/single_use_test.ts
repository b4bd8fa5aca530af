/**
 * RedisSingleUse (src/store/single_use.ts) against a real redis-server: one
 * winner among concurrent spends, a record that expires, an outage that
 * makes spend throw (never a silent "first use") without naming the URL, and
 * a store that lost its records (restarted empty, flushed, its key gone)
 * answering "unrecorded" for every value issued before, never "spent".
 */
import assert from "node:assert/strict";
import { RedisSingleUse } from "../../src/store/single_use.ts";
import { redisMissing, startRedis } from "../support/redis.ts";
import { until } from "../support/wait.ts";

const missing = redisMissing();
if (missing) console.error(`SKIP single_use_test: ${missing}`);

Deno.test({
  name: "RedisSingleUse: of many concurrent spends of one id exactly one wins, across stores",
  ignore: missing !== null,
  // ioredis keeps a reconnect timer until close(); closed below.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const redis = await startRedis();
    // Two stores on one URL, as two replicas would hold (in one process they share a client;
    // the multi-replica test covers separate processes).
    // Generous command timeouts: no step here is about a timeout, and a loaded machine can take
    // seconds to answer.
    const a = new RedisSingleUse({ url: redis.url, commandTimeoutMs: 30_000 });
    const b = new RedisSingleUse({ url: `${redis.url}/0`, commandTimeoutMs: 30_000 });
    try {
      const exp = Date.now() + 60_000;
      const n1 = await a.issue();
      const wins = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).spend(n1, exp)),
      );
      assert.equal(wins.filter((w) => w === "spent").length, 1, `${wins}`);
      assert.equal(wins.filter((w) => w === "used").length, 29, `${wins}`);
      const n2 = await b.issue();
      assert.equal(await a.spend(n2, exp), "spent", "issued by one, spent by another");
      assert.equal(await b.spend(n2, exp), "used");
      // The record lives as long as the value it guards, then goes.
      const short = await a.issue();
      assert.equal(await a.spend(short, Date.now() + 1_000), "spent");
      let again = "used";
      await until(async () => (again = await a.spend(short, Date.now() + 1_000)) !== "used", {
        stepMs: 100,
      });
      assert.equal(again, "spent", "an expired record is gone");
    } finally {
      await a.close();
      await b.close();
      await redis.close();
    }
  },
});

Deno.test({
  name: "RedisSingleUse: an unreachable store throws, naming no URL, and is used again once back",
  ignore: missing !== null,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const redis = await startRedis();
    const url = redis.url.replace("redis://", "redis://:secret-pass@");
    // While Redis is down a command is refused at once (no offline queue), so a generous
    // command timeout costs nothing and keeps a slow answer from counting as an outage.
    const store = new RedisSingleUse({ url: redis.url, commandTimeoutMs: 30_000 });
    const withPassword = new RedisSingleUse({ url, commandTimeoutMs: 30_000 });
    try {
      assert.equal(await store.spend(await store.issue(), Date.now() + 60_000), "spent");
      await redis.stop();
      const during = await store.issue();
      await assert.rejects(() => store.spend(during, Date.now() + 60_000), (error: Error) => {
        assert.match(error.message, /^single-use store unavailable \(/);
        assert.ok(!error.message.includes("127.0.0.1"), error.message);
        return true;
      });
      await assert.rejects(
        () => withPassword.spend("x.y", Date.now() + 60_000),
        (error: Error) => !error.message.includes("secret-pass"),
      );
      await redis.start();
      let back: string | undefined;
      await until(
        async () =>
          (back = await store.spend(await store.issue(), Date.now() + 60_000).catch(() =>
            undefined
          )) !== undefined,
        { stepMs: 200 },
      );
      assert.equal(back, "spent", "weir reconnects on its own");
      // Issued while the store was down: the store cannot vouch for it.
      assert.equal(await store.spend(during, Date.now() + 60_000), "unrecorded");
    } finally {
      await store.close();
      await withPassword.close();
      await redis.close();
    }
  },
});

Deno.test({
  name:
    "RedisSingleUse: a store that lost its records (restart, FLUSHALL, its key gone) never lets a spent value be spent again",
  ignore: missing !== null,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const redis = await startRedis();
    const a = new RedisSingleUse({ url: redis.url, commandTimeoutMs: 30_000 });
    const b = new RedisSingleUse({ url: `${redis.url}/0`, commandTimeoutMs: 30_000 });
    const exp = () => Date.now() + 60_000;
    const cli = (...args: string[]) =>
      new Deno.Command("redis-cli", { args: ["-p", String(redis.port), ...args] }).output();
    try {
      for (
        const [how, lose] of [
          ["FLUSHALL", () => cli("FLUSHALL")],
          ["DEL of the set (as an eviction would)", () => cli("DEL", "weir:spent")],
          ["a restart without persistence", async () => {
            await redis.stop();
            await redis.start();
          }],
        ] as const
      ) {
        const spent = await a.issue();
        const pending = await a.issue();
        assert.equal(await a.spend(spent, exp()), "spent", how);
        await lose();
        // Each store's first answer once it is connected again (a refused spend records nothing).
        for (const [name, store] of [["b", b], ["a", a]] as const) {
          let replay: string | undefined;
          await until(
            async () =>
              (replay = await store.spend(spent, exp()).catch(() => undefined)) !== undefined,
            { stepMs: 100 },
          );
          assert.equal(replay, "unrecorded", `${how}: a spent value replayed on ${name}`);
        }
        assert.equal(await a.spend(pending, exp()), "unrecorded", `${how}: issued before`);
        // Values issued now are spent once, as before.
        const fresh = await a.issue();
        assert.equal(await b.spend(fresh, exp()), "spent", how);
        assert.equal(await a.spend(fresh, exp()), "used", how);
      }
    } finally {
      await a.close();
      await b.close();
      await redis.close();
    }
  },
});

Deno.test({
  name:
    "RedisSingleUse: a restart that reloads an older snapshot (RDB, AOF everysec) or a failover to a lagging replica never lets a spent value be spent again",
  ignore: missing !== null,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    // The set survives such a loss with its generation but without its latest records: a
    // snapshot taken after the generation began, before the spend. tests/support/redis.ts
    // restarts in the same directory, so redis-server loads the `SAVE`d dump.rdb.
    const redis = await startRedis();
    const a = new RedisSingleUse({ url: redis.url, commandTimeoutMs: 30_000 });
    const b = new RedisSingleUse({ url: `${redis.url}/0`, commandTimeoutMs: 30_000 });
    const exp = () => Date.now() + 60_000;
    const cli = async (...args: string[]) => {
      const out = await new Deno.Command("redis-cli", {
        args: ["-p", String(redis.port), ...args],
      }).output();
      return new TextDecoder().decode(out.stdout).trim();
    };
    try {
      for (let round = 0; round < 3; round++) {
        const spent = await a.issue();
        const pending = await a.issue();
        assert.equal(await cli("SAVE"), "OK");
        assert.equal(await a.spend(spent, exp()), "spent", `round ${round}`);
        await redis.stop();
        await redis.start();
        // The snapshot came back: the set and its generation, without the spend after it.
        assert.match(await cli("ZRANGEBYSCORE", "weir:spent", "+inf", "+inf"), /^generation:/);
        // Each store's first answer after the restart (a refused spend, not connected yet,
        // records nothing).
        for (const [name, store] of [["b", b], ["a", a]] as const) {
          let replay: string | undefined;
          await until(
            async () =>
              (replay = await store.spend(spent, exp()).catch(() => undefined)) !== undefined,
            { stepMs: 100 },
          );
          assert.equal(replay, "unrecorded", `round ${round}: ${name} replayed after a reload`);
        }
        assert.equal(await a.spend(pending, exp()), "unrecorded", `round ${round}: issued before`);
        const fresh = await a.issue();
        assert.equal(await b.spend(fresh, exp()), "spent", `round ${round}`);
        assert.equal(await a.spend(fresh, exp()), "used", `round ${round}`);
      }
    } finally {
      await a.close();
      await b.close();
      await redis.close();
    }
  },
});
