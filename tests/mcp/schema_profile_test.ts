/**
 * Schema profiles (src/mcp/schema_profile.ts) on their own: what each lists for
 * the shapes weir and wrapped servers use, what each refuses at start, and a
 * property: under openai-strict, an argument object the listed schema accepts
 * (and whose strings keep the lengths said in words) is accepted by the
 * enforced schema, for random schemas and arguments.
 */
import assert from "node:assert/strict";
import {
  compileSchema,
  McpServer,
  ProfileError,
  profileSchema,
  SCHEMA_PROFILES,
} from "../../mod.ts";
import { SURFACE_SCHEMA_PROFILES } from "../../src/guardfile/surface.ts";
import type { JsonObject } from "../../mod.ts";

const S = (schema: JsonObject) => schema;

Deno.test("the guardfile's schema-profile= names are the core's profiles", () => {
  assert.deepEqual([...SURFACE_SCHEMA_PROFILES], [...SCHEMA_PROFILES]);
});

Deno.test("full lists the schema as given (the same object)", () => {
  const schema = S({ type: "object", properties: { a: { type: ["string", "null"] } } });
  assert.equal(profileSchema(schema, "full", "tool"), schema);
});

Deno.test("gemini: one type, string enums, bounds and patterns in words, no additionalProperties", () => {
  const listed = profileSchema(
    S({
      type: "object",
      properties: {
        n: { type: ["integer", "null"], minimum: 1, maximum: 50 },
        s: {
          type: "string",
          minLength: 1,
          maxLength: 9,
          pattern: "^[a-z]+$",
          description: "A slug.",
        },
        e: { type: ["string", "null"], enum: ["a", "b", null] },
        k: { type: "integer", enum: [1, 2] },
        l: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 3 },
        a: { type: "string" },
        b: { type: "string" },
      },
      required: ["s"],
      additionalProperties: false,
      allOf: [{
        not: {
          required: ["a", "b"],
          properties: { a: { not: { type: "null" } }, b: { not: { type: "null" } } },
          description: "send at most one of a, b",
        },
      }],
    }),
    "gemini",
    "tool",
  );
  assert.deepEqual(listed, {
    type: "object",
    properties: {
      n: { type: "integer", description: "1 to 50." },
      s: {
        type: "string",
        minLength: 1,
        description: "A slug. At most 9 characters; matches the regular expression ^[a-z]+$.",
      },
      e: { type: "string", enum: ["a", "b"] },
      k: { type: "integer", description: "One of 1, 2." },
      l: { type: "array", items: { type: "string" }, description: "1 to 3 items." },
      a: { type: "string" },
      b: { type: "string" },
    },
    required: ["s"],
    description: "Send at most one of a, b.",
  });
});

Deno.test("gemini lists a string-or-integer input (an untyped id) as the string it also is", () => {
  const listed = profileSchema(
    {
      type: "object",
      properties: {
        id: { type: ["string", "integer"], minLength: 1, maximum: 999, enum: ["a", 7] },
      },
    },
    "gemini",
    'tool "t"',
  );
  assert.deepEqual((listed.properties as JsonObject).id, {
    type: "string",
    enum: ["a"],
    minLength: 1,
  });
});

Deno.test("gemini refuses what it cannot say: unions of two types, open maps, unknown keywords", () => {
  for (
    const [schema, what] of [
      [
        { type: "object", properties: { x: { type: ["string", "number"] } } },
        /type \["string","number"\]/,
      ],
      [{ type: "object", additionalProperties: { type: "integer" } }, /additionalProperties/],
      [
        { type: "object", properties: { x: { type: "string", "x-mcp-header": "X" } } },
        /x-mcp-header/,
      ],
      [{ type: "object", properties: { x: { oneOf: [{ type: "string" }] } } }, /oneOf/],
      [{ type: "object", allOf: [{ type: "object" }] }, /allOf/],
    ] as [JsonObject, RegExp][]
  ) {
    assert.throws(() => profileSchema(schema, "gemini", 'tool "t"'), (e: Error) => {
      assert.ok(e instanceof ProfileError);
      assert.match(e.message, /^tool "t" inputSchema/);
      assert.match(e.message, what);
      assert.match(e.message, /--schema-profile full/);
      return true;
    });
  }
});

Deno.test("openai-strict: every property required, optional ones nullable, lengths in words", () => {
  const listed = profileSchema(
    S({
      type: "object",
      properties: {
        id: { type: "string", minLength: 1 },
        page: { type: ["integer", "null"], minimum: 1 },
        meta: {
          type: ["object", "null"],
          properties: { k: { type: "string" }, v: { type: ["string", "null"], maxLength: 5 } },
          required: ["k"],
          additionalProperties: false,
        },
      },
      required: ["id"],
      additionalProperties: false,
    }),
    "openai-strict",
    "tool",
  );
  assert.deepEqual(listed, {
    type: "object",
    properties: {
      id: { type: "string", description: "Not empty." },
      page: { type: ["integer", "null"], minimum: 1 },
      meta: {
        type: ["object", "null"],
        properties: {
          k: { type: "string" },
          v: { type: ["string", "null"], description: "At most 5 characters." },
        },
        required: ["k", "v"],
        additionalProperties: false,
      },
    },
    required: ["id", "page", "meta"],
    additionalProperties: false,
  });
  // A root that takes anything (a withheld stub) is listed as taking nothing.
  assert.deepEqual(profileSchema(S({ type: "object" }), "openai-strict", "tool"), {
    type: "object",
    properties: {},
    required: [],
    additionalProperties: false,
  });
});

Deno.test("openai-strict refuses an optional input that refuses null, and open nested objects", () => {
  assert.throws(
    () =>
      profileSchema(
        S({ type: "object", properties: { q: { type: "string" } }, additionalProperties: false }),
        "openai-strict",
        'tool "t"',
      ),
    /properties\/q: an optional input that refuses null/,
  );
  assert.throws(
    () =>
      profileSchema(
        S({
          type: "object",
          properties: { m: { type: "object" } },
          required: ["m"],
          additionalProperties: false,
        }),
        "openai-strict",
        'tool "t"',
      ),
    /properties\/m: an object open to undeclared keys/,
  );
});

Deno.test("the core lists the profile's schema and still enforces the schema as given", async () => {
  const schema = S({
    type: "object",
    properties: { n: { type: ["integer", "null"], minimum: 1, maximum: 5 } },
    additionalProperties: false,
  });
  const server = new McpServer({
    name: "p",
    schemaProfile: "gemini",
    catalog: { tools: [{ name: "t", inputSchema: schema }], resources: [], prompts: [] },
    dispatch: () => ({ content: [{ type: "text", text: "ok" }] }),
    log: () => {},
  });
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const list = JSON.parse(
    (await server.handle({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } }))
      .body!,
  );
  assert.deepEqual(list.result.tools[0].inputSchema.properties.n, {
    type: "integer",
    description: "1 to 5.",
  });
  for (const [n, ok] of [[3, true], [null, true], [9, false], ["3", false]] as const) {
    const call = JSON.parse(
      (await server.handle({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "t", arguments: { n }, _meta: meta },
      })).body!,
    );
    assert.equal(Boolean(call.result && !call.result.isError), ok, JSON.stringify({ n, call }));
  }
});

// --- property: openai-strict lists nothing the enforced schema would refuse ---

/** A small deterministic PRNG (mulberry32), so a failure names its seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

/** A random input schema in weir's vocabulary (optional inputs take null). */
function randomSchema(r: Rand, depth = 0): JsonObject {
  const properties: JsonObject = {};
  const required: string[] = [];
  const count = 1 + Math.floor(r() * 4);
  for (let i = 0; i < count; i++) {
    const name = `p${i}`;
    const isRequired = r() < 0.5;
    let prop: JsonObject;
    const kind = pick(
      r,
      depth < 1 ? ["string", "integer", "array", "object", "enum"] : ["string", "integer", "enum"],
    );
    if (kind === "string") {
      prop = { type: "string" };
      if (r() < 0.5) prop.minLength = Math.floor(r() * 3);
      if (r() < 0.5) prop.maxLength = 2 + Math.floor(r() * 4);
      if (r() < 0.3) prop.pattern = "^[a-c]*$";
    } else if (kind === "integer") {
      prop = { type: "integer" };
      if (r() < 0.5) prop.minimum = Math.floor(r() * 3);
      if (r() < 0.5) prop.maximum = 3 + Math.floor(r() * 3);
    } else if (kind === "enum") {
      prop = { type: "string", enum: ["a", "b"] };
    } else if (kind === "array") {
      prop = { type: "array", items: { type: "string", maxLength: 3 } };
      if (r() < 0.5) prop.maxItems = 2;
    } else {
      prop = randomSchema(r, depth + 1);
    }
    if (!isRequired) {
      prop = { ...prop, type: [prop.type as string, "null"] };
      if (Array.isArray(prop.enum)) prop.enum = [...prop.enum, null];
    } else required.push(name);
    properties[name] = prop;
  }
  const schema: JsonObject = { type: "object", properties, additionalProperties: false };
  if (required.length > 0) schema.required = required;
  return schema;
}

/** A random value, often but not always of the right shape for `schema`. */
function randomValue(r: Rand, schema: JsonObject): unknown {
  if (r() < 0.08) return pick(r, [null, 7, "x", [], {}, true]);
  const type = Array.isArray(schema.type) ? pick(r, schema.type as string[]) : schema.type;
  if (type === "null") return null;
  if (Array.isArray(schema.enum)) return pick(r, [...schema.enum as unknown[], "z"]);
  switch (type) {
    case "string":
      return pick(r, ["", "a", "ab", "abc", "abcd", "abcdef", "xyz", "a$"]);
    case "integer":
      return pick(r, [-1, 0, 1, 2, 3, 4, 5, 6, 9, 2.5]);
    case "array":
      return Array.from(
        { length: Math.floor(r() * 4) },
        () => randomValue(r, schema.items as JsonObject),
      );
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, sub] of Object.entries(schema.properties as JsonObject)) {
        if (r() < 0.8) out[k] = randomValue(r, sub as JsonObject);
      }
      if (r() < 0.05) out.extra = 1;
      return out;
    }
  }
  return undefined;
}

/** Whether every string keeps the lengths a listed description says in words. */
function keepsWords(value: unknown, enforced: JsonObject): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === "string") {
    return value.length >= ((enforced.minLength as number) ?? 0) &&
      value.length <= ((enforced.maxLength as number) ?? Infinity);
  }
  if (Array.isArray(value)) {
    return value.every((v) => keepsWords(v, (enforced.items ?? {}) as JsonObject));
  }
  if (typeof value === "object") {
    const props = (enforced.properties ?? {}) as Record<string, JsonObject>;
    return Object.entries(value).every(([k, v]) => !props[k] || keepsWords(v, props[k]));
  }
  return true;
}

Deno.test("property: what openai-strict lists as valid (words kept), the server accepts", () => {
  let agreed = 0;
  let listedValid = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed);
    const enforced = randomSchema(r);
    const listed = profileSchema(enforced, "openai-strict", `seed ${seed}`);
    const enforce = compileSchema(enforced);
    const list = compileSchema(listed);
    for (let i = 0; i < 40; i++) {
      const value = randomValue(r, listed);
      if (list(value).length > 0 || !keepsWords(value, enforced)) continue;
      listedValid++;
      assert.deepEqual(
        enforce(value),
        [],
        `seed ${seed}: listed accepts ${JSON.stringify(value)} under ${JSON.stringify(listed)}`,
      );
      agreed++;
    }
  }
  assert.ok(listedValid > 500, `the property saw ${listedValid} accepted values`);
  assert.equal(agreed, listedValid);
});
