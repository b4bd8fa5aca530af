/**
 * Signed state through the real CLI (src/mcp/signed_state.ts,
 * src/ops/state_keys.ts): a confirmation is bound to the caller it was asked
 * of; with the same configured keys and a shared Redis, two weir processes
 * accept each other's confirmations and run an answer once between them; a
 * process with its own random key does not; a store outage refuses a gated
 * call rather than running it.
 */
import assert from "node:assert/strict";
import { type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { ACCEPT, modernPost, notRun, resultText } from "../support/modern_http.ts";
import { redisMissing, startRedis } from "../support/redis.ts";
import { until } from "../support/wait.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdefgh";
const KEY = "state-key-for-tests-0123456789abcdefghijkl";

const guardfile = (upstream: string) =>
  tempGuardfile(`confirm "delete_ticket" message="Delete this ticket for good?"
wrap ward mcp tickets {
    base-url "${upstream}"
    auth none
    can delete ticket { path "/tickets/{id}" }
}
`);

/** Wait (bounded) until a server's stderr, collected in the background, matches. */
async function logged(served: Served, pattern: RegExp): Promise<void> {
  await until(() => pattern.test(served.stderr()));
}

/** A refusal because the single-use store cannot be reached yet (503: nothing recorded, nothing run). */
const isStoreDown = (answer: Awaited<ReturnType<typeof modernPost>>) =>
  answer.result?.isError === true &&
  resultText(answer.result).startsWith("confirmation_store_unavailable:");

const ask = (url: string, id: string, token?: string, more: Record<string, unknown> = {}) =>
  modernPost(url, "tools/call", { name: "delete_ticket", arguments: { id }, ...more }, { token });

Deno.test("a confirmation asked of one caller is not redeemed by another (two inbound tokens)", async () => {
  const upstream = await startRecorder(() => Response.json({ deleted: true }));
  const file = await guardfile(upstream.url);
  const weir = await serveHttp(file, {
    env: { TOKENS: `${ALICE},${BOB}` },
    extra: ["--inbound-token-env", "TOKENS"],
  });
  try {
    const asked = await ask(weir.url, "7", ALICE);
    assert.equal(asked.result?.resultType, "input_required");
    const state = asked.result!.requestState as string;
    // The state says nothing of whom it is bound to: no token, no hash in the payload.
    const payload = atob(state.split(".")[0].replaceAll("-", "+").replaceAll("_", "/"));
    assert.ok(!payload.includes("token"), payload);

    const asBob = await ask(weir.url, "7", BOB, { requestState: state, inputResponses: ACCEPT });
    assert.ok(notRun(asBob), `bob cannot redeem it: ${JSON.stringify(asBob)}`);
    assert.equal(upstream.requests.length, 0, "alice's question never runs bob's call");

    const asAlice = await ask(weir.url, "7", ALICE, {
      requestState: state,
      inputResponses: ACCEPT,
    });
    assert.equal(asAlice.result?.resultType, "complete", resultText(asAlice.result));
    assert.equal(upstream.requests.length, 1);
    const unsigned = /"event":"confirmation_state_refused","tool":"delete_ticket","why":"unsigned"/;
    await logged(weir, unsigned);
    assert.match(weir.stderr(), unsigned);
  } finally {
    await weir.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

const redisGap = redisMissing();
if (redisGap) console.error(`SKIP signed_state_test (shared keys): ${redisGap}`);

Deno.test({
  name: "two processes with the same keys and Redis: an answer verifies on the other and runs once",
  ignore: redisGap !== null,
  fn: async () => {
    const redis = await startRedis();
    const upstream = await startRecorder(() => Response.json({ deleted: true }));
    const file = await guardfile(upstream.url);
    const env = { KEYS: KEY, REDIS: redis.url };
    const extra = ["--state-keys-env", "KEYS", "--state-store-env", "REDIS"];
    const started: Served[] = [];
    try {
      const a = await serveHttp(file, { env, extra });
      started.push(a);
      const b = await serveHttp(file, { env, extra });
      started.push(b);
      const lone = await serveHttp(file);
      started.push(lone);
      assert.match(
        a.stderr(),
        /"event":"state_keys","source":"env KEYS","keys":1,"single_use":"redis"/,
      );
      assert.match(lone.stderr(), /"event":"state_keys","source":"random".*verify nowhere else/);

      const state = (await ask(a.url, "7")).result!.requestState as string;
      const retry = { requestState: state, inputResponses: ACCEPT };
      // A process with its own random key does not run it.
      assert.ok(notRun(await ask(lone.url, "7", undefined, retry)));
      assert.equal(upstream.requests.length, 0);
      // The answer lands on the other replica: it runs, once.
      const ran = await ask(b.url, "7", undefined, retry);
      assert.equal(ran.result?.resultType, "complete", resultText(ran.result));
      assert.equal(upstream.requests.length, 1);
      // Replayed on the first replica: spent in Redis, it does not run again.
      assert.ok(notRun(await ask(a.url, "7", undefined, retry)));
      assert.equal(upstream.requests.length, 1, "an answer runs its call once across replicas");
      const spent = /"event":"confirmation_state_refused","tool":"delete_ticket","why":"spent"/;
      await logged(a, spent);
      assert.match(a.stderr(), spent);

      // Redis down: the accepted answer is refused (503 kind), never run unrecorded.
      const fresh = (await ask(a.url, "8")).result!.requestState as string;
      await redis.stop();
      const down = await ask(b.url, "8", undefined, {
        requestState: fresh,
        inputResponses: ACCEPT,
      });
      assert.equal(down.result?.isError, true);
      assert.match(resultText(down.result), /^confirmation_store_unavailable: .*refused, not run/);
      assert.ok(!resultText(down.result).includes(redis.url), "never the store URL");
      assert.equal(upstream.requests.length, 1);
      // Back up, empty (a restart without persistence; a flush or a failover lose records the
      // same way): the answer that ran before must not run again, and the store cannot tell
      // whether an answer from before ran, so each is asked again rather than run.
      await redis.start();
      let replay = down;
      await until(
        async () => !isStoreDown(replay = await ask(a.url, "7", undefined, retry)),
        { stepMs: 250 },
      );
      assert.ok(
        notRun(replay),
        `replayed after the store lost its records: ${resultText(replay.result)}`,
      );
      assert.equal(
        upstream.requests.length,
        1,
        "an answer never runs twice, even across a store restart",
      );
      const unrecorded =
        /"event":"confirmation_state_refused","tool":"delete_ticket","why":"unrecorded"/;
      await logged(a, unrecorded);
      assert.match(a.stderr(), unrecorded);
      // Each replica reconnects on its own backoff timer (up to 1 s apart, later under load):
      // until b has, it refuses (503, nothing recorded, nothing run). Its first answer after
      // that is the one that counts. A tool error is a "complete" result too, so the check is
      // on the answer as a whole, and a failure prints it.
      let before = down;
      await until(
        async () =>
          !isStoreDown(
            before = await ask(b.url, "8", undefined, {
              requestState: fresh,
              inputResponses: ACCEPT,
            }),
          ),
        { stepMs: 250 },
      );
      assert.equal(upstream.requests.length, 1, "a confirmation from before never runs");
      assert.equal(
        before.result?.resultType,
        "input_required",
        `asked again, not run: ${JSON.stringify(before)}`,
      );
      assert.equal(upstream.requests.length, 1);
      // Asked and answered now: runs, once.
      const now = before.result!.requestState as string;
      const after = await ask(a.url, "8", undefined, { requestState: now, inputResponses: ACCEPT });
      assert.equal(after.result?.resultType, "complete", resultText(after.result));
      assert.equal(upstream.requests.length, 2);
      assert.ok(
        notRun(await ask(b.url, "8", undefined, { requestState: now, inputResponses: ACCEPT })),
      );
      assert.equal(upstream.requests.length, 2);
    } finally {
      for (const s of started) await s.stop();
      await upstream.close();
      await redis.close();
      await Deno.remove(file);
    }
  },
});

Deno.test("serve refuses shared keys with a confirm gate and no shared store, saying what to add", async () => {
  const { runCli } = await import("../support/cli.ts");
  const file = await guardfile("http://127.0.0.1:9");
  try {
    const out = await runCli(
      ["serve", file, "--http", "127.0.0.1:0", "--state-keys-env", "KEYS"],
      { env: { KEYS: KEY } },
    );
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /confirms "delete_ticket".*Add --state-store-env VAR/);
    assert.ok(!out.stderr.includes(KEY), "the key is never printed");
    const weak = await runCli(
      ["serve", file, "--http", "127.0.0.1:0", "--state-keys-env", "KEYS"],
      { env: { KEYS: "short" } },
    );
    assert.equal(weak.code, 2);
    assert.match(weak.stderr, /--state-keys-env KEYS: key 1 is 5 characters; use at least 32/);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("a reload (SIGHUP) keeps the keys: a confirmation asked before it runs after it, once", async () => {
  const upstream = await startRecorder(() => Response.json({ deleted: true }));
  const file = await guardfile(upstream.url);
  const weir = await serveHttp(file);
  try {
    const state = (await ask(weir.url, "7")).result!.requestState as string;
    weir.kill("SIGHUP");
    await logged(weir, /"event":"reloaded"/);
    assert.match(weir.stderr(), /"event":"reloaded"/);
    const retry = { requestState: state, inputResponses: ACCEPT };
    const ran = await ask(weir.url, "7", undefined, retry);
    assert.equal(ran.result?.resultType, "complete", resultText(ran.result));
    weir.kill("SIGHUP");
    await until(() => weir.stderr().split('"event":"reloaded"').length >= 3);
    const replay = await ask(weir.url, "7", undefined, retry);
    assert.ok(notRun(replay), "spent before the reload, still spent");
    assert.equal(upstream.requests.length, 1);
  } finally {
    await weir.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("a reload that adds a confirm gate under shared keys without a shared store is refused, saying what to add", async () => {
  const upstream = await startRecorder(() => Response.json({ deleted: true }));
  const file = await guardfile(upstream.url);
  const ungated = (await Deno.readTextFile(file)).replace(/^confirm .*\n/m, "");
  await Deno.writeTextFile(file, ungated);
  const weir = await serveHttp(file, {
    env: { KEYS: KEY },
    extra: ["--state-keys-env", "KEYS"],
  });
  try {
    // Started without a gate, so without a store: allowed. Now the file gains one.
    await Deno.writeTextFile(
      file,
      `confirm "delete_ticket" message="Delete this ticket for good?"\n${ungated}`,
    );
    weir.kill("SIGHUP");
    await logged(weir, /"event":"reload(ed|_refused)"/);
    assert.match(weir.stderr(), /"event":"reload_refused"/);
    assert.doesNotMatch(weir.stderr(), /"event":"reloaded"/);
    assert.match(weir.stderr(), /confirms \\"delete_ticket\\".*--state-store-env/);
    assert.ok(!weir.stderr().includes(KEY), "the key is never printed");
  } finally {
    await weir.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("a shared store that does not answer at start is said at once (a warning naming the flag, never the URL); weir still starts", async () => {
  const { freePort } = await import("../support/port.ts");
  const file = await guardfile("http://127.0.0.1:9");
  const url = `redis://:store-password@127.0.0.1:${freePort()}`;
  const weir = await serveHttp(file, {
    env: { KEYS: KEY, REDIS: url },
    extra: ["--state-keys-env", "KEYS", "--state-store-env", "REDIS"],
  });
  try {
    assert.match(
      weir.stderr(),
      /"level":"warn","event":"state_store_down","store":"--state-store-env REDIS","reason":"the store cannot be reached \([^)]+\)".*refused \(503\), never run/,
    );
    assert.ok(!weir.stderr().includes("store-password"), "never the URL");
    assert.ok(!weir.stderr().includes(KEY), "never the key");
  } finally {
    await weir.stop();
    await Deno.remove(file);
  }
});

Deno.test({
  name:
    "two OAuth subjects (a real OpenID provider) on two replicas with shared keys: neither redeems the other's confirmation or cursor",
  ignore: redisGap !== null,
  fn: async () => {
    const { freePort, startOidc, tokenFor } = await import("../support/oidc.ts");
    const redis = await startRedis();
    const upstream = await startRecorder(() => Response.json({ deleted: true }));
    const resource = `http://127.0.0.1:${freePort()}/mcp`;
    const oidc = await startOidc(resource);
    const items = Array.from(
      { length: 60 },
      (_, i) => `    can get item${i} { path "/items/${i}" }`,
    );
    const file = await tempGuardfile(`confirm "delete_ticket" message="Delete this ticket for good?"
wrap ward mcp tickets {
    base-url "${upstream.url}"
    auth none
    can delete ticket { path "/tickets/{id}" }
${items.join("\n")}
}
`);
    const started: Served[] = [];
    try {
      oidc.accounts.alice = ["tickets:read"];
      oidc.accounts.bob = ["tickets:read"];
      const tokenOf = async (who: string) => {
        oidc.login = who;
        return await tokenFor(oidc, resource, "tickets:read");
      };
      const alice = await tokenOf("alice");
      const bob = await tokenOf("bob");
      const env = { KEYS: KEY, REDIS: redis.url };
      const extra = [
        ...["--oauth-issuer", oidc.issuer, "--oauth-resource", resource],
        ...["--state-keys-env", "KEYS", "--state-store-env", "REDIS"],
      ];
      for (let i = 0; i < 2; i++) started.push(await serveHttp(file, { env, extra }));
      const [a, b] = started;

      const asked = await ask(a.url, "7", alice);
      assert.equal(asked.result?.resultType, "input_required", JSON.stringify(asked));
      const retry = { requestState: asked.result!.requestState, inputResponses: ACCEPT };
      assert.ok(notRun(await ask(b.url, "7", bob, retry)), "bob cannot redeem it on b");
      assert.ok(notRun(await ask(a.url, "7", bob, retry)), "nor on a");
      assert.equal(upstream.requests.length, 0);
      const ran = await ask(b.url, "7", alice, retry);
      assert.equal(ran.result?.resultType, "complete", resultText(ran.result));
      assert.equal(upstream.requests.length, 1);

      const first = await modernPost(a.url, "tools/list", {}, { token: alice });
      const cursor = first.result?.nextCursor as string;
      assert.ok(cursor, "the list pages");
      const next = await modernPost(b.url, "tools/list", { cursor }, { token: alice });
      assert.ok(Array.isArray(next.result?.tools), "alice pages on b");
      const stolen = await modernPost(b.url, "tools/list", { cursor }, { token: bob });
      assert.equal(stolen.error?.code, -32602, JSON.stringify(stolen));
      assert.match(stolen.error!.message, /not a cursor this server issued to this caller/);
    } finally {
      for (const s of started) await s.stop();
      await oidc.close();
      await upstream.close();
      await redis.close();
      await Deno.remove(file);
    }
  },
});

Deno.test("an endless --state-keys-file (/dev/zero) is refused at start, not read forever", async () => {
  const { weirCommand } = await import("../support/cli.ts");
  const file = await guardfile("http://127.0.0.1:9");
  const { command, args } = weirCommand();
  const child = new Deno.Command(command, {
    args: [...args, "serve", file, "--http", "127.0.0.1:0", "--state-keys-file", "/dev/zero"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // Bounded: a reader that never stops is killed here, and the test fails.
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, 60_000);
  try {
    const out = await child.output();
    assert.ok(!killed, "weir was still reading /dev/zero after 60 s");
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(
      stderr,
      /--state-keys-file \/dev\/zero: not a regular file but a character device; name a regular file/,
    );
  } finally {
    clearTimeout(timer);
    await Deno.remove(file);
  }
});
