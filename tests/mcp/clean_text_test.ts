/**
 * `jsonTextIsClean` lets the guard skip rebuilding an upstream answer: it must
 * say "clean" only when `cleanDeep` would change nothing in what the text
 * decodes to. Checked on every escape and raw character that decodes to
 * something `cleanText` changes, and on seeded random JSON texts.
 */
import assert from "node:assert/strict";
import { cleanDeep, cleanText, jsonTextIsClean } from "../../src/mcp/text.ts";
import fc from "../support/property.ts";

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

/**
 * cleanDeep first proves a value clean with a read-only walk and returns it
 * as it is; only otherwise does it rebuild. Against a plain reference (clean
 * every string and own key, recursively) on seeded random values: the same
 * result, and the very same object exactly when nothing needed cleaning.
 */
Deno.test("cleanDeep's read-only fast path agrees with a plain recursive reference", () => {
  let seed = 11;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
  const strings = [
    "",
    "ok",
    "tab\tline\n",
    "bell\u0007",
    "\u001b[2Jx",
    "\u009b1m",
    "a\ud800",
    "😀",
  ];
  const rawJSON = (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON;
  const make = (depth: number): unknown => {
    const r = next();
    if (depth > 4 || r < 0.35) {
      return pick<unknown>([...strings, 1, null, true, rawJSON("12345678901234567890")]);
    }
    if (r < 0.45) return new Date(0);
    if (r < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => make(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 4); i > 0; i--) o[pick(strings) + i] = make(depth + 1);
    return o;
  };
  const reference = (v: unknown): [unknown, boolean] => {
    if (typeof v === "string") return [cleanText(v), cleanText(v) !== v];
    if (v === null || typeof v !== "object" || v instanceof Date) return [v, false];
    if ((JSON as unknown as { isRawJSON(x: unknown): boolean }).isRawJSON(v)) return [v, false];
    if (Array.isArray(v)) {
      const parts = v.map(reference);
      return [parts.map((p) => p[0]), parts.some((p) => p[1])];
    }
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, c] of Object.entries(v)) {
      const [value, inner] = reference(c);
      changed ||= inner || cleanText(k) !== k;
      out[cleanText(k)] = value;
    }
    return [out, changed];
  };
  let same = 0;
  let rebuilt = 0;
  for (let i = 0; i < 4000; i++) {
    const value = make(0);
    const [expected, changed] = reference(value);
    const out = cleanDeep(value, 256);
    assert.deepEqual(out, expected);
    if (changed) {
      assert.notEqual(out, value);
      rebuilt++;
    } else {
      assert.equal(out, value);
      same++;
    }
  }
  assert.ok(same > 500 && rebuilt > 500, `${same} clean and ${rebuilt} dirty values generated`);
  // The depth bound holds on the fast path too: exactly at the bound is refused.
  let deep: unknown = "leaf";
  for (let i = 0; i < 3; i++) deep = [deep];
  assert.equal(cleanDeep(deep, 4), deep);
  assert.throws(() => cleanDeep([deep], 3), RangeError);
});

Deno.test("jsonTextIsClean's two searches answer as the one alternation they replace", () => {
  const ONE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ud800-\udfff]|\\[bfu]/;
  const piece = fc.oneof(
    fc.string(),
    fc.string({ unit: "binary" }),
    fc.constantFrom("\\", "\\\\", "\\b", "\\f", "\\u", "\\u001b", "\\n", "\\t", '\\"', "\\/"),
    fc.constantFrom("\u0085", "\u007f", "\ud800", "\udc00", "\u0007", "\t", "\n", "a", '"'),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
      const text = pieces.join("");
      assert.equal(jsonTextIsClean(text), !ONE.test(text), JSON.stringify(text));
    }),
    { numRuns: 5000 },
  );
  // Every JSON text of a generated value, too.
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      const text = JSON.stringify(v) ?? "null";
      assert.equal(jsonTextIsClean(text), !ONE.test(text));
    }),
    { numRuns: 1000 },
  );
});
