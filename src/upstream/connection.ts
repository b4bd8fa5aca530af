/**
 * One long-lived connection to an upstream MCP server, through the official
 * SDK client (`@modelcontextprotocol/sdk` v1 `Client`, protocol 2025-11-25 and
 * earlier): an HTTP server by URL (Streamable HTTP, JSON or SSE answers, with
 * or without a session) or a child process over stdio.
 *
 * - {@link UpstreamConnection.open} connects, retrying every second (backoff
 *   doubling to at most 5 s) until `connectTimeoutMs` has passed.
 * - {@link UpstreamConnection.listTools} reads every page of `tools/list`.
 *   A connection failure (not an error the upstream answered) reconnects once
 *   and lists again: listing has no effect upstream.
 * - {@link UpstreamConnection.callTool} sends one `tools/call`. A call is never
 *   sent twice: when the connection breaks while it is in flight the call
 *   fails, and the next request reconnects first. The caller's signal and the
 *   request timeout both abort it, and the SDK then sends
 *   `notifications/cancelled` to the upstream.
 *
 * What the upstream may send weir, and what weir does with it: requests
 * (sampling, elicitation, roots) are refused with "Method not found", as the
 * client declares no capabilities; `notifications/tools/list_changed` is
 * reported to `onToolsChanged` (never relayed); every other notification
 * (logging, progress, resource updates) is dropped.
 *
 * HTTP: header templates are resolved at every request (including the
 * initialize, the drift checks and the standalone SSE stream); answers larger
 * than `maxResponseBytes` are cut off and fail the request.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ListToolsResultSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { CallToolResult, ToolSpec } from "../mcp/types.ts";
import { ChildStdioTransport } from "./stdio_child.ts";

/** Where the upstream is. */
export type UpstreamTarget =
  | { kind: "http"; url: URL }
  | { kind: "stdio"; command: string; args: readonly string[] };

/** Options of {@link UpstreamConnection.open}. */
export interface ConnectionOptions {
  target: UpstreamTarget;
  /** Headers for one HTTP request, resolved now; throws to refuse the request. */
  headers?: () => Record<string, string>;
  /** Bound on each upstream request, in ms (0: none). */
  requestTimeoutMs: number;
  /** Largest answer accepted, in bytes (HTTP body or stdio line). */
  maxResponseBytes: number;
  /** How long to keep retrying the first connect, in ms (0: one attempt). */
  connectTimeoutMs: number;
  /** Called when the upstream says its tool list changed. */
  onToolsChanged?: () => void;
  /** Called with each connection failure while retrying (message only). */
  onRetry?: (error: Error, attempt: number) => void;
  /** Abort to stop retrying. */
  signal?: AbortSignal;
}

/** The connection broke (or could not be made): not an answer from the upstream. */
export class UpstreamUnavailable extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UpstreamUnavailable";
  }
}

/** The upstream answered a request with a JSON-RPC error. */
export class UpstreamRefused extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "UpstreamRefused";
    this.code = code;
  }
}

/** The request timeout passed before the upstream answered. */
export class UpstreamTimeout extends Error {
  constructor(ms: number) {
    super(`the upstream did not answer within ${ms} ms`);
    this.name = "UpstreamTimeout";
  }
}

const MAX_PAGES = 1000;
/** The SDK's code for a request timeout (`ErrorCode.RequestTimeout`). */
const SDK_TIMEOUT = -32001;
/** The SDK's code for "connection closed" (`ErrorCode.ConnectionClosed`). */
const SDK_CLOSED = -32000;

/** See the module doc. */
export class UpstreamConnection {
  readonly #options: ConnectionOptions;
  #client?: Client;
  #broken = true;
  #connecting?: Promise<void>;
  /** `serverInfo` of the upstream, once connected. */
  serverInfo?: { name: string; version: string };

  private constructor(options: ConnectionOptions) {
    this.#options = options;
  }

  /**
   * Connect, retrying until `connectTimeoutMs` has passed.
   * @throws {UpstreamUnavailable} with the last failure, once the time is up
   */
  static async open(options: ConnectionOptions): Promise<UpstreamConnection> {
    const connection = new UpstreamConnection(options);
    const deadline = Date.now() + Math.max(0, options.connectTimeoutMs);
    let wait = 1000;
    for (let attempt = 1;; attempt++) {
      try {
        await connection.#reconnect();
        return connection;
      } catch (error) {
        const err = error as Error;
        const left = deadline - Date.now();
        if (left <= 0 || options.signal?.aborted) {
          throw new UpstreamUnavailable(
            options.connectTimeoutMs > 0
              ? `could not connect: timed out after ${options.connectTimeoutMs} ms ` +
                `(${attempt} attempts); last error: ${err.message}`
              : `could not connect: ${err.message}`,
            { cause: error },
          );
        }
        options.onRetry?.(err, attempt);
        await sleep(Math.min(wait, left), options.signal);
        wait = Math.min(wait * 2, 5000);
      }
    }
  }

  /** Connect anew (closing the old connection); concurrent callers share one attempt. */
  #reconnect(): Promise<void> {
    this.#connecting ??= (async () => {
      const old = this.#client;
      this.#client = undefined;
      this.#broken = true;
      if (old) await old.close().catch(() => {});
      const client = new Client({ name: "weir-serve-upstream", version: "0.1.0" }, {
        capabilities: {},
      });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        this.#options.onToolsChanged?.();
      });
      client.fallbackNotificationHandler = () => Promise.resolve();
      const transport = this.#transport();
      try {
        await client.connect(transport, this.#requestOptions());
      } catch (error) {
        await client.close().catch(() => {});
        throw unavailable(error);
      }
      client.onclose = () => {
        if (this.#client === client) this.#broken = true;
      };
      this.serverInfo = client.getServerVersion();
      this.#client = client;
      this.#broken = false;
    })().finally(() => this.#connecting = undefined);
    return this.#connecting;
  }

  #transport(): Transport {
    const { target, maxResponseBytes } = this.#options;
    if (target.kind === "stdio") {
      return new ChildStdioTransport({ ...target, maxLineBytes: maxResponseBytes });
    }
    const headers = this.#options.headers;
    const capped: typeof fetch = async (input, init) => {
      const merged = new Headers(init?.headers);
      if (headers) { for (const [k, v] of Object.entries(headers())) merged.set(k, v); }
      const response = await fetch(input, { ...init, headers: merged });
      return capBody(response, maxResponseBytes);
    };
    return new StreamableHTTPClientTransport(target.url, { fetch: capped });
  }

  #requestOptions(signal?: AbortSignal) {
    const ms = this.#options.requestTimeoutMs;
    // The SDK's default is 60 s; "0 disables" means no bound at all.
    return { signal, timeout: ms > 0 ? ms : 2 ** 31 - 1 };
  }

  /**
   * Run one SDK request with a signal of its own that follows `signal` only
   * while the request runs. (The SDK keeps its abort listener after a request
   * completes, so a caller's signal shared by two requests would later send
   * `notifications/cancelled` for the finished one too.)
   */
  async #scoped<T>(signal: AbortSignal | undefined, run: (s?: AbortSignal) => Promise<T>) {
    if (!signal) return await run(undefined);
    const own = new AbortController();
    const follow = () => own.abort(signal.reason);
    if (signal.aborted) follow();
    signal.addEventListener("abort", follow, { once: true });
    try {
      return await run(own.signal);
    } finally {
      signal.removeEventListener("abort", follow);
    }
  }

  async #ready(): Promise<Client> {
    if (this.#broken || !this.#client) await this.#reconnect();
    return this.#client!;
  }

  /**
   * Every tool the upstream lists, through all pages.
   * @throws {UpstreamUnavailable} when even a fresh connection cannot list
   * @throws {UpstreamRefused} when the upstream answers with an error
   * @throws {UpstreamTimeout}
   */
  async listTools(signal?: AbortSignal): Promise<ToolSpec[]> {
    try {
      return await this.#listOnce(signal);
    } catch (error) {
      if (!(error instanceof UpstreamUnavailable) || signal?.aborted) throw error;
      this.#broken = true;
      return await this.#listOnce(signal);
    }
  }

  async #listOnce(signal?: AbortSignal): Promise<ToolSpec[]> {
    const client = await this.#ready();
    const tools: ToolSpec[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      let result: { tools: unknown[]; nextCursor?: string };
      try {
        const params = cursor === undefined ? {} : { cursor };
        result = await this.#scoped(signal, (own) =>
          client.request(
            { method: "tools/list", params },
            ListToolsResultSchema,
            this.#requestOptions(own),
          )) as { tools: unknown[]; nextCursor?: string };
      } catch (error) {
        throw this.#classify(error, client);
      }
      tools.push(...(result.tools as unknown as ToolSpec[]));
      cursor = result.nextCursor;
      if (cursor === undefined) return tools;
      if (cursors.has(cursor)) {
        throw new UpstreamRefused(0, "the upstream's tools/list repeats a cursor (a loop)");
      }
      cursors.add(cursor);
    }
    throw new UpstreamRefused(0, `the upstream's tools/list has more than ${MAX_PAGES} pages`);
  }

  /**
   * Call one tool once (never replayed).
   * @throws {UpstreamUnavailable} the connection broke: the call may or may not have run
   * @throws {UpstreamRefused} the upstream answered with a JSON-RPC error
   * @throws {UpstreamTimeout}
   * @throws the signal's reason when the caller cancelled
   */
  async callTool(
    name: string,
    args: JsonObject,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const client = await this.#ready();
    try {
      const result = await this.#scoped(signal, (own) =>
        client.request(
          { method: "tools/call", params: { name, arguments: args } },
          CallToolResultSchema,
          this.#requestOptions(own),
        ));
      return result as unknown as CallToolResult;
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      throw this.#classify(error, client);
    }
  }

  #classify(error: unknown, client: Client): Error {
    if (error instanceof McpError) {
      const { code, message } = error as unknown as { code: number; message: string };
      if (code === SDK_TIMEOUT) return new UpstreamTimeout(this.#options.requestTimeoutMs);
      if (code === SDK_CLOSED && this.#client !== client) return unavailable(error);
      if (code === SDK_CLOSED && /closed/i.test(message)) {
        this.#broken = true;
        return unavailable(error);
      }
      return new UpstreamRefused(code, message.replace(/^MCP error -?\d+: /, ""));
    }
    // Anything else failed before an answer: fetch, HTTP status, a dead child,
    // an answer that is not valid MCP.
    this.#broken = true;
    return unavailable(error);
  }

  /** Close the connection (and stop a stdio child). */
  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#broken = true;
    await client?.close().catch(() => {});
  }
}

function unavailable(error: unknown): UpstreamUnavailable {
  if (error instanceof UpstreamUnavailable) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new UpstreamUnavailable(message, { cause: error });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** A response whose body errors once more than `max` bytes have been read. */
function capBody(response: Response, max: number): Response {
  if (!response.body) return response;
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (declared > max) {
    response.body.cancel().catch(() => {});
    throw new Error(`the upstream's answer is ${declared} bytes, over the ${max}-byte cap`);
  }
  let seen = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.length;
        if (seen > max) {
          controller.error(new Error(`the upstream's answer is over the ${max}-byte cap`));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
