/** Redaction of secrets in every form an upstream could echo them. */
import assert from "node:assert/strict";
import { MAX_ANSWER_DEPTH, nestsDeeperThan, Redactor } from "../../src/guard/secrets.ts";

const SECRET = "tk/9f8e+7d== x";

Deno.test("a secret is redacted raw, percent-encoded (both cases, + for space) and JSON-escaped", () => {
  const r = new Redactor();
  r.add(SECRET);
  for (
    const form of [
      SECRET,
      encodeURIComponent(SECRET),
      encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      encodeURIComponent(SECRET).replaceAll("%20", "+"),
      JSON.stringify(SECRET).slice(1, -1).replaceAll("/", "\\/"),
    ]
  ) {
    assert.equal(r.text(`before ${form} after`), "before [redacted] after", form);
  }
});

Deno.test("deep redaction covers strings and keys; other values are untouched", () => {
  const r = new Redactor();
  r.add("sekret-value-1");
  assert.deepEqual(r.deep({ a: ["x sekret-value-1", 2], ["sekret-value-1"]: true, n: null }), {
    a: ["x [redacted]", 2],
    "[redacted]": true,
    n: null,
  });
});

Deno.test("values shorter than 8 characters are not registered", () => {
  const r = new Redactor();
  r.add("abc");
  assert.equal(r.active, false);
  assert.equal(r.text("abc"), "abc");
});

Deno.test("nesting depth is measured without recursion", () => {
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.equal(nestsDeeperThan(deep, MAX_ANSWER_DEPTH), true);
  assert.equal(nestsDeeperThan({ a: [{ b: 1 }] }, MAX_ANSWER_DEPTH), false);
});
