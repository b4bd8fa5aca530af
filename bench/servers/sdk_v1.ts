/**
 * The official MCP TypeScript SDK v1 (`@modelcontextprotocol/sdk` 1.32.2)
 * serving 2025-11-25 in its documented stateless mode: a `Server` and a
 * `WebStandardStreamableHTTPServerTransport` (no session id, JSON answers)
 * per HTTP request, its handlers answering `tools/list` with the benchmark's
 * 50 tools and `tools/call` of `echo` with the message. (The low-level
 * `Server`, as SDK-based wrappers of other APIs are built: the high-level
 * `McpServer` takes Zod schemas, not the catalog's JSON Schemas.)
 * Usage: `deno run --allow-net --allow-env --allow-read bench/servers/sdk_v1.ts <port>`.
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { announce, echoResult, portArg, SERVER_INFO, TOOLS } from "../catalog.ts";

function server(): Server {
  const s = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } } });
  s.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  s.setRequestHandler(CallToolRequestSchema, (request: {
    params: { name: string; arguments?: Record<string, unknown> };
  }) => {
    const args = (request.params.arguments ?? {}) as { message?: string };
    return echoResult(request.params.name === "echo" ? String(args.message) : request.params.name);
  });
  return s;
}

Deno.serve(
  { hostname: "127.0.0.1", port: portArg(), onListen: announce },
  async (request) => {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server().connect(transport);
    return await transport.handleRequest(request);
  },
);
