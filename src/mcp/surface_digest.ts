/**
 * One short digest of the surface a caller sees: the tools (with their
 * definitions as listed, after the schema profile), resources, resource
 * templates and prompts of a prepared catalog, narrowed to the caller's tool
 * access as `tools/list` and `resources/list` narrow them, with the server's
 * instructions (text an agent reads too) and whether it offers tasks. Equal surfaces have
 * equal digests whatever the revision or replica; any change to what a caller
 * can list shows. The server puts it in `initialize` and `server/discover`
 * results (`_meta["weir.dev/surface"]`); weir's HTTP app in `GET /healthz`
 * and `GET /readyz`, and its start-up log line, so an operator can check that
 * every replica serves the same.
 *
 * The digest: the first 16 hex digits of SHA-256 (FIPS 180-4, via
 * `crypto.subtle`) of the canonical JSON (src/mcp/canonical_json.ts) of
 * `{tools, resources, resourceTemplates, prompts}`, with `instructions` and
 * `tasks: true` when the server has them. Cached per catalog, access set and
 * server settings.
 *
 * @module
 */
import { canonicalJson } from "./canonical_json.ts";
import type { PreparedCatalog } from "./catalog.ts";
import type { ToolAccess } from "./options.ts";
import type { ServerSetup } from "./setup.ts";

/** The `_meta` key of `initialize` and `server/discover` results that carries the digest. */
export const SURFACE_META = "weir.dev/surface";

const digests = new WeakMap<PreparedCatalog, Map<string, Promise<string>>>();

/** What the server says besides its catalog that a caller reads or relies on. */
export interface SurfaceSettings {
  /** The server's `instructions`. */
  instructions?: string;
  /** It offers tasks (MCP 2025-11-25). */
  tasks?: boolean;
}

/**
 * The digest of what a caller with `access` lists (every tool when `access` is
 * undefined).
 * @param owners the tools a resource belongs to (`ServerOptions.resourceTools`),
 *   which narrow `resources/list` by access
 * @param settings the server's instructions and task offer
 * @returns 16 lowercase hex digits
 */
export function surfaceDigest(
  catalog: PreparedCatalog,
  access?: ToolAccess,
  owners?: (uri: string) => readonly string[] | undefined,
  settings: SurfaceSettings = {},
): Promise<string> {
  let byAccess = digests.get(catalog);
  if (!byAccess) digests.set(catalog, byAccess = new Map());
  const key = JSON.stringify([access?.key ?? "", settings.instructions ?? null, !!settings.tasks]);
  let digest = byAccess.get(key);
  if (!digest) {
    const allows = (name: string) => access?.allows(name) ?? true;
    const surface = {
      tools: catalog.tools.filter((t) => allows(t.wire.name)).map((t) => t.wire),
      resources: catalog.resources.filter((r) =>
        !access || !owners ? true : owners(r.uri)?.some(allows) ?? true
      ),
      resourceTemplates: catalog.templates.map((t) => t.wire),
      prompts: catalog.prompts.map((p) => p.wire),
      ...(settings.instructions !== undefined ? { instructions: settings.instructions } : {}),
      ...(settings.tasks ? { tasks: true } : {}),
    };
    digest = crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(surface)))
      .then((hash) =>
        [...new Uint8Array(hash, 0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("")
      );
    byAccess.set(key, digest);
  }
  return digest;
}

/** The digest of what a caller with `access` lists from a server (its catalog now and settings). */
export async function serverDigest(s: ServerSetup, access?: ToolAccess): Promise<string> {
  return await surfaceDigest(await s.catalog(), access, s.options.resourceTools, {
    instructions: s.options.instructions,
    tasks: s.options.tasks !== undefined,
  });
}
