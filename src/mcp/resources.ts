/**
 * `resources/read`: a listed URI, or one a listed template matches
 * (src/mcp/uri_template.ts), read by the host's reader; its items go out as
 * `text` or base64 `blob`, cleaned; anything else is `Resource not found` in
 * the revision's error code.
 *
 * @module
 */
import { ErrorCode, McpError } from "./jsonrpc.ts";
import { ERAS } from "./revisions.ts";
import { InputRequiredError, NotFoundError } from "./errors.ts";
import { inputRequiredAnswer, prepareInput } from "./input_required.ts";
import type { CallContext } from "./options.ts";
import { cleanOut, clip, isObject } from "./results.ts";
import type { ServerSetup } from "./setup.ts";
import type { ResourceContents, WireResourceContents } from "./types.ts";

/**
 * `resources/read`.
 * @throws {McpError} `-32602` without a string `uri`; the revision's "Resource not found" code
 *   for a URI no listed resource or template matches, or that the reader found nothing at
 */
export async function readResource(
  s: ServerSetup,
  params: Record<string, unknown>,
  call: CallContext,
): Promise<object | { json: string }> {
  const uri = params.uri;
  if (typeof uri !== "string") {
    throw new McpError(ErrorCode.InvalidParams, "resources/read needs params.uri (a string)");
  }
  // Never echo what the caller sent unbounded: the URI is clipped in the error.
  // The audit line names the rule only: a URI a client made up is not logged.
  const notFound = (reason?: string) => {
    s.log({
      level: "warn",
      event: "refused",
      decision: "refuse",
      rule: "unknown_resource",
      status: 404,
    });
    return new McpError(
      ERAS[call.era].resourceNotFound,
      "Resource not found",
      reason ? { uri: clip(uri), reason: clip(reason) } : { uri: clip(uri) },
    );
  };
  const catalog = await s.catalog();
  let vars: Record<string, string> | null = catalog.resourcesByUri.has(uri) ? {} : null;
  for (let i = 0; vars === null && i < catalog.templates.length; i++) {
    vars = catalog.templates[i].template.match(uri);
  }
  if (vars === null) throw notFound();
  // A resource of tools (an MCP Apps interface) is read only by a caller allowed one of them.
  const owners = s.options.resourceTools?.(uri);
  if (owners) {
    const access = s.toolAccess(call.auth);
    if (access && !owners.some((tool) => access.allows(tool))) throw notFound();
  }
  let contents: ResourceContents[];
  prepareInput(call, params);
  try {
    contents = await s.options.readResource!(uri, {
      signal: call.signal,
      era: call.era,
      protocolVersion: call.protocolVersion,
      auth: call.auth,
      ...(call.caller === undefined ? {} : { caller: call.caller }),
      ...(call.input === undefined ? {} : { input: call.input }),
      params: vars,
    });
  } catch (error) {
    if (error instanceof NotFoundError) throw notFound(error.message);
    if (error instanceof InputRequiredError) {
      if (call.input) return inputRequiredAnswer(s, error);
      throw new McpError(
        ErrorCode.InvalidParams,
        `Resource ${clip(uri)} needs input from the client (${error.message}), which cannot ` +
          `be asked for under this revision; use 2026-07-28`,
        { uri: clip(uri) },
      );
    }
    throw error;
  }
  if (!Array.isArray(contents) || contents.length === 0) throw notFound();
  return { contents: contents.map((c) => wireContents(cleanOut(c), uri)) };
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
