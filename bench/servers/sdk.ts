/**
 * The official MCP TypeScript SDK v2 (`@modelcontextprotocol/server` 2.4.0)
 * in its documented stateless mode: `createMcpHandler(factory)`, which builds
 * a fresh McpServer per HTTP request and serves 2026-07-28 requests from it.
 * Tools are declared with the SDK's `fromJsonSchema` and its default
 * validator (Ajv). The schemas are wrapped once, outside the factory, so the
 * SDK is not charged for re-wrapping them per request; registering the 50
 * tools does happen per request, as the factory pattern implies.
 * Usage: `deno run --allow-net --allow-env --allow-read bench/servers/sdk.ts <port>`.
 *
 * @module
 */
import { createMcpHandler, fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { announce, echoResult, portArg, SERVER_INFO, TOOLS } from "../catalog.ts";

const schemas = new Map(TOOLS.map((t) => [t.name, fromJsonSchema(t.inputSchema)]));

function factory(): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: { listChanged: false } } });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, {
      title: tool.title,
      description: tool.description,
      inputSchema: schemas.get(tool.name)!,
    }, (args: unknown) => {
      const a = args as { message?: string };
      return echoResult(tool.name === "echo" ? String(a.message) : tool.name);
    });
  }
  return server;
}

const handler = createMcpHandler(factory, { onerror: () => {} });

Deno.serve(
  { hostname: "127.0.0.1", port: portArg(), onListen: announce },
  (request) => handler.fetch(request),
);
