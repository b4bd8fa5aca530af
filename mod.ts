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
 * @module
 */
export {
  type CacheHint,
  type CallContext,
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
  type ResourceReader,
  type ServerOptions,
  Session,
  stderrLogger,
  type ToolAccess,
  type ToolCallOutcome,
  ToolError,
} from "./src/mcp/server.ts";
export { CatalogError, promptArgumentSchema } from "./src/mcp/catalog.ts";
export type * from "./src/mcp/types.ts";
export {
  ErrorCode,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonValue,
  McpError,
  type RequestId,
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
  type AuthVerdict,
  createHttpHandler,
  type InboundOptions,
  isLoopback,
  loopbackHosts,
} from "./src/transport/http.ts";
export { createToolApiHandler, type ToolApiOptions } from "./src/transport/tool_api.ts";
export { serveStdio, type StdioOptions } from "./src/transport/stdio.ts";
