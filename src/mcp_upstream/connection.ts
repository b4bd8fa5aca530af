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
 * - With token exchange (src/wrap/identity.ts), a caller's request
 *   (`callTool`, `task`, `readResource`) carries that caller's exchanged
 *   token (`CallOptions.headers`) and nothing of weir's own; every other
 *   request carries weir's own token where there is one (`ownToken`:
 *   `client-credentials`). Where the MCP server keeps 2025-11-25 sessions, a
 *   caller's requests go on a session of that caller's own
 *   (`caller_sessions.ts`, `callerSessions`).
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
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { CallToolResult, ResourceContents, ResourceSpec, ToolSpec } from "../mcp/types.ts";
import { type McpUpstreamCall, upstreamTracing } from "../ops/trace_hooks.ts";
import { ChildStdioTransport } from "./stdio_child.ts";
import {
  operatorMessage,
  permissionRefused,
  scrubbed,
  UpstreamRefused,
  UpstreamTokenUnavailable,
  UpstreamUnavailable,
} from "./errors.ts";
import { withExactNumbers } from "./exact.ts";
import { traceContext, withoutHop } from "./hop.ts";
import { upstreamFetch } from "./http_fetch.ts";
import { CallerSessions, openCallerSession } from "./caller_sessions.ts";
import {
  asksForParamHeaders,
  type FastWire,
  shortPathAllowed,
  shortPathCall,
} from "./fast_call.ts";
import { Http1Client } from "../outbound/http1_client.ts";
import { pause } from "../outbound/deadline.ts";
import type { Secrets } from "../outbound/once.ts";
import { RequestScope, requestScopes } from "./scope.ts";
import {
  classifyFailure,
  legacyHttpTransport,
  openSession,
  type RequestOptions,
  type Session,
  type SessionParts,
  type TaskMethod,
} from "./sessions.ts";

export * from "./errors.ts";
export type { Progress, TaskMethod } from "./sessions.ts";
export type { OwnToken } from "./http_fetch.ts";
import type { CallOptions, ConnectionOptions } from "./connection_options.ts";

export type { CallOptions, ConnectionOptions, UpstreamTarget } from "./connection_options.ts";

const MAX_PAGES = 1000;

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
  /** Callers' own sessions (`ConnectionOptions.callerSessions`), once one is asked for. */
  #callers?: CallerSessions;
  /** weir's own tokens sent lately (`ownToken`; the last few), redacted as the header secrets. */
  readonly #ownSent = new Set<string>();
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
        const secrets = connection.#secrets();
        const err = scrubbed(error as Error, secrets);
        const left = deadline - Date.now();
        // weir's token refused by the IdP, or a permission not given: a setting to change, not wait out.
        const final = (error instanceof UpstreamTokenUnavailable && error.final) ||
          permissionRefused(error);
        if (left <= 0 || options.signal?.aborted || final) {
          // Said to the operator (start-up, lint-upstream): a redirect names its target.
          const said = operatorMessage(err, secrets);
          throw new UpstreamUnavailable(
            options.connectTimeoutMs > 0 && !final
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
      const session = await openSession(this.#sessionParts(), this.#revision).catch((error) => {
        throw this.#scrubbed(error);
      });
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
    const { target, maxResponseBytes, headers, ownToken: own } = this.#options;
    const ownToken = own && {
      token: async (signal?: AbortSignal) => {
        const token = await own.token(signal);
        this.#ownSent.delete(token);
        this.#ownSent.add(token);
        for (const old of this.#ownSent) if (this.#ownSent.size > 4) this.#ownSent.delete(old);
        return token;
      },
      refused: (token: string) => own.refused(token),
    };
    const fetcher = target.kind === "http"
      ? upstreamFetch({ headers, maxResponseBytes, ownToken })
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
        this.#brokenSession(client);
        throw this.#scrubbed(scope.failure);
      }
      throw this.#scrubbed(this.#classify(error, client));
    } finally {
      scope.finish();
      this.#release(client);
    }
  }

  /** A request of `client` settled (counted in `#inFlight`): a retired client with none left closes. */
  #release(client: Session): void {
    const left = (this.#inFlight.get(client) ?? 1) - 1;
    if (left > 0) this.#inFlight.set(client, left);
    else {
      this.#inFlight.delete(client);
      if (this.#retired.delete(client)) void client.close().catch(() => {});
    }
  }

  /**
   * The session a request goes on: weir's own, or with `caller` (a caller's
   * request under token exchange) that caller's own where the MCP server
   * keeps 2025-11-25 sessions (`caller_sessions.ts`).
   */
  async #ready(options?: CallOptions): Promise<Session> {
    if (this.#broken || !this.#client) await this.#reconnect();
    const main = this.#client!;
    const { callerSessions, target, headers } = this.#options;
    const authorization = options?.headers?.authorization;
    if (
      callerSessions === undefined || options?.caller === undefined ||
      authorization === undefined || target.kind !== "http" ||
      main.revision !== "2025-11-25" || main.wire()?.sessionId === undefined
    ) return main;
    this.#callers ??= new CallerSessions({
      open: (current) =>
        openCallerSession(
          this.#sessionParts(),
          target.url,
          headers,
          current,
          this.#options.maxResponseBytes,
        ),
      retire: (session) => void this.#retire(session),
    }, callerSessions);
    return await this.#callers.session(options.caller, authorization).catch((error) => {
      throw this.#scrubbed(error);
    });
  }

  /** `client` failed before an answer: reconnect weir's session, or drop a caller's. */
  #brokenSession(client: Session): void {
    if (this.#client === client) this.#broken = true;
    else this.#callers?.broken(client);
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
    let ttlMs: number | undefined;
    const tools = await this.#pages<ToolSpec>(
      "tools/list",
      signal,
      (client, params, options) =>
        client.page(params, options).then((value) => {
          const result = value as { tools: unknown[]; nextCursor?: string; ttlMs?: unknown };
          if (
            params.cursor === undefined && typeof result.ttlMs === "number" && result.ttlMs >= 0
          ) {
            ttlMs = result.ttlMs;
          }
          return { items: result.tools, nextCursor: result.nextCursor };
        }),
    );
    return { tools, ttlMs };
  }

  /**
   * Every resource the upstream lists, through all pages; none when it
   * offers no resources (`Method not found`).
   * @throws {UpstreamFailure} typed by kind
   */
  async listResources(signal?: AbortSignal): Promise<ResourceSpec[]> {
    try {
      return await this.#pages<ResourceSpec>(
        "resources/list",
        signal,
        (client, params, options) =>
          client.resources(params, options).then((value) => {
            const result = value as { resources?: unknown[]; nextCursor?: string };
            return { items: result.resources ?? [], nextCursor: result.nextCursor };
          }),
      );
    } catch (error) {
      if (error instanceof UpstreamRefused && error.rpcCode === -32601) return [];
      throw error;
    }
  }

  /** Every page of a list method, on weir's own session (a cursor loop or too many pages refused). */
  async #pages<T>(
    method: string,
    signal: AbortSignal | undefined,
    page: (
      client: Session,
      params: { cursor?: string },
      options: RequestOptions,
    ) => Promise<{ items: unknown[]; nextCursor?: string }>,
  ): Promise<T[]> {
    const client = await this.#ready();
    const items: T[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let n = 0; n < MAX_PAGES; n++) {
      const params = cursor === undefined ? {} : { cursor };
      const { value } = await this.#send(
        client,
        method,
        signal,
        undefined,
        (scope) => page(client, params, this.#requestOptions(scope.signal)),
      );
      items.push(...(value.items as T[]));
      cursor = value.nextCursor;
      if (cursor === undefined) return items;
      if (cursors.has(cursor)) {
        throw new UpstreamRefused(0, `the upstream's ${method} repeats a cursor (a loop)`);
      }
      cursors.add(cursor);
    }
    throw new UpstreamRefused(0, `the upstream's ${method} has more than ${MAX_PAGES} pages`);
  }

  /**
   * Read one resource of the upstream (`resources/read`), once.
   * @returns its `contents` as the upstream sent them
   * @throws {UpstreamFailure} typed by kind (`UpstreamRefused` when the upstream refused)
   */
  async readResource(uri: string, opts: CallOptions = {}): Promise<ResourceContents[]> {
    const client = await this.#ready(opts);
    const { value } = await this.#callerSend(
      client,
      "resources/read",
      opts,
      undefined,
      (o) => client.read({ uri }, o),
    );
    const contents = (value as { contents?: unknown }).contents;
    return Array.isArray(contents) ? contents as ResourceContents[] : [];
  }

  /**
   * One request of MCP 2025-11-25 "Tasks" ({@link TaskMethod}), sent once (`tasks/result` waits
   * at most the request timeout). @throws {UpstreamRefused} `-32601` from a 2026-07-28 upstream
   */
  async task(method: TaskMethod, params: JsonObject, opts: CallOptions = {}): Promise<JsonObject> {
    const client = await this.#ready(opts);
    const name = method === "tools/call" ? String(params.name) : undefined;
    const { value } = await this.#callerSend(
      client,
      method,
      opts,
      name,
      (o) => client.task(method, params, o),
    );
    return value as JsonObject;
  }

  /**
   * A caller's request: its own header fields (its exchanged token; never weir's own token,
   * even without them), in a scope of its own (`#send`).
   */
  #callerSend<T>(
    client: Session,
    method: string,
    opts: CallOptions,
    tool: string | undefined,
    run: (options: RequestOptions) => Promise<T>,
  ): Promise<{ value: T; scope: RequestScope }> {
    return this.#send(client, method, opts.signal, tool, (scope) => {
      scope.headers = opts.headers ?? {};
      return run({
        ...this.#requestOptions(scope.signal),
        ...(opts.onProgress ? { onprogress: opts.onProgress } : {}),
      });
    });
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
    const client = await this.#ready(options);
    const wire = this.#shortWire(client, options);
    if (wire) return withoutHop(await this.#shortCall(client, wire, name, args, options));
    const { value, scope } = await this.#callerSend(client, "tools/call", options, name, (o) => {
      const params: { name: string; arguments: JsonObject; _meta?: JsonObject } = {
        name,
        arguments: args,
      };
      // W3C trace context in params._meta as well as headers (inside the span).
      const meta = traceContext();
      if (meta) params._meta = meta;
      return client.call(params, options.definition, o);
    });
    return withoutHop(withExactNumbers(value as unknown as CallToolResult, scope.result));
  }

  /** The session's wire when this call may take the short path (`fast_call.ts`). */
  #shortWire(client: Session, options: CallOptions): FastWire | undefined {
    if (this.#options.target.kind !== "http" || options.onProgress) return undefined;
    if (asksForParamHeaders(options.definition) || !shortPathAllowed()) return undefined;
    return client.wire();
  }

  /** One `tools/call` on the short path (`fast_call.ts`). */
  async #shortCall(
    client: Session,
    wire: FastWire,
    name: string,
    args: JsonObject,
    options: CallOptions,
  ): Promise<CallToolResult> {
    // A caller's session pushed out of the table (caller_sessions.ts) ends after this call.
    const held = this.#callers !== undefined;
    if (held) this.#inFlight.set(client, (this.#inFlight.get(client) ?? 0) + 1);
    try {
      return await shortPathCall(
        {
          url: (this.#options.target as { url: URL }).url,
          http: this.#http ??= new Http1Client(),
          id: this.#nextId++,
          wire,
          headers: { ...this.#options.headers?.(), ...options.headers },
          exchanged: options.headers?.authorization !== undefined,
          maxResponseBytes: this.#options.maxResponseBytes,
          timeoutMs: this.#options.requestTimeoutMs,
          onToolsChanged: () => this.#options.onToolsChanged?.(),
          traced: this.#traced("tools/call", name),
        },
        name,
        args,
        options.signal,
      );
    } catch (error) {
      // Failed before an answer (a lost session answers 404): the next request reconnects first.
      if (error instanceof UpstreamUnavailable) this.#brokenSession(client);
      throw this.#scrubbed(error as Error);
    } finally {
      if (held) this.#release(client);
    }
  }

  /**
   * weir's own tokens this connection sent lately (`ownToken`; the last 4):
   * secrets the MCP server may quote like the header secrets.
   */
  get ownTokensSent(): readonly string[] {
    return [...this.#ownSent];
  }

  /** What the connection's requests carry, as it reads now (`ConnectionOptions.secrets`). */
  #secrets(): Secrets {
    return this.#options.secrets([...this.#ownSent]);
  }

  /** A failure without what the connection's requests carry (`scrubbed`, errors.ts). */
  #scrubbed<E>(error: E): E {
    return scrubbed(error, this.#secrets());
  }

  #classify(error: unknown, client: Session): Error {
    const { failure, before, closed } = classifyFailure(error, this.#options.requestTimeoutMs);
    if (!before) return failure;
    // Failed before an answer: the next request reconnects (a caller's session: opens anew).
    this.#brokenSession(client);
    const why = this.#lastError;
    this.#lastError = undefined;
    if (closed && why && /longer than/.test(why)) return new UpstreamUnavailable(why);
    return failure;
  }

  /** Close the connection (and stop a stdio child). */
  async close(): Promise<void> {
    this.#http?.close();
    const client = this.#client;
    this.#client = undefined;
    this.#broken = true;
    this.#callers?.close();
    const retired = [...this.#retired];
    this.#retired.clear();
    await Promise.all([client, ...retired].map((c) => c?.close().catch(() => {})));
  }
}
