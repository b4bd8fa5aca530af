/**
 * Freshness: a call is never forwarded on a verification older than the
 * bound (the operator's maximum staleness, shortened by a positive ttlMs),
 * a change notice voids the current verification, and steady traffic
 * refreshes in the background from half the bound.
 */
import assert from "node:assert/strict";
import { Freshness } from "../../src/mcp_upstream/freshness.ts";

function clock() {
  const c = { t: 1000, now: () => c.t };
  return c;
}

Deno.test("Freshness: stale before any verification, fresh after, refresh past half, stale past the bound", () => {
  const c = clock();
  const f = new Freshness(5000, c.now);
  assert.equal(f.state(), "stale");
  f.verified(c.t);
  assert.equal(f.state(), "fresh");
  c.t += 2499;
  assert.equal(f.state(), "fresh");
  c.t += 1;
  assert.equal(f.state(), "refresh");
  c.t += 2499;
  assert.equal(f.state(), "refresh");
  c.t += 1;
  assert.equal(f.state(), "stale");
});

Deno.test("Freshness: 0 verifies before every call", () => {
  const c = clock();
  const f = new Freshness(0, c.now);
  f.verified(c.t);
  assert.equal(f.state(), "stale");
});

Deno.test("Freshness: a change notice voids the verification; only one begun after it counts", () => {
  const c = clock();
  const f = new Freshness(60_000, c.now);
  const before = c.t;
  f.verified(before);
  c.t += 10;
  f.changed();
  assert.equal(f.state(), "stale");
  f.verified(before + 5); // begun before the notice, answered after it
  assert.equal(f.state(), "stale");
  f.verified(c.t); // begun as the notice came
  assert.equal(f.state(), "stale");
  c.t += 1;
  f.verified(c.t);
  assert.equal(f.state(), "fresh");
});

Deno.test("Freshness: a positive ttlMs shorter than the bound shortens it; 0 or a longer one does not", () => {
  const c = clock();
  const f = new Freshness(5000, c.now);
  f.verified(c.t, 1000);
  c.t += 1000;
  assert.equal(f.state(), "stale");
  f.verified(c.t, 0);
  c.t += 4999;
  assert.equal(f.state(), "refresh");
  f.verified(c.t, 3_600_000);
  c.t += 5000;
  assert.equal(f.state(), "stale");
});

Deno.test("Freshness: an older verification answered late does not replace a newer one (generated)", () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  for (let round = 0; round < 200; round++) {
    const c = clock();
    const bound = 1 + Math.floor(random() * 10_000);
    const f = new Freshness(bound, c.now);
    let newest = -Infinity;
    let changedAt = -Infinity;
    for (let step = 0; step < 30; step++) {
      c.t += Math.floor(random() * bound);
      const roll = random();
      if (roll < 0.2) {
        f.changed();
        changedAt = c.t;
      } else if (roll < 0.7) {
        const startedAt = c.t - Math.floor(random() * bound);
        f.verified(startedAt);
        if (startedAt > changedAt && startedAt > newest) newest = startedAt;
      }
      const state = f.state();
      const age = c.t - newest;
      // Never forwarded on a verification older than the bound, nor on one voided by a notice.
      if (state !== "stale") {
        assert.ok(age < bound, `age ${age} >= bound ${bound}`);
        assert.ok(newest > changedAt);
      }
    }
  }
});
