/**
 * The readers only some guardfiles need, loaded when a file needs them: an
 * AWS policy (`./aws.ts`), a wrap of an MCP server (`./mcp_wrap.ts`), a `sql`
 * grant (`./sql.ts`) and `fail-when` (`./jmespath.ts`, npm JMESPath). A plain
 * spec-mode file needs none, and `weir serve FILE --stdio` of one loads none
 * (issue 30: each is a cost at every start; docs/performance.md, "Cold start").
 *
 * Two ways to have them, one rule:
 *
 * - on demand: {@link prepareReaders} is given the parsed document and a
 *   loader, finds the readers its node names call for ({@link readersNeeded})
 *   and awaits them; `loadGuardfile` (`./document.ts`) does this, and every
 *   CLI command loads a file through it (`loadGuardfileFile`, src/modes/serve.ts,
 *   with `lazy`, src/ops/lazy.ts);
 * - all at once: `./load.ts` imports every reader statically and registers
 *   them ({@link registerReaders}), so its synchronous `loadGuardfileText` and
 *   `parseGuardfile` (and `@weir/weir/guard`, which exports them) read every
 *   file without a preparation, as before.
 *
 * A reader asked for ({@link readerOf}) that neither loaded throws
 * {@link ReaderNotLoadedError}, naming what to call: a programming error of a
 * caller that read a document with the core (`./document.ts`) without
 * preparing it, never a diagnostic of the file.
 *
 * Pure: the loader is the caller's (this room imports nothing by URL).
 *
 * @module
 */
import type { KdlNode } from "./kdl.ts";
import type { NodeReader } from "./nodes.ts";
import type { SqlSpec } from "./model.ts";
import type { AwsLoadResult, AwsMode } from "./aws_model.ts";
import type { McpWrapResult } from "./mcp_wrap_model.ts";

/**
 * The readers loaded on demand, by name: what the loader calls of each module
 * (its exports hold more). Written out, not `typeof import(...)`, so no
 * module the readers are called from imports them, even as types.
 */
export interface Readers {
  /** `wrap ward mcp aws ssm|s3` policies: ./aws.ts. */
  aws: {
    readAwsPolicyNodes(nodes: KdlNode[], file: string, mode: AwsMode): AwsLoadResult;
  };
  /** A `wrap` holding `mcp-server`: ./mcp_wrap.ts. */
  mcp_wrap: { readMcpWrap(nodes: readonly KdlNode[], file: string): McpWrapResult };
  /** A grant's `sql` node: ./sql.ts. */
  sql: {
    readSql(node: NodeReader, verb: string): SqlSpec | undefined;
    /** Whether a sql grant reads (`grantAccess`, ./reads.ts). */
    sqlAccess(
      sql: { statement: string; reads: boolean; onlyReads?: readonly string[] },
    ): { reads: boolean; why: string };
  };
  /** A grant's `fail-when` (checked at load, run at each call): ./jmespath.ts. */
  jmespath: {
    compileJmesPath(expression: string): string | null;
    jmesPathPredicate(
      expression: string,
    ): (data: unknown, scope: Record<string, unknown>) => boolean;
  };
}

/** A name of {@link Readers}. */
export type ReaderName = keyof Readers;

/** How a caller imports a reader's module (by URL: `lazy("guardfile_" + name)`, src/ops/lazy.ts). */
export type LoadReader = <N extends ReaderName>(name: N) => Promise<Readers[N]>;

const loaded: Partial<Readers> = {};

/**
 * A reader was asked for that no one loaded: the caller read a document with
 * the core (`./document.ts`) without awaiting {@link prepareReaders} (or
 * `loadGuardfile`) first. The message names the reader and the fix.
 */
export class ReaderNotLoadedError extends Error {
  override name = "ReaderNotLoadedError";
}

/**
 * The loaded reader `name`.
 * @throws {ReaderNotLoadedError} when neither {@link prepareReaders} nor
 *   {@link registerReaders} loaded it
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readerOf, registerReaders } from "./readers.ts";
 * registerReaders({ jmespath: await import("./jmespath.ts") });
 * assert.equal(readerOf("jmespath").compileJmesPath("items[0]"), null);
 * ```
 */
export function readerOf<N extends ReaderName>(name: N): Readers[N] {
  const reader = loaded[name];
  if (reader) return reader;
  throw new ReaderNotLoadedError(
    `the guardfile reader "${name}" is not loaded: await loadGuardfile(text, file, load) ` +
      `(src/guardfile/document.ts) or prepareReaders(nodes, load) (src/guardfile/readers.ts) ` +
      `before reading, or read with loadGuardfileText/parseGuardfile from src/guardfile/load.ts, ` +
      `which loads every reader`,
  );
}

/**
 * Register readers already imported (`./load.ts` registers all four).
 * @param readers the modules, by name
 */
export function registerReaders(readers: Partial<Readers>): void {
  Object.assign(loaded, readers);
}

/**
 * The readers a parsed document calls for: its mode's (`aws`, `mcp_wrap`,
 * decided by `modeOf`, `./document.ts`) and, at any depth, `sql` for a node
 * named `sql` and `jmespath` for one named `fail-when`. A name where the
 * grammar has no such node only loads a reader unused.
 * @param mode the document's mode
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseKdl } from "./kdl.ts";
 * import { readersNeeded } from "./readers.ts";
 * const parsed = parseKdl('wrap ward mcp x {\n can get a {\n  path "/a"\n  fail-when "error"\n }\n}');
 * if ("errors" in parsed) throw new Error("not KDL");
 * assert.deepEqual(readersNeeded(parsed.nodes, "spec"), ["jmespath"]);
 * ```
 */
export function readersNeeded(nodes: readonly KdlNode[], mode: string): ReaderName[] {
  const needed = new Set<ReaderName>();
  if (mode === "ssm" || mode === "s3") needed.add("aws");
  if (mode === "mcp") needed.add("mcp_wrap");
  const stack = [...nodes];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.name === "sql") needed.add("sql");
    else if (node.name === "fail-when") needed.add("jmespath");
    stack.push(...node.children);
  }
  return [...needed];
}

/**
 * Load the readers a parsed document calls for ({@link readersNeeded}) that
 * are not loaded yet, in parallel. Await it before reading the document.
 * @param load imports a reader's module
 * @throws whatever `load` throws (a module Deno may not read)
 */
export async function prepareReaders(
  nodes: readonly KdlNode[],
  mode: string,
  load: LoadReader,
): Promise<void> {
  const missing = readersNeeded(nodes, mode).filter((name) => !loaded[name]);
  const modules = await Promise.all(missing.map((name) => load(name)));
  missing.forEach((name, i) => registerReaders({ [name]: modules[i] }));
}
