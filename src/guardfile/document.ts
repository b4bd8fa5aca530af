/**
 * The one guardfile loader: a file's text is parsed as KDL once, the mode is
 * decided from the parsed document, and the document is handed to that mode's
 * reader. Every command that loads a guardfile (`lint`, `describe`, `serve`
 * and its reload, `serve-ssm`, `serve-s3`, `diff`) goes through
 * {@link loadGuardfile}, by way of `loadGuardfileFile` in src/modes/serve.ts,
 * which reads the file.
 *
 * The readers only some files need (AWS, an MCP server wrap, `sql`,
 * `fail-when`) are loaded when the file needs them (./readers.ts):
 * {@link loadGuardfile} awaits them after the KDL parse, then reads
 * synchronously. `loadGuardfileText` (./load.ts) is the synchronous form for
 * programs that load every reader up front (tests, `@weir/weir/guard`).
 *
 * The mode: a document whose first top-level `wrap` reads
 * `wrap ward mcp aws ssm` or `wrap ward mcp aws s3` is an AWS policy (the
 * reference's grammars, `docs/aws.md`, read by src/guardfile/aws.ts); any
 * document whose first `wrap` holds an `mcp-server` node wraps an MCP server
 * (`docs/wrapping-mcp-servers.md`, read by src/guardfile/mcp_wrap.ts); any
 * other document is a spec-mode guardfile (`docs/guardfile.md`, read by
 * src/guardfile/parse.ts). A file that is not KDL has no mode: its syntax
 * errors are the diagnostics.
 *
 * Pure: no file, network or environment access.
 *
 * @module
 */
import type { Diagnostic } from "./diagnostics.ts";
import { type KdlNode, parseKdl, type SourcePosition } from "./kdl.ts";
import type { Guardfile } from "./model.ts";
import { readGuardfileNodes, syntaxDiagnostics } from "./parse.ts";
import type { AwsMode, AwsPolicy } from "./aws_model.ts";
import type { McpWrap } from "./mcp_wrap.ts";
import { type LoadReader, prepareReaders, readerOf } from "./readers.ts";
import { awsModeOf, isMcpWrap } from "./modes.ts";

export { awsModeOf, isMcpWrap };

/**
 * What a guardfile is: a spec-mode guardfile, an AWS SSM or S3 policy, or a
 * wrap of an MCP server (`mcp`, the file form of serve-upstream).
 */
export type GuardfileMode = "spec" | AwsMode | "mcp";

/** A loaded document: its mode, the model its reader made (when clean), and every diagnostic. */
export interface LoadedDocument {
  /** Absent when the text is not KDL (then `diagnostics` holds the syntax errors). */
  mode?: GuardfileMode;
  /** The spec-mode model, when `mode` is `"spec"` and there is no error. */
  guardfile?: Guardfile;
  /** The AWS policy, when `mode` is `"ssm"` or `"s3"` and there is no error. */
  policy?: AwsPolicy;
  /** The MCP server wrap, when `mode` is `"mcp"` and there is no error. */
  mcpWrap?: McpWrap;
  /** Every error and warning, in file order. */
  diagnostics: Diagnostic[];
  /** A spec-mode model read as far as it goes despite errors (for lint's warnings; never served). */
  partial?: Guardfile;
  /** Every `pattern=` string the file writes, with where (for the backtracking check). */
  patterns?: PatternSite[];
}

/** A `pattern=` a guardfile writes, where it writes it. */
export interface PatternSite {
  /** The regular expression's source. */
  source: string;
  /** The node path, e.g. `wrap > can > argument`. */
  path: string;
  /** Where the node starts. */
  position?: SourcePosition;
}

/** Every string `pattern=` property in `nodes`, any depth, in file order. */
export function patternSites(nodes: KdlNode[], parent = ""): PatternSite[] {
  const sites: PatternSite[] = [];
  for (const node of nodes) {
    const path = parent === "" ? node.name : `${parent} > ${node.name}`;
    const source = node.properties.pattern;
    if (typeof source === "string") sites.push({ source, path, position: node.position });
    sites.push(...patternSites(node.children, path));
  }
  return sites;
}

/** The mode of a parsed document (see the module documentation). */
export function modeOf(nodes: KdlNode[]): GuardfileMode {
  return awsModeOf(nodes) ?? (isMcpWrap(nodes) ? "mcp" : "spec");
}

/**
 * Load a guardfile's text: parse it as KDL once, decide its mode, load the
 * readers it needs (./readers.ts, with `load`), read it with its mode's reader.
 * @param text the file's contents
 * @param file the path, for messages and (AWS policies) the server name
 * @param load imports a reader's module (the CLI: `lazy`, src/ops/lazy.ts)
 * @throws only what `load` throws; the file's faults are diagnostics
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadGuardfile } from "./document.ts";
 * const text = 'wrap ward mcp x {\n base-url "https://x.example"\n auth none\n' +
 *   ' can get a {\n  path "/a"\n  fail-when "error"\n }\n}';
 * const loaded = await loadGuardfile(text, "x.mcp.kdl", (name) => import(`./${name}.ts`));
 * assert.equal(loaded.guardfile?.grants[0].failWhen, "error");
 * ```
 */
export async function loadGuardfile(
  text: string,
  file: string,
  load: LoadReader,
): Promise<LoadedDocument> {
  const parsed = parseKdl(text);
  if ("errors" in parsed) return { diagnostics: syntaxDiagnostics(parsed.errors) };
  const mode = modeOf(parsed.nodes);
  await prepareReaders(parsed.nodes, mode, load);
  return readLoaded(parsed.nodes, mode, file);
}

/**
 * Read a parsed document of a known mode with its reader; the readers it
 * needs must be loaded (./readers.ts).
 * @throws {ReaderNotLoadedError} when one is not (a programming error)
 */
export function readLoaded(nodes: KdlNode[], mode: GuardfileMode, file: string): LoadedDocument {
  const patterns = patternSites(nodes);
  if (mode === "spec") return { mode, ...readGuardfileNodes(nodes, file), patterns };
  if (mode === "mcp") {
    const { wrap, diagnostics } = readerOf("mcp_wrap").readMcpWrap(nodes, file);
    return wrap ? { mode, mcpWrap: wrap, diagnostics, patterns } : { mode, diagnostics, patterns };
  }
  const { policy, diagnostics } = readerOf("aws").readAwsPolicyNodes(nodes, file, mode);
  return policy ? { mode, policy, diagnostics } : { mode, diagnostics };
}
