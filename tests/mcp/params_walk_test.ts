/**
 * The params checks' read-only walks (src/mcp/params.ts): a shallow,
 * well-formed request is passed by one walk that allocates nothing, and only
 * a request that fails is walked again for the path. Over generated params
 * (depths around the bound, lone surrogates in strings and keys, numbers kept
 * as written) the answer is exactly the path-tracking walks' answer: the same
 * path, or none.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { checkParams, MAX_PARAMS_DEPTH, tooDeepAt } from "../../src/mcp/params.ts";
import { McpError } from "../../src/mcp/jsonrpc.ts";
import { illFormedAt, rawJSON } from "../../src/mcp/text.ts";

/** Whether a container sits `limit` levels or more down, by a plain stack walk (no shortcut). */
function deepestReference(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= limit) return true;
    const children = Array.isArray(v)
      ? v
      : Object.keys(v).map((k) => (v as Record<string, unknown>)[k]);
    for (const child of children) stack.push([child, depth + 1]);
  }
  return false;
}

const text = fc.oneof(
  { arbitrary: fc.string({ maxLength: 6 }), weight: 4 },
  { arbitrary: fc.constantFrom("\ud800", "a\udc00", "\ud83d\ude00", "\udfff\ud800"), weight: 1 },
);
const leaf = fc.oneof(text, fc.integer(), fc.constant(null), fc.constant(rawJSON("1e21")));

/** A value nesting about `levels` deep, with branches. */
function nested(levels: number) {
  return fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      leaf,
      fc.array(tie("value"), { maxLength: 3 }),
      fc.dictionary(text, tie("value"), { maxKeys: 3, noNullPrototype: true }),
    ),
  })).value.chain((branch) =>
    fc.array(fc.boolean(), { minLength: levels, maxLength: levels }).map((kinds) => {
      let v: unknown = branch;
      for (const array of kinds) v = array ? [v] : { k: v };
      return v;
    })
  );
}

Deno.test("the depth walk finds a too-deep value exactly when the path walk does", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: MAX_PARAMS_DEPTH - 6, max: MAX_PARAMS_DEPTH + 1 }).chain(nested),
      fc.integer({ min: 1, max: MAX_PARAMS_DEPTH }),
      (value, limit) => {
        const found = tooDeepAt(value, limit, "params");
        assert.equal(found !== null, deepestReference(value, limit));
      },
    ),
    { numRuns: 500 },
  );
});

/** The ill-formed path checkParams names, by the path-tracking walk alone (no shortcut). */
function illFormedReference(params: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(params)) {
    if (key === "arguments") continue;
    const found = illFormedAt(params[key]);
    if (!found) continue;
    const below = found.at === "" ? "" : found.at.startsWith("[") ? found.at : `.${found.at}`;
    return `params.${key}${below}${found.key ? " (a key)" : ""}`;
  }
  return undefined;
}

Deno.test("a lone surrogate in params is found exactly where the path walk finds it", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 6 }).chain(nested),
      fc.integer({ min: 0, max: 6 }).chain(nested),
      (meta, extra) => {
        const params: Record<string, unknown> = {
          name: "get_thing",
          arguments: { id: "\ud800 ignored: the tool checks its own arguments" },
          _meta: { note: meta },
          extra,
        };
        const expected = illFormedReference(params);
        let thrown: string | undefined;
        try {
          checkParams("tools/call", params);
        } catch (error) {
          assert.ok(error instanceof McpError);
          thrown = String((error.data as { path: string }).path);
        }
        assert.equal(thrown, expected);
      },
    ),
    { numRuns: 500 },
  );
});
