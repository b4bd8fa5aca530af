/**
 * What a host hands the MCP core and what the core hands back to it: the
 * server's options ({@link ServerOptions}), the host's tool, resource and
 * prompt functions, the context every handler receives, cache hints, tool
 * access per caller and the log sink. Types only, plus the default logger.
 *
 * @module
 */
import type { JsonObject } from "./jsonrpc.ts";
import type { Era } from "./revisions.ts";
import type { StateKeys } from "./signed_state.ts";
import type { SchemaProfile } from "./schema_profile.ts";
import type { CallToolResult, Catalog, GetPromptResult, Icon, ResourceContents } from "./types.ts";

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
  /**
   * A task-augmented `tools/call` (2025-11-25, `ServerOptions.tasks`): the
   * request's `params.task` (`{ttl?}`). The host starts the tool as a task and
   * answers {@link createdTaskResult} of the `Task`, or an error result.
   */
  task?: JsonObject;
  /** Whatever the transport's `authorize` hook returned for this request, if anything. */
  auth?: unknown;
  /**
   * Who signed state issued in this request is bound to: the server's
   * `callerOf(auth)` (by default `auth.caller`, which weir's bearer-token and
   * OAuth checks set); absent for an unauthenticated request.
   */
  caller?: string;
  /**
   * The tools this caller may see and call (the server's `toolAccess` and the
   * tools the `authorize` verdict names, both holding), set by the core on
   * `tools/call` and the tool API before dispatch; absent when every tool is
   * the caller's. A tool that reports on other tools (weir's info tool) names
   * only those this allows, so it says no more than `tools/list` does.
   */
  tools?: ToolAccess;
  /**
   * `tools/call` over MCP whose request carries `_meta.progressToken`, on a
   * transport that can send a message before the answer (stdio; HTTP, which
   * then answers with an event stream): send `notifications/progress` for this
   * call, with the caller's token. A value not above the last one sent is
   * dropped (progress increases), and so is anything sent once the call is
   * answered. Absent otherwise (no token, the HTTP tool API).
   */
  progress?: (progress: number, total?: number, message?: string) => void;
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
 * The host's tool implementation. Called only for a listed tool, with the
 * arguments object exactly as it validated against the tool's advertised
 * `inputSchema`: every key the schema admits reaches dispatch (declare
 * `additionalProperties: false` to admit only the listed `properties`), with
 * its value unchanged; nothing is dropped. A tool listed without an
 * `inputSchema` takes no arguments and is handed `{}`. A host that forwards
 * the arguments to another server can send them as the caller spelled their
 * numbers: `spelledArguments` (src/mcp/jsonrpc.ts). Return a
 * {@link CallToolResult}; throw a {@link ToolError} to report a failure the
 * model should see.
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
  request: WrappedRequest,
  run: () => Promise<T>,
) => Promise<T>;

/** What {@link ServerOptions.around} is told of one request. */
export interface WrappedRequest {
  /** The JSON-RPC method (`tools/call` for a call through the HTTP tool API). */
  method: string;
  /** `params.name` of `tools/call` and `prompts/get`; the tool of a tool API call. */
  name?: string;
  /** The protocol revision it is answered under (`modern` for the tool API). */
  era: Era;
  /** What the transport's `authorize` hook returned for the request, if anything. */
  auth?: unknown;
  /**
   * The caller's W3C Trace Context (`traceparent`, and `tracestate` beside it):
   * from `params._meta` when it holds a `traceparent`, else from the HTTP
   * request's headers; unchecked text, bounded by the params and header limits.
   */
  traceparent?: string;
  /** See {@link WrappedRequest.traceparent}. */
  tracestate?: string;
  /** The call came through the HTTP tool API (`POST /api/<tool>`), not JSON-RPC. */
  toolApi?: boolean;
}

/**
 * The caller's W3C Trace Context for `around`: `params._meta.traceparent` (and
 * its `tracestate`) when given, else the HTTP request's `traceparent` and
 * `tracestate` headers. Read only when a host wraps requests.
 */
export function traceContextOf(
  params: Record<string, unknown>,
  headers: Headers | undefined,
): { traceparent?: string; tracestate?: string } {
  const meta = params._meta;
  if (typeof meta === "object" && meta !== null) {
    const { traceparent, tracestate } = meta as Record<string, unknown>;
    if (typeof traceparent === "string") {
      return typeof tracestate === "string" ? { traceparent, tracestate } : { traceparent };
    }
  }
  const traceparent = headers?.get("traceparent");
  if (!traceparent) return {};
  const tracestate = headers!.get("tracestate");
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/**
 * A host's tasks (MCP 2025-11-25 "Tasks"): the core checks a task-augmented
 * `tools/call` as any call (the tool the caller may see, its
 * `execution.taskSupport`, the arguments against the schema) and hands it to
 * `dispatch` with {@link CallContext.task} set; the host starts the task and
 * answers {@link createdTaskResult}. The core binds the host's task ids to
 * the caller (clients see a signed handle, src/mcp/tasks.ts) and shapes the
 * answers; these run the rest. Task ids the host returns and receives are its own.
 */
export interface TaskHost {
  /** `tasks/get` of one of the host's tasks. @returns the `Task` */
  get(taskId: string, tool: string, ctx: CallContext): Promise<JsonObject>;
  /** `tasks/result`: waits until the task ends. @returns the tool's `CallToolResult` */
  result(taskId: string, tool: string, ctx: CallContext): Promise<CallToolResult>;
  /** `tasks/cancel`. @returns the cancelled `Task` */
  cancel(taskId: string, tool: string, ctx: CallContext): Promise<JsonObject>;
}

/** The `_meta` key of the result a host answers a task-augmented call with. */
export const CREATED_TASK_META = "weir.dev/created-task";

/**
 * What a host's dispatch answers for a task-augmented call (see {@link CallContext.task}).
 *
 * @example A task the host started
 * ```ts
 * import { CREATED_TASK_META, createdTaskResult } from "./options.ts";
 * const answer = createdTaskResult({ taskId: "t-1", status: "working" });
 * const task = answer._meta?.[CREATED_TASK_META] as { taskId: string };
 * if (task.taskId !== "t-1" || answer.content.length !== 0) throw new Error(JSON.stringify(answer));
 * ```
 */
export function createdTaskResult(task: JsonObject): CallToolResult {
  return { content: [], _meta: { [CREATED_TASK_META]: task } };
}

/** Where the core writes log events; the default writes JSON lines to stderr. */
export type Logger = (event: LogEvent) => void;

/**
 * The default logger: one JSON object per line on stderr (stdout is the stdio wire).
 *
 * @example One JSON line on stderr
 * ```ts
 * import { stderrLogger } from "./options.ts";
 * stderrLogger({ level: "info", event: "example", tool: "echo" });
 * ```
 */
export const stderrLogger: Logger = (event) => {
  console.error(JSON.stringify({ time: new Date().toISOString(), ...event }));
};

/** Options of {@link McpServer}. */
export interface ServerOptions {
  /** `serverInfo.name`. */
  name: string;
  /**
   * Advertise `tools.listChanged: true`: the host calls `toolsChanged()` on
   * the server when the tools its catalog lists change, and clients that
   * can hear it are told (see `McpServer.toolsChanged`). Default false.
   */
  toolsListChanged?: boolean;
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
  /**
   * Runs task-augmented `tools/call` and `tasks/get`, `tasks/result`,
   * `tasks/cancel` (MCP 2025-11-25 "Tasks", experimental): the server then
   * advertises `tasks` to 2025-11-25 clients (src/mcp/tasks.ts).
   */
  tasks?: TaskHost;
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
   * The tools a listed resource belongs to (an MCP Apps interface is its
   * tools' `_meta.ui.resourceUri`), or `undefined` for a resource of every
   * caller. When the caller's tools are narrowed ({@link toolAccess}, or the
   * tools an `authorize` verdict names), a resource that belongs to tools is
   * listed by `resources/list` and read by `resources/read` only for a caller
   * allowed one of them ("Resource not found" otherwise), and the narrowed
   * `resources/list` is marked `cacheScope: "private"` under 2026-07-28.
   */
  resourceTools?: (uri: string) => readonly string[] | undefined;
  /**
   * Arguments of a tool that its caller may not send because the server sets
   * them (a host's pinned or hidden arguments, which its input schema does
   * not name), each with why, as a refusal says it after `argument "NAME" `
   * (e.g. `is set by the server, not by the caller: leave it out`). Asked only
   * when arguments fail the input schema: such an argument is then refused in
   * these words rather than as undeclared.
   */
  heldArguments?: (tool: string) => ReadonlyMap<string, string> | undefined;
  /**
   * The dialect of JSON Schema tools' input schemas are listed in (default
   * `full`: as given). Arguments are always validated against the schema as
   * given, whatever the profile (src/mcp/schema_profile.ts).
   */
  schemaProfile?: SchemaProfile;
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
