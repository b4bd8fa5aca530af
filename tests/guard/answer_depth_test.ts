/**
 * Spec mode refuses an upstream answer nesting deeper than MAX_ANSWER_DEPTH
 * levels (`upstream_too_deep`) and walks only a text long enough to nest that
 * deep (src/guard/spec_call.ts): at the bound and one past it, in arrays,
 * objects and with a number kept as written at the bottom, the answer is
 * refused exactly when the value nests too deep.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { SpecMode } from "../../src/guard/spec_call.ts";
import { MAX_ANSWER_DEPTH, nestsDeeperThan } from "../../src/guard/secrets.ts";
import { parseJsonExact } from "../../src/mcp/text.ts";
import type { CallContext } from "../../src/mcp/server.ts";

const loaded = loadGuardfileText(
  `wrap ward mcp t {\n  base-url "http://127.0.0.1:9"\n  auth none\n  can get thing { path "/things/{id}" }\n}`,
  "t.mcp.kdl",
);
const mode = new SpecMode(loaded.guardfile!, {
  resolver: { env: () => undefined, readFile: () => Promise.reject(new Error("none")) },
  limits: { timeoutMs: 0, maxResponseBytes: 1 << 20 },
  log: () => {},
});
const ctx = { signal: new AbortController().signal } as CallContext;

/** The answer to `text`, or the kind of its refusal. */
async function answerTo(text: string): Promise<string> {
  const call = mode.begin("get_thing", { id: "a" }, ctx, performance.now());
  try {
    await mode.check(call);
    call.answer = {
      status: 200,
      statusText: "OK",
      contentType: "application/json",
      body: new TextEncoder().encode(text),
    };
    await mode.answer(call);
    return "ok";
  } catch (error) {
    return String((error as Error).message).split(":")[0];
  } finally {
    call.clear();
  }
}

/** A value `levels` containers deep (arrays or objects, as `kinds` says), `leaf` at the bottom. */
function nested(levels: number, kinds: boolean[], leaf: string): string {
  let text = leaf;
  for (let i = 0; i < levels; i++) text = kinds[i % kinds.length] ? `[${text}]` : `{"k":${text}}`;
  return text;
}

Deno.test("an answer is refused exactly when it nests past the bound, however short its text", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: MAX_ANSWER_DEPTH - 3, max: MAX_ANSWER_DEPTH + 3 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
      fc.constantFrom("1", "1.0", "1e21", '"x"', "[]", "{}", "null"),
      async (levels, kinds, leaf) => {
        const text = nested(levels, kinds, leaf);
        const tooDeep = nestsDeeperThan(parseJsonExact(text), MAX_ANSWER_DEPTH);
        assert.equal(await answerTo(text), tooDeep ? "upstream_too_deep" : "ok", text.slice(0, 40));
      },
    ),
    { numRuns: 200 },
  );
  assert.equal(await answerTo(nested(MAX_ANSWER_DEPTH + 1, [true], "1")), "upstream_too_deep");
  assert.equal(await answerTo(nested(MAX_ANSWER_DEPTH - 1, [true], "1")), "ok");
});
