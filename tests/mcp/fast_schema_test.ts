/**
 * The fast acceptor against the full validator, value by value: for every
 * schema it takes on, it must say "valid" exactly when `@cfworker/json-schema`
 * does (a wider answer would let a refused argument through). Schemas: every
 * grant of every shipped guardfile plus one per keyword; values: seeded random
 * ones around each schema's edges.
 */
import assert from "node:assert/strict";
import { Validator } from "@cfworker/json-schema";
import { compileAcceptor } from "../../src/mcp/fast_schema.ts";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import { grantTool } from "../../src/guard/tools.ts";
import { ENVELOPE_SCHEMA } from "../../src/guard/coverage.ts";

const ROOT = new URL("../../guardfiles/", import.meta.url);

/** A small deterministic PRNG (mulberry32), so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = [
  "",
  "a",
  "ab",
  "abc-123",
  "demo-x",
  "😀",
  "😀😀",
  "\ud800",
  "a\ud800b",
  "x".repeat(40),
];
const NUMBERS = [0, -0, 1, -1, 1.5, 16, 17, 90, 90.5, -90, -180.1, 1e21, 2 ** 53 + 2, 0.1];

function scalar(r: () => number): unknown {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  switch (Math.floor(r() * 6)) {
    case 0:
      return pick(STRINGS);
    case 1:
      return pick(NUMBERS);
    case 2:
      return r() < 0.5;
    case 3:
      return null;
    case 4:
      return Array.from({ length: Math.floor(r() * 10) }, () => pick([...STRINGS, 1, null]));
    default:
      return { nested: pick(STRINGS) };
  }
}

function values(schema: Record<string, unknown>, r: () => number, n: number): unknown[] {
  const props = Object.keys((schema.properties ?? {}) as object);
  const out: unknown[] = [null, [], "x", 1, {}];
  for (let i = 0; i < n; i++) {
    const v: Record<string, unknown> = {};
    for (const p of props) if (r() < 0.85) v[p] = scalar(r);
    if (r() < 0.1) v.extra = scalar(r);
    if (r() < 0.05) Object.defineProperty(v, "__proto__", { value: 1, enumerable: true });
    out.push(v);
  }
  return out;
}

function shippedSchemas(): Record<string, unknown>[] {
  const schemas: Record<string, unknown>[] = [];
  for (const entry of Deno.readDirSync(ROOT)) {
    if (!entry.name.endsWith(".mcp.kdl")) continue;
    const text = Deno.readTextFileSync(new URL(entry.name, ROOT));
    const { guardfile } = parseGuardfile(text, entry.name);
    if (!guardfile) continue; // an AWS policy file: no grants
    for (const grant of guardfile.grants) {
      schemas.push(grantTool(grant, guardfile).inputSchema as Record<string, unknown>);
    }
  }
  return schemas;
}

const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

const KEYWORDS: Record<string, unknown>[] = [
  obj({ s: { type: "string", minLength: 2, maxLength: 3 } }, ["s"]),
  obj({ s: { type: "string", pattern: "^[a-z]+-\\d+$" } }),
  obj({ n: { type: "number", minimum: -90, maximum: 90 } }),
  obj({ n: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 17 } }),
  obj({ i: { type: ["integer", "null"], minimum: 1 } }),
  obj({ e: { enum: ["open", "closed", 1, null] } }),
  obj({ a: { type: ["array", "null"], items: { type: "string", minLength: 1 }, maxItems: 3 } }),
  obj({ a: { type: "array", minItems: 1 } }),
  obj({ o: { type: ["object", "null"] }, l: { type: ["array", "object"], maxItems: 2 } }),
  obj({ b: { type: "boolean" }, any: {} }),
  { type: "object", properties: { s: { type: "string" } } }, // open: extra keys admitted
  obj({
    o: obj({ s: { type: "string" } }, ["s"]),
    m: { type: "object", additionalProperties: { type: "integer", minimum: 0 } },
  }),
  ENVELOPE_SCHEMA,
];

/** Values shaped like the guard's envelope, right and wrong. */
function envelopes(r: () => number, n: number): unknown[] {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const coverage: Record<string, unknown> = {};
    if (r() < 0.95) coverage.truncated = pick([true, false, 0, "no"]);
    if (r() < 0.95) coverage.bytes = pick([0, 12, -1, 1.5, "3"]);
    if (r() < 0.95) coverage.over_budget = pick([true, false, null]);
    if (r() < 0.5) coverage.items = pick([{}, { "a.b": 3 }, { x: -1 }, { y: 2.5 }, { z: "1" }, []]);
    if (r() < 0.05) coverage.extra = 1;
    const env: Record<string, unknown> = { coverage: r() < 0.97 ? coverage : [] };
    if (r() < 0.95) env.result = scalar(r);
    if (r() < 0.03) env.more = 1;
    out.push(env);
  }
  return out;
}

Deno.test("the fast acceptor says valid exactly when the full validator does", () => {
  const shipped = shippedSchemas();
  assert.ok(shipped.length >= 20, `only ${shipped.length} grant schemas found`);
  let accepted = 0;
  let refused = 0;
  for (const [i, schema] of [...shipped, ...KEYWORDS].entries()) {
    const accept = compileAcceptor(schema, "2020-12");
    if (!accept) continue;
    const full = new Validator(structuredClone(schema) as object, "2020-12", false);
    const cases = schema === ENVELOPE_SCHEMA
      ? envelopes(rng(i + 1), 600)
      : values(schema, rng(i + 1), 300);
    for (const value of cases) {
      const fast = accept(value);
      const valid = full.validate(value).valid;
      assert.equal(fast, valid, `schema ${JSON.stringify(schema)}\nvalue ${JSON.stringify(value)}`);
      if (fast) accepted++;
      else refused++;
    }
  }
  // Both answers occur often, so the comparison is not vacuous.
  assert.ok(accepted > 500 && refused > 500, `accepted ${accepted}, refused ${refused}`);
});

Deno.test("every shipped grant schema and every keyword case takes the fast path", () => {
  for (const schema of [...shippedSchemas(), ...KEYWORDS]) {
    assert.ok(compileAcceptor(schema, "2020-12"), JSON.stringify(schema));
  }
});

Deno.test("schemas outside the subset fall back to the full validator", () => {
  for (
    const schema of [
      obj({ o: { type: ["object", "null"], properties: { a: { type: "string" } } } }),
      obj({ o: { type: ["object", "null"], required: ["a"] } }),
      obj({ o: { type: ["object", "null"], minProperties: 1 } }),
      obj({ s: { type: "string", format: "email" } }),
      obj({ c: { const: 1 } }),
      { ...obj({}), additionalProperties: { type: "string", format: "date" } },
      { ...obj({}), patternProperties: { "^a": { type: "string" } } },
      obj({ deep: obj({ a: obj({ b: obj({ c: obj({ d: obj({}) }) }) }) }) }),
      { type: "object", anyOf: [] },
      obj({ a: { type: "array", items: { type: "array" } } }),
    ]
  ) {
    assert.equal(compileAcceptor(schema, "2020-12"), undefined, JSON.stringify(schema));
  }
  assert.equal(compileAcceptor(obj({}), "draft-07"), undefined);
});
