/**
 * `weir lint`: the same loader as `serve`, no listener, no network, no
 * secrets. Reports what a guardfile would serve, or every error in it.
 *
 * @module
 */
import type { Diagnostic } from "../guardfile/diagnostics.ts";
import type { Guardfile } from "../guardfile/model.ts";
import type { McpWrap } from "../guardfile/mcp_wrap.ts";
import { readLikePrefix, VERB_METHODS } from "../guardfile/verbs.ts";
import { foldedName } from "../guardfile/spellings.ts";

/** One served tool as lint lists it. */
export interface ServedTool {
  name: string;
  kind: "grant" | "withheld" | "info" | "proxy";
  /**
   * HTTP method for grants (empty for sql), `WITHHELD` for stubs, `-` for the
   * info tool, `MCP` for a proxied tool of an MCP server.
   */
  method: string;
  /** Inputs that opt out of the shell-metacharacter gate (`metacharacters="allow"`). */
  metacharactersAllowed?: string[];
}

/** Every tool a guardfile serves, sorted by name. */
export function servedTools(guardfile: Guardfile): ServedTool[] {
  const tools: ServedTool[] = [
    ...guardfile.grants.map((g) => {
      const allowed = [...g.params, ...g.query]
        .filter((i) => i.metacharacters === "allow")
        .map((i) => i.name);
      return {
        name: g.tool,
        kind: "grant" as const,
        // A sql grant sends no HTTP request: its method column is empty, as in the reference.
        method: g.sql ? "" : g.method,
        ...(allowed.length > 0 ? { metacharactersAllowed: allowed } : {}),
      };
    }),
    ...guardfile.withholds.map((w) => ({
      name: w.tool,
      kind: "withheld" as const,
      method: "WITHHELD",
    })),
  ];
  if (guardfile.infoTool) tools.push({ name: guardfile.infoTool, kind: "info", method: "-" });
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Every tool a guardfile wrapping an MCP server serves, sorted by name. */
export function wrapServedTools(wrap: McpWrap): ServedTool[] {
  const tools: ServedTool[] = [
    ...wrap.proxies.map((p) => ({ name: p.name, kind: "proxy" as const, method: "MCP" })),
    ...wrap.withholds.map((w) => ({ name: w.tool, kind: "withheld" as const, method: "WITHHELD" })),
  ];
  if (wrap.infoTool) tools.push({ name: wrap.infoTool, kind: "info", method: "-" });
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Warnings lint adds on top of the loader's (they never change stdout or the exit code). */
export function lintWarnings(guardfile: Guardfile): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const g of guardfile.grants) {
    // A read-like compound verb (`get-open`) is the loader's error, which says more.
    if (g.methodInferred && readLikePrefix(g.verb) === undefined) {
      out.push({
        severity: "warning",
        path: `wrap > can ${g.verb} ${g.resource}`,
        position: g.position,
        message: `tool "${g.tool}": verb "${g.verb}" is not in the verb table (fallthrough), so ` +
          `its method defaults to POST; state it with method "POST" (or the right one) to silence this`,
      });
    }
  }
  // A withheld operation can be granted back under another verb of the same
  // method: withhold "edit_note" beside can close note (both PATCH). Names
  // that differ only by case, separators or a verb synonym are the loader's
  // error (src/guardfile/spellings.ts); this is the weaker hint beyond them,
  // compared with case and separators folded.
  for (const w of guardfile.withholds) {
    const withheld = foldedName(w.tool);
    for (const g of guardfile.grants) {
      if (g.sql) continue;
      const verb = Object.keys(VERB_METHODS).find((v) =>
        VERB_METHODS[v] === g.method && withheld === foldedName(v) + foldedName(g.resource)
      );
      if (verb === undefined) continue;
      out.push({
        severity: "warning",
        path: `wrap > can ${g.verb} ${g.resource}`,
        position: g.position,
        message: `grant "${g.tool}" sends ${g.method} ${g.path}, the same kind of operation ` +
          `"${w.tool}" withholds; if the withhold is meant to cover it, remove this grant`,
      });
    }
  }
  return out;
}
