/**
 * One long-lived connection to an upstream MCP server, through the official
 * SDK clients: an HTTP server by URL (Streamable HTTP, JSON or SSE answers,
 * with or without a session) or a child process over stdio. The first
 * connection tries the 2025-11-25 handshake with the v1 client
 * (`@modelcontextprotocol/sdk`); when the upstream refuses it, 2026-07-28 with
 * the v2 client (`@modelcontextprotocol/client`, pinned to that revision).
 * Reconnections keep to the revision that worked.
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
import {
  exactCalls,
  type ExactCapture,
  exactResult,
  readEventStream,
  toolsCallId,
  withExactNumbers,
} from "./exact.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  Client as ModernClient,
  ProtocolError,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from "@modelcontextprotocol/client";
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
import { type McpUpstreamCall, upstreamTracing } from "../ops/trace_hooks.ts";

/** Where the upstream is. */
export type UpstreamTarget =
  | { kind: "http"; url: URL }
  | {
    kind: "stdio";
    command: string;
    args: readonly string[];
    /** Variables of weir's environment the child does not get (weir's own secrets). */
    withoutEnv?: readonly string[];
  };

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

/** One connected official client, whichever revision it speaks. */
interface Session {
  revision: "2025-11-25" | "2026-07-28";
  serverInfo?: { name: string; version: string };
  page(
    params: { cursor?: string },
    options: { signal?: AbortSignal; timeout: number },
  ): Promise<unknown>;
  call(
    params: { name: string; arguments: JsonObject },
    definition: ToolSpec | undefined,
    options: { signal?: AbortSignal; timeout: number },
  ): Promise<unknown>;
  close(): Promise<void>;
  onclose(fn: () => void): void;
}

/** See the module doc. */
export class UpstreamConnection {
  readonly #options: ConnectionOptions;
  #client?: Session;
  /** The last transport error (e.g. an over-long stdio line), to explain a closed connection. */
  #lastError?: string;
  /** The revision that worked first; reconnections keep to it. */
  #revision?: "2025-11-25" | "2026-07-28";
  #broken = true;
  #connecting?: Promise<void>;
  /** `serverInfo` of the upstream, once connected. */
  serverInfo?: { name: string; version: string };

  /** The protocol revision spoken to the upstream, once connected. */
  get revision(): string | undefined {
    return this.#revision;
  }

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

  /**
   * Connect anew (closing the old connection); concurrent callers share one
   * attempt. The first connection tries the 2025-11-25 handshake, then (when
   * that fails) 2026-07-28 with the official v2 client; later ones reuse the
   * revision that worked.
   */
  #reconnect(): Promise<void> {
    this.#connecting ??= (async () => {
      const old = this.#client;
      this.#client = undefined;
      this.#broken = true;
      if (old) await old.close().catch(() => {});
      let session: Session;
      if (this.#revision === "2026-07-28") session = await this.#modern();
      else {
        try {
          session = await this.#legacy();
        } catch (legacyError) {
          if (this.#revision === "2025-11-25") throw legacyError;
          try {
            session = await this.#modern();
          } catch (modernError) {
            throw new UpstreamUnavailable(
              `${(legacyError as Error).message} (and as 2026-07-28: ` +
                `${(modernError as Error).message})`,
              { cause: legacyError },
            );
          }
        }
      }
      this.#revision = session.revision;
      this.#lastError = undefined;
      session.onclose(() => {
        if (this.#client === session) this.#broken = true;
      });
      this.serverInfo = session.serverInfo;
      this.#client = session;
      this.#broken = false;
    })().finally(() => this.#connecting = undefined);
    return this.#connecting;
  }

  /** The official v1 client, 2025-11-25 handshake. */
  async #legacy(): Promise<Session> {
    const client = new Client({ name: "weir-serve-upstream", version: "0.1.0" }, {
      capabilities: {},
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#options.onToolsChanged?.();
    });
    client.fallbackNotificationHandler = () => Promise.resolve();
    client.onerror = (error: Error) => this.#lastError = error.message;
    try {
      await client.connect(this.#transport(), this.#requestOptions());
    } catch (error) {
      await client.close().catch(() => {});
      throw unavailable(error);
    }
    return {
      revision: "2025-11-25",
      serverInfo: client.getServerVersion(),
      page: (params, options) =>
        client.request({ method: "tools/list", params }, ListToolsResultSchema, options),
      call: (params, _definition, options) =>
        client.request({ method: "tools/call", params }, CallToolResultSchema, options),
      close: () => client.close(),
      onclose: (fn) => client.onclose = fn,
    };
  }

  /** The official v2 client pinned to 2026-07-28 (stateless, per-request `_meta`). */
  async #modern(): Promise<Session> {
    const client = new ModernClient({ name: "weir-serve-upstream", version: "0.1.0" }, {
      capabilities: {},
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    });
    const transport = this.#options.target.kind === "http"
      ? new ModernHttpTransport(this.#options.target.url, { fetch: this.#fetch() })
      : this.#transport();
    try {
      // deno-lint-ignore no-explicit-any
      await client.connect(transport as any, this.#requestOptions());
    } catch (error) {
      await client.close().catch(() => {});
      throw unavailable(error);
    }
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
          // deno-lint-ignore no-explicit-any
          ...(definition ? { toolDefinition: definition as any } : {}),
        }),
      close: () => client.close(),
      onclose: (fn) => client.onclose = fn,
    };
  }

  #transport(): Transport {
    const { target, maxResponseBytes } = this.#options;
    if (target.kind === "stdio") {
      return new ChildStdioTransport({ ...target, maxLineBytes: maxResponseBytes });
    }
    return new StreamableHTTPClientTransport(target.url, { fetch: this.#fetch() });
  }

  /** What a CLIENT span says about a request to this upstream (no URL, no path, no argument). */
  #traced(method: string, tool?: string): McpUpstreamCall {
    const { target } = this.#options;
    return target.kind === "stdio"
      ? { method, tool, transport: "pipe" }
      : { method, tool, transport: "tcp", host: target.url.host };
  }

  /**
   * `fetch` with the header templates resolved now, the span's `traceparent`
   * when telemetry is on, and the answer size capped.
   */
  #fetch(): typeof fetch {
    const { headers, maxResponseBytes } = this.#options;
    return async (input, init) => {
      const merged = new Headers(init?.headers);
      if (headers) { for (const [k, v] of Object.entries(headers())) merged.set(k, v); }
      upstreamTracing()?.inject(merged);
      const response = capBody(await fetch(input, { ...init, headers: merged }), maxResponseBytes);
      return keepExact(response, init?.body);
    };
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

  async #ready(): Promise<Session> {
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
        const send = () =>
          this.#scoped(signal, (own) => client.page(params, this.#requestOptions(own)));
        const tracing = upstreamTracing();
        result = await (tracing ? tracing.mcp(this.#traced("tools/list"), send) : send()) as {
          tools: unknown[];
          nextCursor?: string;
        };
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
    definition?: ToolSpec,
  ): Promise<CallToolResult> {
    const client = await this.#ready();
    try {
      // The transports keep the answer's exact numbers for this call (src/mcp_upstream/exact.ts).
      const capture: ExactCapture = {};
      const send = () =>
        this.#scoped(
          signal,
          (own) => client.call({ name, arguments: args }, definition, this.#requestOptions(own)),
        );
      // A CLIENT span when telemetry is on (src/ops/trace_hooks.ts); nothing more when off.
      const tracing = upstreamTracing();
      const result = await exactCalls.run(
        capture,
        tracing ? () => tracing.mcp(this.#traced("tools/call", name), send) : send,
      );
      if (capture.read) {
        // The event stream's copy trails the client's by a moment at most.
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([capture.read, new Promise((r) => timer = setTimeout(r, 200))]);
        clearTimeout(timer);
      }
      return withExactNumbers(result as unknown as CallToolResult, capture);
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      throw this.#classify(error, client);
    }
  }

  #classify(error: unknown, client: Session): Error {
    const { code, message } = error as { code?: unknown; message?: string };
    const text = String(message ?? error);
    if (code === SDK_TIMEOUT || code === "REQUEST_TIMEOUT") {
      return new UpstreamTimeout(this.#options.requestTimeoutMs);
    }
    const closed = (code === SDK_CLOSED && /closed/i.test(text)) ||
      code === "CONNECTION_CLOSED" || code === "NOT_CONNECTED" || code === "SEND_FAILED";
    if (
      !closed && typeof code === "number" &&
      (error instanceof McpError || error instanceof ProtocolError)
    ) {
      // The upstream answered the request with a JSON-RPC error.
      return new UpstreamRefused(code, text.replace(/^MCP error -?\d+: /, ""));
    }
    // Anything else failed before an answer: fetch, an HTTP status, a dead
    // child, an answer that is not valid MCP. The next request reconnects.
    if (this.#client === client) this.#broken = true;
    const why = this.#lastError;
    this.#lastError = undefined;
    if (closed && why && /longer than/.test(why)) return new UpstreamUnavailable(why);
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
  return new UpstreamUnavailable(conciseMessage(message), { cause: error });
}

/**
 * The official clients reject an answer that is not MCP (say, a URL that
 * serves some other JSON API) with a schema error whose message is the whole
 * list of schema issues as indented JSON: hundreds of lines for one answer.
 * Each such list inside `message` becomes one line naming the first few
 * distinct `path: message` issues; any other text is kept as it is.
 * @param message an error message, possibly holding such a list
 * @returns the message with every issue list summarized
 */
export function conciseMessage(message: string): string {
  let out = "";
  let rest = message;
  for (let guard = 0; guard < 8; guard++) {
    const start = rest.search(/\[\s*\{\s*"(?:code|expected|path|message)"/);
    if (start < 0) break;
    const end = closingBracket(rest, start);
    if (end < 0) break;
    let issues: unknown;
    try {
      issues = JSON.parse(rest.slice(start, end + 1));
    } catch {
      break;
    }
    const found: string[] = [];
    collectIssues(issues, found);
    const shown = [...new Set(found)].slice(0, 3);
    out += rest.slice(0, start) +
      `the answer is not a valid MCP message (${shown.join("; ") || "schema mismatch"}` +
      `${new Set(found).size > shown.length ? "; ..." : ""})`;
    rest = rest.slice(end + 1);
  }
  return out + rest;
}

/** The index of the `]` closing the `[` at `start` (JSON strings skipped), or -1. */
function closingBracket(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") {
      depth--;
      if (depth === 0) return c === "]" ? i : -1;
    }
  }
  return -1;
}

/** Leaf issues as `path: message` (a union's branches are walked in order). */
function collectIssues(value: unknown, into: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) collectIssues(item, into);
    return;
  }
  if (!value || typeof value !== "object") return;
  const issue = value as { path?: unknown; message?: unknown; errors?: unknown };
  if (Array.isArray(issue.errors) && issue.errors.length > 0) {
    collectIssues(issue.errors, into);
    return;
  }
  if (typeof issue.message !== "string") return;
  const path = Array.isArray(issue.path) && issue.path.length > 0
    ? `${issue.path.join(".")}: `
    : "";
  into.push(`${path}${issue.message.slice(0, 120)}`);
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
/**
 * For a `tools/call` made inside {@link exactCalls}: read the answer's exact
 * `result` beside the client (a JSON body is read here and handed on as the
 * same text; an event stream is teed and read as the client reads it).
 */
async function keepExact(response: Response, body: unknown): Promise<Response> {
  const capture = exactCalls.getStore();
  if (!capture || !response.body || typeof body !== "string") return response;
  let id: string | number | undefined;
  try {
    id = toolsCallId(JSON.parse(body));
  } catch {
    return response;
  }
  if (id === undefined) return response;
  capture.id = id;
  const type = response.headers.get("content-type") ?? "";
  const init = {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  };
  if (type.startsWith("application/json")) {
    const text = await response.text();
    capture.result = exactResult(text, id);
    return new Response(text, init);
  }
  if (type.startsWith("text/event-stream")) {
    const [client, mine] = response.body.tee();
    capture.read = readEventStream(mine, capture);
    return new Response(client, init);
  }
  return response;
}

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
