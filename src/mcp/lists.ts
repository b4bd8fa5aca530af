/**
 * The list methods (`tools/list`, `resources/list`, `resources/templates/list`,
 * `prompts/list`): pages of {@link ServerSetup.pageSize} items in the
 * catalog's order, each page after the first named by a signed cursor
 * (src/mcp/cursor.ts) bound to the caller; a page is serialized once and
 * shared, with only its next cursor written per request.
 *
 * @module
 */
import type { PreparedCatalog } from "./catalog.ts";
import { METHODS } from "./revisions.ts";
import type { CallContext } from "./options.ts";
import { decorate } from "./results.ts";
import type { ServerSetup } from "./setup.ts";

/**
 * Stands for `nextCursor` in a cached list page, replaced per request by the
 * caller's cursor. Random per process, so no listed text can contain it.
 */
const NEXT_CURSOR_MARK = `\u0000next-cursor-${crypto.randomUUID()}\u0000`;

/**
 * One page of a list method: the items after the cursor's item (the first page
 * without a cursor), narrowed to what the caller may see for `tools/list` (and
 * for `resources/list`, a resource of tools when the host says which:
 * `ServerOptions.resourceTools`).
 * @throws {McpError} `-32602` for a cursor this server did not issue to this caller for this list
 */
export async function list(
  s: ServerSetup,
  method: "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list",
  field: string,
  params: Record<string, unknown>,
  call: CallContext,
): Promise<{ json: string }> {
  const catalog = await s.catalog();
  const cursor = params.cursor;
  const owners = method === "resources/list" ? s.options.resourceTools : undefined;
  const access = method === "tools/list" || owners ? s.toolAccess(call.auth) : undefined;
  // Only an absent cursor means "first page": `""` and `null` are cursors,
  // and are refused like any cursor this server did not issue. A cursor is
  // checked on every request (it is bound to its caller), and pages are
  // cached by the item they start after, so every caller shares them.
  const after = cursor === undefined
    ? undefined
    : await s.cursors.decode(method, cursor, call.caller);
  const view = access ? [call.era, method, access.key] : [call.era, method];
  const cacheKey = JSON.stringify(after === undefined ? view : [...view, after]);
  let page = catalog.pages.get(cacheKey);
  if (!page) {
    let [keys, items] = listOf(catalog, method);
    if (access) {
      const allows = owners
        ? (uri: string) => owners(uri)?.some((tool) => access.allows(tool)) ?? true
        : (name: string) => access.allows(name);
      const kept = keys.map(allows);
      keys = keys.filter((_, i) => kept[i]);
      items = items.filter((_, i) => kept[i]);
    }
    const start = after === undefined ? 0 : firstAfter(keys, after);
    const end = Math.min(start + s.pageSize, keys.length);
    const result: Record<string, unknown> = { [field]: items.slice(start, end) };
    // The next cursor differs per caller: the page is kept with a marker in its place.
    if (end < keys.length) result.nextCursor = NEXT_CURSOR_MARK;
    const json = JSON.stringify(
      decorate(s, call.era, METHODS[method], result, Boolean(access)),
    );
    const at = json.indexOf(JSON.stringify(NEXT_CURSOR_MARK));
    page = at < 0 ? { json } : {
      json,
      nextAfter: keys[end - 1],
      head: json.slice(0, at),
      tail: json.slice(at + JSON.stringify(NEXT_CURSOR_MARK).length),
    };
    catalog.pages.set(cacheKey, page);
  }
  if (page.nextAfter === undefined) return { json: page.json };
  const next = await s.cursors.encode(method, page.nextAfter, call.caller);
  return { json: `${page.head}${JSON.stringify(next)}${page.tail}` };
}

function listOf(
  catalog: PreparedCatalog,
  method: string,
): [string[], unknown[]] {
  switch (method) {
    case "tools/list":
      return [catalog.tools.map((t) => t.wire.name), catalog.tools.map((t) => t.wire)];
    case "resources/list":
      return [catalog.resources.map((r) => r.uri), catalog.resources];
    case "resources/templates/list":
      return [
        catalog.templates.map((t) => t.wire.uriTemplate),
        catalog.templates.map((t) => t.wire),
      ];
    default:
      return [catalog.prompts.map((p) => p.wire.name), catalog.prompts.map((p) => p.wire)];
  }
}

/** Index of the first key strictly greater than `after` in a sorted list. */
function firstAfter(keys: string[], after: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
