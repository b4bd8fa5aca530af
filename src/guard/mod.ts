/**
 * The guard as a library: load a guardfile's text into a checked model, and
 * turn it into the host contract (catalog + dispatch) of the MCP core.
 *
 * A separate entry point (`@weir/weir/guard`) so that a server built on the
 * core alone (`@weir/weir`) does not load the KDL parser.
 *
 * @example
 * ```ts
 * import { McpServer } from "@weir/weir";
 * import { createGuard, parseGuardfile, processValues } from "@weir/weir/guard";
 * const { guardfile, diagnostics } = parseGuardfile(
 *   `wrap ward mcp notes {\n  base-url "notes.example"\n  auth none\n  can get note { path "/notes/{id}" }\n}`,
 *   "notes.mcp.kdl",
 * );
 * if (!guardfile) throw new Error(diagnostics.map((d) => d.message).join("\n"));
 * const server = new McpServer(createGuard(guardfile, { resolver: processValues }));
 * if (!server.capabilities.tools) throw new Error("no tools");
 * ```
 *
 * @module
 */
export { type LoadResult, normalizeBaseUrl } from "../guardfile/parse.ts";
export { parseGuardfile } from "../guardfile/load.ts";
export { type Diagnostic, formatDiagnostic, GuardfileError } from "../guardfile/diagnostics.ts";
export type * from "../guardfile/model.ts";
export type {
  AnnotationOverrides,
  ArgumentPin,
  ArgumentRule,
  FindingAcceptance,
  McpServerHeader,
  McpServerSettings,
  McpServerTarget,
  McpWrap,
  McpWrapControls,
  ProxyTool,
} from "../guardfile/mcp_wrap.ts";
export { createGuard, DEFAULT_LIMITS, type GuardOptions, INSTRUCTIONS_PREAMBLE } from "./host.ts";
export { processValues, type ValueResolver } from "./values.ts";
export type { SourcePosition } from "../guardfile/kdl.ts";
export type {
  Annotations,
  CacheHint,
  CallContext,
  CallToolResult,
  Catalog,
  ContentBlock,
  Dispatch,
  Era,
  GetPromptResult,
  Icon,
  JsonObject,
  JsonValue,
  LogEvent,
  Logger,
  PromptArgument,
  PromptMessage,
  PromptReader,
  PromptSpec,
  RequestWrapper,
  ResourceContents,
  ResourceReader,
  ResourceSpec,
  ResourceTemplateSpec,
  SchemaProfile,
  ServerOptions,
  SingleUseStore,
  SpendOutcome,
  StateKeys,
  StateKeysOptions,
  TaskHost,
  ToolAccess,
  ToolAnnotations,
  ToolSpec,
  Unverified,
  WireResourceContents,
  WrappedRequest,
} from "../../mod.ts";
export type { UpstreamCredential, UpstreamLimits } from "./send.ts";
export type { ProfileName } from "../guardfile/idp_profiles.ts";
export { ERROR_KINDS, type ErrorKind, kindOf } from "../errors/kinds.ts";
export { type Coverage, type Envelope, envelope, ENVELOPE_SCHEMA } from "./coverage.ts";
