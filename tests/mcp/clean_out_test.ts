/**
 * The core cleans what any host returns (src/mcp/text.ts): tool results
 * (success and error), resource contents and prompt messages come out
 * well-formed and free of terminal control sequences; an argument integer
 * JSON.parse has already rounded is refused, never passed on.
 */
import assert from "node:assert/strict";
import { makeServer, modern } from "../support/mcp.ts";

const DIRTY = "a\u001b[2Jb\u001b]0;title\u0007c\ud800d\u009b31me";
const CLEAN = "abc\ufffdde";

const { server } = makeServer({
  catalog: {
    tools: [{ name: "dirty" }, { name: "failing" }, { name: "deep" }],
    resources: [{ uri: "docs://dirty", name: "dirty" }],
    prompts: [{ name: "dirty" }],
  },
  dispatch: (name) => {
    if (name === "failing") return { content: [{ type: "text", text: DIRTY }], isError: true };
    if (name === "deep") {
      let v: unknown = "x";
      for (let i = 0; i < 300; i++) v = [v];
      return { content: [{ type: "text", text: "x" }], structuredContent: { v } as never };
    }
    return {
      content: [{ type: "text", text: DIRTY }],
      structuredContent: { [DIRTY]: [DIRTY, 1, true, null] },
    };
  },
  readResource: (uri) => [{ uri, mimeType: "text/plain", text: DIRTY }],
  getPrompt: () => ({ messages: [{ role: "user", content: { type: "text", text: DIRTY } }] }),
});

Deno.test("tool results, resources and prompts are cleaned by the core, whatever the host returns", async () => {
  const tool = await modern<{ content: { text: string }[]; structuredContent: unknown }>(
    server,
    "tools/call",
    { name: "dirty", arguments: {} },
  );
  assert.equal(tool.result!.content[0].text, CLEAN);
  assert.deepEqual(tool.result!.structuredContent, { [CLEAN]: [CLEAN, 1, true, null] });
  const failing = await modern<{ content: { text: string }[] }>(server, "tools/call", {
    name: "failing",
    arguments: {},
  });
  assert.equal(failing.result!.content[0].text, CLEAN);
  const deep = await modern<{ content: { text: string }[]; isError: boolean }>(
    server,
    "tools/call",
    { name: "deep", arguments: {} },
  );
  assert.equal(deep.result!.isError, true);
  assert.match(deep.result!.content[0].text, /nested deeper than 256 levels/);
  const resource = await modern<{ contents: { text: string }[] }>(server, "resources/read", {
    uri: "docs://dirty",
  });
  assert.equal(resource.result!.contents[0].text, CLEAN);
  const prompt = await modern<{ messages: { content: { text: string } }[] }>(
    server,
    "prompts/get",
    { name: "dirty" },
  );
  assert.equal(prompt.result!.messages[0].content.text, CLEAN);
});

Deno.test("an argument integer beyond 2^53 is refused by where it is, never rounded on", async () => {
  const { server: echo } = makeServer({
    catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
    dispatch: (_n, args) => ({ content: [{ type: "text", text: JSON.stringify(args) }] }),
  });
  const refused = await echo.callTool("echo", { a: { b: [1, 2 ** 53 + 2] } });
  assert.equal(refused.status, 400);
  assert.match(
    (refused.result.content[0] as { text: string }).text,
    /the number at a\.b\[1\] is an integer beyond 2\^53.*send it as a string/,
  );
  const fine = await echo.callTool("echo", { a: 2 ** 53 - 1, b: 1.5, c: -(2 ** 53 - 1) });
  assert.equal(fine.status, 200);
});

Deno.test("what is listed is cleaned too: tool, resource and prompt metadata", async () => {
  const { server: listing } = makeServer({
    catalog: {
      tools: [{ name: "t", title: DIRTY, description: DIRTY }],
      resources: [{ uri: "docs://x", name: "x", description: DIRTY }],
      prompts: [{ name: "p", description: DIRTY }],
    },
    dispatch: () => ({ content: [] }),
    readResource: (uri) => [{ uri, text: "" }],
    getPrompt: () => ({ messages: [] }),
  });
  const tools = await modern<{ tools: { title: string; description: string }[] }>(
    listing,
    "tools/list",
  );
  assert.equal(tools.result!.tools[0].title, CLEAN);
  assert.equal(tools.result!.tools[0].description, CLEAN);
  const resources = await modern<{ resources: { description: string }[] }>(
    listing,
    "resources/list",
  );
  assert.equal(resources.result!.resources[0].description, CLEAN);
  const prompts = await modern<{ prompts: { description: string }[] }>(listing, "prompts/list");
  assert.equal(prompts.result!.prompts[0].description, CLEAN);
});
