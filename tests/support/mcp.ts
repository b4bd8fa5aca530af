/**
 * Driving the MCP core in tests: requests shaped for either revision, sent
 * straight to `McpServer.handle` or through the HTTP handler, and every
 * response checked against the official schema before the test sees it.
 */
import {
  type Catalog,
  createHttpHandler,
  type InboundOptions,
  type LogEvent,
  McpServer,
  type ServerOptions,
  Session,
} from "../../mod.ts";
import { assertValidResponse, LEGACY, MODERN, type Revision } from "./schemas.ts";

export { LEGACY, MODERN };

/** The `_meta` every 2026-07-28 request carries. */
export const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
} as const;

/** A JSON-RPC response as tests read it. */
export interface RpcResponse<R = Record<string, unknown>> {
  jsonrpc: "2.0";
  id?: string | number;
  result?: R;
  error?: { code: number; message: string; data?: unknown };
}

/** An empty catalog (every list present, as required). */
export const EMPTY: Catalog = { tools: [], resources: [], prompts: [] };

/** A server with a silent logger unless one is given; log events land in `events`. */
export function makeServer(
  options: Partial<ServerOptions> & { catalog: ServerOptions["catalog"] },
): { server: McpServer; events: LogEvent[] } {
  const events: LogEvent[] = [];
  const server = new McpServer({ name: "test-server", log: (e) => events.push(e), ...options });
  return { server, events };
}

let nextId = 1;

/** A 2026-07-28 request: `params._meta` filled in. */
export function modernRequest(method: string, params: Record<string, unknown> = {}) {
  return {
    jsonrpc: "2.0",
    id: nextId++,
    method,
    params: { ...params, _meta: { ...MODERN_META, ...params._meta as object } },
  };
}

/**
 * Send a 2026-07-28 request straight to the core; the response is checked
 * against the 2026-07-28 schema.
 */
export async function modern<R = Record<string, unknown>>(
  server: McpServer,
  method: string,
  params: Record<string, unknown> = {},
): Promise<RpcResponse<R> & { status: number }> {
  const reply = await server.handle(modernRequest(method, params));
  const body = assertValidResponse<RpcResponse<R>>(MODERN, reply.body, method);
  return { ...body, status: reply.status };
}

/** A 2025-11-25 `initialize` request. */
export function initializeRequest(id: number | string = 1) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "test-client", version: "1.0.0" },
    },
  };
}

/**
 * A 2025-11-25 connection (as stdio keeps one): `initialize` is sent first,
 * then each call goes out under the negotiated revision, checked against the
 * 2025-11-25 schema.
 */
export async function legacySession(server: McpServer) {
  const session = new Session();
  const init = await server.handle(initializeRequest(nextId++), { session });
  const initialized = assertValidResponse<RpcResponse>(LEGACY, init.body, "initialize");
  await server.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, { session });
  return {
    session,
    /** The `InitializeResult`. */
    initialize: initialized.result!,
    async call<R = Record<string, unknown>>(
      method: string,
      params?: Record<string, unknown>,
    ): Promise<RpcResponse<R> & { status: number }> {
      const message: Record<string, unknown> = { jsonrpc: "2.0", id: nextId++, method };
      if (params !== undefined) message.params = params;
      const reply = await server.handle(message, { session });
      const body = assertValidResponse<RpcResponse<R>>(LEGACY, reply.body, method);
      return { ...body, status: reply.status };
    },
  };
}

/** Call a method under a revision (legacy: on a fresh initialized session). */
export async function ask<R = Record<string, unknown>>(
  server: McpServer,
  revision: Revision,
  method: string,
  params: Record<string, unknown> = {},
): Promise<RpcResponse<R> & { status: number }> {
  if (revision === MODERN) return await modern<R>(server, method, params);
  return await (await legacySession(server)).call<R>(method, params);
}

/** Both revisions, for tests that pin a behaviour shared by the two. */
export const REVISIONS: readonly Revision[] = [LEGACY, MODERN];

/** An HTTP handler that accepts everyone (tests of the core, not of the inbound checks). */
export function openHandler(
  server: McpServer,
  options: Partial<InboundOptions> = {},
): (request: Request) => Promise<Response> {
  return createHttpHandler(server, { authorize: () => true, allowedOrigins: [], ...options });
}

/** The headers a 2026-07-28 HTTP client sends with a request. */
export function modernHeaders(
  method: string,
  name?: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...extra,
  };
  if (name !== undefined) headers["mcp-name"] = name;
  return headers;
}

/**
 * POST a body (object or raw text) to a handler at http://127.0.0.1/mcp, with
 * `content-length` set as every real client sets it. (A refusal issued before
 * the body is read drops the connection when the body's length is unknown,
 * which ends the response stream with an error.)
 */
export async function post(
  handler: (request: Request) => Promise<Response>,
  body: unknown,
  headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
  },
): Promise<{ status: number; headers: Headers; text: string }> {
  const bytes = new TextEncoder().encode(typeof body === "string" ? body : JSON.stringify(body));
  const response = await handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { ...headers, "content-length": String(bytes.length) },
      body: bytes,
    }),
  );
  return { status: response.status, headers: response.headers, text: await response.text() };
}
