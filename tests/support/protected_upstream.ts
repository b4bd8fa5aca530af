/**
 * An MCP server protected as the MCP authorization spec asks, for the
 * token exchange tests: every HTTP request (`initialize`, `tools/list`,
 * `resources/read`, notifications, the standalone `GET`, `DELETE`) must carry
 * a bearer token the server verifies itself (a `requireBearerAuth`-style
 * check in front of the official SDK's transport: the provider's keys, its
 * issuer, the MCP server's audience); anything else is answered 401 with a
 * `WWW-Authenticate` challenge naming its resource metadata, before the SDK
 * sees the request.
 *
 * - 2025-11-25: the official v1 SDK (`Server` over its Web-standard
 *   Streamable HTTP transport) with sessions (`Mcp-Session-Id`), each bound
 *   to the subject (`sub`) of the token that opened it, as the MCP
 *   specification's security best practices ask: a request on a session with
 *   another subject's token is answered 404 (`Session not found`, the session
 *   looked up by subject and ID) and counted in {@link ProtectedUpstream.crossed};
 *   tasks (the SDK's `InMemoryTaskStore`, tasks bound to their session).
 * - 2026-07-28: the official v2 SDK (`createMcpHandler`, stateless).
 *
 * Tools: `whoami` (answers the subject and actor of the call's token), with
 * an MCP Apps interface `ui://whoami/view` whose contents name the subject
 * of the token that read it; `report` (task support optional; 2025-11-25
 * only), a task completed at once, answering the subject it ran for.
 * Every request is recorded with what the server saw of its token.
 */
import { Server as ServerV1 } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { createMcpHandler, Server as ServerV2 } from "@modelcontextprotocol/server";
import { AsyncLocalStorage } from "node:async_hooks";

/** What the server saw of a verified token. */
export interface TokenSeen {
  sub: string;
  act?: { sub: string };
  /** The token itself (to compare with what a caller holds). */
  token: string;
}

/** One HTTP request as the server saw it. */
export interface SeenRequest {
  /** `POST`, `GET` or `DELETE`. */
  http: string;
  /** The JSON-RPC method of a POST (`initialize`, `tools/list`, ...). */
  method?: string;
  /** The `Mcp-Session-Id` it named. */
  session?: string;
  /** Its token's subject, or why it was refused (`refused: ...`). */
  sub: string;
}

/** Options of {@link startProtectedUpstream}. */
export interface ProtectedUpstreamOptions {
  revision: "2025-11-25" | "2026-07-28";
  /** Verify a bearer token (the provider's keys and audience), or say why not. */
  verify(token: string): Promise<TokenSeen | string>;
}

/** A running protected MCP server. */
export interface ProtectedUpstream {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** Every request, in order. */
  seen: SeenRequest[];
  /** Session ID -> the subject it is bound to (2025-11-25). */
  sessions: Map<string, string>;
  /** Sessions ended by `DELETE`. */
  ended: string[];
  /** Requests refused because their token's subject was not their session's. */
  crossed: number;
  /** Every header value and body received, to search for tokens. */
  everything(): string;
  /** Requests of one JSON-RPC method. */
  of(method: string): SeenRequest[];
  stop(): Promise<void>;
}

const INFO = { name: "protected-upstream", version: "1.0.0" };
const VIEW = "ui://whoami/view";
const TOOLS = [
  {
    name: "whoami",
    description: "Who the MCP server sees.",
    inputSchema: { type: "object" },
    _meta: { ui: { resourceUri: VIEW } },
  },
];
const REPORT = {
  name: "report",
  description: "A report, as a task.",
  inputSchema: { type: "object" },
  execution: { taskSupport: "optional" },
};

/** The verified token of the request being answered. */
const current = new AsyncLocalStorage<TokenSeen>();

function whoami(): { content: { type: "text"; text: string }[] } {
  const seen = current.getStore()!;
  return { content: [{ type: "text", text: JSON.stringify({ sub: seen.sub, act: seen.act }) }] };
}

function view(uri: string) {
  return {
    contents: [{
      uri,
      mimeType: "text/html;profile=mcp-app",
      text: `<p>${current.getStore()!.sub}</p>`,
    }],
  };
}

/** Start the server on 127.0.0.1, port 0. */
export async function startProtectedUpstream(
  options: ProtectedUpstreamOptions,
): Promise<ProtectedUpstream> {
  const seen: SeenRequest[] = [];
  const raw: string[] = [];
  const sessions = new Map<string, string>();
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const ended: string[] = [];
  const store = new InMemoryTaskStore();
  let crossed = 0;
  let url = "";

  const legacyServer = () => {
    const server = new ServerV1(INFO, {
      capabilities: {
        tools: {},
        resources: {},
        tasks: { cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore: store,
    });
    server.setRequestHandler(
      ListToolsRequestSchema,
      () => ({ tools: [...TOOLS, REPORT] }) as never,
    );
    server.setRequestHandler(ListResourcesRequestSchema, () => ({
      resources: [{ uri: VIEW, name: "whoami view", mimeType: "text/html;profile=mcp-app" }],
    }));
    server.setRequestHandler(
      ReadResourceRequestSchema,
      (req: { params: { uri: string } }) => view(req.params.uri) as never,
    );
    type Extra = { taskStore?: { createTask(p: { ttl?: number }): Promise<{ taskId: string }> } };
    type Store = { storeTaskResult(id: string, status: string, result: unknown): Promise<void> };
    server.setRequestHandler(
      CallToolRequestSchema,
      async (req: { params: { name: string; task?: { ttl?: number } } }, extra: Extra) => {
        if (!req.params.task) return whoami() as never;
        const made = await extra.taskStore!.createTask({ ttl: req.params.task.ttl ?? 60_000 });
        await (extra.taskStore as unknown as Store).storeTaskResult(
          made.taskId,
          "completed",
          whoami(),
        );
        return { task: made } as never;
      },
    );
    return server;
  };

  const legacy = async (request: Request, token: TokenSeen): Promise<Response> => {
    const id = request.headers.get("mcp-session-id");
    if (id === null) {
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid: string) => {
          sessions.set(sid, token.sub);
          transports.set(sid, transport);
        },
        onsessionclosed: (sid: string) => {
          ended.push(sid);
          transports.delete(sid);
        },
      });
      await legacyServer().connect(transport);
      return await transport.handleRequest(request);
    }
    // Looked up by subject and ID: another subject's session is not found.
    const transport = transports.get(id);
    if (!transport || sessions.get(id) !== token.sub) {
      if (transport) crossed++;
      return Response.json({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32001, message: "Session not found" },
      }, { status: 404 });
    }
    return await transport.handleRequest(request);
  };

  const modern = createMcpHandler(() => {
    const server = new ServerV2(INFO, { capabilities: { tools: {}, resources: {} } });
    server.setRequestHandler("tools/list", () => ({ tools: TOOLS }) as never);
    server.setRequestHandler("tools/call", () => whoami() as never);
    server.setRequestHandler("resources/list", () => ({
      resources: [{ uri: VIEW, name: "whoami view", mimeType: "text/html;profile=mcp-app" }],
    }));
    server.setRequestHandler("resources/read", (req) => view(req.params.uri) as never);
    return server;
  }, { legacy: "reject", responseMode: "json", onerror: () => {} });

  let resolvePort!: (port: number) => void;
  const listening = new Promise<number>((r) => resolvePort = r);
  const http = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => resolvePort(port),
  }, async (request) => {
    const body = request.method === "POST" ? await request.text() : "";
    raw.push([...request.headers].map(([k, v]) => `${k}: ${v}`).join("\n") + "\n" + body);
    let method: string | undefined;
    try {
      method = (JSON.parse(body) as { method?: string }).method;
    } catch { /* not one message */ }
    const session = request.headers.get("mcp-session-id") ?? undefined;
    const bearer = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const token = bearer ? await options.verify(bearer) : "no bearer token";
    seen.push({
      http: request.method,
      ...(method ? { method } : {}),
      ...(session ? { session } : {}),
      sub: typeof token === "string" ? `refused: ${token}` : token.sub,
    });
    if (typeof token === "string") {
      // RFC 6750 section 3 and RFC 9728 section 5.1, as the SDK's requireBearerAuth answers.
      return Response.json({ error: "invalid_token", error_description: token }, {
        status: 401,
        headers: {
          "www-authenticate": `Bearer error="invalid_token", resource_metadata="${
            url.replace(/\/mcp$/, "/.well-known/oauth-protected-resource/mcp")
          }"`,
        },
      });
    }
    const forwarded = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.method === "POST" ? { body } : {}),
    });
    return await current.run(
      token,
      () => options.revision === "2025-11-25" ? legacy(forwarded, token) : modern.fetch(forwarded),
    );
  });
  url = `http://127.0.0.1:${await listening}/mcp`;
  return {
    url,
    seen,
    sessions,
    ended,
    get crossed() {
      return crossed;
    },
    everything: () => raw.join("\n"),
    of: (method) => seen.filter((s) => s.method === method),
    stop: async () => {
      for (const transport of transports.values()) await transport.close().catch(() => {});
      store.cleanup?.();
      await http.shutdown();
    },
  };
}
