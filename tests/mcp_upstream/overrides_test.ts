/**
 * overrideTool() and toUpstreamArguments(): the served definition is the MCP
 * server's with the rules applied (what the core then advertises and
 * enforces), contradictions are refused naming both sides, and a call's
 * arguments are translated back exactly.
 */
import assert from "node:assert/strict";

import type { ToolSpec } from "../../src/mcp/types.ts";
import { compileSchema } from "../../src/mcp/schema.ts";
import {
  type ArgumentOverride,
  overrideTool,
  type ToolOverride,
  toUpstreamArguments,
} from "../../src/mcp_upstream/overrides.ts";
import { globSource } from "../../src/guardfile/glob.ts";

const SUM: ToolSpec = {
  name: "get-sum",
  title: "Get Sum Tool",
  description: "Returns the sum of two numbers",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      a: { type: "number", description: "First number" },
      b: { type: "number", description: "Second number", minimum: -100, maximum: 100 },
      note: { type: "string", maxLength: 40 },
      mode: { type: "string", enum: ["fast", "slow", "exact"] },
      tag: { $ref: "#/$defs/tag" },
    },
    required: ["a", "b"],
    $defs: { tag: { type: "string" } },
  },
  annotations: { readOnlyHint: true, destructiveHint: false },
};

function override(args: ArgumentOverride[], extra: Partial<ToolOverride> = {}): ToolOverride {
  return { name: "add", upstream: "get-sum", arguments: args, pinned: [], ...extra };
}

function rule(name: string, extra: Partial<ArgumentOverride> = {}): ArgumentOverride {
  return { name, upstream: name, hide: false, ...extra };
}

Deno.test("overrideTool() renames the tool and replaces title, description and annotations", () => {
  const out = overrideTool(
    SUM,
    override([], {
      title: "Add",
      description: "Adds.",
      annotations: { idempotentHint: true },
    }),
  );
  assert(out.ok);
  assert.deepStrictEqual(out.served.name, "add");
  assert.deepStrictEqual(out.served.title, "Add");
  assert.deepStrictEqual(out.served.description, "Adds.");
  assert.deepStrictEqual(out.served.annotations, {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
  });
  assert.deepStrictEqual(out.served.inputSchema, SUM.inputSchema);
  assert.deepStrictEqual(out.translation.upstream, "get-sum");
});

Deno.test("overrideTool() renames an argument in place, in properties and required", () => {
  const out = overrideTool(SUM, override([rule("first", { upstream: "a" })]));
  assert(out.ok);
  const schema = out.served.inputSchema!;
  assert.deepStrictEqual(Object.keys(schema.properties as object), [
    "first",
    "b",
    "note",
    "mode",
    "tag",
  ]);
  assert.deepStrictEqual(schema.required, ["first", "b"]);
  // The old name is not named (issue 34 item 6); the translation refuses it, saying why.
  assert.equal(schema.propertyNames, undefined);
  assert.ok(!JSON.stringify(schema).includes('"a"'));
  const validate = compileSchema(schema);
  assert.deepStrictEqual(validate({ first: 1, b: 2 }), []);
  assert(validate({ a: 1, b: 2 }).length > 0);
  assert.equal(out.translation.held.get("a"), 'is served as "first": send it as "first"');
});

Deno.test("overrideTool() hides an optional argument and refuses hiding a required one unless pinned", () => {
  const hidden = overrideTool(SUM, override([rule("note", { hide: true })]));
  assert(hidden.ok);
  assert(!("note" in (hidden.served.inputSchema!.properties as object)));
  assert.equal(hidden.served.inputSchema!.propertyNames, undefined);
  const sent = toUpstreamArguments(
    { a: 1, b: 2, note: "x" },
    undefined,
    hidden.translation,
    new Map(),
  );
  assert(!sent.ok);
  assert.match(sent.message, /argument "note" is set by the server, not by the caller/);

  const required = overrideTool(SUM, override([rule("a", { hide: true })]));
  assert(!required.ok);
  assert.match(
    required.problems[0],
    /argument "a" is hidden, but the MCP server's tool requires "a"/,
  );

  const pinned = overrideTool(SUM, override([rule("a", { hide: true })], { pinned: ["a"] }));
  assert(pinned.ok);
  assert.deepStrictEqual(pinned.served.inputSchema!.required, ["b"]);
});

Deno.test("overrideTool() narrows with bounds, lengths, patterns, enum and restrict; advertised is enforced", () => {
  const out = overrideTool(
    SUM,
    override([
      rule("a", { minimum: 0, maximum: 999 }),
      rule("b", { maximum: 10 }),
      rule("note", { pattern: "^[a-z ]+$", maxLength: 20 }),
      rule("mode", { enum: ["fast", "slow"] }),
      rule("tag", { restrict: { globs: ["team-*", "ops"], pattern: globSource("team-*") } }),
    ]),
  );
  assert(out.ok, JSON.stringify(out));
  const validate = compileSchema(out.served.inputSchema);
  assert.deepStrictEqual(validate({ a: 0, b: -100, note: "ok", mode: "slow", tag: "team-a" }), []);
  for (
    const bad of [
      { a: -1, b: 0 },
      { a: 1000, b: 0 },
      { a: 1, b: 11 },
      { a: 1, b: 0, note: "UPPER" },
      { a: 1, b: 0, note: "a".repeat(21) },
      { a: 1, b: 0, mode: "exact" },
      { a: 1, b: 0, tag: "other" },
      { a: 1, b: 0, tag: "team-a/b" },
    ]
  ) {
    assert(validate(bad).length > 0, `refused: ${JSON.stringify(bad)}`);
  }
  // The MCP server's own keywords stay: b keeps its minimum.
  assert.deepStrictEqual(
    (out.served.inputSchema!.properties as Record<string, { minimum?: number }>).b.minimum,
    -100,
  );
});

Deno.test("overrideTool() refuses a rule that contradicts or widens the MCP server's schema, naming both", () => {
  const cases: [ArgumentOverride, RegExp][] = [
    [
      rule("b", { minimum: -200 }),
      /minimum=-200 is below the MCP server's schema says minimum -100/,
    ],
    [rule("b", { maximum: 200 }), /maximum=200 is above the MCP server's schema says maximum 100/],
    [rule("b", { minimum: 150 }), /minimum=150 is above the MCP server's schema says maximum 100/],
    [
      rule("note", { maxLength: 50 }),
      /max-length=50 is above the MCP server's schema says maxLength 40/,
    ],
    [rule("note", { minLength: 41 }), /min-length=41 is above .*maxLength 40/],
    [
      rule("a", { pattern: "^x$" }),
      /apply to strings, and the MCP server's schema says type number/,
    ],
    [
      rule("note", { minimum: 1 }),
      /apply to numbers, and the MCP server's schema says type string/,
    ],
    [
      rule("mode", { enum: ["fast", "turbo"] }),
      /enum value "turbo" is refused by the MCP server's schema/,
    ],
    [rule("tag", { minimum: 1 }), /apply to numbers, and the MCP server's schema says type string/],
    [rule("zzz", { minimum: 1 }), /declares no argument "zzz".*it declares: a, b, note, mode, tag/],
    [rule("note", { upstream: "a" }), /"note" is already an argument of the MCP server's tool/],
  ];
  for (const [r, message] of cases) {
    const out = overrideTool(SUM, override([r]));
    assert(!out.ok, JSON.stringify(r));
    assert.match(out.problems[0], message);
    assert.match(out.problems[0], /tool "add" \(the MCP server's "get-sum"\)/);
  }
});

Deno.test("overrideTool() refuses renaming or hiding inside a combining root schema, allows narrowing there", () => {
  const combined: ToolSpec = {
    name: "t",
    inputSchema: {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "string" } },
      anyOf: [{ required: ["a"] }, { required: ["b"] }],
    },
  };
  const renamed = overrideTool(combined, {
    ...override([rule("x", { upstream: "a" })]),
    upstream: "t",
  });
  assert(!renamed.ok);
  assert.match(renamed.problems[0], /uses anyOf at its root/);
  const narrowed = overrideTool(combined, {
    ...override([rule("a", { maxLength: 3 })]),
    upstream: "t",
  });
  assert(narrowed.ok);
  const validate = compileSchema(narrowed.served.inputSchema);
  assert.deepStrictEqual(validate({ a: "abc" }), []);
  assert(validate({ a: "abcd" }).length > 0);
  assert(validate({}).length > 0, "the MCP server's anyOf still holds");
});

Deno.test("toUpstreamArguments() restores renamed keys, adds pins, keeps numbers as spelled", () => {
  const out = overrideTool(
    SUM,
    override([rule("first", { upstream: "a" }), rule("b", { hide: true })], { pinned: ["b"] }),
  );
  assert(out.ok);
  // The core's spelled twin of {"first": 1.50, "note": "x"} (spelledArguments).
  const args = { first: 1.5, note: "x" };
  const spelled = {
    first: (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON("1.50"),
    note: "x",
  };
  const sent = toUpstreamArguments(args, spelled, out.translation, new Map([["b", 7]]));
  assert(sent.ok);
  assert.deepStrictEqual(JSON.stringify(sent.arguments), '{"a":1.50,"note":"x","b":7}');

  const refused = toUpstreamArguments({ first: 1, a: 2 }, undefined, out.translation, new Map());
  assert(!refused.ok);
  assert.match(refused.message, /argument "a" is served as "first"/);

  const badPin = toUpstreamArguments(
    { first: 1 },
    undefined,
    out.translation,
    new Map([["b", "x"]]),
  );
  assert(!badPin.ok);
  assert.match(badPin.message, /do not match its own schema/);
});

/** A small deterministic PRNG (mulberry32), so a failure reproduces. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("toUpstreamArguments() inverts any set of renames, hides and pins (generated)", () => {
  const random = rng(20);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  for (let round = 0; round < 500; round++) {
    const count = 1 + Math.floor(random() * 6);
    const names = Array.from({ length: count }, (_, i) => `u${i}`);
    const properties: Record<string, { type: string }> = {};
    for (const n of names) properties[n] = { type: pick(["string", "integer", "boolean"]) };
    const required = names.filter(() => random() < 0.4);
    const definition: ToolSpec = {
      name: "t",
      inputSchema: {
        type: "object",
        properties,
        required,
        ...(random() < 0.5 ? { additionalProperties: false } : {}),
      },
    };
    const rules: ArgumentOverride[] = [];
    const pinned: string[] = [];
    const pins = new Map<string, unknown>();
    const valueOf = (type: string) =>
      type === "string"
        ? `v${Math.floor(random() * 100)}`
        : type === "integer"
        ? Math.floor(random() * 1e6)
        : random() < 0.5;
    for (const n of names) {
      const roll = random();
      if (roll < 0.3) rules.push(rule(`s_${n}`, { upstream: n }));
      else if (roll < 0.45 && !required.includes(n)) rules.push(rule(n, { hide: true }));
      else if (roll < 0.6) {
        pinned.push(n);
        pins.set(n, valueOf(properties[n].type));
      }
    }
    const out = overrideTool(definition, { name: "t", upstream: "t", arguments: rules, pinned });
    assert(out.ok, JSON.stringify(out));
    const servedValidate = compileSchema(out.served.inputSchema);
    // A served call: every served argument, each with a value of its type.
    const call: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const n of names) {
      if (pinned.includes(n)) {
        expected[n] = pins.get(n);
        continue;
      }
      const r = rules.find((x) => x.upstream === n);
      if (r?.hide) continue;
      if (!required.includes(n) && random() < 0.3) continue;
      const v = valueOf(properties[n].type);
      call[r?.name ?? n] = v;
      expected[n] = v;
    }
    assert.deepStrictEqual(
      servedValidate(call),
      [],
      JSON.stringify({ call, schema: out.served.inputSchema }),
    );
    const sent = toUpstreamArguments(call, undefined, out.translation, pins);
    assert(sent.ok, JSON.stringify(sent));
    assert.deepStrictEqual(sent.arguments, expected);
    assert.deepStrictEqual(compileSchema(definition.inputSchema)(sent.arguments), []);
    // Any upstream name no longer served is unnamed in the served schema and refused by the
    // translation (or, when the schema is closed, by the schema itself), saying why.
    for (const f of out.translation.forbidden) {
      assert.ok(!JSON.stringify(out.served.inputSchema).includes(`"${f}"`), f);
      const extra = { ...call, [f]: valueOf(properties[f].type) };
      const refused = toUpstreamArguments(extra, undefined, out.translation, pins);
      assert(!refused.ok, f);
      assert.match(
        refused.message,
        new RegExp(`argument "${f}" (is set by the server|is served as)`),
      );
      if (definition.inputSchema!.additionalProperties === false) {
        assert(servedValidate(extra).length > 0, f);
      }
    }
  }
});

Deno.test("toUpstreamArguments(): a pin is written last, over any caller key that maps onto it", () => {
  // The loader refuses a rename onto a pinned name, and the translation
  // forbids a pinned key; beneath both, the pin itself wins (issue 34 item 10).
  const out = overrideTool(
    SUM,
    override([rule("first", { upstream: "a" })], { pinned: ["note"] }),
  );
  assert(out.ok, JSON.stringify(out));
  const translation = { ...out.translation, renames: new Map([["first", "a"], ["memo", "note"]]) };
  const sent = toUpstreamArguments(
    { first: 1, b: 2, memo: "the caller's" },
    undefined,
    translation,
    new Map([["note", "the operator's"]]),
  );
  assert(sent.ok, JSON.stringify(sent));
  assert.deepStrictEqual(sent.arguments, { a: 1, b: 2, note: "the operator's" });
});
