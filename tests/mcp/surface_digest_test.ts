/**
 * The surface digest covers what an agent reads and can do besides the
 * catalog (src/mcp/surface_digest.ts): two servers with one catalog and other
 * instructions, or one offering tasks and one not, serve different surfaces;
 * the server's name alone does not change what a caller lists.
 */
import assert from "node:assert/strict";
import { McpServer } from "../../src/mcp/server.ts";
import type { ServerOptions } from "../../src/mcp/options.ts";

const tool = {
  name: "echo",
  inputSchema: { type: "object" },
  execution: { taskSupport: "optional" },
};
const tasks = {
  get: () => Promise.reject(new Error("none")),
  result: () => Promise.reject(new Error("none")),
  cancel: () => Promise.reject(new Error("none")),
};

function digest(options: Partial<ServerOptions> = {}): Promise<string> {
  return new McpServer({
    name: "a",
    catalog: { tools: [tool], resources: [], prompts: [] },
    dispatch: () => ({ content: [] }),
    ...options,
  }).surfaceDigest();
}

Deno.test("surface digest: the instructions and the task offer are part of the surface", async () => {
  const plain = await digest();
  assert.equal(await digest({ name: "b" }), plain, "a server's name is a label");
  const told = await digest({ instructions: "Use echo for greetings only." });
  assert.notEqual(told, plain);
  assert.notEqual(await digest({ instructions: "Use echo for anything." }), told);
  assert.equal(await digest({ instructions: "Use echo for greetings only." }), told);
  assert.notEqual(await digest({ tasks }), plain);
});
