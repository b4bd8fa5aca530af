/**
 * Load a guardfile reader (src/guardfile/readers.ts) by URL: its module is
 * src/ops/lazy.ts `LAZY_MODULES` `guardfile_<name>`. What `loadGuardfile`
 * (src/guardfile/document.ts) is given by every command.
 *
 * Its own module, imported only by the code that loads guardfiles: the
 * bundle's merge (scripts/bundle_merge.ts) takes the starts that run the code
 * naming a lazy module (here the template `guardfile_${name}`) as the starts
 * that may load it, and keeps a reader's chunks apart from a start's group only
 * where such a start does not run them. Named from src/ops/lazy.ts, run by every
 * start, a reader split every group it shares.
 *
 * @module
 */
import type { LoadReader } from "../guardfile/readers.ts";
import { lazy } from "./lazy.ts";

/**
 * Import the reader named `name` (`aws`, `mcp_wrap`, `sql`, `jmespath`).
 * @throws what src/ops/lazy.ts `importModule` throws (a missing read permission names the file)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadReader } from "./load_reader.ts";
 * const { compileJmesPath } = await loadReader("jmespath");
 * assert.equal(compileJmesPath("items[?done]"), null);
 * ```
 */
export const loadReader: LoadReader = (name) => lazy(`guardfile_${name}`);
