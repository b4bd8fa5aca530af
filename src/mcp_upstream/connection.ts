/**
 * One long-lived connection to an upstream MCP server, through the official
 * SDK clients (`sessions.ts`): an HTTP server by URL (Streamable HTTP, JSON
 * or SSE answers, with or without a session) or a child process over stdio
 * (`stdio_child.ts`). The first connection tries the 2025-11-25 handshake;
 * when the upstream refuses it, 2026-07-28. Reconnections keep to the
 * revision that worked.
 *
 * - {@link UpstreamConnection.open} connects, retrying every second (backoff
 *   doubling to at most 5 s) until `connectTimeoutMs` has passed.
 * - {@link UpstreamConnection.listTools} reads every page of `tools/list`.
 *   A connection failure before an answer reconnects once and lists again:
 *   listing has no effect upstream.
 * - {@link UpstreamConnection.callTool} sends one `tools/call`, at most once:
 *   when the connection breaks while it is in flight the call fails (the
 *   next request reconnects first, before sending anything). The caller's
 *   signal and the request timeout both abort it, and the client then sends
 *   `notifications/cancelled` to the upstream. Over HTTP, a call whose caller
 *   asked for no progress takes the short path (`fast_call.ts`: weir's own
 *   HTTP/1.1 client, with what the session's client would send).
 * - A reconnect never fails the other requests in flight on an HTTP
 *   upstream: each is its own HTTP exchange, so the replaced client is
 *   closed only once its own requests have settled (one request failing,
 *   a 500, an answer over the cap, a connection closed after reading, must
 *   not turn calls the upstream is running into "may or may not have run"
 *   failures a caller would send again). A stdio child is one stream: it is
 *   stopped at once, failing what was in flight on it.
 *
 * Every request runs in its own {@link RequestScope}, through which the
 * transport fails it at once on a redirect, an answer over the cap or a
 * stream cut off (`http_fetch.ts`), and keeps the answer's exact numbers
 * (`exact.ts`). Failures are typed by kind (`errors.ts`).
 *
 * What the upstream may send weir, and what weir does with it: its own
 * requests (sampling, elicitation, roots, ping...) are answered at once, or
 * under 2026-07-28 fail the call they came with (`server_requests.ts`);
 * `notifications/tools/list_changed` is reported to `onToolsChanged`;
 * `notifications/progress` of a call reaches that call's `onProgress`;
 * every other notification (logging, resource updates) is dropped. Of the
 * answer's `_meta`, the keys of the protocol hop itself
 * (`io.modelcontextprotocol/...`, which carry the upstream's `serverInfo`)
 * and the result's `resultType`, `ttlMs` and `cacheScope` are dropped: they
 * describe the upstream, not the tool's result.
 *
 * @module
 */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { ProtocolError } from "@modelcontextprotocol/client";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { CallToolResult, ResourceContents, ResourceSpec, ToolSpec } from "../mcp/types.ts";
import { type McpUpstreamCall, upstreamTracing } from "../ops/trace_hooks.ts";
import { ChildStdioTransport } from "./stdio_child.ts";
import {
  operatorMessage,
  unavailable,
  UpstreamFailure,
  UpstreamRedirected,
  UpstreamRefused,
  UpstreamTimeout,
  UpstreamTooLarge,
  UpstreamUnavailable,
} from "./errors.ts";
import { withExactNumbers } from "./exact.ts";
import { traceContext, withoutHop } from "./hop.ts";
import { upstreamFetch } from "./http_fetch.ts";
import {
  asksForParamHeaders,
  fastCall,
  type FastWire,
  sendAnswer,
  sendCancelled,
  shortPathAllowed,
} from "./fast_call.ts";
import { Http1Client } from "../outbound/http1_client.ts";
import { pause } from "../outbound/deadline.ts";
import { RequestScope, requestScopes } from "./scope.ts";
import {
  legacyHttpTransport,
  legacySession,
  modernSession,
  type Progress,
  type RequestOptions,
  type Session,
  type SessionParts,
  type TaskMethod,
} from "./sessions.ts";

export * from "./errors.ts";
export type { Progress, TaskMethod } from "./sessions.ts";

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
  /** Largest answer accepted, in bytes (HTTP body, a request's event stream, a stdio line). */
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

/** Options of {@link UpstreamConnection.callTool}. */
export interface CallOptions {
  /** The caller's cancellation. */
  signal?: AbortSignal;
  /** The definition weir serves for the tool (the v2 client's `toolDefinition`). */
  definition?: ToolSpec;
  /** Receives the call's progress notifications; asking for them sets a progress token. */
  onProgress?: (progress: Progress) => void;
  /** This call's own header fields over the connection's (lower case; a caller's exchanged token). */
  headers?: Readonly<Record<string, string>>;
}

const MAX_PAGES = 1000;
/** The SDK's code for a request timeout (`ErrorCode.RequestTimeout`). */
const SDK_TIMEOUT = -32001;
/** The SDK's code for "connection closed" (`ErrorCode.ConnectionClosed`). */
const SDK_CLOSED = -32000;

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
  /** Requests in flight per client (see the module doc: a replaced HTTP client drains). */
  readonly #inFlight = new Map<Session, number>();
  /** Replaced clients that close once their requests in flight have settled. */
  readonly #retired = new Set<Session>();
  /** The short path's HTTP/1.1 client (its own kept-alive connections), once used. */
  #http?: Http1Client;
  /** JSON-RPC ids of short-path calls: apart from the official client's own (which count from 0). */
  #nextId = 2 ** 31;
  /** `serverInfo` of the upstream, once connected (logged at start, never relayed). */
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
          // Said to the operator (start-up, lint-upstream): a redirect names its target.
          const said = operatorMessage(err);
          throw new UpstreamUnavailable(
            options.connectTimeoutMs > 0
              ? `could not connect: timed out after ${options.connectTimeoutMs} ms ` +
                `(${attempt} attempts); last error: ${said}`
              : `could not connect: ${said}`,
            { cause: error },
          );
        }
        options.onRetry?.(err, attempt);
        await pause(Math.min(wait, left), options.signal);
        wait = Math.min(wait * 2, 5000);
      }
    }
  }

  /**
   * Connect anew (closing the old connection); concurrent callers share one
   * attempt. The first connection tries the 2025-11-25 handshake, then (when
   * that fails) 2026-07-28; later ones reuse the revision that worked.
   */
  #reconnect(): Promise<void> {
    this.#connecting ??= (async () => {
      const old = this.#client;
      this.#client = undefined;
      this.#broken = true;
      if (old) await this.#retire(old);
      const parts = this.#sessionParts();
      let session: Session;
      try {
        if (this.#revision === "2026-07-28") session = await modernSession(parts);
        else {
          try {
            session = await legacySession(parts);
          } catch (legacyError) {
            // A redirect or an over-cap answer says nothing about the revision.
            if (
              this.#revision === "2025-11-25" || legacyError instanceof UpstreamRedirected ||
              legacyError instanceof UpstreamTooLarge
            ) throw legacyError;
            try {
              session = await modernSession(parts);
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
        }
      } catch (error) {
        throw unavailable(error);
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

  /**
   * Close a replaced client: a stdio child at once; an HTTP client once the
   * requests it is carrying have settled (they are separate HTTP exchanges,
   * which closing it would abort).
   */
  async #retire(old: Session): Promise<void> {
    if (this.#options.target.kind === "http" && (this.#inFlight.get(old) ?? 0) > 0) {
      this.#retired.add(old);
      return;
    }
    await old.close().catch(() => {});
  }

  #sessionParts(): SessionParts {
    const { target, maxResponseBytes, headers } = this.#options;
    const fetcher = target.kind === "http"
      ? upstreamFetch({ headers, maxResponseBytes })
      : undefined;
    const transport = (): Transport =>
      target.kind === "stdio"
        ? new ChildStdioTransport({ ...target, maxLineBytes: maxResponseBytes })
        : legacyHttpTransport(target.url, fetcher!);
    return {
      transport,
      http: target.kind === "http" ? { url: target.url, fetch: fetcher! } : undefined,
      onToolsChanged: () => this.#options.onToolsChanged?.(),
      onError: (message) => this.#lastError = message,
      connect: this.#requestOptions(),
    };
  }

  /** What a CLIENT span says about a request to this upstream (no URL, no path, no argument). */
  #traced(method: string, tool?: string): McpUpstreamCall {
    const { target } = this.#options;
    return target.kind === "stdio"
      ? { method, tool, transport: "pipe" }
      : { method, tool, transport: "tcp", host: target.url.host };
  }

  #requestOptions(signal?: AbortSignal): RequestOptions {
    const ms = this.#options.requestTimeoutMs;
    // The SDK's default is 60 s; "0 disables" means no bound at all.
    return { signal, timeout: ms > 0 ? ms : 2 ** 31 - 1 };
  }

  /**
   * Run one request of `client` in a scope of its own (see the module doc),
   * with a CLIENT span when telemetry is on.
   * @throws the request's failure, typed by kind; the caller's abort reason when it cancelled
   */
  async #send<T>(
    client: Session,
    method: string,
    signal: AbortSignal | undefined,
    tool: string | undefined,
    run: (scope: RequestScope) => Promise<T>,
  ): Promise<{ value: T; scope: RequestScope }> {
    const scope = new RequestScope(method, signal);
    this.#inFlight.set(client, (this.#inFlight.get(client) ?? 0) + 1);
    try {
      const send = () => requestScopes.run(scope, () => run(scope));
      const tracing = upstreamTracing();
      const value = await (tracing ? tracing.mcp(this.#traced(method, tool), send) : send());
      return { value, scope };
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      if (scope.failure) {
        // The transport failed it: the connection may hold the rest of that answer.
        if (this.#client === client) this.#broken = true;
        throw scope.failure;
      }
      throw this.#classify(error, client);
    } finally {
      scope.finish();
      const left = (this.#inFlight.get(client) ?? 1) - 1;
      if (left > 0) this.#inFlight.set(client, left);
      else {
        this.#inFlight.delete(client);
        if (this.#retired.delete(client)) void client.close().catch(() => {});
      }
    }
  }

  async #ready(): Promise<Session> {
    if (this.#broken || !this.#client) await this.#reconnect();
    return this.#client!;
  }

  /**
   * Every tool the upstream lists, through all pages.
   * @throws {UpstreamFailure} typed by kind (a fresh connection is tried once first
   *   when the connection was unavailable)
   */
  async listTools(signal?: AbortSignal): Promise<ToolSpec[]> {
    return (await this.listToolsWithTtl(signal)).tools;
  }

  /**
   * Every tool the upstream lists, with the first page's 2026-07-28 `ttlMs`
   * (how long the upstream says the list may be reused; absent under
   * 2025-11-25).
   * @throws {UpstreamFailure} as {@link UpstreamConnection.listTools}
   */
  async listToolsWithTtl(signal?: AbortSignal): Promise<{ tools: ToolSpec[]; ttlMs?: number }> {
    try {
      return await this.#listOnce(signal);
    } catch (error) {
      if (!(error instanceof UpstreamUnavailable) || signal?.aborted) throw error;
      this.#broken = true;
      return await this.#listOnce(signal);
    }
  }

  async #listOnce(signal?: AbortSignal): Promise<{ tools: ToolSpec[]; ttlMs?: number }> {
    const client = await this.#ready();
    let ttlMs: number | undefined;
    const tools: ToolSpec[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params = cursor === undefined ? {} : { cursor };
      const { value } = await this.#send(
        client,
        "tools/list",
        signal,
        undefined,
        (scope) => client.page(params, this.#requestOptions(scope.signal)),
      );
      const result = value as { tools: unknown[]; nextCursor?: string; ttlMs?: unknown };
      if (page === 0 && typeof result.ttlMs === "number" && result.ttlMs >= 0) ttlMs = result.ttlMs;
      tools.push(...(result.tools as unknown as ToolSpec[]));
      cursor = result.nextCursor;
      if (cursor === undefined) return { tools, ttlMs };
      if (cursors.has(cursor)) {
        throw new UpstreamRefused(0, "the upstream's tools/list repeats a cursor (a loop)");
      }
      cursors.add(cursor);
    }
    throw new UpstreamRefused(0, `the upstream's tools/list has more than ${MAX_PAGES} pages`);
  }

  /**
   * Every resource the upstream lists, through all pages; none when it
   * offers no resources (`Method not found`).
   * @throws {UpstreamFailure} typed by kind
   */
  async listResources(signal?: AbortSignal): Promise<ResourceSpec[]> {
    const client = await this.#ready();
    const resources: ResourceSpec[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params = cursor === undefined ? {} : { cursor };
      let value: unknown;
      try {
        ({ value } = await this.#send(
          client,
          "resources/list",
          signal,
          undefined,
          (scope) => client.resources(params, this.#requestOptions(scope.signal)),
        ));
      } catch (error) {
        if (error instanceof UpstreamRefused && error.rpcCode === -32601) return [];
        throw error;
      }
      const result = value as { resources?: unknown[]; nextCursor?: string };
      resources.push(...((result.resources ?? []) as unknown as ResourceSpec[]));
      cursor = result.nextCursor;
      if (cursor === undefined) return resources;
      if (cursors.has(cursor)) {
        throw new UpstreamRefused(0, "the upstream's resources/list repeats a cursor (a loop)");
      }
      cursors.add(cursor);
    }
    throw new UpstreamRefused(0, `the upstream's resources/list has more than ${MAX_PAGES} pages`);
  }

  /**
   * Read one resource of the upstream (`resources/read`), once.
   * @returns its `contents` as the upstream sent them
   * @throws {UpstreamFailure} typed by kind (`UpstreamRefused` when the upstream refused)
   */
  async readResource(uri: string, signal?: AbortSignal): Promise<ResourceContents[]> {
    const client = await this.#ready();
    const { value } = await this.#send(
      client,
      "resources/read",
      signal,
      undefined,
      (scope) => client.read({ uri }, this.#requestOptions(scope.signal)),
    );
    const contents = (value as { contents?: unknown }).contents;
    return Array.isArray(contents) ? contents as ResourceContents[] : [];
  }

  /**
   * One request of MCP 2025-11-25 "Tasks" ({@link TaskMethod}), sent once (`tasks/result` waits
   * at most the request timeout). @throws {UpstreamRefused} `-32601` from a 2026-07-28 upstream
   */
  async task(method: TaskMethod, params: JsonObject, opts: CallOptions = {}): Promise<JsonObject> {
    const client = await this.#ready();
    const name = method === "tools/call" ? String(params.name) : undefined;
    const { value } = await this.#send(client, method, opts.signal, name, (scope) => {
      scope.headers = opts.headers;
      return client.task(method, params, this.#requestOptions(scope.signal));
    });
    return value as JsonObject;
  }

  /**
   * Call one tool once (never re-sent).
   * @param args sent as they are (`JSON.rawJSON` numbers keep their spelling)
   * @throws {UpstreamFailure} typed by kind: unavailable (the call may or may
   *   not have run), cut off, redirected, too large, timed out, refused
   * @throws the signal's reason when the caller cancelled
   */
  async callTool(
    name: string,
    args: JsonObject,
    options: CallOptions = {},
  ): Promise<CallToolResult> {
    const client = await this.#ready();
    const wire = this.#shortWire(client, options);
    if (wire) return withoutHop(await this.#shortCall(client, wire, name, args, options));
    const { value, scope } = await this.#send(
      client,
      "tools/call",
      options.signal,
      name,
      (scope) => {
        scope.headers = options.headers;
        const params: { name: string; arguments: JsonObject; _meta?: JsonObject } = {
          name,
          arguments: args,
        };
        // W3C trace context in params._meta as well as headers (inside the span).
        const meta = traceContext();
        if (meta) params._meta = meta;
        return client.call(params, options.definition, {
          ...this.#requestOptions(scope.signal),
          ...(options.onProgress ? { onprogress: options.onProgress } : {}),
        });
      },
    );
    return withoutHop(withExactNumbers(value as unknown as CallToolResult, scope.result));
  }

  /** The session's wire when this call may take the short path (`fast_call.ts`). */
  #shortWire(client: Session, options: CallOptions): FastWire | undefined {
    if (this.#options.target.kind !== "http" || options.onProgress) return undefined;
    if (asksForParamHeaders(options.definition) || !shortPathAllowed()) return undefined;
    return client.wire();
  }

  /** One `tools/call` on the short path, in a CLIENT span when telemetry is on. */
  async #shortCall(
    client: Session,
    wire: FastWire,
    name: string,
    args: JsonObject,
    options: CallOptions,
  ): Promise<CallToolResult> {
    const url = (this.#options.target as { url: URL }).url;
    const http = this.#http ??= new Http1Client();
    const send = () => {
      const headers = { ...this.#options.headers?.(), ...options.headers };
      const traceMeta = traceContext();
      if (traceMeta) Object.assign(headers, traceMeta);
      return fastCall({
        url,
        http,
        wire,
        id: this.#nextId++,
        name,
        args,
        traceMeta,
        headers,
        exchanged: options.headers?.authorization !== undefined,
        maxResponseBytes: this.#options.maxResponseBytes,
        signal: options.signal,
        timeoutMs: this.#options.requestTimeoutMs,
        cancel: (id, reason) => sendCancelled(http, url, wire, headers, id, reason),
        answer: (response) => sendAnswer(http, url, wire, headers, response),
        onToolsChanged: () => this.#options.onToolsChanged?.(),
      });
    };
    try {
      const tracing = upstreamTracing();
      return await (tracing ? tracing.mcp(this.#traced("tools/call", name), send) : send());
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      const failure = unavailable(error);
      // Failed before an answer (a lost session answers 404): the next request reconnects first.
      if (failure instanceof UpstreamUnavailable && this.#client === client) this.#broken = true;
      throw failure;
    }
  }

  #classify(error: unknown, client: Session): Error {
    if (error instanceof UpstreamFailure) return error;
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
    if (code === "UNSUPPORTED_RESULT_TYPE" || /input_required/.test(text)) {
      return new UpstreamRefused(
        0,
        "the upstream asked for input (input_required), which weir does not relay; " +
          "the call was sent once and not re-sent",
      );
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
    this.#http?.close();
    const client = this.#client;
    this.#client = undefined;
    this.#broken = true;
    const retired = [...this.#retired];
    this.#retired.clear();
    await Promise.all([client, ...retired].map((c) => c?.close().catch(() => {})));
  }
}
