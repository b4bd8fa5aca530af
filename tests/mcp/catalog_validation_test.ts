/**
 * A malformed catalog stops the server at construction, with a message that
 * names the entry and says what to change; never at the first request.
 */
import assert from "node:assert/strict";
import {
  type Catalog,
  CatalogError,
  McpServer,
  type ServerOptions,
  type ToolSpec,
} from "../../mod.ts";
import { modern } from "../support/mcp.ts";

const readers = {
  dispatch: () => ({ content: [] }),
  readResource: () => [],
  getPrompt: () => ({ messages: [] }),
};

function build(catalog: unknown, options: Partial<ServerOptions> = readers): McpServer {
  return new McpServer({
    name: "catalog-test",
    log: () => {},
    ...options,
    catalog: catalog as Catalog,
  });
}

function refused(catalog: unknown, message: RegExp, options?: Partial<ServerOptions>): void {
  assert.throws(() => build(catalog, options), (error: unknown) => {
    assert.ok(error instanceof CatalogError, `expected CatalogError, got ${error}`);
    assert.match(error.message, message);
    return true;
  });
}

const tool = (name: string, inputSchema?: Record<string, unknown>): ToolSpec =>
  (inputSchema === undefined ? { name } : { name, inputSchema }) as ToolSpec;

Deno.test("an absent list is a malformed catalog, not an empty one", () => {
  for (const list of ["tools", "resources", "prompts"]) {
    const catalog: Record<string, unknown> = { tools: [], resources: [], prompts: [] };
    delete catalog[list];
    refused(catalog, new RegExp(`catalog\\.${list} is missing.*not an empty one`));
  }
  refused({ tools: [], resources: {}, prompts: [] }, /catalog\.resources is not a list/);
  refused(null, /the catalog must be an object/);
});

Deno.test("empty lists are a valid catalog", () => {
  assert.ok(build({ tools: [], resources: [], prompts: [] }, {}));
});

Deno.test("a repeated tool name, resource uri, template or prompt name is refused by name", () => {
  refused(
    { tools: [tool("echo"), tool("echo")], resources: [], prompts: [] },
    /"echo" appears twice/,
  );
  refused(
    {
      tools: [],
      resources: [{ uri: "demo://a", name: "a" }, { uri: "demo://a", name: "again" }],
      prompts: [],
    },
    /resource uri "demo:\/\/a" appears twice/,
  );
  refused(
    {
      tools: [],
      resources: [
        { uriTemplate: "demo://t/{id}", name: "t" },
        { uriTemplate: "demo://t/{id}", name: "t2" },
      ],
      prompts: [],
    },
    /resource uriTemplate "demo:\/\/t\/\{id\}" appears twice/,
  );
  refused(
    { tools: [], resources: [], prompts: [{ name: "ask" }, { name: "ask" }] },
    /prompt name "ask" appears twice/,
  );
});

Deno.test("a listed entry with no reader is refused, naming the entry", () => {
  const only = (key: keyof typeof readers) => ({ ...readers, [key]: undefined });
  refused(
    { tools: [tool("echo")], resources: [], prompts: [] },
    /tool "echo" is listed but no dispatch function/,
    only("dispatch"),
  );
  refused(
    { tools: [], resources: [{ uri: "demo://a", name: "a" }], prompts: [] },
    /resource "demo:\/\/a" is listed but no readResource function/,
    only("readResource"),
  );
  refused(
    { tools: [], resources: [{ uriTemplate: "demo://t/{id}", name: "t" }], prompts: [] },
    /resource "demo:\/\/t\/\{id\}" is listed but no readResource function/,
    only("readResource"),
  );
  refused(
    { tools: [], resources: [], prompts: [{ name: "ask" }] },
    /prompt "ask" is listed but no getPrompt function/,
    only("getPrompt"),
  );
});

Deno.test("a template with an expression beyond {var} and {+var}, or a bare brace, is refused", () => {
  const cases: [string, RegExp][] = [
    ["demo://t/{#frag}", /\{#frag\}.*not supported/],
    ["demo://t{?q}", /\{\?q\}.*not supported/],
    ["demo://t{/seg}", /\{\/seg\}.*not supported/],
    ["demo://t/{.ext}", /\{\.ext\}.*not supported/],
    ["demo://t/{;p}", /\{;p\}.*not supported/],
    ["demo://t/{&q}", /\{&q\}.*not supported/],
    ["demo://t/{list*}", /\{list\*\}.*not supported/],
    ["demo://t/{name:3}", /\{name:3\}.*not supported/],
    ["demo://t/{a,b}", /\{a,b\}.*not supported/],
    ["demo://t/{}", /\{\}.*not supported/],
    ["demo://t/{id", /unclosed "\{"/],
    ["demo://t/id}", /unmatched "\}"/],
    ["demo://t/{id}/{id}", /variable "id" appears twice/],
  ];
  for (const [uriTemplate, message] of cases) {
    refused(
      { tools: [], resources: [{ uriTemplate, name: "t" }], prompts: [] },
      new RegExp(
        `resource template "${uriTemplate.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}": .*` +
          message.source,
      ),
    );
  }
});

Deno.test("an inputSchema the validator cannot enforce is refused, naming tool and keyword", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      {
        type: "object",
        $defs: { node: { $dynamicAnchor: "node", type: "object" } },
        properties: { tree: { $dynamicRef: "#node" } },
      },
      /tool "t" inputSchema: .*\$dynamicAnchor.*cannot be enforced/,
    ],
    [
      { type: "object", properties: { tree: { $dynamicRef: "#node" } } },
      /tool "t" inputSchema: #\/properties\/tree\/\$dynamicRef: keyword "\$dynamicRef" cannot be enforced/,
    ],
    [
      { type: "object", properties: { a: { $ref: "https://example.com/schemas/a.json" } } },
      /tool "t" inputSchema: #\/properties\/a\/\$ref "https:\/\/example\.com\/schemas\/a\.json" points outside the schema/,
    ],
    [
      { type: "object", properties: { a: { $ref: "other.json#/$defs/a" } } },
      /tool "t" inputSchema: .*points outside the schema; only local/,
    ],
    [
      { type: "object", properties: { a: { $ref: "#/$defs/missing" } } },
      /tool "t" inputSchema: #\/properties\/a\/\$ref "#\/\$defs\/missing" points at nothing/,
    ],
    [
      { $schema: "https://json-schema.org/draft/2099-01/schema", type: "object" },
      /tool "t" inputSchema: \$schema ".*2099-01.*" is not a supported dialect/,
    ],
    [
      { $schema: "http://json-schema.org/draft-06/schema#", type: "object" },
      /tool "t" inputSchema: \$schema ".*draft-06.*" is not a supported dialect/,
    ],
    [
      { type: "object", properties: { a: { type: "string", pattern: "(" } } },
      /tool "t" inputSchema: #\/properties\/a\/pattern "\(" is not a valid regular expression/,
    ],
    // Parsed by new RegExp, refused by the engine only at its first use (issue 34 item 9):
    // the first call would have failed, not the start.
    [
      { type: "object", properties: { a: { type: "string", pattern: "a".repeat(70_000) } } },
      /#\/properties\/a\/pattern "a{5}.* is not a valid regular expression \(the engine cannot compile it: Regular expression too large\)/,
    ],
    [
      { type: "object", properties: { a: { type: "string", pattern: "[^/]*a".repeat(10_000) } } },
      /#\/properties\/a\/pattern .* is not a valid regular expression \(the engine cannot compile it: Stack overflow\)/,
    ],
    // patternProperties' names are regular expressions too.
    [
      { type: "object", patternProperties: { "(": { type: "string" } } },
      /tool "t" inputSchema: #\/patternProperties "\(" is not a valid regular expression/,
    ],
    [
      { type: "object", patternProperties: { ["a".repeat(70_000)]: { type: "string" } } },
      /#\/patternProperties "a{5}.* is not a valid regular expression \(the engine cannot compile it/,
    ],
    [
      { type: "array" },
      /tool "t" inputSchema must be a JSON Schema object whose root has "type": "object"/,
    ],
  ];
  for (const [schema, message] of cases) {
    refused({ tools: [tool("t", schema)], resources: [], prompts: [] }, message);
  }
});

Deno.test("2020-12 schemas the validator does enforce are accepted as written", () => {
  const server = build({
    tools: [tool("t", {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { city: { type: "string" } } } },
      properties: {
        address: { $ref: "#/$defs/address" },
        kind: { oneOf: [{ const: "a" }, { const: "b" }] },
        "x-note": { type: "string", "x-mcp-header": "Note" },
      },
      additionalProperties: false,
    })],
    resources: [],
    prompts: [],
  });
  assert.ok(server);
});

Deno.test("malformed tool, resource and prompt entries are refused by position or name", () => {
  refused(
    { tools: [{ name: "has space" }], resources: [], prompts: [] },
    /tools\[0\] has name "has space"/,
  );
  refused({
    tools: [
      tool("t", { type: "object", properties: { n: { type: "number", "x-mcp-header": "N" } } }),
    ],
    resources: [],
    prompts: [],
  }, /tool "t" property "n" x-mcp-header is only allowed on string, integer or boolean/);
  refused(
    { tools: [], resources: [{ uri: "no-scheme", name: "a" }], prompts: [] },
    /resources\[0\] has uri "no-scheme"/,
  );
  refused(
    { tools: [], resources: [{ uri: "demo://caf\u00e9", name: "a" }], prompts: [] },
    /resource "demo:\/\/caf\u00e9" is not an RFC 3986 URI.*percent-encode/,
  );
  refused(
    { tools: [], resources: [{ uri: "demo://with space", name: "a" }], prompts: [] },
    /resource "demo:\/\/with space" is not an RFC 3986 URI/,
  );
  refused(
    { tools: [], resources: [{ uriTemplate: "demo://caf\u00e9/{id}", name: "t" }], prompts: [] },
    /resource template "demo:\/\/caf\u00e9\/\{id\}": every URI it matches must be an RFC 3986 URI/,
  );
  refused(
    { tools: [], resources: [{ uri: "demo://a" }], prompts: [] },
    /resource "demo:\/\/a" needs a non-empty name/,
  );
  refused(
    {
      tools: [],
      resources: [],
      prompts: [{ name: "ask", arguments: [{ name: "x" }, { name: "x" }] }],
    },
    /prompt "ask" declares argument "x" twice/,
  );
});

Deno.test("x-mcp-header is refused wherever a client would drop the tool for it", () => {
  const string = (header: unknown) => ({ type: "string", "x-mcp-header": header });
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { type: "object", "x-mcp-header": "Root" },
      /tool "t" root x-mcp-header is only allowed on a property reached .* through "properties"/,
    ],
    [
      { type: "object", properties: { list: { type: "array", items: string("Item") } } },
      /property "list.<items>" x-mcp-header is only allowed/,
    ],
    [
      { type: "object", oneOf: [{ properties: { a: string("A") } }] },
      /property "<oneOf>.a" x-mcp-header is only allowed/,
    ],
    [
      { type: "object", $defs: { d: string("D") }, properties: { a: { $ref: "#/$defs/d" } } },
      /property "<\$defs>" x-mcp-header is only allowed/,
    ],
    [
      { type: "object", additionalProperties: string("Extra") },
      /x-mcp-header is only allowed on a property reached/,
    ],
    [
      { type: "object", properties: { a: string("Bad Header") } },
      /property "a" x-mcp-header must be a non-empty HTTP token/,
    ],
    [{ type: "object", properties: { a: string("") } }, /must be a non-empty HTTP token/],
    [
      { type: "object", properties: { a: { type: ["string", "null"], "x-mcp-header": "A" } } },
      /only allowed on string, integer or boolean/,
    ],
    [
      { type: "object", properties: { a: string("Same"), b: string("SAME") } },
      /property "b" x-mcp-header "SAME" is used twice \(ignoring case\)/,
    ],
  ];
  for (const [schema, message] of cases) {
    refused({ tools: [tool("t", schema)], resources: [], prompts: [] }, message);
  }
  assert.ok(
    build({
      tools: [tool("t", {
        type: "object",
        properties: {
          top: string("Top"),
          meta: {
            type: "object",
            properties: { deep: { type: "integer", "x-mcp-header": "Deep" } },
          },
        },
      })],
      resources: [],
      prompts: [],
    }),
    "any depth along properties is fine",
  );
});

Deno.test("a catalog function is checked per distinct object, and a bad one fails requests without leaking why", async () => {
  const events: unknown[] = [];
  const server = new McpServer({
    name: "dynamic",
    catalog: () => ({ tools: [tool("dup"), tool("dup")], resources: [], prompts: [] }),
    dispatch: readers.dispatch,
    log: (event) => events.push(event),
  });
  const reply = await modern(server, "tools/list");
  assert.equal(reply.error?.code, -32603);
  assert.equal(reply.error?.message, "Internal error");
  assert.match(JSON.stringify(events), /tool name \\"dup\\" appears twice/);
});
