/**
 * weir: a guarded MCP server for a guardfile, and the MCP server core under it.
 *
 * The core serves MCP revisions 2025-11-25 and 2026-07-28 at once, for a
 * catalog (tools, resources, templates, prompts) and functions the host
 * injects, over stdio or a Web-standard HTTP handler. The guard is one host
 * of it, exported separately as `@weir/weir/guard` (`src/guard/mod.ts`):
 * `parseGuardfile` + `createGuard` turn a `*.mcp.kdl` file into a server whose
 * tools are exactly its grants.
 *
 * This module only re-exports; see each source module for details.
 *
 * @example A one-tool server, asked over its HTTP handler (2026-07-28, stateless)
 * ```ts
 * import { createHttpHandler, loopbackHosts, McpServer } from "@weir/weir";
 *
 * const server = new McpServer({
 *   name: "echo",
 *   version: "1.0.0",
 *   catalog: {
 *     tools: [{
 *       name: "echo",
 *       inputSchema: { type: "object", properties: { text: { type: "string" } } },
 *     }],
 *     resources: [],
 *     prompts: [],
 *   },
 *   dispatch: (_tool, { text }) => ({ content: [{ type: "text", text: String(text) }] }),
 * });
 * const handler = createHttpHandler(server, {
 *   authorize: () => true,
 *   allowedOrigins: [],
 *   allowedHosts: loopbackHosts(8787),
 * });
 * const response = await handler(
 *   new Request("http://127.0.0.1:8787/mcp", {
 *     method: "POST",
 *     headers: {
 *       host: "127.0.0.1:8787",
 *       "content-type": "application/json",
 *       accept: "application/json, text/event-stream",
 *       "mcp-protocol-version": "2026-07-28",
 *       "mcp-method": "tools/call",
 *       "mcp-name": "echo",
 *     },
 *     body: JSON.stringify({
 *       jsonrpc: "2.0",
 *       id: 1,
 *       method: "tools/call",
 *       params: {
 *         name: "echo",
 *         arguments: { text: "hi" },
 *         _meta: {
 *           "io.modelcontextprotocol/protocolVersion": "2026-07-28",
 *           "io.modelcontextprotocol/clientCapabilities": {},
 *         },
 *       },
 *     }),
 *   }),
 * );
 * const { result } = await response.json();
 * if (result.content[0].text !== "hi") throw new Error(JSON.stringify(result));
 * ```
 *
 * @module
 */
export {
  type CacheHint,
  type CallContext,
  createdTaskResult,
  type Dispatch,
  errorResult,
  InputRequiredError,
  type LogEvent,
  type Logger,
  McpServer,
  type MessageContext,
  NotFoundError,
  type PromptReader,
  type Reply,
  type RequestWrapper,
  type ResourceReader,
  type ServerOptions,
  Session,
  stderrLogger,
  type TaskHost,
  type ToolAccess,
  type ToolCallOutcome,
  ToolError,
  type WrappedRequest,
} from "./src/mcp/server.ts";
export { CatalogError, promptArgumentSchema } from "./src/mcp/catalog.ts";
export {
  isSchemaProfile,
  ProfileError,
  profileSchema,
  SCHEMA_PROFILES,
  type SchemaProfile,
} from "./src/mcp/schema_profile.ts";
export type * from "./src/mcp/types.ts";
export {
  ErrorCode,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonValue,
  McpError,
  type RawId,
  type RequestId,
  spelledArguments,
} from "./src/mcp/jsonrpc.ts";
export {
  type Era,
  LEGACY_VERSION,
  LEGACY_VERSIONS,
  MetaKey,
  MODERN_VERSION,
  SUPPORTED_VERSIONS,
} from "./src/mcp/revisions.ts";
export { compileSchema, SchemaError, type ValidateFn } from "./src/mcp/schema.ts";
export { parseUriTemplate, type UriTemplate, UriTemplateError } from "./src/mcp/uri_template.ts";
export { CursorCodec } from "./src/mcp/cursor.ts";
export {
  callerOf,
  InProcessSingleUse,
  type SingleUseStore,
  type SpendOutcome,
  SPENT_RECORD_SLACK_MS,
  StateKeys,
  type StateKeysOptions,
  type Unverified,
} from "./src/mcp/signed_state.ts";
export {
  type AuthVerdict,
  createHttpHandler,
  type InboundOptions,
  isLoopback,
  loopbackHosts,
  withConnectionDrop,
} from "./src/transport/http.ts";
export { createToolApiHandler, type ToolApiOptions } from "./src/transport/tool_api.ts";
export {
  type ByteReader,
  type ByteWriter,
  serveStdio,
  type StdioOptions,
} from "./src/transport/stdio.ts";
