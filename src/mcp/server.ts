/**
 * The MCP server core: one object that answers JSON-RPC messages under both
 * protocol revisions (2025-11-25 and 2026-07-28), for a catalog and dispatch
 * function the host injects. It knows no transport: stdio and HTTP hand it
 * decoded messages and write back what it returns.
 *
 * {@link McpServer} only wires the method families together; each lives in
 * its own module:
 *
 * - src/mcp/routing.ts: messages told apart, the revision chosen, a method
 *   routed and its answer serialized; `initialize`, `server/discover`, `ping`
 * - src/mcp/tools.ts: `tools/call` and the HTTP tool API's calls
 * - src/mcp/resources.ts: `resources/read`
 * - src/mcp/prompts.ts: `prompts/get`
 * - src/mcp/lists.ts: the four list methods and their cursors
 * - src/mcp/results.ts: results and errors on their way out
 * - src/mcp/setup.ts: what a server settles once (options, capabilities, catalog)
 * - src/mcp/options.ts, errors.ts, session.ts: the types a host and a
 *   transport use, re-exported here
 *
 * @module
 */
import { ErrorCode, errorResponse, type JsonObject } from "./jsonrpc.ts";
import type { ServerOptions } from "./options.ts";
import { errorResult } from "./results.ts";
import type { MessageContext } from "./session.ts";
import { ServerSetup } from "./setup.ts";
import { classifyId, refusedMessage, type Reply, route } from "./routing.ts";
import { callToolApi, type ToolCallOutcome } from "./tools.ts";
import { serverDigest } from "./surface_digest.ts";

export type {
  CacheHint,
  CallContext,
  Dispatch,
  LogEvent,
  Logger,
  PromptReader,
  RequestWrapper,
  ResourceReader,
  ServerOptions,
  TaskHost,
  ToolAccess,
  WrappedRequest,
} from "./options.ts";
export { createdTaskResult, stderrLogger } from "./options.ts";
export { InputRequiredError, NotFoundError, ToolError } from "./errors.ts";
export { type MessageContext, Session } from "./session.ts";
export { errorResult } from "./results.ts";
export type { Reply } from "./routing.ts";
export type { ToolCallOutcome } from "./tools.ts";

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
  readonly #setup: ServerSetup;

  /**
   * Prepare a server: a static catalog is validated and compiled once, here.
   * @param options the catalog, dispatch and readers, and server settings
   * @throws {CatalogError} when a static catalog is malformed
   * @throws {RangeError} when `pageSize` is not a positive integer
   */
  constructor(options: ServerOptions) {
    this.#setup = new ServerSetup(options);
  }

  /** The capabilities this server advertises (the same under both revisions). */
  get capabilities(): Readonly<JsonObject> {
    return this.#setup.capabilities;
  }

  /** `serverInfo` as sent in `initialize` and in modern `_meta`. */
  get serverInfo(): Readonly<JsonObject> {
    return this.#setup.serverInfo;
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
      const reply = route(this.#setup, message, ctx);
      return reply instanceof Promise ? await reply : reply;
    } catch (error) {
      // Every path answers for itself; this net keeps a failure nobody
      // foresaw (a value too deep to serialize, say) an answer, not a crash.
      this.#setup.log({
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

  /**
   * Tell clients that listen that the tools the catalog lists changed: with
   * `toolsListChanged` set, every stdio connection on the 2025-11-25 handshake
   * is sent `notifications/tools/list_changed`. Nothing else can carry it:
   * stateless HTTP keeps no stream to a client, and 2026-07-28 sends it only
   * on a `subscriptions/listen` stream, which this core does not serve.
   */
  toolsChanged(): void {
    if (this.#setup.options.toolsListChanged) this.#setup.toolsChanged();
  }

  /**
   * A short digest of the surface a caller lists now: tools (definitions as
   * listed), resources, resource templates and prompts, the instructions and
   * whether tasks are offered (src/mcp/surface_digest.ts),
   * the same under both revisions and on every replica serving the same
   * catalog. It is also `_meta["weir.dev/surface"]` of `initialize` and
   * `server/discover` results, for the caller that asked.
   * @param caller whose view: `{auth}` as the transport's `authorize` returned
   *   it (narrowed by `toolAccess` as `tools/list` is); absent, every tool
   * @returns 16 lowercase hex digits
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { McpServer } from "./server.ts";
   * const tool = { name: "echo", inputSchema: { type: "object" } };
   * const one = new McpServer({ name: "a", catalog: { tools: [tool], resources: [], prompts: [] }, dispatch: () => ({ content: [] }) });
   * const two = new McpServer({ name: "b", catalog: { tools: [tool], resources: [], prompts: [] }, dispatch: () => ({ content: [] }) });
   * assert.equal(await one.surfaceDigest(), await two.surfaceDigest());
   * ```
   */
  async surfaceDigest(caller?: { auth: unknown }): Promise<string> {
    const s = this.#setup;
    return await serverDigest(s, caller ? s.toolAccess(caller.auth) : undefined);
  }

  /**
   * Serialize a parse failure of a message that never became JSON (`-32700`,
   * no id), and write its audit line (rule `parse_error`, status 400).
   * Transports call it once per message they could not parse.
   */
  parseError(detail = "the message is not valid JSON"): Reply {
    refusedMessage(this.#setup, "parse_error", detail);
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
   * @param ctx cancellation and auth; the HTTP request's headers, where `around`
   *   finds the caller's trace context (`traceparent`, `tracestate`)
   */
  async callTool(
    name: string,
    args: unknown,
    ctx: { signal?: AbortSignal; auth?: unknown; headers?: Headers } = {},
  ): Promise<ToolCallOutcome> {
    try {
      return await callToolApi(this.#setup, name, args, ctx);
    } catch (error) {
      // The tool API's last net, as handle() has: an answer, never a crash.
      this.#setup.log({
        level: "error",
        event: "internal_error",
        error: error instanceof Error ? error.name : "unknown",
      });
      return { status: 500, code: "internal_error", result: errorResult("Internal error") };
    }
  }
}
