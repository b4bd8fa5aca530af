/**
 * `surface`: how a guardfile's tools are presented to clients, whatever the
 * mode (spec mode, the AWS policies, and any later guardfile form, e.g. of
 * serve-upstream, reads it with {@link readSurface}):
 *
 * ```kdl
 * surface read-only=#true schema-profile="gemini" max-tokens=4000 max-tool-tokens=300
 * ```
 *
 * - `read-only=#true`: serve only the operations that change nothing (the
 *   one definition of read, src/guardfile/reads.ts); every other one
 *   is listed as a withheld stub saying "read-only mode". `weir serve
 *   --read-only` does the same for one run.
 * - `schema-profile="full|gemini|openai-strict"`: the dialect input schemas are
 *   listed in (src/mcp/schema_profile.ts); `--schema-profile` overrides it.
 * - `max-tokens=N`, `max-tool-tokens=N`: the budget `weir lint` holds the
 *   listed surface to (o200k tokens of all tools, of any one tool);
 *   `--max-tokens`/`--max-tool-tokens` override them.
 *
 * Every property is optional; the node takes no arguments and no block, and
 * appears at most once at the top level. Pure: no I/O.
 *
 * @module
 */
import type { Grant, Guardfile, SurfaceSchemaProfile, SurfaceSettings } from "./model.ts";
import { type NodeReader, onlyOnce } from "./nodes.ts";
import { grantAccess } from "./reads.ts";

export type { SurfaceSchemaProfile, SurfaceSettings };

/**
 * The schema profiles `schema-profile=` names: the core's (src/mcp/schema_profile.ts
 * `SCHEMA_PROFILES`; a test holds the two lists equal, since a guardfile imports
 * nothing of the core).
 */
export const SURFACE_SCHEMA_PROFILES: readonly SurfaceSchemaProfile[] = [
  "full",
  "gemini",
  "openai-strict",
];

/** The top-level node's name. */
export const SURFACE_NODE = "surface";

const PROPERTIES = ["read-only", "schema-profile", "max-tokens", "max-tool-tokens"];

/**
 * Read the `surface` node among a document's top-level nodes (reporting
 * every mistake into the readers' diagnostics).
 * @returns the settings; `{}` when there is no such node
 */
export function readSurface(top: NodeReader[]): SurfaceSettings {
  const node = onlyOnce(top, SURFACE_NODE);
  if (!node) return {};
  node.onlyProperties(PROPERTIES);
  node.noChildren();
  node.argCount(0, 0, `only properties, e.g. surface read-only=#true max-tokens=4000`);
  const out: SurfaceSettings = {};
  if (node.node.position) out.position = node.node.position;
  const readOnly = node.boolProp("read-only");
  if (readOnly !== undefined) out.readOnly = readOnly;
  const profile = node.stringProp("schema-profile");
  if (profile !== undefined) {
    const known = SURFACE_SCHEMA_PROFILES.find((p) => p === profile);
    if (known) out.schemaProfile = known;
    else {
      node.error(
        `schema-profile="${profile}" is not a schema profile; use one of ` +
          SURFACE_SCHEMA_PROFILES.map((p) => `"${p}"`).join(", "),
      );
    }
  }
  for (const [key, field] of [["max-tokens", "maxTokens"], ["max-tool-tokens", "maxToolTokens"]]) {
    const n = node.numberProp(key);
    if (n === undefined) continue;
    if (!Number.isInteger(n) || n < 1) {
      node.error(`${key}= must be a whole number of tokens, at least 1; found ${n}`);
    } else out[field as "maxTokens" | "maxToolTokens"] = n;
  }
  return out;
}

/** The reason a read-only stub gives (its description reads "NOT AVAILABLE: " + this). */
export const READ_ONLY_REASON =
  "read-only mode: this server was started to serve only operations that change nothing.";

/**
 * Whether a grant changes nothing upstream: the one definition of read,
 * {@link grantAccess} (src/guardfile/reads.ts).
 */
export function grantReadsOnly(grant: Grant): boolean {
  return grantAccess(grant).reads;
}

/**
 * The guardfile as served read-only: every grant that may change something
 * becomes a withheld stub giving {@link READ_ONLY_REASON} (so an agent learns the
 * operation exists and is not for now), the rest is unchanged.
 * `surface.readOnly` is set on the result.
 */
export function readOnlyView(guardfile: Guardfile): Guardfile {
  const writes = guardfile.grants.filter((g) => !grantReadsOnly(g));
  return {
    ...guardfile,
    grants: guardfile.grants.filter(grantReadsOnly),
    withholds: [
      ...guardfile.withholds,
      ...writes.map((g) => ({ tool: g.tool, reason: READ_ONLY_REASON, position: g.position })),
    ].sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)),
    surface: { ...guardfile.surface, readOnly: true },
  };
}

/** What the command line says about the surface; each set field wins over the guardfile's. */
export interface SurfaceOverrides {
  /** `--read-only` (it can turn read-only on, never off). */
  readOnly?: boolean;
  /** `--schema-profile NAME`. */
  schemaProfile?: SurfaceSchemaProfile;
  /** `--max-tokens N`. */
  maxTokens?: number;
  /** `--max-tool-tokens N`. */
  maxToolTokens?: number;
}

/** A guardfile's surface settings with the command line's folded in (flags win). */
export function withOverrides(settings: SurfaceSettings, flags: SurfaceOverrides): SurfaceSettings {
  const out = { ...settings };
  if (flags.readOnly) out.readOnly = true;
  if (flags.schemaProfile !== undefined) out.schemaProfile = flags.schemaProfile;
  if (flags.maxTokens !== undefined) out.maxTokens = flags.maxTokens;
  if (flags.maxToolTokens !== undefined) out.maxToolTokens = flags.maxToolTokens;
  return out;
}
