/**
 * Where a message comes from: the per-connection {@link Session} a stdio
 * transport keeps (the negotiated revision, requests in flight,
 * server-to-client requests), the {@link MessageContext} a transport hands
 * with each message, and the {@link CallContext} of one request.
 *
 * @module
 */
import type { JsonObject, RequestId } from "./jsonrpc.ts";
import type { Era } from "./revisions.ts";
import type { CallContext } from "./options.ts";
import { isObject } from "./results.ts";

/**
 * Per-connection state a transport keeps for a stdio process: the version an
 * `initialize` negotiated, and the requests in flight (for cancellation).
 * HTTP is stateless and passes none.
 *
 * @example One per stdio connection, fresh
 * ```ts
 * import { Session } from "./session.ts";
 * const session = new Session();
 * if (session.legacyVersion !== undefined || session.inFlight.size !== 0) throw new Error("not fresh");
 * ```
 */
export class Session {
  /** Set by `initialize`: this connection then speaks the handshake revision. */
  legacyVersion?: string;
  /** The `capabilities` the client declared in `initialize` (2025-11-25). */
  clientCapabilities?: JsonObject;
  /**
   * In-flight requests by {@link idKey} of their id, so
   * `notifications/cancelled` can abort them.
   */
  readonly inFlight: Map<string | number, AbortController> = new Map();
  /**
   * Set by a transport that can carry server-to-client requests (stdio): writes
   * one serialized JSON-RPC message to the client. Absent: the server cannot ask.
   */
  send?: (line: string) => void;
  readonly #pending = new Map<
    string,
    { resolve: (result: JsonObject) => void; reject: (error: Error) => void }
  >();
  #nextId = 0;

  /**
   * Send a server-to-client request (2025-11-25 only: `elicitation/create`,
   * `sampling/createMessage`, `roots/list`, `ping`) and wait for the client's
   * response on the same connection.
   *
   * @throws {Error} when the transport cannot send, the client answers with an
   *   error, or `signal` aborts (the request is then forgotten)
   */
  request(method: string, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    const send = this.send;
    if (!send) {
      return Promise.reject(new Error("this transport cannot send requests to the client"));
    }
    const id = `weir-${++this.#nextId}`;
    return new Promise<JsonObject>((resolve, reject) => {
      const onAbort = () => {
        this.#pending.delete(id);
        reject(new Error("cancelled while waiting for the client"));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, {
        resolve: (r) => {
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      });
      send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  /** The connection is gone: no request can be sent, and none waiting will be answered. */
  abandon(): void {
    this.send = undefined;
    for (const waiting of this.#pending.values()) {
      waiting.reject(new Error("the client closed the connection"));
    }
    this.#pending.clear();
  }

  /** Route a client's response to the request it answers; false when none is waiting. */
  settle(id: RequestId | null, result: unknown, error: unknown): boolean {
    if (typeof id !== "string") return false; // weir's own ids are strings
    const waiting = this.#pending.get(id);
    if (!waiting) return false;
    this.#pending.delete(id);
    if (error !== undefined || !isObject(result)) {
      const message = isObject(error) && typeof error.message === "string"
        ? error.message
        : "the client answered with an error";
      waiting.reject(new Error(message));
    } else waiting.resolve(result as JsonObject);
    return true;
  }
}

/** Where one message came from. */
export interface MessageContext {
  /** stdio: the connection's session. HTTP: absent. */
  session?: Session;
  /** HTTP: the request headers (modern header rules apply). */
  headers?: Headers;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
  /** The transport's `authorize` verdict, handed through to handlers. */
  auth?: unknown;
  /**
   * HTTP: send a message that belongs to this request before its answer
   * (a progress notification); the transport then answers with an event
   * stream. stdio sends through the session instead. Absent: it cannot.
   */
  notify?: (message: JsonObject) => void;
}

/**
 * The {@link CallContext} of one request. Its `signal` is built on first read:
 * most handlers never look at it, and building it costs more than the rest of a
 * cached answer (an HTTP request's signal is a pending operation per request;
 * `AbortSignal.any` keeps weak references the collector must trace). A class
 * getter rather than an object-literal getter: a per-request closure gives
 * every context its own hidden class (measured: peak RSS doubled under load).
 */
export class RequestCall implements CallContext {
  readonly era: Era;
  readonly protocolVersion: string;
  readonly auth?: unknown;
  readonly caller?: string;
  tools?: CallContext["tools"];
  input?: CallContext["input"];
  elicit?: CallContext["elicit"];
  progress?: CallContext["progress"];
  readonly #ctx: MessageContext;
  readonly #controller: AbortController | undefined;
  #signal: AbortSignal | undefined;

  constructor(
    ctx: MessageContext,
    controller: AbortController | undefined,
    era: Era,
    protocolVersion: string,
    caller: string | undefined,
  ) {
    this.#ctx = ctx;
    this.#controller = controller;
    this.era = era;
    this.protocolVersion = protocolVersion;
    this.auth = ctx.auth;
    if (caller !== undefined) this.caller = caller;
  }

  /** The stdio session this request came on, if any. */
  get session(): Session | undefined {
    return this.#ctx.session;
  }

  /**
   * How to send a message that belongs to this request before its answer
   * (stdio's session, or the HTTP transport's stream), or `undefined`.
   */
  notifier(): ((message: JsonObject) => void) | undefined {
    const ctx = this.#ctx;
    if (ctx.notify) return ctx.notify;
    const send = ctx.session?.send;
    return send ? (message) => send(JSON.stringify(message)) : undefined;
  }

  /** Aborted when the transport's signal or (with a session) the request's controller is. */
  get signal(): AbortSignal {
    if (this.#signal) return this.#signal;
    const outer = this.#ctx.signal;
    const own = this.#controller?.signal;
    // A controller of its own only when there is nothing else to abort on.
    this.#signal = outer && own
      ? AbortSignal.any([outer, own])
      : outer ?? own ?? new AbortController().signal;
    return this.#signal;
  }
}
