/**
 * Redacting a guarded call's answer without copying a clean one
 * (src/guard/secrets.ts `Redactor.redactOwned`): over generated answers
 * holding the call's secrets in every form weir redacts (as is, percent- and
 * JSON-escaped, base64 plain, cut out of a longer text and wrapped into
 * lines, hexadecimal), in strings and in keys, the answer is exactly what the
 * copying walk (`deep`) gives, and a clean answer comes back as itself.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { Redactor } from "../../src/guard/secrets.ts";
import { rawJSON } from "../../src/mcp/text.ts";

const b64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
const hex = (text: string) =>
  [...new TextEncoder().encode(text)].map((b) => b.toString(16).padStart(2, "0")).join("");

/** The forms of a secret an upstream could echo (and near misses that are none). */
function formsOf(secret: string): string[] {
  const wrapped = b64(`user:${secret}`).replace(/(.{6})/g, "$1\n");
  return [
    secret,
    encodeURIComponent(secret),
    JSON.stringify(secret).slice(1, -1).replace(/-/g, "\\u002d"),
    b64(secret),
    b64(secret).replace(/=+$/, ""),
    hex(secret).toUpperCase(),
    wrapped,
    `Basic ${b64(`user:${secret}`)}`,
    secret.slice(0, -1),
    secret.slice(1),
  ];
}

const SECRETS = ["tk-answer-5e1f0c9a", "p@ss word+%2F/é", "abcdefgh", "c2VjcmV0LXZhbHVl"];

Deno.test("an owned answer is redacted exactly as the copying walk redacts it", () => {
  fc.assert(
    fc.property(
      fc.subarray(SECRETS, { minLength: 1 }),
      fc.context(),
      (secrets, ctx) => {
        const forms = secrets.flatMap(formsOf);
        const text = fc.oneof(
          { arbitrary: fc.string({ maxLength: 12 }), weight: 3 },
          { arbitrary: fc.constantFrom(...forms), weight: 1 },
          {
            arbitrary: fc.tuple(fc.string({ maxLength: 4 }), fc.constantFrom(...forms)).map((
              [a, b],
            ) => a + b),
            weight: 1,
          },
        );
        const leaf = fc.oneof(
          text,
          fc.integer(),
          fc.boolean(),
          fc.constant(null),
          fc.constant(rawJSON("1e21")),
        );
        const tree = fc.letrec<{ value: unknown }>((tie) => ({
          value: fc.oneof(
            { depthSize: "small", withCrossShrink: true },
            leaf,
            fc.array(tie("value"), { maxLength: 4 }),
            fc.dictionary(text, tie("value"), { maxKeys: 4, noNullPrototype: true }),
          ),
        })).value;
        fc.assert(
          fc.property(tree, (value) => {
            const redactor = new Redactor();
            for (const s of secrets) redactor.add(s);
            const copied = redactor.deep(value);
            const owned = redactor.redactOwned(value);
            ctx.log(JSON.stringify(value));
            assert.deepEqual(owned, copied);
            assert.equal(JSON.stringify(owned), JSON.stringify(copied));
            if (owned !== value) {
              assert.notDeepEqual(copied, value, "copied although nothing was redacted");
            }
          }),
          { numRuns: 60 },
        );
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("a clean answer is returned as itself; one holding a secret is a redacted copy", () => {
  const redactor = new Redactor();
  redactor.add("tk-answer-5e1f0c9a");
  const clean = { id: "abc-123", tags: ["a", "b"], owner: { name: "x" } };
  assert.equal(redactor.redactOwned(clean), clean);
  const dirty = { id: "abc-123", note: `token=${b64("tk-answer-5e1f0c9a")}` };
  const out = redactor.redactOwned(dirty);
  assert.notEqual(out, dirty);
  assert.deepEqual(out, { id: "abc-123", note: "token=[redacted]" });
  assert.equal(dirty.note.includes("[redacted]"), false, "the answer itself is not changed");
});
