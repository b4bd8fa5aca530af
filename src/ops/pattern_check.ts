/**
 * The load-time backtracking check of a guardfile's `pattern=` strings
 * (spec-mode inputs and a wrapped MCP server's `argument` rules): one that
 * can backtrack exponentially is an error naming its line and a rewrite, so
 * the file is neither linted clean nor served; lint also warns about one
 * that backtracks polynomially. See src/mcp/backtracking.ts.
 *
 * @module
 */
import { MAX_PATTERN_LENGTH, shownPattern } from "../guardfile/pattern.ts";
import type { LoadedDocument } from "../guardfile/document.ts";
import {
  backtrackingOf,
  backtrackingWords,
  type LoadAnalysis,
  prepareBacktracking,
} from "../mcp/backtracking.ts";
import { lazy } from "./lazy.ts";

/** Import the backtracking analysis by URL (only when a pattern needs it). */
export const loadAnalysis: LoadAnalysis = () =>
  lazy<typeof import("../mcp/backtracking_analysis.ts")>("backtracking_analysis");

/**
 * Refuse a `pattern=` that can backtrack exponentially (an error: the file is
 * not served); with `lint`, warn about one that backtracks polynomially. The
 * analysis loads only when a pattern has a quantified group (or for lint).
 */
export async function checkBacktracking(
  loaded: LoadedDocument,
  lint: boolean,
): Promise<void> {
  const sites = loaded.patterns ?? [];
  if (sites.length === 0) return;
  await prepareBacktracking(sites.map((site) => site.source), loadAnalysis, lint);
  let refused = false;
  for (const { source, path, position } of sites) {
    // A longer one is already an error of the loader (src/guardfile/pattern.ts).
    if (source.length > MAX_PATTERN_LENGTH) continue;
    const found = backtrackingOf(source);
    if (found === undefined || (found.kind === "polynomial" && !lint)) continue;
    const severity = found.kind === "exponential" ? "error" : "warning";
    refused ||= severity === "error";
    const message = `pattern ${shownPattern(source)} ${backtrackingWords(found)}`;
    loaded.diagnostics.push({ severity, message, path, position });
  }
  loaded.diagnostics.sort((a, b) =>
    (a.position?.line ?? Infinity) - (b.position?.line ?? Infinity) ||
    (a.position?.column ?? 0) - (b.position?.column ?? 0)
  );
  if (!refused) return;
  if (loaded.guardfile) loaded.partial ??= loaded.guardfile;
  delete loaded.guardfile;
  delete loaded.mcpWrap;
}
