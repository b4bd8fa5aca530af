/**
 * `jsonTextIsClean` lets the guard skip rebuilding an upstream answer: it must
 * say "clean" only when `cleanDeep` would change nothing in what the text
 * decodes to. Checked on every escape and raw character that decodes to
 * something `cleanText` changes, and on seeded random JSON texts.
 */
import assert from "node:assert/strict";
import { cleanDeep, jsonTextIsClean } from "../../src/mcp/text.ts";

Deno.test("each way JSON text can carry a character to clean is seen", () => {
  const dirty = [
    '"\\b"',
    '"\\f"',
    '"\\u001b[2J"',
    '"\\ud800"',
    '{"\\u0007": 1}',
    '"\u007f"',
    '"\u009b31m"',
    `"${String.fromCharCode(0xd800)}"`,
  ];
  for (const text of dirty) {
    assert.equal(jsonTextIsClean(text), false, text);
    assert.notDeepEqual(cleanDeep(JSON.parse(text)), JSON.parse(text), text);
  }
  for (const text of ['"plain"', '"tab\\tnew\\nline\\r"', '{"a": ["\\"q\\"", "\\\\", "\\/"]}']) {
    assert.equal(jsonTextIsClean(text), true, text);
  }
});

Deno.test("whenever the text is called clean, cleanDeep changes nothing", () => {
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const alphabet = [
    ...'ab "\\/{}[]:,0123456789',
    "\\n",
    "\\t",
    "\\u0041",
    "\\u001b",
    "\\b",
    "\u007f",
    "\u00e9",
    "😀",
  ];
  let clean = 0;
  for (let i = 0; i < 3000; i++) {
    const chars = Array.from(
      { length: 1 + Math.floor(next() * 8) },
      () => alphabet[Math.floor(next() * alphabet.length)],
    ).join("");
    const text = `{"k${i}": ["${chars}"], "${chars}": 1}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    if (!jsonTextIsClean(text)) continue;
    clean++;
    assert.deepEqual(cleanDeep(value), value, text);
  }
  assert.ok(clean > 300, `only ${clean} clean texts generated`);
});

Deno.test("cleanDeep copies on write: clean values come back as themselves, dirty paths rebuilt", () => {
  const clean = { a: ["x", { b: "y" }], n: 1, raw: null };
  assert.equal(cleanDeep(clean), clean);
  const dirty = { keep: { deep: ["ok"] }, path: [{ s: "bell\u0007" }, "fine"] };
  const out = cleanDeep(dirty);
  assert.notEqual(out, dirty);
  assert.equal(out.keep, dirty.keep, "an untouched branch is shared, not copied");
  assert.deepEqual(out.path, [{ s: "bell\ufffd" }, "fine"]);
  assert.deepEqual(dirty.path[0], { s: "bell\u0007" }, "the input is never modified");
  const key = cleanDeep({ ["k\u001b[2J"]: 1, __proto__x: 2 });
  assert.deepEqual(Object.keys(key), ["k", "__proto__x"]);
});

Deno.test("cleanDeep refuses a value deeper than its bound without exhausting the stack", () => {
  let deep: unknown = "leaf";
  for (let i = 0; i < 6000; i++) deep = [deep];
  assert.throws(() => cleanDeep(deep, 256), RangeError);
  let ok: unknown = "leaf";
  for (let i = 0; i < 200; i++) ok = { a: ok };
  assert.equal(cleanDeep(ok, 256), ok);
});
