/**
 * checkSchema() against the official JSON Schema meta-schemas (issue 22, kind
 * 11: the core must not start a tool whose schema it cannot serve, such as
 * `"type": "strng"` or `"minimum": "5"`): thousands of generated schemas, each
 * keyword given a value drawn from a pool of right and wrong ones, are
 * accepted by weir exactly when Ajv's copy of the dialect's official
 * meta-schema (2020-12, 2019-09, draft-07) accepts them; and through the
 * public module API, `new McpServer` refuses such a tool naming the keyword.
 */
import assert from "node:assert/strict";
import { CatalogError, type JsonObject, McpServer } from "../../mod.ts";
import { checkSchema, SchemaError } from "../../src/mcp/schema.ts";

type MetaValidator = {
  validateSchema(schema: unknown): boolean | Promise<unknown>;
  errors?: unknown;
};
type AjvClass = new (options: Record<string, unknown>) => MetaValidator;

const Ajv2020 = (await import("ajv/dist/2020.js")).default as unknown as AjvClass;
const Ajv2019 = (await import("ajv/dist/2019.js")).default as unknown as AjvClass;
const Ajv07 = (await import("ajv/dist/ajv.js")).default as unknown as AjvClass;
const options = { strict: false, validateFormats: false };
const META: Record<string, MetaValidator> = {
  "2020-12": new Ajv2020(options),
  "2019-09": new Ajv2019(options),
  "7": new Ajv07(options),
};
const DIALECT: Record<string, string | undefined> = {
  "2020-12": undefined, // MCP's default: no $schema
  "2019-09": "https://json-schema.org/draft/2019-09/schema",
  "7": "http://json-schema.org/draft-07/schema#",
};

/** Values of every shape, right for some keywords and wrong for others. */
const VALUES: unknown[] = [
  "string",
  "strng",
  "integer",
  "",
  "5",
  5,
  0,
  -1,
  1.5,
  true,
  false,
  null,
  [],
  ["a", "b"],
  ["a", "a"],
  ["string", "number"],
  ["string", "string"],
  ["strng"],
  [1, 2],
  {},
  { type: "string" },
  { a: ["b"] },
  { a: "b" },
  [{ type: "string" }],
];

/** Keywords each dialect's meta-schema defines (others it lets pass, and weir refuses). */
const KEYWORDS: Record<string, string[]> = {
  common: [
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "format",
    "title",
    "description",
    "default",
    "examples",
    "readOnly",
    "contentEncoding",
    "contentMediaType",
    "$comment",
    "items",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "contains",
    "additionalProperties",
    "propertyNames",
    "if",
    "then",
    "else",
  ],
  "2020-12": [
    "prefixItems",
    "maxContains",
    "minContains",
    "dependentRequired",
    "deprecated",
    "writeOnly",
  ],
  "2019-09": [
    "maxContains",
    "minContains",
    "dependentRequired",
    "deprecated",
    "additionalItems",
    "writeOnly",
  ],
  // (Ajv's copy of the draft-07 meta-schema leaves out writeOnly, which the
  // draft-07 validation spec, section 10.3, makes a boolean as weir holds it.)
  "7": ["dependencies", "additionalItems"],
};

function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

/**
 * weir's verdict: `true`, `false`, or `"stricter"` when it refuses for a
 * documented reason of its own beyond the meta-schema (a keyword its
 * validator cannot enforce, such as `{"a": "b"}` used as a subschema).
 */
function weirAccepts(schema: unknown): boolean | "stricter" {
  try {
    checkSchema(schema);
    return true;
  } catch (error) {
    assert.ok(error instanceof SchemaError, String(error));
    return /cannot be enforced by this server's validator/.test(error.message) ? "stricter" : false;
  }
}

for (const draft of ["2020-12", "2019-09", "7"]) {
  Deno.test(`checkSchema() accepts exactly what the ${draft} meta-schema accepts, over 3,000 generated schemas`, async () => {
    const random = rng(draft.length * 7919);
    const keywords = [...KEYWORDS.common, ...KEYWORDS[draft]];
    let refused = 0;
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const property: Record<string, unknown> = {};
      for (let k = 1 + random(3); k > 0; k--) {
        property[keywords[random(keywords.length)]] = structuredClone(
          VALUES[random(VALUES.length)],
        );
      }
      const schema: Record<string, unknown> = { type: "object", properties: { a: property } };
      if (DIALECT[draft]) schema.$schema = DIALECT[draft];
      const official = await META[draft].validateSchema(schema) === true;
      const weir = weirAccepts(schema);
      if (weir === "stricter") continue;
      if (official) accepted++;
      else refused++;
      assert.equal(
        weir,
        official,
        `${draft}: ${JSON.stringify(property)}: the meta-schema ${
          official ? "accepts" : "refuses"
        } it`,
      );
    }
    assert.ok(
      refused > 200 && accepted > 200,
      `both outcomes (${accepted} accepted, ${refused} refused)`,
    );
  });
}

Deno.test("new McpServer refuses a tool whose schema its dialect's meta-schema refuses, naming the keyword", () => {
  const cases: [JsonObject, RegExp][] = [
    [{ type: "strng" }, /properties\/a\/type must be one of array, boolean/],
    [{ type: "integer", minimum: "5" }, /properties\/a\/minimum must be a number.*got "5"/],
    [
      { type: "array", items: [{ type: "string" }] },
      /items must be one schema in JSON Schema 2020-12/,
    ],
    [{ type: "string", maxLength: -1 }, /maxLength must be a whole number/],
    [{ type: "object", required: "a" }, /required must be an array of distinct strings/],
    [{ anyOf: [] }, /anyOf must be a non-empty array of schemas/],
  ];
  for (const [property, message] of cases) {
    assert.throws(
      () =>
        new McpServer({
          name: "meta",
          catalog: {
            tools: [{ name: "t", inputSchema: { type: "object", properties: { a: property } } }],
            resources: [],
            prompts: [],
          },
          dispatch: () => ({ content: [] }),
        }),
      (error) =>
        error instanceof CatalogError && message.test(error.message) &&
        /tool "t" inputSchema/.test(error.message),
      JSON.stringify(property),
    );
  }
});
