/**
 * A tool argument written with more digits than a double holds is refused by
 * its path, over MCP as over the tool API, instead of being passed on as the
 * rounded double (`1000000000000000000001` would become `1e21`); every number
 * a double holds exactly passes, however it is spelled.
 */
import assert from "node:assert/strict";
import { createHttpHandler, McpServer } from "../../mod.ts";
import { parseArguments, parseMessage } from "../../src/mcp/jsonrpc.ts";

const seen: unknown[] = [];
const server = new McpServer({
  name: "n",
  catalog: {
    tools: [{
      name: "take",
      inputSchema: {
        type: "object",
        properties: { n: { type: "number" }, list: { type: "array" } },
      },
    }],
    resources: [],
    prompts: [],
  },
  dispatch: (_name, args) => {
    seen.push(args.n);
    return { content: [{ type: "text", text: "ok" }] };
  },
  log: () => {},
});
const handler = createHttpHandler(server, { authorize: () => true, allowedOrigins: [] });

async function call(argumentsText: string): Promise<{ isError?: boolean; text: string }> {
  const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"take",` +
    `"arguments":${argumentsText},"_meta":{"io.modelcontextprotocol/protocolVersion":` +
    `"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`;
  const response = await handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "take",
      },
      body,
    }),
  );
  const result = (await response.json()).result;
  return { isError: result.isError, text: result.content[0].text };
}

Deno.test("over MCP, a rounded argument is refused by path and never reaches the tool", async () => {
  seen.length = 0;
  for (
    const args of [
      `{"n":1000000000000000000001}`,
      `{"list":[1,0.1000000000000000055511]}`,
      // The only number, deep inside strings and containers (parseMessage looks
      // for numbers in the arguments before it scans the text).
      `{"list":["a",{"b":[null,{"c":"1e400","d":[0.1000000000000000055511]}]}]}`,
    ]
  ) {
    const r = await call(args);
    assert.equal(r.isError, true, args);
    assert.match(r.text, /more digits than a double holds/);
  }
  assert.deepEqual(seen, []);
  for (const args of [`{"n":1e21}`, `{"n":0.30000000000000004}`, `{"n":1.50000000000000000000}`]) {
    assert.equal((await call(args)).isError, undefined, args);
  }
  assert.deepEqual(seen, [1e21, 0.30000000000000004, 1.5]);
});

Deno.test("parseMessage and parseArguments mark only what a double cannot hold", () => {
  const args = parseArguments(
    `{"a":12345678901234567890123,"b":1e21,"c":[2.5000000000000000]}`,
  ) as {
    a: unknown;
    b: unknown;
    c: unknown[];
  };
  assert.equal((args.a as { rawJSON: string }).rawJSON, "12345678901234567890123");
  assert.equal(args.b, 1e21);
  assert.deepEqual(args.c, [2.5]);
  // Outside arguments, parseMessage leaves numbers as JSON.parse reads them.
  const m = parseMessage(
    `{"jsonrpc":"2.0","id":1,"method":"x","params":{"other":12345678901234567890123}}`,
  ) as { params: { other: unknown } };
  assert.equal(typeof m.params.other, "number");
});
