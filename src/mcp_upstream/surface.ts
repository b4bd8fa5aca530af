/**
 * The allowlisted surface of an upstream: which allowlisted tools it lists,
 * their fingerprints at start-up (the baseline), and the check that the
 * upstream still lists each of them exactly as it did (drift).
 *
 * @module
 */
import type { ToolSpec } from "../mcp/types.ts";
import { nearestNames } from "./allowlist.ts";
import { canonicalJson, fingerprint } from "./fingerprint.ts";

/** One allowlisted tool as the upstream listed it at start-up. */
export interface BaselineTool {
  /** The upstream's definition, unchanged. */
  definition: ToolSpec;
  /** `sha256:<hex>` of its canonical JSON. */
  fingerprint: string;
  /** Its canonical JSON, compared at each check (cheaper than hashing again). */
  canonical: string;
}

/** What a listing says about the allowlist. */
export interface SurfaceReport {
  present: Map<string, BaselineTool>;
  /** Allowlisted names the upstream does not list, with the nearest names it does list. */
  missing: { name: string; nearest: string[] }[];
  /** Allowlisted names listed more than once with different definitions. */
  ambiguous: string[];
}

/**
 * Match an allowlist against a `tools/list` result.
 * @param allowlist the parsed allowlist
 * @param listed every tool the upstream lists (all pages)
 */
export async function matchAllowlist(
  allowlist: readonly string[],
  listed: readonly ToolSpec[],
): Promise<SurfaceReport> {
  const byName = groupByName(listed);
  const report: SurfaceReport = { present: new Map(), missing: [], ambiguous: [] };
  for (const name of allowlist) {
    const entries = byName.get(name);
    if (!entries) {
      report.missing.push({ name, nearest: nearestNames(name, [...byName.keys()]) });
      continue;
    }
    if (new Set(entries.map(canonicalJson)).size > 1) {
      report.ambiguous.push(name);
      continue;
    }
    report.present.set(name, {
      definition: entries[0],
      fingerprint: await fingerprint(entries[0]),
      canonical: canonicalJson(entries[0]),
    });
  }
  return report;
}

/**
 * How each baseline tool differs in a later listing.
 * @returns tool name -> reason, for each tool that drifted (empty: none)
 */
export function driftOf(
  baseline: ReadonlyMap<string, BaselineTool>,
  listed: readonly ToolSpec[],
): Map<string, string> {
  const byName = groupByName(listed);
  const drift = new Map<string, string>();
  for (const [name, base] of baseline) {
    const entries = byName.get(name);
    if (!entries) drift.set(name, "the upstream no longer lists it");
    else if (entries.some((e) => canonicalJson(e) !== base.canonical)) {
      drift.set(
        name,
        entries.length > 1
          ? "the upstream lists it more than once, with different definitions"
          : "its definition changed upstream",
      );
    }
  }
  return drift;
}

function groupByName(listed: readonly ToolSpec[]): Map<string, ToolSpec[]> {
  const byName = new Map<string, ToolSpec[]>();
  for (const tool of listed) {
    if (typeof tool?.name !== "string") continue;
    const list = byName.get(tool.name) ?? [];
    list.push(tool);
    byName.set(tool.name, list);
  }
  return byName;
}
