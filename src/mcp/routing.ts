/**
 * Routing one JSON-RPC message: requests, notifications and responses told
 * apart, the revision that serves a request chosen (2025-11-25 after
 * `initialize`, or 2026-07-28 from `params._meta`, with its header checks),
 * the method found among those this server advertises under that revision and
 * run (inside the host's `around` hook), cancellation, and the answer
 * serialized with the revision's HTTP status. Also the handshake methods
 * (`initialize`, `server/discover`, `ping`).
 *
 * @module
 */
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
  MetaKey,
  methodRule,
  MODERN_VERSION,
  SUPPORTED_VERSIONS,
} from "./revisions.ts";
import { checkHeaders } from "./headers.ts";
import { type CallContext, traceContextOf } from "./options.ts";
import { asMcpError, clip, decorate, isObject } from "./results.ts";
import { type MessageContext, RequestCall } from "./session.ts";
import type { ServerSetup } from "./setup.ts";
import { list } from "./lists.ts";
import { toolsCall } from "./tools.ts";
import { readResource } from "./resources.ts";
import { getPrompt } from "./prompts.ts";
import { serverDigest, SURFACE_META } from "./surface_digest.ts";
import { taskMethod } from "./tasks.ts";
import { checkParams, MAX_PARAMS_DEPTH, tooDeepAt } from "./params.ts";

/** The answer to one message: the serialized JSON-RPC response (or none) and an HTTP status. */
export interface Reply {
  /** HTTP status to send: 200, 202 (no body), or the revision's status for an error. */
  status: number;
  /** Serialized JSON-RPC response; `null` for a notification or a client response. */
  body: string | null;
}

type Handler = (
  s: ServerSetup,
  params: Record<string, unknown>,
  call: CallContext,
  ctx: MessageContext,
) => object | { json: string } | Promise<object | { json: string }>;

/** The methods a server can serve, by name (each also needs its revision and capability). */
const HANDLERS: Record<string, Handler> = {
  "initialize": (s, p, call, ctx) => initialize(s, p, call, ctx),
  "ping": () => Promise.resolve({}),
  "server/discover": (s, _p, call) => discover(s, call),
  "tools/list": (s, p, call) => list(s, "tools/list", "tools", p, call),
  "tools/call": (s, p, call) => toolsCall(s, p, call),
  "resources/list": (s, p, call) => list(s, "resources/list", "resources", p, call),
  "resources/templates/list": (s, p, call) =>
    list(s, "resources/templates/list", "resourceTemplates", p, call),
  "resources/read": (s, p, call) => readResource(s, p, call),
  "prompts/list": (s, p, call) => list(s, "prompts/list", "prompts", p, call),
  "prompts/get": (s, p, call) => getPrompt(s, p, call),
  "tasks/get": (s, p, call) => taskMethod(s, "tasks/get", p, call),
  "tasks/result": (s, p, call) => taskMethod(s, "tasks/result", p, call),
  "tasks/cancel": (s, p, call) => taskMethod(s, "tasks/cancel", p, call),
};

/** `run()` as a promise, whether it returns, resolves, throws or rejects (for `around`). */
function promised<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Answer one decoded message (see `McpServer.handle`). Synchronous where it
 * can be: a request's answer is the one promise it returns.
 */
export function route(
  s: ServerSetup,
  message: unknown,
  ctx: MessageContext,
): Reply | Promise<Reply> {
  const incoming = classifyMessage(message);
  switch (incoming.kind) {
    case "invalid":
      refusedMessage(s, "invalid_request", incoming.error.message);
      return { status: 400, body: errorResponse(incoming.id, incoming.error.toJSON()) };
    case "response": {
      // A client's answer is bounded like a request's params before a host reads it.
      const deep = tooDeepAt(
        incoming.error ?? incoming.result,
        MAX_PARAMS_DEPTH,
        incoming.error === undefined ? "result" : "error",
      );
      ctx.session?.settle(
        incoming.id,
        deep === null ? incoming.result : undefined,
        deep === null
          ? incoming.error
          : { message: `the client's answer nests deeper than ${MAX_PARAMS_DEPTH} levels` },
      );
      return { status: 202, body: null };
    }
    case "notification":
      notification(incoming.message, ctx);
      return { status: 202, body: null };
    case "request":
      return answerRequest(s, incoming.message, ctx);
  }
}

/** A notification: `notifications/cancelled` aborts the request it names; others need nothing. */
function notification(message: JsonRpcNotification, ctx: MessageContext): void {
  if (message.method === "notifications/cancelled") {
    const id = message.params?.requestId;
    if (typeof id === "string" || typeof id === "number" || isRawId(id)) {
      ctx.session?.inFlight.get(idKey(id))?.abort(new ClientCancelled());
    }
  }
  // notifications/initialized and anything else: nothing to do.
}

/** A request: its revision, its method and handler, its answer or error as that revision sends it. */
async function answerRequest(
  s: ServerSetup,
  request: JsonRpcRequest,
  ctx: MessageContext,
): Promise<Reply> {
  const { id, method } = request;
  const params = request.params ?? {};
  let era: Era = "modern";
  let stage: "classify" | "dispatch" = "classify";
  let controller: AbortController | undefined;
  try {
    // Bounded and typed before anything reads them (src/mcp/params.ts).
    checkParams(method, params);
    let selected = selectEra(s, request, params, ctx);
    if (selected instanceof Promise) selected = await selected;
    era = selected.era;
    const rule = methodRule(method);
    if (!rule || !rule.eras.includes(era) || !s.advertises(rule)) {
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
        s.callerOf(ctx.auth),
      );
      const around = s.options.around;
      let result: object | { json: string };
      if (around) {
        result = await around(
          {
            method,
            name: typeof params.name === "string" ? params.name : undefined,
            era,
            auth: ctx.auth,
            ...traceContextOf(params, ctx.headers),
          },
          () => promised(() => HANDLERS[method](s, params, call, ctx)),
        );
      } else {
        // A handler answers synchronously when it can (tools/call of a tool
        // that returns a plain result): no promise to wait for.
        const answer = HANDLERS[method](s, params, call, ctx);
        result = answer instanceof Promise ? await answer : answer;
      }
      // A request the client cancelled is not answered (MCP "Cancellation").
      if (controller?.signal.reason instanceof ClientCancelled) {
        return { status: 202, body: null };
      }
      const json = "json" in result && typeof result.json === "string"
        ? result.json
        : JSON.stringify(decorate(s, era, rule, result));
      return { status: 200, body: resultResponse(id, json) };
    } finally {
      ctx.session?.inFlight.delete(idKey(id));
    }
  } catch (error) {
    if (controller?.signal.reason instanceof ClientCancelled) return { status: 202, body: null };
    const mcp = asMcpError(s, error, method);
    const table = ERAS[era].httpStatus;
    const status = stage === "classify" && mcp.code === ErrorCode.InvalidParams
      ? 400
      : table[mcp.code] ?? 200;
    if (stage === "classify") {
      // Refused before any handler ran: the request itself (its params, its
      // method, its revision's headers). A handler's own refusals log themselves.
      refusedMessage(
        s,
        mcp.code === ErrorCode.InvalidParams
          ? "invalid_params"
          : mcp.code === ErrorCode.MethodNotFound
          ? "unknown_method"
          : "invalid_request",
        undefined,
        method,
        status,
        (mcp.data as { path?: unknown } | undefined)?.path,
      );
    }
    return { status, body: errorResponse(id, mcp.toJSON()) };
  }
}

/**
 * The audit line of a message refused before any handler ran (the shape of
 * `src/ops/audit.ts`, docs/operating.md "Audit lines"): the rule, the status,
 * the method (when weir serves it) and the refused field's path; never a
 * value the client sent.
 * `reason` is weir's own fixed words (an envelope's -32600), never the client's.
 */
export function refusedMessage(
  s: ServerSetup,
  rule: "parse_error" | "invalid_request" | "invalid_params" | "unknown_method",
  reason?: string,
  method?: string,
  status = 400,
  path?: unknown,
): void {
  s.log({
    level: "warn",
    event: "refused",
    decision: "refuse",
    rule,
    status,
    // A method weir serves is named; any other is the client's text, and is not logged.
    ...(method !== undefined && methodRule(method) ? { method } : {}),
    ...(typeof path === "string" ? { path: clip(path) } : {}),
    ...(reason === undefined ? {} : { reason }),
  });
}

/**
 * Which revision serves this request (the dual-era classification of the
 * checklist, rules 1-5), with the modern `_meta`, header and version checks in
 * the order the 2026-07-28 transport page gives.
 */
function selectEra(
  s: ServerSetup,
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
    // logLevel, progressToken and clientInfo were held to their types by checkParams.
    const headers = ctx.headers;
    if (headers && request.method === "tools/call" && !s.static) {
      // A catalog function: its tools are known once it answers.
      return s.catalog().then((catalog) => {
        checkHeaders(headers, request, version, methodRule(request.method), catalog.toolsByName);
        return modernVersion(version);
      });
    }
    if (headers) {
      const tools = request.method === "tools/call" ? s.static!.toolsByName : null;
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
    if (ctx.session && typeof requested === "string") {
      ctx.session.legacyVersion = version;
      // Told when the tool list changes (toolsChanged), if the host says it can change.
      if (s.options.toolsListChanged) s.sessions.add(ctx.session);
    }
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

async function initialize(
  s: ServerSetup,
  params: Record<string, unknown>,
  call: CallContext,
  ctx: MessageContext,
): Promise<object> {
  const requested = params.protocolVersion;
  if (typeof requested !== "string") {
    throw new McpError(ErrorCode.InvalidParams, "initialize needs params.protocolVersion");
  }
  if (ctx.session && isObject(params.capabilities)) {
    ctx.session.clientCapabilities = params.capabilities as JsonObject;
  }
  const result: JsonObject = {
    protocolVersion: LEGACY_VERSIONS.includes(requested) ? requested : LEGACY_VERSION,
    capabilities: s.capabilities,
    serverInfo: s.serverInfo,
  };
  if (s.options.instructions) result.instructions = s.options.instructions;
  const { digest } = await callerSurface(s, call);
  result._meta = { [SURFACE_META]: digest };
  return result;
}

/**
 * `server/discover`: the versions, capabilities and instructions, and the
 * digest of the surface this caller lists (`_meta`); a caller-dependent
 * digest makes the result `cacheScope: "private"`.
 */
async function discover(s: ServerSetup, call: CallContext): Promise<{ json: string }> {
  // Tasks are a 2025-11-25 capability (src/mcp/tasks.ts).
  const { tasks: _, ...capabilities } = s.capabilities;
  const result: JsonObject = { supportedVersions: [...SUPPORTED_VERSIONS], capabilities };
  if (s.options.instructions) result.instructions = s.options.instructions;
  const { digest, narrowed } = await callerSurface(s, call);
  result._meta = { [SURFACE_META]: digest };
  return {
    json: JSON.stringify(decorate(s, call.era, methodRule("server/discover")!, result, narrowed)),
  };
}

/** The digest of what this caller lists (src/mcp/surface_digest.ts), and whether it is theirs alone. */
async function callerSurface(
  s: ServerSetup,
  call: CallContext,
): Promise<{ digest: string; narrowed: boolean }> {
  const access = s.toolAccess(call.auth);
  const digest = await serverDigest(s, access);
  return { digest, narrowed: access !== undefined };
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
export function classifyId(message: unknown): RequestId | null {
  if (typeof message !== "object" || message === null || !("id" in message)) return null;
  const id = (message as { id: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) || isRawId(id)
    ? id as RequestId
    : null;
}
