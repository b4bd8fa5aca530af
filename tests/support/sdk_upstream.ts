/**
 * A recording MCP upstream built on the official SDK servers, for the
 * serve-upstream exactness tests: 2025-11-25 through the v1 SDK
 * (`@modelcontextprotocol/sdk` `Server` over its Web-standard Streamable HTTP
 * transport, stateless) and 2026-07-28 through the v2 SDK
 * (`@modelcontextprotocol/server` `Server` behind `createMcpHandler`, which
 * refuses 2025 traffic so weir's client falls back to 2026-07-28). Answers
 * are JSON bodies or SSE streams, as asked. Served on 127.0.0.1 at a port
 * chosen at run time.
 *
 * It records the raw text of every POST body it receives (so a test can
 * compare what arrived, byte for byte, with what was sent), lists the tools
 * it is given exactly as written (low-level `tools/list` handler: no schema is
 * rewritten), and answers `tools/call` from a handler the test supplies
 * (default: a text block saying which tool ran). A handler can send
 * progress notifications for the call (`progress(n)`), as an SDK server does.
 */
import { Server as ServerV1 } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createMcpHandler, Server as ServerV2 } from "@modelcontextprotocol/server";
import { AsyncLocalStorage } from "node:async_hooks";

/** The headers of the HTTP request being answered (read by `tools/call` handlers). */
const requestHeaders = new AsyncLocalStorage<Headers>();

/** A tool as listed (any JSON the test wants the upstream to say). */
export type ListedTool = Record<string, unknown> & { name: string };

/** What a `tools/call` handler is given. */
export interface CallInput {
  name: string;
  arguments: Record<string, unknown> | undefined;
  /** Send `notifications/progress` for this call (no-op when the caller asked for none). */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  signal: AbortSignal;
  /** The HTTP request's headers (e.g. the `authorization` weir sent for this call). */
  headers: Headers;
}

/** Options of {@link startSdkUpstream}. */
export interface SdkUpstreamOptions {
  revision: "2025-11-25" | "2026-07-28";
  /** `json`: one JSON body per request; `sse`: an event stream per request. */
  framing: "json" | "sse";
  tools: ListedTool[];
  /** Answers `tools/call` (default: `{content: [{type: "text", text: "<name> ran"}]}`). */
  onCall?: (input: CallInput) => unknown | Promise<unknown>;
  /** Fields added to every `tools/list` result (e.g. a 2026-07-28 `ttlMs`). */
  listExtra?: Record<string, unknown>;
  /** An HTTP answer to a POST instead of the server's (e.g. a 401), or `undefined` to go on. */
  refuse?: (headers: Headers, body: string) => Response | undefined;
}

/** A running SDK upstream. */
export interface SdkUpstream {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** Raw text of every POST body received, in order. */
  bodies: string[];
  /** The headers of every request received, in order. */
  headers: Headers[];
  /** Raw bodies of the `tools/call` requests received. */
  calls(): string[];
  /** Replace the listed tools (drift). */
  setTools(tools: ListedTool[]): void;
  stop(): Promise<void>;
}

const INFO = { name: "sdk-recording-upstream", version: "1.0.0" };

/** Start the upstream on 127.0.0.1, port 0. */
export async function startSdkUpstream(options: SdkUpstreamOptions): Promise<SdkUpstream> {
  let tools = options.tools;
  const bodies: string[] = [];
  const headers: Headers[] = [];
  const onCall = options.onCall ??
    ((input: CallInput) => ({ content: [{ type: "text", text: `${input.name} ran` }] }));

  const legacy = async (request: Request): Promise<Response> => {
    const server = new ServerV1(INFO, { capabilities: { tools: {} } });
    server.setRequestHandler(
      ListToolsRequestSchema,
      () => ({ tools, ...options.listExtra }) as never,
    );
    type V1Call = {
      params: {
        name: string;
        arguments?: Record<string, unknown>;
        _meta?: { progressToken?: string | number };
      };
    };
    type V1Extra = {
      signal: AbortSignal;
      sendNotification(n: { method: string; params: Record<string, unknown> }): Promise<void>;
    };
    server.setRequestHandler(CallToolRequestSchema, async (req: V1Call, extra: V1Extra) => {
      const token = req.params._meta?.progressToken;
      return await onCall({
        name: req.params.name,
        arguments: req.params.arguments,
        signal: extra.signal,
        headers: requestHeaders.getStore() ?? new Headers(),
        progress: async (progress, total, message) => {
          if (token === undefined) return;
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress, total, message },
          });
        },
      }) as never;
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: options.framing === "json",
    });
    await server.connect(transport);
    return await transport.handleRequest(request);
  };

  const modern = createMcpHandler(() => {
    const server = new ServerV2(INFO, { capabilities: { tools: {} } });
    server.setRequestHandler("tools/list", () => ({ tools, ...options.listExtra }) as never);
    server.setRequestHandler("tools/call", async (req, ctx) => {
      const params = req.params as {
        name: string;
        arguments?: Record<string, unknown>;
        _meta?: { progressToken?: string | number };
      };
      const token = params._meta?.progressToken;
      return await onCall({
        name: params.name,
        arguments: params.arguments,
        signal: ctx.mcpReq.signal,
        headers: requestHeaders.getStore() ?? new Headers(),
        progress: async (progress, total, message) => {
          if (token === undefined) return;
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken: token, progress, total, message },
          });
        },
      }) as never;
    });
    return server;
  }, {
    legacy: options.revision === "2026-07-28" ? "reject" : "stateless",
    responseMode: options.framing,
    onerror: () => {},
  });

  let resolvePort: (port: number) => void;
  const listening = new Promise<number>((r) => resolvePort = r);
  const http = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => resolvePort(port),
  }, async (request) => {
    headers.push(request.headers);
    // Stateless: no standalone stream (as the SDK's stateless mode answers a GET).
    if (request.method === "GET") return new Response(null, { status: 405 });
    if (request.method === "POST") {
      const text = await request.text();
      bodies.push(text);
      const refused = options.refuse?.(request.headers, text);
      if (refused) return refused;
      request = new Request(request.url, { method: "POST", headers: request.headers, body: text });
    }
    const answer = () =>
      options.revision === "2025-11-25" ? legacy(request) : modern.fetch(request);
    return await requestHeaders.run(request.headers, answer);
  });
  const port = await listening;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    bodies,
    headers,
    calls: () => bodies.filter((b) => /"method"\s*:\s*"tools\/call"/.test(b)),
    setTools: (next) => tools = next,
    stop: () => http.shutdown(),
  };
}
