/**
 * One connected official MCP client, whichever revision it speaks, behind
 * one small interface ({@link Session}) the connection drives: the v1 client
 * (`@modelcontextprotocol/sdk`) for the 2025-11-25 handshake, the v2 client
 * (`@modelcontextprotocol/client`) pinned to 2026-07-28.
 *
 * Both are set up so that a request reaches the upstream once and nothing
 * is done on weir's behalf: no client capabilities are declared, and the
 * upstream's own requests (sampling, elicitation, roots, ping...) never
 * reach the client: weir answers them at once (`server_requests.ts`; the v2
 * client would drop them unanswered, leaving the upstream and the call
 * waiting); the v2 client does not fulfil an `input_required` answer by
 * re-sending the call (`inputRequired.autoFulfill: false`) and is handed the
 * tool's definition, so it never re-lists and re-sends a call after a
 * header mismatch; `notifications/tools/list_changed` is reported, other
 * notifications are dropped (progress reaches the request's `onprogress`).
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
  type JSONRPCMessage,
  ListResourcesResultSchema,
  ListToolsResultSchema,
  ReadResourceResultSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolSpec } from "../mcp/types.ts";
import type { FastWire } from "./fast_call.ts";
import { answerFor, isServerRequest } from "./server_requests.ts";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { ProtocolError } from "@modelcontextprotocol/client";
import {
  unavailable,
  UpstreamFailure,
  UpstreamRedirected,
  UpstreamRefused,
  UpstreamTimeout,
  UpstreamTokenUnavailable,
  UpstreamTooLarge,
  UpstreamUnavailable,
} from "./errors.ts";

/** A progress notification of one request, as the upstream sent it. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options of one request. */
export interface RequestOptions {
  signal?: AbortSignal;
  /** Milliseconds before the client gives up (the SDK's own bound). */
  timeout: number;
  /** Receives the request's progress notifications (the client then asks for them). */
  onprogress?: (progress: Progress) => void;
}

/** One connected official client. */
export interface Session {
  revision: "2025-11-25" | "2026-07-28";
  serverInfo?: { name: string; version: string };
  page(params: { cursor?: string }, options: RequestOptions): Promise<unknown>;
  call(
    params: { name: string; arguments: JsonObject; _meta?: JsonObject },
    definition: ToolSpec | undefined,
    options: RequestOptions,
  ): Promise<unknown>;
  /** One page of `resources/list` (the v2 client walks every page without a cursor). */
  resources(params: { cursor?: string }, options: RequestOptions): Promise<unknown>;
  /** `resources/read` of one URI. */
  read(params: { uri: string }, options: RequestOptions): Promise<unknown>;
  /** A 2025-11-25 task request ({@link TaskMethod}); 2026-07-28 has none (`-32601`). */
  task(method: TaskMethod, params: JsonObject, options: RequestOptions): Promise<unknown>;
  close(): Promise<void>;
  onclose(fn: () => void): void;
  /** What the client puts on an HTTP request now (fast_call.ts); `undefined` over stdio. */
  wire(): FastWire | undefined;
}

/**
 * The requests of MCP 2025-11-25 "Tasks" weir sends: `tools/call` with
 * `params.task` (answered by a `CreateTaskResult`), `tasks/get`,
 * `tasks/result`, `tasks/cancel`.
 */
export type TaskMethod = "tools/call" | "tasks/get" | "tasks/result" | "tasks/cancel";

/** The result schema of each task request (the v1 SDK's). */
const TASK_RESULTS = {
  "tools/call": CreateTaskResultSchema,
  "tasks/get": GetTaskResultSchema,
  "tasks/result": GetTaskPayloadResultSchema,
  "tasks/cancel": CancelTaskResultSchema,
} as const;

/** What a session needs from the connection. */
export interface SessionParts {
  /** A transport for the v1 client (HTTP or the stdio child). */
  transport(): Transport;
  /** For HTTP upstreams: the URL and the `fetch` the v2 transport uses. */
  http?: { url: URL; fetch: typeof fetch };
  /** Called when the upstream says its tool list changed. */
  onToolsChanged(): void;
  /** Receives a transport error's message (kept to explain a closed connection). */
  onError(message: string): void;
  /** Options of the handshake request. */
  connect: RequestOptions;
  /**
   * Closing the session ends it at the MCP server too (`DELETE`, 2025-11-25
   * over HTTP): a caller's own session (`caller_sessions.ts`).
   */
  ends?: boolean;
}

const CLIENT_INFO = { name: "weir-serve-upstream", version: "0.1.0" };

/** What the v2 client puts on each 2026-07-28 request (its `_meta` envelope), for fast_call.ts. */
const MODERN_WIRE: FastWire = {
  revision: "2026-07-28",
  protocolVersion: "2026-07-28",
  meta: {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
  },
};

/** The v2 client's type of a tool definition handed to `callTool`. */
type ToolDefinition = NonNullable<Parameters<ModernClient["callTool"]>[1]>["toolDefinition"];

/**
 * The official v1 client, 2025-11-25 handshake.
 * @throws what the handshake threw (the client is closed)
 */
export async function legacySession(parts: SessionParts): Promise<Session> {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => parts.onToolsChanged());
  client.fallbackNotificationHandler = () => Promise.resolve();
  client.onerror = (error: Error) => parts.onError(error.message);
  const transport = parts.transport();
  try {
    await client.connect(transport, parts.connect);
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  answerRequests(transport, "2025-11-25");
  return {
    revision: "2025-11-25",
    serverInfo: client.getServerVersion(),
    page: (params, options) =>
      client.request({ method: "tools/list", params }, ListToolsResultSchema, options),
    call: (params, _definition, options) =>
      client.request({ method: "tools/call", params }, CallToolResultSchema, options),
    resources: (params, options) =>
      client.request({ method: "resources/list", params }, ListResourcesResultSchema, options),
    read: (params, options) =>
      client.request({ method: "resources/read", params }, ReadResourceResultSchema, options),
    task: (method, params, options) =>
      // deno-lint-ignore no-explicit-any
      client.request({ method, params } as any, TASK_RESULTS[method], options),
    close: async () => {
      if (parts.ends && transport instanceof StreamableHTTPClientTransport) {
        await transport.terminateSession().catch(() => {});
      }
      await client.close();
    },
    onclose: (fn) => client.onclose = fn,
    wire: () =>
      transport instanceof StreamableHTTPClientTransport
        ? {
          revision: "2025-11-25",
          protocolVersion: transport.protocolVersion ?? "2025-11-25",
          ...(transport.sessionId !== undefined ? { sessionId: transport.sessionId } : {}),
        }
        : undefined,
  };
}

/**
 * The official v2 client pinned to 2026-07-28 (stateless, per-request `_meta`).
 * @throws what the first request threw (the client is closed)
 */
export async function modernSession(parts: SessionParts): Promise<Session> {
  const client = new ModernClient(CLIENT_INFO, {
    capabilities: {},
    versionNegotiation: { mode: { pin: "2026-07-28" } },
    // An input_required answer fails the call; it is never fulfilled by re-sending it.
    inputRequired: { autoFulfill: false },
  });
  client.onerror = (error: Error) => parts.onError(error.message);
  const transport = parts.http
    ? new ModernHttpTransport(parts.http.url, { fetch: parts.http.fetch })
    : parts.transport();
  try {
    // deno-lint-ignore no-explicit-any
    await client.connect(transport as any, parts.connect);
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  answerRequests(transport as Transport, "2026-07-28");
  return {
    revision: "2026-07-28",
    serverInfo: client.getServerVersion(),
    // Without a cursor the v2 client walks every page itself.
    page: (params, options) =>
      params.cursor === undefined
        ? client.listTools(undefined, { ...options, cacheMode: "bypass" })
        : client.listTools(params, options),
    call: (params, definition, options) =>
      client.callTool(params, {
        ...options,
        // Always a definition: without one, the client would re-list and
        // re-send the call after an Mcp-Param header mismatch.
        toolDefinition: (definition ??
          { name: params.name, inputSchema: { type: "object" } }) as unknown as ToolDefinition,
      }),
    resources: (params, options) =>
      params.cursor === undefined
        ? client.listResources(undefined, { ...options, cacheMode: "bypass" })
        : client.listResources(params, options),
    read: (params, options) => client.readResource(params, { ...options, cacheMode: "bypass" }),
    task: () =>
      Promise.reject(
        new UpstreamRefused(
          -32601,
          "the MCP server speaks 2026-07-28, where tasks are an extension weir does not relay",
        ),
      ),
    close: () => client.close(),
    onclose: (fn) => client.onclose = fn,
    wire: () => parts.http ? MODERN_WIRE : undefined,
  };
}

/**
 * The upstream's own requests on a connected transport get weir's answer
 * (`server_requests.ts`) instead of reaching the client. Under 2026-07-28
 * over HTTP, `http_fetch.ts` has already failed the call a request came in.
 */
function answerRequests(transport: Transport, revision: "2025-11-25" | "2026-07-28"): void {
  const deliver = transport.onmessage?.bind(transport);
  transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
    if (!isServerRequest(message)) return deliver?.(message, extra as never);
    transport.send(answerFor(revision, message) as unknown as JSONRPCMessage).catch(() => {});
  };
}

/** Re-exported for the connection: the v1 HTTP transport over weir's `fetch`. */
export function legacyHttpTransport(url: URL, fetcher: typeof fetch): Transport {
  return new StreamableHTTPClientTransport(url, { fetch: fetcher });
}

/** The SDK's code for a request timeout (`ErrorCode.RequestTimeout`). */
const SDK_TIMEOUT = -32001;
/** The SDK's code for "connection closed" (`ErrorCode.ConnectionClosed`). */
const SDK_CLOSED = -32000;

/**
 * A request's failure as an official client threw it, typed by kind
 * (`errors.ts`). `before`: it failed before an answer (fetch, an HTTP status,
 * a dead child, an answer that is not MCP): the session must be replaced;
 * `closed`: the client said its connection closed.
 */
export function classifyFailure(
  error: unknown,
  timeoutMs: number,
): { failure: Error; before: boolean; closed: boolean } {
  if (error instanceof UpstreamFailure) return { failure: error, before: false, closed: false };
  const { code, message } = error as { code?: unknown; message?: string };
  const text = String(message ?? error);
  if (code === SDK_TIMEOUT || code === "REQUEST_TIMEOUT") {
    return { failure: new UpstreamTimeout(timeoutMs), before: false, closed: false };
  }
  const closed = (code === SDK_CLOSED && /closed/i.test(text)) ||
    code === "CONNECTION_CLOSED" || code === "NOT_CONNECTED" || code === "SEND_FAILED";
  if (
    !closed && typeof code === "number" &&
    (error instanceof McpError || error instanceof ProtocolError)
  ) {
    // The upstream answered the request with a JSON-RPC error.
    const failure = new UpstreamRefused(code, text.replace(/^MCP error -?\d+: /, ""));
    return { failure, before: false, closed };
  }
  if (code === "UNSUPPORTED_RESULT_TYPE" || /input_required/.test(text)) {
    const failure = new UpstreamRefused(
      0,
      "the upstream asked for input (input_required), which weir does not relay; " +
        "the call was sent once and not re-sent",
    );
    return { failure, before: false, closed };
  }
  return { failure: unavailable(error), before: true, closed };
}

/**
 * Open a session: the 2025-11-25 handshake, then (when that fails)
 * 2026-07-28; with `revision` (a reconnection), that revision only.
 * @throws {UpstreamFailure} what failed, typed by kind (both revisions' failures when they differ)
 */
export async function openSession(
  parts: SessionParts,
  revision: "2025-11-25" | "2026-07-28" | undefined,
): Promise<Session> {
  try {
    if (revision === "2026-07-28") return await modernSession(parts);
    try {
      return await legacySession(parts);
    } catch (legacyError) {
      // A redirect, an over-cap answer or weir's own token missing says nothing about the revision.
      if (
        revision === "2025-11-25" || legacyError instanceof UpstreamRedirected ||
        legacyError instanceof UpstreamTooLarge ||
        unavailable(legacyError) instanceof UpstreamTokenUnavailable
      ) throw legacyError;
      try {
        return await modernSession(parts);
      } catch (modernError) {
        const legacy = unavailable(legacyError);
        const modern = unavailable(modernError);
        // The same fact twice (nothing listening, a 401, a command not found) is said once.
        if (legacy.message === modern.message) throw legacy;
        throw new UpstreamUnavailable(
          `${legacy.message} (and as 2026-07-28: ${modern.message})`,
          { cause: legacyError },
        );
      }
    }
  } catch (error) {
    throw unavailable(error);
  }
}
