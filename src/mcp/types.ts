/**
 * Wire types of the MCP objects a server host hands to the core, named as in
 * the MCP schema (both revisions agree on every field used here).
 *
 * @module
 */
import type { JsonObject, JsonValue } from "./jsonrpc.ts";

/** An icon a client may show (`Icon` in the schema). */
export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: "light" | "dark";
}

/** Hints about a tool's behaviour (`ToolAnnotations`); untrusted by clients. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * One tool (`Tool` in the schema).
 *
 * `inputSchema` is the contract: what `tools/list` advertises and what
 * `tools/call` enforces. Omit it for a tool without arguments: it is
 * advertised as an open empty object and dispatch receives `{}`.
 */
export interface ToolSpec {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: JsonObject;
  outputSchema?: JsonObject;
  annotations?: ToolAnnotations;
  icons?: Icon[];
  _meta?: JsonObject;
}

/** Content annotations (`Annotations`). */
export interface Annotations {
  audience?: ("user" | "assistant")[];
  priority?: number;
  lastModified?: string;
}

/** A fixed resource (`Resource`). */
export interface ResourceSpec {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Annotations;
  icons?: Icon[];
  _meta?: JsonObject;
}

/** A family of resources (`ResourceTemplate`); only `{var}` and `{+var}` expressions. */
export interface ResourceTemplateSpec {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Annotations;
  icons?: Icon[];
  _meta?: JsonObject;
}

/** One declared prompt argument (`PromptArgument`). */
export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

/** A prompt (`Prompt`). */
export interface PromptSpec {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  icons?: Icon[];
  _meta?: JsonObject;
}

/**
 * What a server offers. Every list is required: an absent list is a malformed
 * catalog, not an empty one. `resources` holds fixed resources (with `uri`) and
 * templates (with `uriTemplate`) in one list.
 */
export interface Catalog {
  tools: ToolSpec[];
  resources: (ResourceSpec | ResourceTemplateSpec)[];
  prompts: PromptSpec[];
}

/** A content block of a tool result or prompt message (`ContentBlock`). */
export type ContentBlock =
  | { type: "text"; text: string; annotations?: Annotations; _meta?: JsonObject }
  | { type: "image"; data: string; mimeType: string; annotations?: Annotations; _meta?: JsonObject }
  | { type: "audio"; data: string; mimeType: string; annotations?: Annotations; _meta?: JsonObject }
  | ({ type: "resource_link" } & ResourceSpec)
  | {
    type: "resource";
    resource: ResourceContents | WireResourceContents;
    annotations?: Annotations;
    _meta?: JsonObject;
  };

/** What a tool call returns (`CallToolResult`). */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: JsonValue;
  isError?: boolean;
  _meta?: JsonObject;
}

/**
 * One item a resource reader returns: `text` for text, `blob` for bytes (sent
 * base64-encoded on the wire; pass the raw bytes here).
 */
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string; _meta?: JsonObject }
  | { uri: string; mimeType?: string; blob: Uint8Array; _meta?: JsonObject };

/** Resource contents as they go on the wire (blob already base64). */
export type WireResourceContents =
  | { uri: string; mimeType?: string; text: string; _meta?: JsonObject }
  | { uri: string; mimeType?: string; blob: string; _meta?: JsonObject };

/** One message of a rendered prompt. */
export interface PromptMessage {
  role: "user" | "assistant";
  content: ContentBlock;
}

/** What a prompt reader returns (`GetPromptResult`). */
export interface GetPromptResult {
  description?: string;
  messages: PromptMessage[];
  _meta?: JsonObject;
}
