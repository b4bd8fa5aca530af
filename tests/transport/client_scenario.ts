/**
 * What an official MCP client must be able to do against the fixture server
 * (`tests/fixtures/catalog_server.ts`), written once and run through each
 * client and transport: list and call tools, read resources (a template
 * too), get prompts, and page through a 120-item list that changes between
 * pages without skipping an item that was there before.
 */
import assert from "node:assert/strict";
import { createHttpHandler, loopbackHosts } from "../../mod.ts";
import { CHURN, createFixtureServer, INITIAL_ITEMS, LOGO } from "../fixtures/catalog_server.ts";
import { listen, type Listening } from "../support/listen.ts";
import type { Revision } from "../support/schemas.ts";
import { tapHandler, type WireLog } from "../support/wire.ts";

type Json = Record<string, unknown>;
type Text = { type: string; text: string };

/** The methods the v1 and v2 `Client` classes share (loosely typed on purpose). */
export interface OfficialClient {
  listTools(params?: { cursor?: string }): Promise<Json>;
  callTool(params: { name: string; arguments?: Json }): Promise<Json>;
  listResources(params?: { cursor?: string }): Promise<Json>;
  listResourceTemplates(params?: { cursor?: string }): Promise<Json>;
  readResource(params: { uri: string }): Promise<Json>;
  listPrompts(params?: { cursor?: string }): Promise<Json>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<Json>;
}

async function protocolError(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
  } catch (error) {
    const e = error as { code?: unknown; message: string };
    assert.equal(typeof e.code, "number", `expected a JSON-RPC error, got ${error}`);
    return { code: e.code as number, message: e.message };
  }
  throw new assert.AssertionError({ message: "expected the call to be refused" });
}

/** Fetch exactly one page of `resources/list`. */
export type PageOf = (cursor?: string) => Promise<Json>;

/**
 * Run the whole scenario as steps of `t`; `log` is the schema tap on the wire.
 * `pageOf` fetches one page (v2's `listResources()` without a cursor walks
 * every page itself, so its first page is requested directly).
 */
export async function officialClientScenario(
  t: Deno.TestContext,
  client: OfficialClient,
  revision: Revision,
  log: WireLog,
  pageOf: PageOf = (cursor) => client.listResources(cursor ? { cursor } : {}),
): Promise<void> {
  await t.step("lists tools with their schemas as written", async () => {
    const { tools } = await client.listTools() as { tools: Json[] };
    assert.deepEqual(tools.map((tool) => tool.name), ["add", "churn", "echo", "tag"]);
    assert.deepEqual(tools[2].inputSchema, {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    });
  });

  await t.step("calls tools: text, structured content, and an argument refusal", async () => {
    const echo = await client.callTool({
      name: "echo",
      arguments: { text: "h\u00e9llo \u{1F30D}" },
    });
    assert.deepEqual(echo.content, [{ type: "text", text: "h\u00e9llo \u{1F30D}" }]);
    const add = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
    assert.deepEqual(add.structuredContent, { sum: 42 });
    const refused = await client.callTool({ name: "echo", arguments: {} });
    assert.equal(refused.isError, true);
    assert.match((refused.content as Text[])[0].text, /missing required argument "text"/);
    // Under 2026-07-28 the client mirrors these into Mcp-Param-Label (base64
    // sentinel: not ASCII) and Mcp-Param-Level, and the server checks them.
    const tag = await client.callTool({
      name: "tag",
      arguments: { label: " Z\u00fcrich ", meta: { level: 3 } },
    });
    assert.deepEqual(tag.content, [{ type: "text", text: " Z\u00fcrich @3" }]);
    const unknown = await protocolError(client.callTool({ name: "nope", arguments: {} }));
    assert.equal(unknown.code, -32602);
  });

  await t.step("reads text, blob, and templated resources", async () => {
    const readme = await client.readResource({ uri: "fixture://readme" });
    assert.deepEqual(readme.contents, [
      { uri: "fixture://readme", mimeType: "text/plain", text: "hello" },
    ]);
    const logo = await client.readResource({ uri: "fixture://logo.png" });
    const [blob] = logo.contents as { blob: string }[];
    assert.deepEqual(Uint8Array.from(atob(blob.blob), (c) => c.charCodeAt(0)), LOGO);
    const note = await client.readResource({ uri: "fixture://notes/42" });
    assert.equal((note.contents as Text[])[0].text, "note 42");
    const file = await client.readResource({ uri: "fixture://files/a/b/c.txt" });
    assert.equal((file.contents as Text[])[0].text, "file a/b/c.txt");
    const { resourceTemplates } = await client.listResourceTemplates() as {
      resourceTemplates: Json[];
    };
    assert.deepEqual(resourceTemplates.map((x) => x.uriTemplate), [
      "fixture://files/{+path}",
      "fixture://notes/{id}",
    ]);
    const missing = await protocolError(client.readResource({ uri: "fixture://notes/a/b" }));
    assert.equal(missing.code, revision === "2025-11-25" ? -32002 : -32602);
  });

  await t.step("gets prompts, validating their arguments", async () => {
    const { prompts } = await client.listPrompts() as { prompts: Json[] };
    assert.deepEqual(prompts.map((p) => p.name), ["greet"]);
    const greet = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
    assert.deepEqual(greet.messages, [
      { role: "user", content: { type: "text", text: "Say hello to Ada." } },
    ]);
    const missing = await protocolError(client.getPrompt({ name: "greet", arguments: {} }));
    assert.equal(missing.code, -32602);
    assert.match(missing.message, /missing required argument "name"/);
  });

  await t.step("pages through a 120-item list that changes between pages", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let page = 0;
    do {
      const reply = await pageOf(cursor) as {
        resources: { uri: string }[];
        nextCursor?: string;
      };
      for (const { uri } of reply.resources) {
        if (uri.startsWith("fixture://items/")) seen.push(uri.slice("fixture://items/".length));
      }
      cursor = reply.nextCursor;
      page++;
      if (cursor && CHURN[page]) {
        await client.callTool({ name: "churn", arguments: { step: page } });
      }
    } while (cursor !== undefined && page < 10);
    assert.equal(page, 3, "three pages of at most 50");
    const removed = new Set(Object.values(CHURN).flatMap((step) => step.remove));
    const skipped = INITIAL_ITEMS.filter((id) => !removed.has(id) && !seen.includes(id));
    assert.deepEqual(skipped, [], "no item that was there before is skipped");
    assert.equal(new Set(seen).size, seen.length, "no item is shown twice");
    assert.ok(seen.includes("200") && seen.includes("119a"), "items added past the cursor appear");
  });

  await t.step("every response on the wire conforms to the official schema", () => {
    assert.deepEqual(log.problems, []);
    for (
      const method of [
        "tools/list",
        "tools/call",
        "resources/read",
        "prompts/get",
        "resources/list",
      ]
    ) {
      assert.ok((log.checked.get(method) ?? 0) > 0, `no ${method} response was checked`);
    }
  });
}

/**
 * The fixture server behind the HTTP handler on 127.0.0.1, every exchange
 * recorded for schema checks.
 */
export function listenTappedFixture(): { server: Listening; log: () => WireLog } {
  let log: WireLog | undefined;
  const server = listen((port) => {
    const tap = tapHandler(createHttpHandler(createFixtureServer(), {
      authorize: () => true,
      allowedOrigins: [],
      allowedHosts: loopbackHosts(port),
    }));
    log = tap.log;
    return tap.handler;
  });
  return { server, log: () => log! };
}
