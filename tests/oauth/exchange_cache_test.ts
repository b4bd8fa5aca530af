/**
 * The exchanged-token cache (src/oauth/exchange_cache.ts), with a counting
 * exchanger and a clock the test moves: a token is kept per caller's token,
 * scope set (order and repeats do not matter), audience, resource and subject
 * token type, and only those; it is reused until the margin before its expiry
 * and never past the caller's own token; unknown expiries and failures are
 * not kept; concurrent calls share one exchange; a waiter's abort stops only
 * its own wait; the number kept is bounded, least recently used first.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { ExchangeCache } from "../../src/oauth/exchange_cache.ts";
import type { ExchangeTarget } from "../../src/oauth/profiles.ts";
import type { ExchangedToken } from "../../src/oauth/token_exchange.ts";

function counting(lifetimeMs: number | undefined, clock: { now: number }) {
  const calls: [string, ExchangeTarget][] = [];
  const exchange = (subject: string, target: ExchangeTarget): Promise<ExchangedToken> => {
    calls.push([subject, target]);
    return Promise.resolve({
      accessToken: `issued-${calls.length}`,
      ...(lifetimeMs === undefined ? {} : { expiresAt: clock.now + lifetimeMs }),
    });
  };
  return { calls, exchange };
}

const target = (over: Partial<ExchangeTarget> = {}): ExchangeTarget => ({
  audience: "api://up",
  scopes: ["a", "b"],
  ...over,
});

Deno.test("property: two requests share a token exactly when caller token, scope set, audience, resource and subject token type agree", async () => {
  const part = fc.record({
    subject: fc.constantFrom("tok-alice-123456", "tok-bob-1234567"),
    audience: fc.constantFrom("api://up", "api://other", undefined),
    resource: fc.constantFrom("https://r.example", undefined),
    type: fc.constantFrom("urn:x", undefined),
    scopes: fc.subarray(["a", "b", "c"]),
  });
  await fc.assert(
    fc.asyncProperty(part, part, fc.boolean(), async (one, two, shuffle) => {
      const clock = { now: 0 };
      const { calls, exchange } = counting(300_000, clock);
      const cache = new ExchangeCache(exchange, { now: () => clock.now });
      const t = (p: typeof one, order: boolean): ExchangeTarget => ({
        audience: p.audience,
        resource: p.resource,
        subjectTokenType: p.type,
        // The same set in another order, with a repeat.
        scopes: order ? [...p.scopes].reverse().concat(p.scopes.slice(0, 1)) : p.scopes,
      });
      const a = await cache.get(one.subject, t(one, false));
      const b = await cache.get(two.subject, t(two, shuffle));
      const same = one.subject === two.subject && one.audience === two.audience &&
        one.resource === two.resource && one.type === two.type &&
        [...one.scopes].sort().join() === [...two.scopes].sort().join();
      assert.equal(b.reused, same);
      assert.equal(b.token.accessToken === a.token.accessToken, same);
      assert.equal(calls.length, same ? 1 : 2);
    }),
    { numRuns: 200 },
  );
});

Deno.test("reused until the margin before expiry (30 s, or a quarter of a short lifetime), never past the caller's token; then exchanged again", async () => {
  const clock = { now: 1_000_000 };
  const long = counting(600_000, clock);
  const cache = new ExchangeCache(long.exchange, { now: () => clock.now });
  await cache.get("tok-caller-12345", target());
  clock.now += 600_000 - 30_001;
  assert.equal((await cache.get("tok-caller-12345", target())).reused, true);
  clock.now += 1;
  assert.equal(
    (await cache.get("tok-caller-12345", target())).reused,
    false,
    "30 s before: renewed",
  );
  assert.equal(long.calls.length, 2);

  const short = counting(8_000, clock);
  const quick = new ExchangeCache(short.exchange, { now: () => clock.now });
  await quick.get("tok-caller-12345", target());
  clock.now += 5_999;
  assert.equal((await quick.get("tok-caller-12345", target())).reused, true);
  clock.now += 1;
  assert.equal((await quick.get("tok-caller-12345", target())).reused, false, "a quarter: 2 s");

  const bounded = counting(600_000, clock);
  const capped = new ExchangeCache(bounded.exchange, { now: () => clock.now });
  await capped.get("tok-caller-12345", target(), undefined, clock.now + 10_000);
  clock.now += 9_999;
  assert.equal((await capped.get("tok-caller-12345", target())).reused, true);
  clock.now += 1;
  assert.equal((await capped.get("tok-caller-12345", target())).reused, false, "the caller's exp");
});

Deno.test("not kept: a token of unknown expiry, one already past its margin, a failure", async () => {
  const clock = { now: 0 };
  const unknown = counting(undefined, clock);
  const cache = new ExchangeCache(unknown.exchange, { now: () => clock.now });
  await cache.get("tok-caller-12345", target());
  await cache.get("tok-caller-12345", target());
  assert.equal(unknown.calls.length, 2);
  assert.equal(cache.size, 0);
  const expired = counting(0, clock);
  const stale = new ExchangeCache(expired.exchange, { now: () => clock.now });
  await stale.get("tok-caller-12345", target());
  assert.equal((await stale.get("tok-caller-12345", target())).reused, false);
  assert.equal(stale.size, 0);
  let fail = true;
  let calls = 0;
  const flaky = new ExchangeCache(() => {
    calls++;
    return fail
      ? Promise.reject(new Error("down"))
      : Promise.resolve({ accessToken: "issued-ok-123", expiresAt: 600_000 });
  }, { now: () => clock.now });
  await assert.rejects(flaky.get("tok-caller-12345", target()), /down/);
  fail = false;
  assert.equal((await flaky.get("tok-caller-12345", target())).reused, false);
  assert.equal(calls, 2);
});

Deno.test("concurrent calls share one exchange; an aborted waiter stops waiting, the others get the token", async () => {
  let release!: (token: ExchangedToken) => void;
  let calls = 0;
  const cache = new ExchangeCache(() => {
    calls++;
    return new Promise<ExchangedToken>((resolve) => release = resolve);
  });
  const controller = new AbortController();
  const first = cache.get("tok-caller-12345", target());
  const second = cache.get("tok-caller-12345", target(), controller.signal);
  const third = cache.get("tok-caller-12345", target());
  // Each get hashes the caller's token first: wait until the exchange has been asked.
  while (calls === 0) await new Promise((r) => setTimeout(r, 1));
  controller.abort(new Error("caller left"));
  await assert.rejects(second, /caller left/);
  release({ accessToken: "issued-shared-1", expiresAt: Date.now() + 600_000 });
  assert.equal((await first).token.accessToken, "issued-shared-1");
  assert.equal((await third).token.accessToken, "issued-shared-1");
  assert.equal(calls, 1);
});

Deno.test("bounded: past maxEntries the least recently used token goes first", async () => {
  const clock = { now: 0 };
  const { calls, exchange } = counting(600_000, clock);
  const cache = new ExchangeCache(exchange, { maxEntries: 3, now: () => clock.now });
  for (const who of ["tok-a-1234567", "tok-b-1234567", "tok-c-1234567"]) {
    await cache.get(who, target());
  }
  await cache.get("tok-a-1234567", target()); // a is now the most recent
  await cache.get("tok-d-1234567", target()); // b goes
  assert.equal(cache.size, 3);
  assert.equal((await cache.get("tok-a-1234567", target())).reused, true);
  assert.equal((await cache.get("tok-c-1234567", target())).reused, true);
  assert.equal((await cache.get("tok-b-1234567", target())).reused, false);
  assert.equal(calls.length, 5);
});
