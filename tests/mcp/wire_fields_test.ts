/**
 * The core lists only what both revisions' schemas allow (issue 22, kind 11),
 * through the public module API: generated catalog entries (tools,
 * resources, templates, prompts) and `serverInfo` options, each field given a
 * value drawn from a pool of right and wrong ones, make `new McpServer` throw
 * exactly when the entry as it would be listed fails the official schema
 * (tests/fixtures/mcp-schema, 2025-11-25 or 2026-07-28); and what it does
 * serve passes both. A server without a name is refused at construction.
 */
import assert from "node:assert/strict";
import { CatalogError, McpServer } from "../../mod.ts";
import { LEGACY, MODERN, problemsAgainst } from "../support/schemas.ts";
import { initializeRequest, MODERN_META } from "../support/mcp.ts";

function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

const VALUES: unknown[] = [
  "text",
  "",
  "https://example.com/i.png",
  "data:image/png;base64,AAAA",
  "not a uri",
  5,
  1.5,
  0.5,
  -1,
  true,
  null,
  [],
  ["user"],
  ["user", "bot"],
  ["48x48"],
  [1],
  {},
  { readOnlyHint: true },
  { readOnlyHint: "yes" },
  { title: 5 },
  { audience: ["assistant"], priority: 0.3 },
  { audience: ["nobody"] },
  { priority: 2 },
  { taskSupport: "optional" },
  { taskSupport: "always" },
  [{ src: "https://example.com/i.png" }],
  [{ src: "https://example.com/i.png", theme: "dark", sizes: ["48x48"] }],
  [{ src: "https://example.com/i.png", theme: "blue" }],
  [{ mimeType: "image/png" }],
  "light",
];

const FIELDS: Record<string, string[]> = {
  Tool: ["title", "description", "icons", "annotations", "_meta"],
  Resource: ["title", "description", "mimeType", "size", "icons", "annotations", "_meta"],
  ResourceTemplate: ["title", "description", "mimeType", "icons", "annotations", "_meta"],
  Prompt: ["title", "description", "icons", "_meta"],
};

const BASE: Record<string, Record<string, unknown>> = {
  Tool: { name: "t", inputSchema: { type: "object" } },
  Resource: { uri: "demo://r", name: "r" },
  ResourceTemplate: { uriTemplate: "demo://r/{id}", name: "r" },
  Prompt: { name: "p", arguments: [{ name: "a" }] },
};

/** A server around one entry (its catalog otherwise empty). */
function serverWith(kind: string, entry: Record<string, unknown>): McpServer {
  return new McpServer({
    name: "wire",
    catalog: {
      tools: kind === "Tool" ? [entry as never] : [],
      resources: kind === "Resource" || kind === "ResourceTemplate" ? [entry as never] : [],
      prompts: kind === "Prompt" ? [entry as never] : [],
    },
    dispatch: () => ({ content: [] }),
    readResource: (uri) => [{ uri, text: "x" }],
    getPrompt: () => ({ messages: [] }),
    log: () => {},
  });
}

Deno.test("new McpServer refuses exactly the catalog entries both MCP schemas would not list, over 2,000 generated", () => {
  const random = rng(0x11);
  let refused = 0;
  let served = 0;
  for (let i = 0; i < 2000; i++) {
    const kind = Object.keys(FIELDS)[random(4)];
    const entry: Record<string, unknown> = structuredClone(BASE[kind]);
    for (let k = 1 + random(2); k > 0; k--) {
      const fields = FIELDS[kind];
      entry[fields[random(fields.length)]] = structuredClone(VALUES[random(VALUES.length)]);
    }
    const problems = [
      ...problemsAgainst(LEGACY, kind, entry),
      ...problemsAgainst(MODERN, kind, entry),
    ];
    let thrown: unknown;
    try {
      serverWith(kind, entry);
    } catch (error) {
      thrown = error;
    }
    if (problems.length === 0) {
      assert.equal(thrown, undefined, `${kind} ${JSON.stringify(entry)} is valid: ${thrown}`);
      served++;
    } else {
      assert.ok(
        thrown instanceof CatalogError,
        `${kind} ${JSON.stringify(entry)} must be refused: ${problems.join("; ")}`,
      );
      refused++;
    }
  }
  assert.ok(refused > 200 && served > 200, `both outcomes (${served} served, ${refused} refused)`);
});

Deno.test("serverInfo: a missing or wrong name, version, title or icons is refused at construction; what is served is schema-valid", async () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{}, /options\.name/],
    [{ name: "" }, /must not be empty/],
    [{ name: 5 }, /options\.name must be a string/],
    [{ name: "s", version: 2 }, /options\.version must be a string/],
    [{ name: "s", title: 7 }, /options\.title must be a string/],
    [{ name: "s", icons: [{ src: "not a uri" }] }, /icons\[0\]\.src must be an absolute URI/],
    [{ name: "s", instructions: ["x"] }, /instructions must be a string/],
    [{ name: "s", cache: { tools: { ttlMs: -1, cacheScope: "public" } } }, /options\.cache\.tools/],
    [
      { name: "s", cache: { tools: { ttlMs: 1, cacheScope: "everyone" } } },
      /options\.cache\.tools/,
    ],
  ];
  for (const [options, message] of bad) {
    assert.throws(
      () =>
        new McpServer({
          catalog: { tools: [], resources: [], prompts: [] },
          ...options,
        } as never),
      (error) => error instanceof TypeError && message.test(error.message),
      JSON.stringify(options),
    );
  }
  const server = new McpServer({
    name: "s",
    title: "A server",
    version: "1.2.3",
    icons: [{ src: "https://example.com/i.png", theme: "dark" }],
    catalog: { tools: [], resources: [], prompts: [] },
  });
  const init = JSON.parse((await server.handle(initializeRequest(1))).body!);
  assert.deepEqual(problemsAgainst(LEGACY, "Implementation", init.result.serverInfo), []);
  const discover = JSON.parse(
    (await server.handle({
      jsonrpc: "2.0",
      id: 2,
      method: "server/discover",
      params: { _meta: MODERN_META },
    })).body!,
  );
  assert.deepEqual(
    problemsAgainst(
      MODERN,
      "Implementation",
      discover.result._meta["io.modelcontextprotocol/serverInfo"],
    ),
    [],
  );
});
