/**
 * `rate-limit "<n>/<window>" { store redis env "REDIS_URL"; bucket "<k>" }`:
 * one token bucket in a real redis-server, shared by every weir process that
 * names it; a store outage refuses calls (no fallback to memory) and a
 * restarted store is used again without restarting weir.
 */
import assert from "node:assert/strict";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { redisMissing, startRedis } from "../support/redis.ts";
import { until } from "../support/wait.ts";
import { freePort } from "../support/port.ts";

const missing = redisMissing();
if (missing) console.error(`SKIP rate_limit_redis_test: ${missing}`);

const guardfile = (upstream: string, rate: string, block = `store redis env "REDIS_URL"`) =>
  tempGuardfile(
    `rate-limit "${rate}" {\n  ${block}\n}\n` +
      `wrap ward mcp shared {\n  base-url "${upstream}"\n  auth none\n  can get thing { path "/t/{id}" }\n}\n`,
  );

Deno.test({
  name: "two weir processes sharing one Redis bucket allow the limit in total, not twice it",
  ignore: missing !== null,
  fn: async () => {
    const redis = await startRedis();
    const upstream = await startRecorder();
    const file = await guardfile(upstream.url, "4/1h", `store redis env "REDIS_URL"; bucket "two"`);
    const env = { REDIS_URL: redis.url };
    // A wait of up to an hour is past any call deadline; a generous one keeps the served calls
    // within it on a loaded machine.
    const extra = ["--upstream-timeout", "30000"];
    const a = await serveHttp(file, { env, extra });
    const b = await serveHttp(file, { env, extra });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const answer = await callApi(i % 2 ? b.url : a.url, "get_thing", { id: `c${i}` });
        statuses.push(answer.status);
        if (answer.status !== 200) assert.match(answer.text, /^rate_limited: the shared rate/);
      }
      assert.equal(statuses.filter((s) => s === 200).length, 4, `statuses ${statuses}`);
      assert.equal(statuses.filter((s) => s === 429).length, 6, `statuses ${statuses}`);
      assert.equal(upstream.requests.length, 4, "only the calls that got a slot reached upstream");
      // Both replicas served some of the four: the budget really is shared.
      assert.deepEqual(statuses.slice(0, 4), [200, 200, 200, 200]);
    } finally {
      await a.stop();
      await b.stop();
      await upstream.close();
      await redis.close();
      await Deno.remove(file);
    }
  },
});

Deno.test({
  name: "the bucket refills from Redis's clock, and a wait within the deadline is queued",
  ignore: missing !== null,
  fn: async () => {
    const redis = await startRedis();
    const arrivals: number[] = [];
    const upstream = await startRecorder(() => {
      arrivals.push(performance.now());
      return Response.json({ ok: true });
    });
    const file = await guardfile(upstream.url, "1/300ms");
    const env = { REDIS_URL: redis.url };
    const a = await serveHttp(file, { env });
    const b = await serveHttp(file, { env });
    try {
      const sent = performance.now();
      const results = await Promise.all(
        ["w", "x", "y", "z"].map((id, i) => callApi(i % 2 ? b.url : a.url, "get_thing", { id })),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        [200, 200, 200, 200],
        `queued, not refused: ${results.map((r) => r.text).join("\n")}`,
      );
      arrivals.sort((p, q) => p - q);
      // One slot per 300 ms across both replicas: the first slot is taken no earlier than `sent`,
      // the fourth three intervals (900 ms) later. Two separate in-process buckets would let the
      // last through about 300 ms after `sent`. Only a lower bound from `sent`: load delays
      // arrivals, it never brings one forward. (The span between arrivals is not asserted: a
      // first call delayed on its way to the upstream shortens it.) 20 ms for clock granularity.
      const last = arrivals[3] - sent;
      assert.ok(
        last >= 880,
        `the fourth call arrived ${last.toFixed(0)} ms after the first was sent`,
      );
    } finally {
      await a.stop();
      await b.stop();
      await upstream.close();
      await redis.close();
      await Deno.remove(file);
    }
  },
});

Deno.test({
  name: "Redis down refuses calls with a clear tool error; Redis back is used again",
  ignore: missing !== null,
  fn: async () => {
    const redis = await startRedis();
    const upstream = await startRecorder();
    const file = await guardfile(upstream.url, "100/1s");
    const secretUrl = `redis://:hunter2-not-a-real-password@127.0.0.1:${redis.port}`;
    const server = await serveHttp(file, { env: { REDIS_URL: redis.url } });
    const withPassword = await serveHttp(file, { env: { REDIS_URL: secretUrl } });
    try {
      assert.equal((await callApi(server.url, "get_thing", { id: "up" })).status, 200);
      await redis.stop();
      for (const s of [server, withPassword]) {
        const down = await callApi(s.url, "get_thing", { id: "down" });
        assert.equal(down.status, 503, down.text);
        assert.equal(down.body.isError, true);
        assert.match(down.text, /^rate_limit_store_unavailable: the shared rate-limit store/);
        assert.match(down.text, /env "REDIS_URL"/, "names the setting to fix");
        assert.match(down.text, /not sent unmetered/);
        assert.doesNotMatch(down.text + s.stderr(), /hunter2|redis:\/\//, "never the URL");
      }
      assert.equal(upstream.requests.length, 1, "nothing reached upstream while Redis was down");

      await redis.start();
      let status = 0;
      let i = 0;
      await until(
        async () =>
          (status = (await callApi(server.url, "get_thing", { id: `back${i++}` })).status) === 200,
        {
          stepMs: 150,
        },
      );
      assert.equal(status, 200, "calls go through again once Redis is back");
      // Log lines are written in batches: wait for the last one (bounded).
      await until(() => /rate_limit_store_up/.test(server.stderr()));
      assert.match(server.stderr(), /rate_limit_store_down/);
      assert.match(server.stderr(), /rate_limit_store_up/);
    } finally {
      await server.stop();
      await withPassword.stop();
      await upstream.close();
      await redis.close();
      await Deno.remove(file);
    }
  },
});

Deno.test({
  name:
    "a store that cannot be reached says why and what to check: the host, Redis up, the password",
  ignore: missing !== null,
  fn: async () => {
    const redis = await startRedis();
    const upstream = await startRecorder();
    const file = await guardfile(upstream.url, "100/1s");
    // The server asks for a password; the URL gives a wrong one, then none.
    const set = await new Deno.Command("redis-cli", {
      args: ["-p", String(redis.port), "CONFIG", "SET", "requirepass", "right-horse-battery"],
      stdout: "null",
    }).output();
    assert.ok(set.success);
    const cases = [
      [
        "redis://weir-test-no-such-host.invalid:6379",
        /\(ENOTFOUND\); .*: check the host in its URL \(it does not resolve\)/,
      ],
      [
        `redis://127.0.0.1:${freePort()}`,
        /\(ECONNREFUSED\); .*: check that Redis is up at the host and port its URL names/,
      ],
      [
        `redis://:hunter2-wrong@127.0.0.1:${redis.port}`,
        /\(authentication failed\); .*: check the user and password in its URL/,
      ],
      [redis.url, /\(authentication failed\); .*: check the user and password in its URL/],
    ] as const;
    try {
      for (const [url, said] of cases) {
        const server = await serveHttp(file, { env: { REDIS_URL: url } });
        try {
          const r = await callApi(server.url, "get_thing", { id: "x" });
          assert.equal(r.status, 503, r.text);
          assert.match(r.text, /^rate_limit_store_unavailable: .*\(redis from env "REDIS_URL"\)/);
          assert.match(r.text, said);
          assert.doesNotMatch(r.text + server.stderr(), /hunter2|redis:\/\/(?!USER:)|no-such-host/);
        } finally {
          await server.stop();
        }
      }
      assert.equal(upstream.requests.length, 0, "nothing reached upstream unmetered");
    } finally {
      await upstream.close();
      await redis.close();
    }
  },
});

Deno.test("lint refuses a store whose URL variable is unset or not a redis URL, naming no value", async () => {
  const file = await guardfile("https://api.example", "10/1m");
  try {
    const env = { ...Deno.env.toObject() };
    delete env.REDIS_URL;
    const unset = await runCli(["lint", file], { env });
    assert.equal(unset.code, 1);
    assert.equal(unset.stdout, "");
    assert.match(unset.stderr, /REDIS_URL is unset/);
    assert.match(unset.stderr, /\.mcp\.kdl:2:3: rate-limit > store: /, "names the line");

    const wrong = await runCli(["lint", file], {
      env: { REDIS_URL: "http://user:sekrit-pass@cache.internal:6379" },
    });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /REDIS_URL does not hold a redis URL/);
    assert.doesNotMatch(wrong.stderr, /sekrit|cache\.internal/);

    const ok = await runCli(["lint", file], { env: { REDIS_URL: "redis://127.0.0.1:1" } });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /get_thing/);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("malformed store blocks are lint errors that say what to write", async () => {
  const cases: [string, RegExp][] = [
    [`store redis env`, /a driver, a provider and an address/],
    [`store memcached env "X"`, /unknown store driver "memcached"/],
    [`store redis file "/run/url"`, /store provider "file" is not allowed/],
    [`store redis env ""`, /must not be empty/],
    [`store redis literal "http://x:1"`, /not a redis URL/],
    [`store redis env "A"; store redis env "B"`, /"store" appears more than once/],
    [`store redis env "A"; bucket "x"; bucket "y"`, /"bucket" appears more than once/],
    [`bucket "x"`, /needs a store/],
    [`store redis env "A" db=1`, /takes no properties/],
    [`stor redis env "A"`, /unknown node "stor"/],
  ];
  for (const [block, expected] of cases) {
    const file = await guardfile("https://api.example", "10/1m", block);
    try {
      const out = await runCli(["lint", file], { env: { A: "redis://127.0.0.1:1" } });
      assert.equal(out.code, 1, block);
      assert.match(out.stderr, expected, `${block}\n${out.stderr}`);
    } finally {
      await Deno.remove(file);
    }
  }
});
