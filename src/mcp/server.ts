/**
 * The MCP server core: one object that answers JSON-RPC messages under both
 * protocol revisions (2025-11-25 and 2026-07-28), for a catalog and dispatch
 * function the host injects. It knows no transport: stdio and HTTP hand it
 * decoded messages and write back what it returns.
 *
 * @module
 */
import {
  prepareCatalog,
  type PreparedCatalog,
  type PreparedPrompt,
  type PreparedTool,
} from "./catalog.ts";
import { CursorCodec } from "./cursor.ts";
import { callerOf, StateKeys } from "./signed_state.ts";
import {
  classifyMessage,
  ErrorCode,
  errorResponse,
  idKey,
  isRawId,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  McpError,
  type RequestId,
  resultResponse,
} from "./jsonrpc.ts";
import {
  type Era,
  ERAS,
  LEGACY_VERSION,
  LEGACY_VERSIONS,
  LOG_LEVELS,
  MetaKey,
  type MethodRule,
  methodRule,
  METHODS,
  MODERN_VERSION,
  SUPPORTED_VERSIONS,
} from "./revisions.ts";
import { checkHeaders } from "./headers.ts";
import { cleanDeep, cleanText, isRawJson } from "./text.ts";
import { isShallowAndExact, MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "./depth.ts";
import type {
  CallToolResult,
  Catalog,
  GetPromptResult,
  Icon,
  ResourceContents,
  WireResourceContents,
} from "./types.ts";

/** Cache hints a modern (2026-07-28) client may apply to a cacheable result. */
export interface CacheHint {
  /** Milliseconds the result may be reused; 0 = stale at once. */
  ttlMs: number;
  /** `"public"`: same for every caller; `"private"`: reuse within one authorization context. */
  cacheScope: "public" | "private";
}

/**
 * The tools one caller may see and call, decided by the host from the
 * transport's `authorize` verdict (for example the scopes of an OAuth access
 * token). A tool it does not allow is left out of `tools/list` and is unknown
 * to `tools/call` and {@link McpServer.callTool}, as if it were not listed.
 */
export interface ToolAccess {
  /**
   * The same string for the same set of allowed tools: list pages are cached
   * per key, so two callers with one key share pages.
   */
  key: string;
  /** Whether the caller may see and call the tool `name`. */
  allows(name: string): boolean;
}

/** What a handler learns about the request it serves. */
export interface CallContext {
  /**
   * Aborted when the client cancels the request (`notifications/cancelled`)
   * or, over HTTP, hangs up. A stdio transport that stops (end of input,
   * SIGTERM) lets requests in flight finish rather than aborting them.
   */
  signal: AbortSignal;
  /** The revision the request is served under. */
  era: Era;
  /** The protocol version the request (or its session) named. */
  protocolVersion: string;
  /** Whatever the transport's `authorize` hook returned for this request, if anything. */
  auth?: unknown;
  /**
   * Who signed state issued in this request is bound to: the server's
   * `callerOf(auth)` (by default `auth.caller`, which weir's bearer-token and
   * OAuth checks set); absent for an unauthenticated request.
   */
  caller?: string;
  /**
   * 2026-07-28 `tools/call` over MCP only: what the client sent back for an
   * earlier {@link InputRequiredError} (multi round-trip requests), and the
   * capabilities it declared in this request. Absent elsewhere (2025-11-25,
   * the HTTP tool API), where throwing {@link InputRequiredError} cannot be
   * answered and becomes an error result.
   */
  input?: {
    /** `params.inputResponses` (empty when the client sent none). */
    responses: Record<string, unknown>;
    /** `params.requestState`, echoed byte for byte by the client, untrusted. */
    requestState?: string;
    /** `_meta["io.modelcontextprotocol/clientCapabilities"]`. */
    clientCapabilities: JsonObject;
  };
  /**
   * 2025-11-25 over a transport that carries server-to-client requests (stdio),
   * when the client declared `elicitation` in `initialize`: send
   * `elicitation/create` with these params and resolve with the client's
   * `ElicitResult`. Absent otherwise (stateless HTTP cannot ask).
   */
  elicit?: (params: JsonObject, signal: AbortSignal) => Promise<JsonObject>;
}

/**
 * Thrown by a tool (2026-07-28) to ask the client for input before it can
 * finish: the core answers `tools/call` with an `InputRequiredResult`
 * (`resultType: "input_required"`, `inputRequests`, `requestState`), and the
 * client retries the call with `inputResponses` and the `requestState` echoed.
 * Only meaningful when {@link CallContext.input} is present; elsewhere the
 * core turns it into an `isError` result (status 403 on the tool API) saying
 * the input could not be asked for.
 */
export class InputRequiredError extends Error {
  /** Request id -> `elicitation/create` (or another input request) object. */
  readonly inputRequests: JsonObject;
  /** Opaque state the client echoes on the retry (protect it: it is untrusted). */
  readonly requestState?: string;

  /**
   * Ask the client for input before the tool can finish.
   *
   * @param inputRequests key -> request object (e.g. `{method: "elicitation/create", params}`)
   * @param requestState opaque state for the retry; integrity-protect anything it decides
   * @param message what to say where the input cannot be asked for
   */
  constructor(inputRequests: JsonObject, requestState?: string, message = "input required") {
    super(message);
    this.name = "InputRequiredError";
    this.inputRequests = inputRequests;
    this.requestState = requestState;
  }
}

/**
 * The host's tool implementation. Called only for a listed tool, with
 * arguments already validated against its advertised `inputSchema` and reduced
 * to the declared keys. Return a {@link CallToolResult}; throw a
 * {@link ToolError} to report a failure the model should see.
 *
 * A tool with an `outputSchema` must return, on success, `structuredContent`
 * that conforms to it; a result that does not is replaced by an `isError`
 * result (and logged), so a client never receives what the tool did not
 * advertise. Under 2025-11-25 a `structuredContent` that is not a JSON object
 * (possible only without an `outputSchema`) is left out of the result.
 */
export type Dispatch = (
  name: string,
  args: Record<string, unknown>,
  ctx: CallContext,
) => Promise<CallToolResult> | CallToolResult;

/**
 * Reads a listed resource, or a URI a listed template matches. `params` holds
 * the template's variables (percent-encoded, as in the URI). Throw
 * {@link NotFoundError} when there is nothing there.
 */
export type ResourceReader = (
  uri: string,
  ctx: CallContext & { params: Record<string, string> },
) => Promise<ResourceContents[]> | ResourceContents[];

/**
 * Renders a listed prompt. `args` are validated against the schema derived
 * from the prompt's declared arguments and hold only declared names.
 */
export type PromptReader = (
  name: string,
  args: Record<string, string>,
  ctx: CallContext,
) => Promise<GetPromptResult> | GetPromptResult;

/** A failure a tool reports to the model: becomes `isError: true` with `message` as text. */
export class ToolError extends Error {
  /** HTTP status the tool API (`POST /api/<tool>`) answers with. */
  readonly status: number;
  /** Optional structured detail (only for tools without an `outputSchema`). */
  readonly structuredContent?: JsonObject;

  /**
   * Make the error.
   * @param message what went wrong, sent to the client as the result's text
   * @param options `status` for the tool API (default 500); `structuredContent` as detail
   */
  constructor(message: string, options: { status?: number; structuredContent?: JsonObject } = {}) {
    super(message);
    this.name = "ToolError";
    this.status = options.status ?? 500;
    this.structuredContent = options.structuredContent;
  }
}

/** Thrown by a resource or prompt reader: nothing there. `reason` goes to the client as data. */
export class NotFoundError extends Error {
  /**
   * Make the error.
   * @param reason what was not found, e.g. the URI or prompt name
   */
  constructor(reason: string) {
    super(reason);
    this.name = "NotFoundError";
  }
}

/** One structured log event. Never carries arguments, results or secrets. */
export interface LogEvent {
  /** Severity, lowest first: debug, info, warn, error. */
  level: "debug" | "info" | "warn" | "error";
  /** What happened, a short stable name such as `listening` or `tool_call`. */
  event: string;
  /** Further fields of the event (JSON-serializable). */
  [field: string]: unknown;
}

/** See {@link ServerOptions.around}. */
export type RequestWrapper = <T>(
  request: { method: string; name?: string; era: Era },
  run: () => Promise<T>,
) => Promise<T>;

/** Where the core writes log events; the default writes JSON lines to stderr. */
export type Logger = (event: LogEvent) => void;

/** The default logger: one JSON object per line on stderr (stdout is the stdio wire). */
export const stderrLogger: Logger = (event) => {
  console.error(JSON.stringify({ time: new Date().toISOString(), ...event }));
};

/** Options of {@link McpServer}. */
export interface ServerOptions {
  /** `serverInfo.name`. */
  name: string;
  /** `serverInfo.version` (default `"0.0.0"`). */
  version?: string;
  /** `serverInfo.title`. */
  title?: string;
  /** `serverInfo.icons`: icons a client may show for this server. */
  icons?: Icon[];
  /** Natural-language guidance for the model (`instructions`). */
  instructions?: string;
  /**
   * What the server offers. An object is checked once, at construction. A
   * function is called per list or lookup; its result is checked the first
   * time each distinct object is seen, so return the same object until the
   * catalog really changes.
   */
  catalog: Catalog | (() => Catalog | Promise<Catalog>);
  /** Runs `tools/call`. Required when any tool is listed. */
  dispatch?: Dispatch;
  /** Runs `resources/read`. Required when any resource or template is listed. */
  readResource?: ResourceReader;
  /** Runs `prompts/get`. Required when any prompt is listed. */
  getPrompt?: PromptReader;
  /**
   * Runs around the handler of every routed request (a method this server
   * serves), e.g. to open a trace span: call `run` exactly once and return
   * what it returns (or throw what it throws). `name` is `params.name` for
   * `tools/call` and `prompts/get`. Default: none (no cost).
   */
  around?: RequestWrapper;
  /** Items per list page (default 50). */
  pageSize?: number;
  /** Modern cache hints per list family (defaults `{ttlMs: 0, cacheScope: "private"}`). */
  cache?: Partial<Record<"tools" | "resources" | "prompts" | "discover", CacheHint>>;
  /**
   * Narrows the tools per caller: given the transport's `authorize` verdict
   * (`auth`), the tools that caller may see and call, or `undefined` for all.
   * A narrowed `tools/list` is marked `cacheScope: "private"` under 2026-07-28,
   * whatever `cache.tools` says: another caller may see other tools.
   */
  toolAccess?: (auth: unknown) => ToolAccess | undefined;
  /**
   * The key service that signs cursors (src/mcp/signed_state.ts): give every
   * replica behind one URL the same configured keys, and hand the same object
   * to a host that signs state of its own (a confirmation's `requestState`).
   * Default: a random key for this process.
   */
  stateKeys?: StateKeys;
  /** @deprecated Use {@link stateKeys}: HMAC key bytes (at least 32) for cursors. */
  cursorKey?: Uint8Array;
  /**
   * The caller identity signed state is bound to, from the transport's
   * `authorize` verdict (default {@link callerOf}: `auth.caller` when a string).
   * A cursor issued to one caller is refused for another.
   */
  callerOf?: (auth: unknown) => string | undefined;
  /** Log sink (default {@link stderrLogger}). */
  log?: Logger;
}

/**
 * Per-connection state a transport keeps for a stdio process: the version an
 * `initialize` negotiated, and the requests in flight (for cancellation).
 * HTTP is stateless and passes none.
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
}

/** The answer to one message: the serialized JSON-RPC response (or none) and an HTTP status. */
export interface Reply {
  /** HTTP status to send: 200, 202 (no body), or the revision's status for an error. */
  status: number;
  /** Serialized JSON-RPC response; `null` for a notification or a client response. */
  body: string | null;
}

/** What the tool API gets back from {@link McpServer.callTool}. */
export interface ToolCallOutcome {
  /** 200 on success; 400 bad arguments; 404 unknown tool; else the tool's error status. */
  status: number;
  /** The tool's result, or an error result saying what was refused. */
  result: CallToolResult;
  /** 2026-07-28 MCP only: the tool asked for input; the answer is an `InputRequiredResult`. */
  inputRequired?: InputRequiredError;
}

const DEFAULT_HINT: CacheHint = { ttlMs: 0, cacheScope: "private" };
/**
 * Stands for `nextCursor` in a cached list page, replaced per request by the
 * caller's cursor. Random per process, so no listed text can contain it.
 */
const NEXT_CURSOR_MARK = `\u0000next-cursor-${crypto.randomUUID()}\u0000`;
const NO_SIGNAL = new AbortController().signal;

type Handler = (
  params: Record<string, unknown>,
  call: CallContext,
  ctx: MessageContext,
) => object | { json: string } | Promise<object | { json: string }>;

/** `run()` as a promise, whether it returns, resolves, throws or rejects (for `around`). */
function promised<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Whether a value is a thenable (what `await` would wait for). */
function isThenable<T>(value: unknown): value is PromiseLike<T> {
  return typeof value === "object" && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}

/**
 * A dual-revision MCP server for one host catalog.
 *
 * Construct it once (a malformed static catalog throws {@link CatalogError}
 * here), then feed it messages from any transport with {@link handle}.
 *
 * @example
 * ```ts
 * import { McpServer } from "./server.ts";
 * const server = new McpServer({
 *   name: "echo",
 *   catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
 *   dispatch: () => ({ content: [{ type: "text", text: "hi" }] }),
 * });
 * const reply = await server.handle({
 *   jsonrpc: "2.0", id: 1, method: "tools/list",
 *   params: { _meta: {
 *     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
 *     "io.modelcontextprotocol/clientCapabilities": {},
 *   } },
 * });
 * if (!reply.body?.includes('"echo"')) throw new Error("not listed");
 * ```
 */
export class McpServer {
  readonly #options: ServerOptions;
  readonly #serverInfo: JsonObject;
  readonly #capabilities: JsonObject;
  readonly #pageSize: number;
  readonly #cursors: CursorCodec;
  readonly #callerOf: (auth: unknown) => string | undefined;
  readonly #log: Logger;
  readonly #static?: PreparedCatalog;
  readonly #prepared = new WeakMap<Catalog, PreparedCatalog>();
  readonly #handlers: Record<string, Handler>;

  /**
   * Prepare a server: a static catalog is validated and compiled once, here.
   * @param options the catalog, dispatch and readers, and server settings
   * @throws {CatalogError} when a static catalog is malformed
   * @throws {RangeError} when `pageSize` is not a positive integer
   */
  constructor(options: ServerOptions) {
    this.#options = options;
    this.#log = options.log ?? stderrLogger;
    this.#pageSize = options.pageSize ?? 50;
    if (!Number.isInteger(this.#pageSize) || this.#pageSize < 1) {
      throw new RangeError(`pageSize must be a positive integer, got ${options.pageSize}`);
    }
    this.#cursors = new CursorCodec(
      options.stateKeys ??
        new StateKeys({ keys: options.cursorKey ? [options.cursorKey] : undefined }),
    );
    this.#callerOf = options.callerOf ?? callerOf;
    this.#serverInfo = { name: options.name, version: options.version ?? "0.0.0" };
    if (options.title) this.#serverInfo.title = options.title;
    if (options.icons?.length) {
      this.#serverInfo.icons = options.icons as unknown as JsonObject[];
    }
    const capabilities: JsonObject = {};
    if (options.dispatch) capabilities.tools = { listChanged: false };
    if (options.readResource) capabilities.resources = { subscribe: false, listChanged: false };
    if (options.getPrompt) capabilities.prompts = { listChanged: false };
    if (typeof options.catalog !== "function") this.#static = this.#prepare(options.catalog);
    this.#capabilities = capabilities;
    this.#handlers = {
      "initialize": (p, _call, ctx) => this.#initialize(p, ctx),
      "ping": () => Promise.resolve({}),
      "server/discover": () => Promise.resolve(this.#discover()),
      "tools/list": (p, call) => this.#list("tools/list", "tools", p, call),
      "tools/call": (p, call) => this.#callTool(p, call),
      "resources/list": (p, call) => this.#list("resources/list", "resources", p, call),
      "resources/templates/list": (p, call) =>
        this.#list("resources/templates/list", "resourceTemplates", p, call),
      "resources/read": (p, call) => this.#readResource(p, call),
      "prompts/list": (p, call) => this.#list("prompts/list", "prompts", p, call),
      "prompts/get": (p, call) => this.#getPrompt(p, call),
    };
  }

  /** The capabilities this server advertises (the same under both revisions). */
  get capabilities(): Readonly<JsonObject> {
    return this.#capabilities;
  }

  /** `serverInfo` as sent in `initialize` and in modern `_meta`. */
  get serverInfo(): Readonly<JsonObject> {
    return this.#serverInfo;
  }

  /**
   * Answer one decoded JSON-RPC message.
   *
   * @param message the value of `JSON.parse` on one message
   * @param ctx where it came from (session for stdio, headers for HTTP)
   * @returns the response to write (never throws; handler failures become errors or
   *   `isError` results)
   */
  async handle(message: unknown, ctx: MessageContext = {}): Promise<Reply> {
    try {
      const reply = this.#handle(message, ctx);
      return reply instanceof Promise ? await reply : reply;
    } catch (error) {
      // Every path above answers for itself; this net keeps a failure nobody
      // foresaw (a value too deep to serialize, say) an answer, not a crash.
      this.#log({
        level: "error",
        event: "internal_error",
        error: error instanceof Error ? error.message.slice(0, 200) : "unknown",
      });
      const id = classifyId(message);
      return {
        status: 500,
        body: errorResponse(id, { code: ErrorCode.InternalError, message: "Internal error" }),
      };
    }
  }

  /** Synchronous where it can be: a request's answer is the one promise it returns. */
  #handle(message: unknown, ctx: MessageContext): Reply | Promise<Reply> {
    const incoming = classifyMessage(message);
    switch (incoming.kind) {
      case "invalid":
        return { status: 400, body: errorResponse(incoming.id, incoming.error.toJSON()) };
      case "response":
        ctx.session?.settle(incoming.id, incoming.result, incoming.error);
        return { status: 202, body: null };
      case "notification":
        this.#notification(incoming.message, ctx);
        return { status: 202, body: null };
      case "request":
        return this.#request(incoming.message, ctx);
    }
  }

  /** Serialize a parse failure of a message that never became JSON (`-32700`, no id). */
  parseError(detail = "the message is not valid JSON"): Reply {
    return {
      status: 400,
      body: errorResponse(null, { code: ErrorCode.ParseError, message: `Parse error: ${detail}` }),
    };
  }

  /**
   * Call a tool outside JSON-RPC (the HTTP tool API), through exactly the
   * validation and dispatch `tools/call` uses.
   *
   * @param name tool name
   * @param args the arguments object (anything else is refused with 400)
   * @param ctx cancellation and auth
   */
  async callTool(
    name: string,
    args: unknown,
    ctx: { signal?: AbortSignal; auth?: unknown } = {},
  ): Promise<ToolCallOutcome> {
    try {
      return await this.#callToolApi(name, args, ctx);
    } catch (error) {
      // The tool API's last net, as handle() has: an answer, never a crash.
      this.#log({
        level: "error",
        event: "internal_error",
        error: error instanceof Error ? error.name : "unknown",
      });
      return { status: 500, result: errorResult("Internal error") };
    }
  }

  async #callToolApi(
    name: string,
    args: unknown,
    ctx: { signal?: AbortSignal; auth?: unknown },
  ): Promise<ToolCallOutcome> {
    const catalog = await this.#catalog();
    const tool = this.#visibleTool(catalog, name, ctx.auth);
    if (!tool) {
      this.#refused("unknown_tool", 404, name);
      return { status: 404, result: errorResult(`Unknown tool: "${clip(name)}"`) };
    }
    const call: CallContext = {
      signal: ctx.signal ?? NO_SIGNAL,
      era: "modern",
      protocolVersion: MODERN_VERSION,
      auth: ctx.auth,
    };
    const caller = this.#callerOf(ctx.auth);
    if (caller !== undefined) call.caller = caller;
    return await this.#runTool(tool, args, call);
  }

  /**
   * The audit line of a refusal the core decides (same shape as
   * `src/ops/audit.ts`): the rule, the status and the tool name, never a value.
   */
  #refused(rule: "schema" | "unknown_tool", status: number, tool: string): void {
    this.#log({
      level: "warn",
      event: "refused",
      decision: "refuse",
      rule,
      status,
      tool: tool.slice(0, 64),
    });
  }

  #notification(message: JsonRpcNotification, ctx: MessageContext): void {
    if (message.method === "notifications/cancelled") {
      const id = message.params?.requestId;
      if (typeof id === "string" || typeof id === "number" || isRawId(id)) {
        ctx.session?.inFlight.get(idKey(id))?.abort(new ClientCancelled());
      }
    }
    // notifications/initialized and anything else: nothing to do.
  }

  async #request(request: JsonRpcRequest, ctx: MessageContext): Promise<Reply> {
    const { id, method } = request;
    const params = request.params ?? {};
    let era: Era = "modern";
    let stage: "classify" | "dispatch" = "classify";
    let controller: AbortController | undefined;
    try {
      let selected = this.#selectEra(request, params, ctx);
      if (selected instanceof Promise) selected = await selected;
      era = selected.era;
      const rule = methodRule(method);
      if (!rule || !rule.eras.includes(era) || !this.#advertises(rule)) {
        throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${clip(method)}`);
      }
      stage = "dispatch";
      // Only a session can cancel a request by id, so only a session needs a controller.
      controller = ctx.session ? new AbortController() : undefined;
      if (controller) ctx.session!.inFlight.set(idKey(id), controller);
      try {
        const call: CallContext = new RequestCall(
          ctx,
          controller,
          era,
          selected.version,
          this.#callerOf(ctx.auth),
        );
        const around = this.#options.around;
        let result: object | { json: string };
        if (around) {
          result = await around(
            {
              method,
              name: typeof params.name === "string" ? params.name : undefined,
              era,
            },
            () => promised(() => this.#handlers[method](params, call, ctx)),
          );
        } else {
          // A handler answers synchronously when it can (tools/call of a tool
          // that returns a plain result): no promise to wait for.
          const answer = this.#handlers[method](params, call, ctx);
          result = answer instanceof Promise ? await answer : answer;
        }
        // A request the client cancelled is not answered (MCP "Cancellation").
        if (controller?.signal.reason instanceof ClientCancelled) {
          return { status: 202, body: null };
        }
        const json = "json" in result && typeof result.json === "string"
          ? result.json
          : JSON.stringify(this.#decorate(era, rule, result));
        return { status: 200, body: resultResponse(id, json) };
      } finally {
        ctx.session?.inFlight.delete(idKey(id));
      }
    } catch (error) {
      if (controller?.signal.reason instanceof ClientCancelled) return { status: 202, body: null };
      const mcp = this.#asMcpError(error, method);
      const table = ERAS[era].httpStatus;
      const status = stage === "classify" && mcp.code === ErrorCode.InvalidParams
        ? 400
        : table[mcp.code] ?? 200;
      return { status, body: errorResponse(id, mcp.toJSON()) };
    }
  }

  /**
   * Which revision serves this request (the dual-era classification of the
   * checklist, rules 1-5), with the modern `_meta`, header and version checks in
   * the order the 2026-07-28 transport page gives.
   */
  #selectEra(
    request: JsonRpcRequest,
    params: Record<string, unknown>,
    ctx: MessageContext,
  ): Selected | Promise<Selected> {
    const meta = params._meta;
    if (meta !== undefined && (typeof meta !== "object" || meta === null || Array.isArray(meta))) {
      throw new McpError(ErrorCode.InvalidParams, "params._meta must be an object");
    }
    const m = meta as Record<string, unknown> | undefined;
    if (m && MetaKey.protocolVersion in m) {
      const version = m[MetaKey.protocolVersion];
      if (typeof version !== "string") {
        throw new McpError(
          ErrorCode.InvalidParams,
          `_meta["${MetaKey.protocolVersion}"] must be a string`,
        );
      }
      const caps = m[MetaKey.clientCapabilities];
      if (typeof caps !== "object" || caps === null || Array.isArray(caps)) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `Missing _meta["${MetaKey.clientCapabilities}"]: every 2026-07-28 request declares ` +
            `its client capabilities ({} for none)`,
        );
      }
      const level = m[MetaKey.logLevel];
      if (level !== undefined && !LOG_LEVELS.has(level as string)) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown log level ${clip(String(level))}`);
      }
      const headers = ctx.headers;
      if (headers && request.method === "tools/call" && !this.#static) {
        // A catalog function: its tools are known once it answers.
        return this.#catalog().then((catalog) => {
          checkHeaders(headers, request, version, methodRule(request.method), catalog.toolsByName);
          return modernVersion(version);
        });
      }
      if (headers) {
        const tools = request.method === "tools/call" ? this.#static!.toolsByName : null;
        checkHeaders(headers, request, version, methodRule(request.method), tools);
      }
      return modernVersion(version);
    }
    if (request.method === "initialize") {
      // The connection speaks the handshake revision from the moment initialize
      // is received (requests pipelined behind it count), not once it is answered.
      const requested = params.protocolVersion;
      const version = typeof requested === "string" && LEGACY_VERSIONS.includes(requested)
        ? requested
        : LEGACY_VERSION;
      // A malformed initialize (no protocolVersion) is refused and switches nothing.
      if (ctx.session && typeof requested === "string") ctx.session.legacyVersion = version;
      return { era: "legacy", version };
    }
    const sessionVersion = ctx.session?.legacyVersion;
    if (sessionVersion) return { era: "legacy", version: sessionVersion };
    const headerVersion = ctx.headers?.get("mcp-protocol-version");
    if (headerVersion && LEGACY_VERSIONS.includes(headerVersion)) {
      return { era: "legacy", version: headerVersion };
    }
    if (ctx.headers && headerVersion === null) {
      // 2025-03-26 and later transports: a server that receives no
      // MCP-Protocol-Version header (and nothing else says the version)
      // SHOULD assume 2025-03-26, the revision before the header existed.
      return { era: "legacy", version: "2025-03-26" };
    }
    if (headerVersion) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unsupported MCP-Protocol-Version header: ${clip(headerVersion)}; send one of ` +
          `${LEGACY_VERSIONS.join(", ")} after initialize, or params._meta (2026-07-28)`,
        { supported: [...SUPPORTED_VERSIONS] },
      );
    }
    throw new McpError(
      ErrorCode.InvalidParams,
      `Missing params._meta["${MetaKey.protocolVersion}"]: send it (2026-07-28) or ` +
        `start with initialize (2025-11-25)`,
      { supported: [...SUPPORTED_VERSIONS] },
    );
  }

  #advertises(rule: MethodRule): boolean {
    return rule.capability === undefined || rule.capability in this.#capabilities;
  }

  #decorate(era: Era, rule: MethodRule, result: object, narrowed = false): object {
    if (!ERAS[era].decorateResults) return result;
    const own = (result as { _meta?: JsonObject })._meta;
    const decorated: Record<string, unknown> = { ...result, resultType: "complete" };
    if (rule.cacheable) {
      const hint = this.#hint(rule.cacheable);
      // A list narrowed to one caller's access is never shared between callers.
      if (narrowed) hint.cacheScope = "private";
      Object.assign(decorated, hint);
    }
    decorated._meta = { ...own, [MetaKey.serverInfo]: this.#serverInfo };
    return decorated;
  }

  #hint(family: "tools" | "resources" | "prompts" | "discover"): CacheHint {
    const hint = this.#options.cache?.[family] ?? DEFAULT_HINT;
    return { ttlMs: hint.ttlMs, cacheScope: hint.cacheScope };
  }

  #asMcpError(error: unknown, method: string): McpError {
    if (error instanceof McpError) return error;
    this.#log({
      level: "error",
      event: "internal_error",
      method: method.slice(0, 120),
      error: error instanceof Error ? error.message.slice(0, 500) : typeof error,
    });
    return new McpError(ErrorCode.InternalError, "Internal error");
  }

  #prepare(catalog: Catalog): PreparedCatalog {
    // Clean text out for what is listed too (a wrapped upstream's descriptions,
    // titles, prompt texts): once per catalog, not per list.
    const clean = nestsDeeperThan(catalog, MAX_RESULT_DEPTH) ? catalog : cleanDeep(catalog);
    return prepareCatalog(clean, {
      dispatch: Boolean(this.#options.dispatch),
      readResource: Boolean(this.#options.readResource),
      getPrompt: Boolean(this.#options.getPrompt),
    });
  }

  async #catalog(): Promise<PreparedCatalog> {
    if (this.#static) return this.#static;
    const catalog = await (this.#options.catalog as () => Catalog | Promise<Catalog>)();
    let prepared = this.#prepared.get(catalog);
    if (!prepared) {
      prepared = this.#prepare(catalog);
      this.#prepared.set(catalog, prepared);
    }
    return prepared;
  }

  #initialize(params: Record<string, unknown>, ctx: MessageContext): Promise<object> {
    const requested = params.protocolVersion;
    if (typeof requested !== "string") {
      throw new McpError(ErrorCode.InvalidParams, "initialize needs params.protocolVersion");
    }
    if (ctx.session && isObject(params.capabilities)) {
      ctx.session.clientCapabilities = params.capabilities as JsonObject;
    }
    const result: JsonObject = {
      protocolVersion: LEGACY_VERSIONS.includes(requested) ? requested : LEGACY_VERSION,
      capabilities: this.#capabilities,
      serverInfo: this.#serverInfo,
    };
    if (this.#options.instructions) result.instructions = this.#options.instructions;
    return Promise.resolve(result);
  }

  #discover(): object {
    const result: JsonObject = {
      supportedVersions: [...SUPPORTED_VERSIONS],
      capabilities: this.#capabilities,
    };
    if (this.#options.instructions) result.instructions = this.#options.instructions;
    return result;
  }

  async #list(
    method: "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list",
    field: string,
    params: Record<string, unknown>,
    call: CallContext,
  ): Promise<{ json: string }> {
    const catalog = await this.#catalog();
    const cursor = params.cursor;
    const access = method === "tools/list" ? this.#options.toolAccess?.(call.auth) : undefined;
    // Only an absent cursor means "first page": `""` and `null` are cursors,
    // and are refused like any cursor this server did not issue. A cursor is
    // checked on every request (it is bound to its caller), and pages are
    // cached by the item they start after, so every caller shares them.
    const after = cursor === undefined
      ? undefined
      : await this.#cursors.decode(method, cursor, call.caller);
    const view = access ? [call.era, method, access.key] : [call.era, method];
    const cacheKey = JSON.stringify(after === undefined ? view : [...view, after]);
    let page = catalog.pages.get(cacheKey);
    if (!page) {
      let [keys, items] = listOf(catalog, method);
      if (access) {
        const kept = keys.map((k) => access.allows(k));
        keys = keys.filter((_, i) => kept[i]);
        items = items.filter((_, i) => kept[i]);
      }
      const start = after === undefined ? 0 : firstAfter(keys, after);
      const end = Math.min(start + this.#pageSize, keys.length);
      const result: Record<string, unknown> = { [field]: items.slice(start, end) };
      // The next cursor differs per caller: the page is kept with a marker in its place.
      if (end < keys.length) result.nextCursor = NEXT_CURSOR_MARK;
      const json = JSON.stringify(
        this.#decorate(call.era, METHODS[method], result, Boolean(access)),
      );
      const at = json.indexOf(JSON.stringify(NEXT_CURSOR_MARK));
      page = at < 0 ? { json } : {
        json,
        nextAfter: keys[end - 1],
        head: json.slice(0, at),
        tail: json.slice(at + JSON.stringify(NEXT_CURSOR_MARK).length),
      };
      catalog.pages.set(cacheKey, page);
    }
    if (page.nextAfter === undefined) return { json: page.json };
    const next = await this.#cursors.encode(method, page.nextAfter, call.caller);
    return { json: `${page.head}${JSON.stringify(next)}${page.tail}` };
  }

  /** Synchronous when the catalog is static and the tool answers synchronously. */
  #callTool(params: Record<string, unknown>, call: CallContext): object | Promise<object> {
    if (!this.#static) {
      return this.#catalog().then((catalog) => this.#callToolIn(catalog, params, call));
    }
    return this.#callToolIn(this.#static, params, call);
  }

  #callToolIn(
    catalog: PreparedCatalog,
    params: Record<string, unknown>,
    call: CallContext,
  ): object | Promise<object> {
    const name = params.name;
    if (typeof name !== "string") {
      throw new McpError(ErrorCode.InvalidParams, "tools/call needs params.name (a string)");
    }
    const args = params.arguments;
    if (args !== undefined && !isObject(args)) {
      throw new McpError(ErrorCode.InvalidParams, "tools/call params.arguments must be an object");
    }
    const tool = this.#visibleTool(catalog, name, call.auth);
    if (!tool) {
      this.#refused("unknown_tool", 404, name);
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: "${clip(name)}"`, {
        name: clip(name),
      });
    }
    if (call instanceof RequestCall) {
      if (call.era === "modern") {
        const meta = params._meta as Record<string, unknown>;
        const responses = params.inputResponses;
        call.input = {
          responses: isObject(responses) ? responses : {},
          clientCapabilities: meta[MetaKey.clientCapabilities] as JsonObject,
        };
        if (typeof params.requestState === "string") {
          call.input.requestState = params.requestState;
        }
      } else {
        const session = call.session;
        if (session?.send && isObject(session.clientCapabilities?.elicitation)) {
          call.elicit = (p, signal) => session.request("elicitation/create", p, signal);
        }
      }
    }
    const outcome = this.#runTool(tool, args ?? {}, call);
    return outcome instanceof Promise
      ? outcome.then((o) => this.#callAnswer(o, call))
      : this.#callAnswer(outcome, call);
  }

  /** The `tools/call` result of a tool's outcome, as the request's revision carries it. */
  #callAnswer({ result, inputRequired }: ToolCallOutcome, call: CallContext): object {
    if (inputRequired) {
      // An InputRequiredResult: no cache hints (the spec forbids them here).
      const answer: JsonObject = {
        resultType: "input_required",
        inputRequests: inputRequired.inputRequests,
        _meta: { [MetaKey.serverInfo]: this.#serverInfo },
      };
      if (inputRequired.requestState !== undefined) {
        answer.requestState = inputRequired.requestState;
      }
      return { json: JSON.stringify(answer) };
    }
    if (
      ERAS[call.era].structuredContentIsObject && "structuredContent" in result &&
      !isObject(result.structuredContent)
    ) {
      const { structuredContent: _, ...carried } = result;
      return carried;
    }
    return result;
  }

  /** The listed tool `name`, if the caller's {@link ToolAccess} allows it. */
  #visibleTool(catalog: PreparedCatalog, name: string, auth: unknown): PreparedTool | undefined {
    const tool = catalog.toolsByName.get(name);
    if (!tool) return undefined;
    const access = this.#options.toolAccess?.(auth);
    return access && !access.allows(name) ? undefined : tool;
  }

  /**
   * Check the arguments and run the tool: synchronous when the tool's
   * dispatch returns a plain result, a promise when it returns one.
   */
  #runTool(
    tool: PreparedTool,
    args: unknown,
    call: CallContext,
  ): ToolCallOutcome | Promise<ToolCallOutcome> {
    const name = tool.wire.name;
    if (!isObject(args)) {
      this.#refused("schema", 400, name);
      return { status: 400, result: errorResult(`Arguments for tool "${name}" must be an object`) };
    }
    // Most arguments are shallow with plain numbers: one read-only walk says
    // so, and the two exact checks below run only when it cannot.
    const plain = isShallowAndExact(args, MAX_ARGUMENT_DEPTH);
    if (!plain && nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
      this.#refused("schema", 400, name);
      return {
        status: 400,
        result: errorResult(
          `Invalid arguments for tool "${name}": they nest deeper than ${MAX_ARGUMENT_DEPTH} levels`,
        ),
      };
    }
    const inexact = plain ? null : roundedIntegerAt(args);
    if (inexact !== null) {
      this.#refused("schema", 400, name);
      return {
        status: 400,
        result: errorResult(
          `Invalid arguments for tool "${name}": the number at ${inexact} is an integer beyond ` +
            `2^53 or beyond the largest double (1e400), or has more digits than a double holds, ` +
            `which cannot be passed on exactly; ` +
            `send it as a string`,
        ),
      };
    }
    const problems = tool.validate(args);
    if (problems.length > 0) {
      // The problems may quote argument values: the log names the rule only.
      this.#refused("schema", 400, name);
      return {
        status: 400,
        result: errorResult(`Invalid arguments for tool "${name}": ${problems.join("; ")}`),
      };
    }
    const declared = pick(args, tool.declared);
    let answer: CallToolResult | Promise<CallToolResult>;
    try {
      answer = this.#options.dispatch!(name, declared, call);
    } catch (error) {
      return this.#toolFailed(error, name, call);
    }
    if (isThenable<CallToolResult>(answer)) {
      return Promise.resolve(answer).then(
        (result) => this.#toolAnswered(tool, result, call),
        (error) => this.#toolFailed(error, name, call),
      );
    }
    return this.#toolAnswered(tool, answer, call);
  }

  /** What a tool returned, checked against what it advertises and cleaned. */
  #toolAnswered(tool: PreparedTool, result: CallToolResult, call: CallContext): ToolCallOutcome {
    const name = tool.wire.name;
    try {
      if (!isObject(result) || !Array.isArray(result.content)) {
        this.#log({ level: "error", event: "malformed_tool_result", tool: name });
        return { status: 500, result: errorResult(`Tool "${name}" returned a malformed result`) };
      }
      if (result.isError) return { status: 500, result: cleanResult(result, name) };
      if (tool.validateOutput) {
        // One schema, one source: what outputSchema advertises, a success delivers.
        let problems = "structuredContent" in result
          ? tool.validateOutput(result.structuredContent)
          : ["no structuredContent"];
        if (problems.length > 0 && "structuredContent" in result) {
          // Numbers kept as their source text (JSON.rawJSON, src/mcp/text.ts) are
          // numbers to the schema: check the value as JSON.parse would read it.
          problems = tool.validateOutput(JSON.parse(JSON.stringify(result.structuredContent)));
        }
        if (problems.length > 0) {
          this.#log({ level: "error", event: "malformed_tool_result", tool: name, problems });
          return {
            status: 500,
            result: errorResult(
              `Tool "${name}" returned a result that does not match its outputSchema`,
            ),
          };
        }
      }
      const clean = cleanResult(result, name);
      return { status: clean.isError ? 500 : 200, result: clean };
    } catch (error) {
      return this.#toolFailed(error, name, call);
    }
  }

  /** A tool that threw or rejected: its own answer, a cancellation, or a logged failure. */
  #toolFailed(error: unknown, name: string, call: CallContext): ToolCallOutcome {
    if (error instanceof InputRequiredError) {
      if (call.input) return { status: 200, result: { content: [] }, inputRequired: error };
      return {
        status: 403,
        result: errorResult(
          `Tool "${name}" needs input from the client (${error.message}), which cannot be ` +
            `asked for over this transport or revision; nothing was run`,
        ),
      };
    }
    if (error instanceof ToolError) {
      const result = errorResult(error.message);
      if (error.structuredContent) result.structuredContent = error.structuredContent;
      return { status: error.status, result };
    }
    if (call.signal.aborted) {
      // A host that cancels with a ToolError (a server shutdown) says why.
      const reason = call.signal.reason;
      if (reason instanceof ToolError) {
        return { status: reason.status, result: errorResult(reason.message) };
      }
      return { status: 499, result: errorResult(`Tool "${name}" was cancelled`) };
    }
    this.#log({
      level: "error",
      event: "tool_failed",
      tool: name,
      error: error instanceof Error ? error.message : String(error),
    });
    return { status: 500, result: errorResult(`Tool "${name}" failed with an internal error`) };
  }

  async #readResource(params: Record<string, unknown>, call: CallContext): Promise<object> {
    const uri = params.uri;
    if (typeof uri !== "string") {
      throw new McpError(ErrorCode.InvalidParams, "resources/read needs params.uri (a string)");
    }
    // Never echo what the caller sent unbounded: the URI is clipped in the error.
    const notFound = (reason?: string) =>
      new McpError(
        ERAS[call.era].resourceNotFound,
        "Resource not found",
        reason ? { uri: clip(uri), reason: clip(reason) } : { uri: clip(uri) },
      );
    const catalog = await this.#catalog();
    let vars: Record<string, string> | null = catalog.resourcesByUri.has(uri) ? {} : null;
    for (let i = 0; vars === null && i < catalog.templates.length; i++) {
      vars = catalog.templates[i].template.match(uri);
    }
    if (vars === null) throw notFound();
    let contents: ResourceContents[];
    try {
      contents = await this.#options.readResource!(uri, {
        signal: call.signal,
        era: call.era,
        protocolVersion: call.protocolVersion,
        auth: call.auth,
        params: vars,
      });
    } catch (error) {
      if (error instanceof NotFoundError) throw notFound(error.message);
      throw error;
    }
    if (!Array.isArray(contents) || contents.length === 0) throw notFound();
    return { contents: contents.map((c) => wireContents(cleanOut(c), uri)) };
  }

  async #getPrompt(params: Record<string, unknown>, call: CallContext): Promise<object> {
    const name = params.name;
    if (typeof name !== "string") {
      throw new McpError(ErrorCode.InvalidParams, "prompts/get needs params.name (a string)");
    }
    const prompt: PreparedPrompt | undefined = (await this.#catalog()).promptsByName.get(name);
    if (!prompt) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: "${clip(name)}"`, {
        name: clip(name),
      });
    }
    const args = params.arguments ?? {};
    if (!isObject(args)) {
      throw new McpError(ErrorCode.InvalidParams, "prompts/get params.arguments must be an object");
    }
    if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
      throw new McpError(ErrorCode.InvalidParams, `Arguments for prompt "${name}" nest too deeply`);
    }
    const problems = prompt.validate(args);
    if (problems.length > 0) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for prompt "${name}": ${problems.join("; ")}`,
        { name, problems },
      );
    }
    try {
      const result = await this.#options.getPrompt!(
        name,
        pick(args, prompt.declared) as Record<string, string>,
        call,
      );
      if (!isObject(result) || !Array.isArray(result.messages)) {
        throw new Error(`prompt "${name}" reader returned no messages list`);
      }
      return cleanOut(result);
    } catch (error) {
      if (error instanceof NotFoundError) {
        throw new McpError(ErrorCode.InvalidParams, `Prompt "${name}" could not be rendered`, {
          name,
          reason: error.message,
        });
      }
      throw error;
    }
  }
}

/** The revision and version a request is served under. */
interface Selected {
  era: Era;
  version: string;
}

/** A modern request's version: the one this server serves, or `-32022`. */
function modernVersion(version: string): Selected {
  if (version !== MODERN_VERSION) {
    throw new McpError(
      ErrorCode.UnsupportedProtocolVersion,
      `Unsupported protocol version: ${clip(version)}`,
      { supported: [...SUPPORTED_VERSIONS], requested: clip(version) },
    );
  }
  return { era: "modern", version };
}

/** The abort reason of a request the client cancelled with `notifications/cancelled`. */
class ClientCancelled extends Error {
  constructor() {
    super("cancelled by the client");
    this.name = "ClientCancelled";
  }
}

/** The id of a message that may be malformed, when it can be read; else `null`. */
function classifyId(message: unknown): RequestId | null {
  if (typeof message !== "object" || message === null || !("id" in message)) return null;
  const id = (message as { id: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) || isRawId(id)
    ? id as RequestId
    : null;
}

/**
 * The {@link CallContext} of one request. Its `signal` is built on first read:
 * most handlers never look at it, and building it costs more than the rest of a
 * cached answer (an HTTP request's signal is a pending operation per request;
 * `AbortSignal.any` keeps weak references the collector must trace). A class
 * getter rather than an object-literal getter: a per-request closure gives
 * every context its own hidden class (measured: peak RSS doubled under load).
 */
class RequestCall implements CallContext {
  readonly era: Era;
  readonly protocolVersion: string;
  readonly auth?: unknown;
  readonly caller?: string;
  input?: CallContext["input"];
  elicit?: CallContext["elicit"];
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

  /** Aborted when the transport's signal or (with a session) the request's controller is. */
  get signal(): AbortSignal {
    if (this.#signal) return this.#signal;
    const outer = this.#ctx.signal;
    const own = (this.#controller ?? new AbortController()).signal;
    this.#signal = outer && this.#controller ? AbortSignal.any([outer, own]) : outer ?? own;
    return this.#signal;
  }
}

function listOf(
  catalog: PreparedCatalog,
  method: string,
): [string[], unknown[]] {
  switch (method) {
    case "tools/list":
      return [catalog.tools.map((t) => t.wire.name), catalog.tools.map((t) => t.wire)];
    case "resources/list":
      return [catalog.resources.map((r) => r.uri), catalog.resources];
    case "resources/templates/list":
      return [
        catalog.templates.map((t) => t.wire.uriTemplate),
        catalog.templates.map((t) => t.wire),
      ];
    default:
      return [catalog.prompts.map((p) => p.wire.name), catalog.prompts.map((p) => p.wire)];
  }
}

/** Index of the first key strictly greater than `after` in a sorted list. */
function firstAfter(keys: string[], after: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Copy only the declared keys, as own data properties: a key such as
 * `__proto__` or `constructor` becomes a plain property and changes no prototype.
 */
function pick(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  // An assignment makes an own data property for every key but `__proto__`,
  // the one accessor Object.prototype has; that key is defined instead (as
  // CreateDataProperty would). Cheaper than building entries for fromEntries.
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (!Object.hasOwn(source, key)) continue;
    if (key === "__proto__") {
      Object.defineProperty(out, key, {
        value: source[key],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    } else out[key] = source[key];
  }
  return out;
}

/**
 * One reader item as it goes on the wire: exactly one of `text` (a string) or
 * `blob` (raw bytes, sent base64). Anything else is the reader's fault
 * (`-32603`, logged), never guessed at.
 */
function wireContents(contents: ResourceContents, uri: string): WireResourceContents {
  if (!isObject(contents) || typeof contents.uri !== "string") {
    throw new Error(`reader for ${uri} returned an item without a uri`);
  }
  const text = "text" in contents && typeof contents.text === "string";
  const blob = "blob" in contents && contents.blob instanceof Uint8Array;
  if (text === blob) {
    throw new Error(
      `reader for ${uri} returned an item with ${
        text ? "both text and blob" : "neither text nor blob bytes"
      }`,
    );
  }
  if (blob) {
    const { blob, ...rest } = contents as { blob: Uint8Array };
    return { ...rest, blob: toBase64(blob) } as WireResourceContents;
  }
  return contents as WireResourceContents;
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** How deep a result may nest for {@link cleanOut} to walk it. */
const MAX_RESULT_DEPTH = 256;

/**
 * Clean text out (src/mcp/text.ts): every string of a result a handler
 * returned, keys included, is made well-formed and free of terminal control
 * sequences before it is sent, whatever the mode or host.
 * @throws {Error} when the value nests deeper than {@link MAX_RESULT_DEPTH}
 */
function cleanOut<T>(value: T): T {
  // One walk: cleanDeep refuses (RangeError) past the depth instead of recursing on.
  return cleanDeep(value, MAX_RESULT_DEPTH);
}

/** {@link cleanOut} for a tool result: too deep becomes an error result, not a throw. */
function cleanResult(result: CallToolResult, name: string): CallToolResult {
  try {
    return cleanOut(result);
  } catch {
    return errorResult(
      `Tool "${name}" returned a result nested deeper than ${MAX_RESULT_DEPTH} levels`,
    );
  }
}

/**
 * Whether a number's shortest spelling needs more than 15 significant digits:
 * beyond 2^53, such a value is what JSON.parse made of longer digits (2^53+1
 * arrives as 9007199254740992), while `1e21` or `2e22` are exact as written.
 * (A number whose source text holds more digits than its double, such as
 * 1000000000000000000001 read as 1e21, is caught earlier: `parseMessage` and
 * `parseArguments` in src/mcp/jsonrpc.ts keep its text, and
 * {@link roundedIntegerAt} refuses it.)
 */
function longDigits(v: number): boolean {
  const mantissa = String(Math.abs(v)).split("e")[0].replace(".", "").replace(/0+$/, "");
  return mantissa.length > 15;
}

/**
 * Where (`a.b[2]`) an argument holds an integer beyond ±(2^53 - 1) that
 * JSON.parse has visibly rounded (see {@link longDigits}), a number beyond
 * the largest double that it made Infinity, or a number the parser kept as its
 * source text because a double cannot hold it: passing it on would send other
 * digits (or `null`, or the text "Infinity" in a path). `null` when there is none. Iterative; `args` is already
 * depth-bounded.
 */
function roundedIntegerAt(args: unknown): string | null {
  const stack: [unknown, string][] = [[args, ""]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v) && longDigits(v)) {
      return at || "(top)";
    }
    // JSON.parse reads a number past the largest double (1e400) as Infinity,
    // which no schema should take and JSON.stringify would send as null.
    if (typeof v === "number" && !Number.isFinite(v)) return at || "(top)";
    // A number JSON.parse rounded, kept as its source text by parseMessage.
    if (isRawJson(v)) return at || "(top)";
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) v.forEach((c, i) => stack.push([c, `${at}[${i}]`]));
    else {
      for (const [k, c] of Object.entries(v)) {
        stack.push([c, at ? `${at}.${clip(k)}` : clip(k)]);
      }
    }
  }
  return null;
}

/** A `CallToolResult` reporting a failure as text. */
export function errorResult(message: string): CallToolResult {
  return { content: [{ type: "text", text: cleanText(message) }], isError: true };
}

/** A caller's text as an error may quote it: at most 120 characters, clean (src/mcp/text.ts). */
function clip(text: string): string {
  return cleanText(text.length > 120 ? `${text.slice(0, 117)}...` : text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
