/**
 * MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension) across the
 * wrap: a served tool may link to the interface a host shows beside it, a
 * `ui://` resource named in the tool's `_meta.ui.resourceUri` (older servers:
 * `_meta["ui/resourceUri"]`). Deny by absence holds for resources too:
 *
 * - readable through weir: the `ui://` resources served tools link to, and
 *   the URIs the operator names (`proxy-resource "<uri>"`), nothing else;
 * - listed: the MCP server's `resources/list` entries that are readable;
 * - a link weir will not serve (a non-`ui://` URI, or any link of a tool
 *   that is not served) is removed from what weir lists, so no client is sent
 *   to a resource that refuses it.
 *
 * Pure: the listing and reading are the connection's (`connection.ts`).
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ResourceSpec, ToolSpec } from "../mcp/types.ts";

/** The `_meta` key of the older MCP Apps drafts. */
const LEGACY_KEY = "ui/resourceUri";

/** The resource a tool links to as its interface, if any (either spelling). */
export function uiResourceOf(tool: Pick<ToolSpec, "_meta">): string | undefined {
  const meta = tool._meta;
  if (!isObject(meta)) return undefined;
  const ui = meta.ui;
  if (isObject(ui) && typeof ui.resourceUri === "string") return ui.resourceUri;
  const legacy = meta[LEGACY_KEY];
  return typeof legacy === "string" ? legacy : undefined;
}

/** Whether a URI is an MCP Apps interface (`ui://...`). */
export function isUiUri(uri: string): boolean {
  return /^ui:\/\/[^\s]/i.test(uri);
}

/**
 * The URIs readable through weir: the `ui://` links of the served tools and
 * the operator's `proxy-resource` URIs.
 */
export function readableResources(
  served: readonly Pick<ToolSpec, "_meta">[],
  allowed: readonly string[],
): Set<string> {
  const out = new Set(allowed);
  for (const tool of served) {
    const uri = uiResourceOf(tool);
    if (uri !== undefined && isUiUri(uri)) out.add(uri);
  }
  return out;
}

/**
 * A served tool as weir lists it: its interface link kept when weir serves
 * that resource, removed (both spellings) when it does not.
 */
export function withServedLinks(tool: ToolSpec, readable: ReadonlySet<string>): ToolSpec {
  const uri = uiResourceOf(tool);
  if (uri === undefined || (isUiUri(uri) && readable.has(uri))) return tool;
  const meta: JsonObject = { ...tool._meta! };
  delete meta[LEGACY_KEY];
  if (isObject(meta.ui)) {
    const ui: JsonObject = { ...meta.ui };
    delete ui.resourceUri;
    if (Object.keys(ui).length > 0) meta.ui = ui;
    else delete meta.ui;
  }
  const out: ToolSpec = { ...tool };
  if (Object.keys(meta).length > 0) out._meta = meta;
  else delete out._meta;
  return out;
}

/** The MCP server's listed resources that weir serves (in its order). */
export function servedResources(
  listed: readonly ResourceSpec[],
  readable: ReadonlySet<string>,
): ResourceSpec[] {
  return listed.filter((r) => typeof r?.uri === "string" && readable.has(r.uri));
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
