/**
 * The guardfile loader, synchronous, with every reader loaded up front: for
 * programs that read guardfiles without awaiting (tests, scaffold's check,
 * `@weir/weir/guard`, whose `parseGuardfile` is this one). It imports the
 * readers only some files need (AWS, an MCP server wrap, `sql`, `fail-when`)
 * statically and registers them (./readers.ts), so any file reads at once.
 *
 * The CLI does not use it: `weir serve`, `lint` and the rest load a file with
 * `loadGuardfile` (./document.ts), which loads only the readers the file needs
 * (issue 30, a stdio server's start). Both read a file alike: the same model,
 * the same diagnostics.
 *
 * Pure: no file, network or environment access.
 *
 * @module
 */
import { parseKdl } from "./kdl.ts";
import { type LoadResult, readGuardfileNodes, syntaxDiagnostics } from "./parse.ts";
import { type LoadedDocument, modeOf, readLoaded } from "./document.ts";
import { registerReaders } from "./readers.ts";
import * as aws from "./aws.ts";
import * as mcpWrap from "./mcp_wrap.ts";
import * as sql from "./sql.ts";
import * as jmespath from "./jmespath.ts";

export * from "./document.ts";

registerReaders({ aws, mcp_wrap: mcpWrap, sql, jmespath });

/**
 * Load a guardfile's text: parse it as KDL once, decide its mode, read it
 * with that mode's reader (see `loadGuardfile`, ./document.ts, which this
 * matches without awaiting).
 * @param text the file's contents
 * @param file the path, for messages and (AWS policies) the server name
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadGuardfileText } from "./load.ts";
 * const { mode, policy } = loadGuardfileText(
 *   'wrap ward mcp aws ssm {\n  parameter "/app/token"\n  can get parameter\n}',
 *   "params.mcp.kdl",
 * );
 * assert.equal(mode, "ssm");
 * assert.equal(policy?.mode, "ssm");
 * ```
 */
export function loadGuardfileText(text: string, file: string): LoadedDocument {
  const parsed = parseKdl(text);
  if ("errors" in parsed) return { diagnostics: syntaxDiagnostics(parsed.errors) };
  return readLoaded(parsed.nodes, modeOf(parsed.nodes), file);
}

/**
 * Load a guardfile's text into the checked model (spec mode, or a wrap of an
 * MCP server in `mcpWrap`). Pure: no I/O; secrets are named, never read.
 * @param text the guardfile (KDL v2; `docs/guardfile.md` gives the grammar)
 * @param file the path, used only in messages
 * @returns the model when there is no error, and every diagnostic (errors and
 *   warnings) with line, column and node path
 */
export function parseGuardfile(text: string, file: string): LoadResult {
  const parsed = parseKdl(text);
  if ("errors" in parsed) return { diagnostics: syntaxDiagnostics(parsed.errors) };
  // A wrap of an MCP server is read as one (modeOf decides modes alike).
  if (modeOf(parsed.nodes) === "mcp") {
    const { wrap, diagnostics } = mcpWrap.readMcpWrap(parsed.nodes, file);
    return wrap ? { mcpWrap: wrap, diagnostics } : { diagnostics };
  }
  return readGuardfileNodes(parsed.nodes, file);
}
