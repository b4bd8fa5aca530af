/** The coverage envelope: what a result does and does not contain, coverage first. */
import assert from "node:assert/strict";
import { BUDGET_BYTES, envelope } from "../../src/guard/coverage.ts";

Deno.test("a top-level array is counted as result", () => {
  assert.deepEqual(envelope([1, 2, 3], 7).coverage, {
    truncated: false,
    bytes: 7,
    over_budget: false,
    items: { result: 3 },
  });
});

Deno.test("every array through objects is counted by dotted path, never inside arrays", () => {
  const c = envelope({ rows: [{ tags: [1, 2] }], page: { labels: ["a"], meta: { x: [] } } }, 10);
  assert.deepEqual(c.coverage.items, { rows: 1, "page.labels": 1, "page.meta.x": 0 });
});

Deno.test("depth is bounded at four levels", () => {
  const c = envelope({ a: { b: { c: { d: [1], e: { f: [1] } } } } }, 10);
  assert.deepEqual(c.coverage.items, { "a.b.c.d": 1 });
});

Deno.test("keys with dots are quoted so two arrays never share a path", () => {
  const c = envelope({ "a.b": [1], a: { b: [1, 2, 3] } }, 10);
  assert.deepEqual(c.coverage.items, { '["a.b"]': 1, "a.b": 3 });
});

Deno.test("over_budget past 8 KiB; no items key when there are no arrays; coverage leads", () => {
  const c = envelope({ ok: true }, BUDGET_BYTES + 1);
  assert.equal(c.coverage.over_budget, true);
  assert.equal("items" in c.coverage, false);
  assert.ok(JSON.stringify(c).startsWith('{"coverage":{"truncated":false,"bytes":'));
});

Deno.test("JSON null is result null; bytes falls back to the encoded size for empty bodies", () => {
  const c = envelope(null, 0);
  assert.equal(c.result, null);
  assert.equal(c.coverage.bytes, 4);
});
