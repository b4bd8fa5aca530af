/**
 * lint is serve minus the listener: the loader `lint`, `describe`, `serve`
 * and a reload share (`loadGuardfileFile`, src/modes/serve.ts) builds the
 * very server `serve` would run from a clean spec-mode model, after the
 * command line's surface flags are applied. Every value the MCP core
 * refuses at construction is the guardfile loader's diagnostic first
 * (src/guardfile/); what depends on those flags too (a `--schema-profile`
 * that cannot list a grant's schema) is found here, and reported at the
 * node that made the refused entry, as the loader reports its own.
 *
 * @module
 */
import { CatalogError } from "../mcp/catalog.ts";
import type { Diagnostic } from "../guardfile/diagnostics.ts";
import type { Guardfile } from "../guardfile/model.ts";

/**
 * The node a catalog refusal names: the grant or withhold behind `tool "x"`,
 * the resource behind `resource "uri"`, else the file as a whole.
 * @param message the {@link CatalogError}'s message
 */
export function placedRefusal(guardfile: Guardfile, message: string): Diagnostic {
  const named = /^(tool|resource) "((?:[^"\\]|\\.)*)"/.exec(message);
  let at: Pick<Diagnostic, "path" | "position"> = { path: "" };
  if (named?.[1] === "tool") {
    const grant = guardfile.grants.find((g) => g.tool === named[2]);
    const withheld = guardfile.withholds.find((w) => w.tool === named[2]);
    if (grant) {
      at = { path: `wrap > can ${grant.verb} ${grant.resource}`, position: grant.position };
    } else if (withheld) at = { path: `withhold ${withheld.tool}`, position: withheld.position };
  } else if (named?.[1] === "resource") {
    const resource = guardfile.resources.find((r) => r.uri === named[2]);
    if (resource) at = { path: `resource ${resource.name}`, position: resource.position };
  }
  return {
    severity: "error",
    ...at,
    message: `the MCP server core refuses what this guardfile describes: ${message}`,
  };
}

/**
 * Build the server with `build`; a catalog the core refuses becomes a
 * diagnostic at its node ({@link placedRefusal}).
 * @returns the diagnostic, or `undefined` when the server was built
 * @throws what `build` throws other than a {@link CatalogError} (a defect:
 *   the loader must refuse every value the core does)
 */
export function buildRefusal(guardfile: Guardfile, build: () => unknown): Diagnostic | undefined {
  try {
    build();
    return undefined;
  } catch (error) {
    if (!(error instanceof CatalogError)) throw error;
    return placedRefusal(guardfile, error.message);
  }
}
