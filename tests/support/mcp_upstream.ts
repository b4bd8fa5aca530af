/**
 * A recording MCP upstream for the serve-upstream tests, built on weir's own
 * core (`McpServer` + `createHttpHandler`, so it answers both revisions) and
 * served on 127.0.0.1 at a port chosen at run time. It records every JSON-RPC
 * message it receives (so a test can show a call never arrived), its catalog
 * can be changed mid-session (drift), it can be stopped and started again on
 * the same port (reconnect), and a few tools answer badly on purpose:
 *
 * - `slow` waits `ms` milliseconds, or until the HTTP request is abandoned;
 * - `huge` answers with `bytes` bytes of text;
 * - `malformed` answers with a result whose `content` is not a list;
 * - `wrong_id` answers with the id of some other request.
 */
import {
  type CallToolResult,
  type Catalog,
  createHttpHandler,
  McpServer,
  type ToolSpec,
} from "../../mod.ts";

/** One JSON-RPC message as the upstream received it. */
export interface Received {
  method: string;
  id?: string | number;
  params: Record<string, unknown>;
  headers: Headers;
}

/** The tools every recording upstream starts with. */
export function baseTools(): ToolSpec[] {
  return [
    {
      name: "echo",
      description: "Echo the message.",
      inputSchema: {
        type: "object",
        properties: { message: { type: "string" } },
        required: ["message"],
      },
      annotations: { readOnlyHint: true },
    },
    {
      name: "get_field_values",
      description: "Values of one field on one site.",
      inputSchema: {
        type: "object",
        properties: {
          site: { type: "string" },
          field: { type: "string" },
          limit: { type: "integer" },
        },
        required: ["site", "field"],
      },
      annotations: { readOnlyHint: true },
    },
    {
      name: "delete_all",
      description: "Delete everything.",
      inputSchema: { type: "object", properties: {} },
      annotations: { destructiveHint: true },
    },
    {
      name: "whoami",
      description: "The headers the upstream received.",
      inputSchema: { type: "object", properties: {} },
    },
    {
      name: "slow",
      inputSchema: { type: "object", properties: { ms: { type: "integer" } }, required: ["ms"] },
    },
    {
      name: "huge",
      inputSchema: {
        type: "object",
        properties: { bytes: { type: "integer" } },
        required: ["bytes"],
      },
    },
    { name: "malformed", inputSchema: { type: "object", properties: {} } },
    { name: "wrong_id", inputSchema: { type: "object", properties: {} } },
  ];
}

/** A running recording upstream. */
export interface McpUpstream {
  /** `http://127.0.0.1:<port>/mcp` (stable across restarts). */
  url: string;
  port: number;
  received: Received[];
  /** `tools/call` messages received, by tool name. */
  calls(name?: string): Received[];
  /** Replace the catalog's tools (drift). */
  setTools(tools: ToolSpec[]): void;
  /**
   * Append these entries to every `tools/list` answer, beyond what the core
   * would allow (a lying upstream: one name, two definitions). `[]` stops.
   */
  alsoList(tools: ToolSpec[]): void;
  /** `slow` calls whose HTTP request was abandoned before they finished. */
  abandoned: number[];
  stop(): Promise<void>;
  /** Fail every request in flight at the connection level, then stop (a crash). */
  kill(): Promise<void>;
  /** Start again on the same port (after {@link McpUpstream.stop}). */
  start(): Promise<void>;
}

/** Start a recording upstream on 127.0.0.1 (port 0 = any free port). */
export async function startMcpUpstream(
  port = 0,
  options: { modernOnly?: boolean } = {},
): Promise<McpUpstream> {
  const received: Received[] = [];
  const abandoned: number[] = [];
  let catalog: Catalog = { tools: baseTools(), resources: [], prompts: [] };
  const server = new McpServer({
    name: "recording-upstream",
    catalog: () => catalog,
    log: () => {},
    dispatch: async (name, args, ctx): Promise<CallToolResult> => {
      switch (name) {
        case "echo":
          return { content: [{ type: "text", text: `echo: ${args.message}` }] };
        case "get_field_values":
          return {
            content: [{ type: "text", text: JSON.stringify(args) }],
            structuredContent: args as Record<string, string>,
          };
        case "slow": {
          const ms = args.ms as number;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, ms);
            ctx.signal.addEventListener("abort", () => {
              clearTimeout(timer);
              abandoned.push(ms);
              resolve();
            }, { once: true });
          });
          return { content: [{ type: "text", text: `slept ${ms}` }] };
        }
        case "huge":
          return { content: [{ type: "text", text: "x".repeat(args.bytes as number) }] };
        default:
          return { content: [{ type: "text", text: `${name} ran` }] };
      }
    },
  });
  const mcp = createHttpHandler(server, { authorize: () => true, allowedOrigins: [] });
  let lastHeaders = new Headers();
  let extra: ToolSpec[] = [];
  const handler = async (request: Request): Promise<Response> => {
    if (request.method !== "POST") return await mcp(request);
    const text = await request.text();
    let message: Record<string, unknown> = {};
    try {
      message = JSON.parse(text);
    } catch { /* the core answers */ }
    const params = (message.params ?? {}) as Record<string, unknown>;
    if (typeof message.method === "string") {
      received.push({
        method: message.method,
        id: message.id as string | number | undefined,
        params,
        headers: request.headers,
      });
    }
    const meta = params._meta as Record<string, unknown> | undefined;
    if (
      options.modernOnly && typeof message.method === "string" &&
      !message.method.startsWith("notifications/") &&
      meta?.["io.modelcontextprotocol/protocolVersion"] !== "2026-07-28"
    ) {
      // A server that speaks 2026-07-28 only: no handshake, no legacy requests.
      return Response.json({
        jsonrpc: "2.0",
        id: message.id ?? null,
        error: {
          code: -32022,
          message: "Unsupported protocol version",
          data: { supported: ["2026-07-28"] },
        },
      }, { status: 400 });
    }
    if (message.method === "tools/call") {
      lastHeaders = request.headers;
      const name = params.name;
      if (name === "whoami") {
        return Response.json({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            content: [{
              type: "text",
              text: JSON.stringify(Object.fromEntries(lastHeaders)),
            }],
          },
        });
      }
      if (name === "malformed") {
        return Response.json({ jsonrpc: "2.0", id: message.id, result: { content: "not a list" } });
      }
      if (name === "wrong_id") {
        return Response.json({
          jsonrpc: "2.0",
          id: 987654321,
          result: { content: [{ type: "text", text: "for someone else" }] },
        });
      }
    }
    if (message.method === "tools/list" && extra.length > 0) {
      const core = await mcp(
        new Request(request.url, { method: "POST", headers: request.headers, body: text }),
      );
      const doc = await core.json();
      doc.result.tools.push(...extra);
      return Response.json(doc);
    }
    const answer = mcp(
      new Request(request.url, {
        method: "POST",
        headers: request.headers,
        body: text,
        signal: request.signal,
      }),
    );
    const killed = new Promise<Response>((resolve) => {
      const die = () =>
        resolve(
          new Response(
            new ReadableStream({ start: (c) => c.error(new Error("upstream killed")) }),
            { headers: { "content-type": "application/json" } },
          ),
        );
      dying.add(die);
      answer.finally(() => dying.delete(die));
    });
    return await Promise.race([answer, killed]);
  };
  /** Requests in flight, each failed at the connection level by {@link McpUpstream.kill}. */
  const dying = new Set<() => void>();
  let http: Deno.HttpServer | undefined;
  let boundPort = port;
  const start = () =>
    new Promise<void>((resolve) => {
      http = Deno.serve({
        hostname: "127.0.0.1",
        port: boundPort,
        onListen: (addr) => {
          boundPort = addr.port;
          resolve();
        },
      }, handler);
    });
  await start();
  return {
    get url() {
      return `http://127.0.0.1:${boundPort}/mcp`;
    },
    get port() {
      return boundPort;
    },
    received,
    abandoned,
    calls: (name) =>
      received.filter((m) =>
        m.method === "tools/call" && (name === undefined || m.params.name === name)
      ),
    alsoList: (tools) => {
      extra = tools;
    },
    setTools: (tools) => {
      catalog = { tools, resources: [], prompts: [] };
    },
    stop: async () => {
      await http?.shutdown();
      http = undefined;
    },
    kill: async () => {
      for (const die of dying) die();
      dying.clear();
      await http?.shutdown();
      http = undefined;
    },
    start,
  };
}
