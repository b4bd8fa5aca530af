/**
 * 2026-07-28 result decorations: every result carries `resultType` and
 * `_meta["io.modelcontextprotocol/serverInfo"]`; the cacheable ones (the four
 * lists, `server/discover`, `resources/read`) carry `ttlMs` and `cacheScope`,
 * configurable per family, defaulting to 0 and "private". 2025-11-25 results
 * carry none of it.
 */
import assert from "node:assert/strict";
import type { CacheHint, ServerOptions } from "../../mod.ts";
import { ask, LEGACY, legacySession, makeServer, modern } from "../support/mcp.ts";

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

function decoratedServer(cache?: ServerOptions["cache"]) {
  return makeServer({
    name: "deco",
    version: "1.2.3",
    title: "Decorated",
    cache,
    catalog: {
      tools: [{ name: "echo" }],
      resources: [
        { uri: "demo://a", name: "a" },
        { uriTemplate: "demo://t/{id}", name: "t" },
      ],
      prompts: [{ name: "hello" }],
    },
    dispatch: () => ({
      content: [{ type: "text", text: "hi" }],
      _meta: { "example.com/trace": "t1" },
    }),
    readResource: (uri) => [{ uri, text: "body" }],
    getPrompt: () => ({ messages: [{ role: "user", content: { type: "text", text: "hello" } }] }),
  }).server;
}

const CALLS: [string, Record<string, unknown>, keyof NonNullable<ServerOptions["cache"]> | null][] =
  [
    ["server/discover", {}, "discover"],
    ["tools/list", {}, "tools"],
    ["resources/list", {}, "resources"],
    ["resources/templates/list", {}, "resources"],
    ["resources/read", { uri: "demo://t/1" }, "resources"],
    ["prompts/list", {}, "prompts"],
    ["tools/call", { name: "echo" }, null],
    ["prompts/get", { name: "hello" }, null],
  ];

Deno.test("every 2026-07-28 result has resultType and names the server in _meta", async () => {
  const server = decoratedServer();
  for (const [method, params] of CALLS) {
    const reply = await modern(server, method, params);
    assert.equal(reply.result?.resultType, "complete", method);
    assert.deepEqual(
      (reply.result?._meta as Record<string, unknown>)[SERVER_INFO],
      { name: "deco", version: "1.2.3", title: "Decorated" },
      method,
    );
  }
});

Deno.test("cacheable results default to ttlMs 0 and cacheScope private; the others carry neither", async () => {
  const server = decoratedServer();
  for (const [method, params, family] of CALLS) {
    const result = (await modern(server, method, params)).result!;
    if (family === null) {
      assert.equal("ttlMs" in result, false, method);
      assert.equal("cacheScope" in result, false, method);
    } else {
      assert.equal(result.ttlMs, 0, method);
      assert.equal(result.cacheScope, "private", method);
    }
  }
});

Deno.test("cache hints are configurable per family", async () => {
  const hints: Record<string, CacheHint> = {
    tools: { ttlMs: 60_000, cacheScope: "public" },
    resources: { ttlMs: 5_000, cacheScope: "private" },
    prompts: { ttlMs: 1, cacheScope: "public" },
    discover: { ttlMs: 86_400_000, cacheScope: "public" },
  };
  const server = decoratedServer(hints);
  for (const [method, params, family] of CALLS) {
    if (family === null) continue;
    const result = (await modern(server, method, params)).result!;
    assert.deepEqual(
      { ttlMs: result.ttlMs, cacheScope: result.cacheScope },
      hints[family],
      method,
    );
  }
  const partial = decoratedServer({ tools: { ttlMs: 10, cacheScope: "public" } });
  const prompts = (await modern(partial, "prompts/list")).result!;
  assert.deepEqual(
    [prompts.ttlMs, prompts.cacheScope],
    [0, "private"],
    "unset families keep the default",
  );
});

Deno.test("a result's own _meta is kept beside serverInfo", async () => {
  const reply = await modern(decoratedServer(), "tools/call", { name: "echo" });
  assert.deepEqual(reply.result?._meta, {
    "example.com/trace": "t1",
    [SERVER_INFO]: { name: "deco", version: "1.2.3", title: "Decorated" },
  });
});

Deno.test("2025-11-25 results carry no resultType, cache hints or serverInfo _meta", async () => {
  const server = decoratedServer({ tools: { ttlMs: 10, cacheScope: "public" } });
  for (const [method, params] of CALLS) {
    if (method === "server/discover") continue;
    const result = (await ask(server, LEGACY, method, params)).result!;
    for (const key of ["resultType", "ttlMs", "cacheScope"]) {
      assert.equal(key in result, false, `${method} ${key}`);
    }
    const meta = result._meta as Record<string, unknown> | undefined;
    assert.equal(meta?.[SERVER_INFO], undefined, method);
  }
  const call = await ask(server, LEGACY, "tools/call", { name: "echo" });
  assert.deepEqual(call.result?._meta, { "example.com/trace": "t1" });
});

Deno.test("server/discover lists both versions and the same capabilities initialize gives", async () => {
  const server = decoratedServer();
  const discover = await modern(server, "server/discover");
  assert.deepEqual(discover.result?.supportedVersions, ["2026-07-28", "2025-11-25"]);
  const expected = {
    tools: { listChanged: false },
    resources: { subscribe: false, listChanged: false },
    prompts: { listChanged: false },
  };
  assert.deepEqual(discover.result?.capabilities, expected);
  assert.deepEqual((await legacySession(server)).initialize.capabilities, expected);
  const { server: bare } = makeServer({ catalog: { tools: [], resources: [], prompts: [] } });
  const none = await modern(bare, "server/discover");
  assert.deepEqual(none.result?.capabilities, {});
  assert.equal(none.result?.instructions, undefined);
  const { server: guided } = makeServer({
    catalog: { tools: [], resources: [], prompts: [] },
    instructions: "Read coverage first.",
  });
  assert.equal(
    (await modern(guided, "server/discover")).result?.instructions,
    "Read coverage first.",
  );
});
