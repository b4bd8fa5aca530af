/**
 * The recording stand-ins `weir verify` serves a guardfile against, on
 * 127.0.0.1 only: for a spec-mode file an HTTP server answering every request,
 * for a file that wraps an MCP server an MCP server (weir's own core, both
 * revisions) listing the wrapped server's definitions. Each records exactly
 * what reached it and answers with an echo of it, credentials included, in
 * more than one encoding: a hostile upstream, so that what weir lets back to
 * the agent is tested too.
 *
 * @module
 */
import { McpServer } from "../mcp/server.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolSpec } from "../mcp/types.ts";
import { createHttpHandler } from "../transport/http.ts";

/** One HTTP request as it reached the stand-in. */
export interface RecordedRequest {
  method: string;
  /** The request target as received: path and query, still percent-encoded. */
  target: string;
  headers: [string, string][];
  /** The body as text ("" for none). */
  body: string;
}

/** One `tools/call` as it reached the MCP stand-in (recorded before its schema check). */
export interface RecordedCall {
  /** The tool name the MCP server was asked for. */
  name: string;
  /** The arguments as received (parsed JSON). */
  arguments: unknown;
  /** The HTTP headers of the request that carried it. */
  headers: [string, string][];
}

/** A running stand-in. */
export interface StandIn<T> {
  /** Its base URL (`http://127.0.0.1:PORT`). */
  url: string;
  /** What reached it, in order. */
  received: T[];
  stop(): Promise<void>;
}

const base64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));

/** Every echo of a text a careless upstream might write. */
function echoes(text: string): Record<string, string> {
  return { raw: text, percent: encodeURIComponent(text), base64: base64(text) };
}

/**
 * Start the HTTP stand-in: every request is recorded and answered 200 with a
 * JSON echo of its method, target, headers and body, and its place in
 * `received` (`served`: whose request a reused answer came from).
 */
export function startHttpStandIn(): StandIn<RecordedRequest> {
  const received: RecordedRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const url = new URL(request.url);
      const recorded: RecordedRequest = {
        method: request.method,
        target: url.pathname + url.search,
        headers: [...request.headers],
        body: await request.text(),
      };
      received.push(recorded);
      return Response.json({
        served: received.length - 1,
        echo: recorded,
        headers: Object.fromEntries(recorded.headers.map(([k, v]) => [k, echoes(v)])),
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    received,
    stop: () => server.shutdown(),
  };
}

/**
 * Start the MCP stand-in listing `tools` (the wrapped server's definitions):
 * each `tools/call` is recorded and answered with a text echo of its name,
 * arguments and the request's headers, and its place in `received` (`served`).
 * @throws {Error} when weir's core cannot list the definitions (it names the tool and why)
 */
export function startMcpStandIn(tools: ToolSpec[]): StandIn<RecordedCall> {
  const received: RecordedCall[] = [];
  let headers: [string, string][] = [];
  const server = new McpServer({
    name: "weir-verify-stand-in",
    version: "1.0.0",
    log: () => {},
    catalog: { tools, resources: [], prompts: [] },
    dispatch: (name, args) => {
      const echo = {
        served: received.length - 1,
        name,
        arguments: args,
        headers: Object.fromEntries(headers.map(([k, v]) => [k, echoes(v)])),
      } as unknown as JsonObject;
      return { content: [{ type: "text", text: JSON.stringify(echo) }] };
    },
  });
  const handler = createHttpHandler(server, {
    authorize: () => true,
    allowedOrigins: [],
  });
  const listener = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      headers = [...request.headers];
      // Recorded as it arrived, before the core checks it against the definitions.
      const text = await request.text();
      try {
        const message = JSON.parse(text);
        if (message?.method === "tools/call") {
          received.push({
            name: message.params?.name,
            arguments: message.params?.arguments,
            headers,
          });
        }
      } catch { /* not JSON: the core answers it */ }
      const bodied = request.method !== "GET" && request.method !== "HEAD";
      return handler(
        new Request(request.url, {
          method: request.method,
          headers: request.headers,
          ...(bodied ? { body: text } : {}),
        }),
      );
    },
  );
  return {
    url: `http://127.0.0.1:${listener.addr.port}/mcp`,
    received,
    stop: () => listener.shutdown(),
  };
}
