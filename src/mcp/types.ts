/**
 * Wire types of the MCP objects a server host hands to the core, named as in
 * the MCP schema (both revisions agree on every field used here).
 *
 * @module
 */
import type { JsonObject, JsonValue } from "./jsonrpc.ts";

/** An icon a client may show (`Icon` in the schema). */
export interface Icon {
  /** Where the icon is: an `https:` or `data:` URI. */
  src: string;
  /** The media type (RFC 6838), e.g. `image/png` or `text/plain`. */
  mimeType?: string;
  /** Sizes the image fits, as in HTML `sizes`: `"48x48"`, `"any"`. */
  sizes?: string[];
  /** The background the icon is drawn for. */
  theme?: "light" | "dark";
}

/** Hints about a tool's behaviour (`ToolAnnotations`); untrusted by clients. */
export interface ToolAnnotations {
  /** A human-readable name for display. */
  title?: string;
  /** The tool does not change its environment (default false). */
  readOnlyHint?: boolean;
  /** A change may destroy or overwrite data (default true; meaningful only when not read-only). */
  destructiveHint?: boolean;
  /** Repeating the call with the same arguments has no further effect (default false). */
  idempotentHint?: boolean;
  /** The tool reaches entities outside a closed domain, e.g. the web (default true). */
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
  /** The programmatic name, unique within its list. */
  name: string;
  /** A human-readable name for display. */
  title?: string;
  /** What it is or does, for a model or a person. */
  description?: string;
  /** JSON Schema (2020-12) of the arguments object; absent means no arguments. */
  inputSchema?: JsonObject;
  /** JSON Schema of `structuredContent` in the result, when the tool promises one. */
  outputSchema?: JsonObject;
  /** Hints for clients; never trusted for security. */
  annotations?: ToolAnnotations;
  /** Icons a client may show beside it. */
  icons?: Icon[];
  /** Extension metadata, passed through unchanged (keys per the MCP `_meta` rules). */
  _meta?: JsonObject;
}

/** Content annotations (`Annotations`). */
export interface Annotations {
  /** Who the content is meant for. */
  audience?: ("user" | "assistant")[];
  /** Importance from 0 (least) to 1 (most). */
  priority?: number;
  /** When it last changed, as an ISO 8601 date-time. */
  lastModified?: string;
}

/** A fixed resource (`Resource`). */
export interface ResourceSpec {
  /** The resource URI (RFC 3986). */
  uri: string;
  /** The programmatic name, unique within its list. */
  name: string;
  /** A human-readable name for display. */
  title?: string;
  /** What it is or does, for a model or a person. */
  description?: string;
  /** The media type (RFC 6838), e.g. `image/png` or `text/plain`. */
  mimeType?: string;
  /** Size in bytes of the raw content, if known. */
  size?: number;
  /** Hints for clients; never trusted for security. */
  annotations?: Annotations;
  /** Icons a client may show beside it. */
  icons?: Icon[];
  /** Extension metadata, passed through unchanged (keys per the MCP `_meta` rules). */
  _meta?: JsonObject;
}

/** A family of resources (`ResourceTemplate`); only `{var}` and `{+var}` expressions. */
export interface ResourceTemplateSpec {
  /** An RFC 6570 URI template; only `{var}` and `{+var}` expressions. */
  uriTemplate: string;
  /** The programmatic name, unique within its list. */
  name: string;
  /** A human-readable name for display. */
  title?: string;
  /** What it is or does, for a model or a person. */
  description?: string;
  /** The media type (RFC 6838), e.g. `image/png` or `text/plain`. */
  mimeType?: string;
  /** Hints for clients; never trusted for security. */
  annotations?: Annotations;
  /** Icons a client may show beside it. */
  icons?: Icon[];
  /** Extension metadata, passed through unchanged (keys per the MCP `_meta` rules). */
  _meta?: JsonObject;
}

/** One declared prompt argument (`PromptArgument`). */
export interface PromptArgument {
  /** The programmatic name, unique within its list. */
  name: string;
  /** A human-readable name for display. */
  title?: string;
  /** What it is or does, for a model or a person. */
  description?: string;
  /** Whether the argument must be given. */
  required?: boolean;
}

/** A prompt (`Prompt`). */
export interface PromptSpec {
  /** The programmatic name, unique within its list. */
  name: string;
  /** A human-readable name for display. */
  title?: string;
  /** What it is or does, for a model or a person. */
  description?: string;
  /** The arguments the prompt takes. */
  arguments?: PromptArgument[];
  /** Icons a client may show beside it. */
  icons?: Icon[];
  /** Extension metadata, passed through unchanged (keys per the MCP `_meta` rules). */
  _meta?: JsonObject;
}

/**
 * What a server offers. Every list is required: an absent list is a malformed
 * catalog, not an empty one. `resources` holds fixed resources (with `uri`) and
 * templates (with `uriTemplate`) in one list.
 */
export interface Catalog {
  /** Every tool, in the order `tools/list` returns them. */
  tools: ToolSpec[];
  /** Fixed resources and resource templates, in list order. */
  resources: (ResourceSpec | ResourceTemplateSpec)[];
  /** Every prompt, in list order. */
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
  /** The content blocks of the result, in order. */
  content: ContentBlock[];
  /** The result as JSON, matching `outputSchema` when there is one. */
  structuredContent?: JsonValue;
  /** True when the tool failed; the content says why. */
  isError?: boolean;
  /** Extension metadata, passed through unchanged (keys per the MCP `_meta` rules). */
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
  /** Who speaks the message. */
  role: "user" | "assistant";
  /** The message body. */
  content: ContentBlock;
}

/** What a prompt reader returns (`GetPromptResult`). */
export interface GetPromptResult {
  /** A description of the rendered prompt. */
  description?: string;
  /** The messages of the rendered prompt, in order. */
  messages: PromptMessage[];
  /** Extension metadata, passed through unchanged (keys per the MCP `_meta` rules). */
  _meta?: JsonObject;
}
