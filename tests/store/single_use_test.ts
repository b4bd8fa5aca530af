/**
 * RedisSingleUse (src/store/single_use.ts) against a real redis-server: one
 * winner among concurrent spends, a record that expires, and an outage that
 * makes spend throw (never a silent "first use") without naming the URL.
 */
import assert from "node:assert/strict";
import { RedisSingleUse } from "../../src/store/single_use.ts";
import { redisMissing, startRedis } from "../support/redis.ts";

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
    const a = new RedisSingleUse({ url: redis.url });
    const b = new RedisSingleUse({ url: `${redis.url}/0` });
    try {
      const exp = Date.now() + 60_000;
      const wins = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).spend("nonce-1", exp)),
      );
      assert.equal(wins.filter((w) => w).length, 1, `${wins}`);
      assert.equal(await a.spend("nonce-2", exp), true);
      assert.equal(await b.spend("nonce-2", exp), false);
      // The record lives as long as the value it guards (PX), then goes.
      assert.equal(await a.spend("short", Date.now() + 1_000), true);
      let again = false;
      for (let i = 0; i < 50 && !again; i++) {
        await new Promise((r) => setTimeout(r, 100));
        again = await a.spend("short", Date.now() + 1_000);
      }
      assert.ok(again, "an expired record is gone");
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
    const store = new RedisSingleUse({ url: redis.url, commandTimeoutMs: 500 });
    const withPassword = new RedisSingleUse({ url, commandTimeoutMs: 500 });
    try {
      assert.equal(await store.spend("before", Date.now() + 60_000), true);
      await redis.stop();
      await assert.rejects(() => store.spend("during", Date.now() + 60_000), (error: Error) => {
        assert.match(error.message, /^single-use store unavailable \(/);
        assert.ok(!error.message.includes("127.0.0.1"), error.message);
        return true;
      });
      await assert.rejects(
        () => withPassword.spend("x", Date.now() + 60_000),
        (error: Error) => !error.message.includes("secret-pass"),
      );
      await redis.start();
      let back = false;
      for (let i = 0; i < 60 && !back; i++) {
        back = await store.spend("after", Date.now() + 60_000).catch(() => false);
        if (!back) await new Promise((r) => setTimeout(r, 200));
      }
      assert.ok(back, "weir reconnects on its own");
    } finally {
      await store.close();
      await withPassword.close();
      await redis.close();
    }
  },
});
