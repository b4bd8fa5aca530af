/**
 * Modules a mode imports by URL when it starts, not by a string literal.
 *
 * Deno walks every string-literal `import()` of the start graph before the
 * program runs, whether it is ever taken or not; an `import()` of a URL it
 * walks only when the program takes it. `weir serve`'s literal imports reached
 * about 580 KB of TypeScript it mostly never runs (the wrap and AWS modes,
 * HTTP listening, inbound OAuth, token exchange), all read at each start.
 * The same holds a module a static import would load for a feature the file
 * may not use (telemetry, sql grants).
 *
 * Each module here is listed by its path from the repository root: a checkout
 * imports the file (needing read permission, which serve has for its
 * guardfile), a JSR install fetches it next to the rest, and the bundle the
 * binary and the image are compiled from (`deno task bundle`, scripts/build.ts)
 * holds it as its own entry, `src/modes/serve_aws.js` beside the bundle's
 * `cli.js` (`scripts/build.ts` `INCLUDE`; tests/release/build_definition_test.ts
 * holds the two lists together). Give the module's type at the call:
 * `await lazy<typeof import("../modes/serve_aws.ts")>("serve_aws")`.
 *
 * {@linkcode moduleUrl} says where such a module is: under the root `cli.ts`
 * runs from, with `cli.ts`'s own extension (`.ts` from a checkout or JSR, `.js`
 * in the bundle), set by {@linkcode loadModulesBeside}; for a program that never
 * loads `cli.ts` (a library user of `mod.ts`), next to this file's root.
 *
 * @module
 */

/** Runs a function in a context no call made; set by {@link contextsMadeHere}. */
let contextFree: (<T>(run: () => T) => T) | undefined;

/**
 * Said by a module that makes `AsyncLocalStorage` contexts (the OpenTelemetry
 * context manager, the upstream request scope) when it loads or starts, before
 * any call: `snapshot` (`AsyncLocalStorage.snapshot()` taken then) runs work in
 * no call's context. The first one given is kept. Until one is given no
 * context exists to leave, and `node:async_hooks` (about 22 M instructions to
 * load) stays off the start of a plain `serve`.
 * @example
 * ```ts
 * import { AsyncLocalStorage } from "node:async_hooks";
 * import { contextsMadeHere } from "./lazy.ts";
 * contextsMadeHere(AsyncLocalStorage.snapshot());
 * ```
 */
export function contextsMadeHere(snapshot: <T>(run: () => T) => T): void {
  contextFree ??= snapshot;
}

/**
 * Run `start` outside every async context (`AsyncLocalStorage` stores: the
 * OpenTelemetry context, the upstream request scope) and return what it
 * returns; the caller's own context is unchanged after it awaits the result.
 *
 * For work begun during one call that outlives it or serves later calls: a
 * module's first dynamic `import()` (Deno 2.9.6 lets the context in which it
 * completes leak into the `Deno.serve` handlers that run after it, so every
 * later call inherited the first call's span as its parent), or a connection
 * pool made at the first call that takes it.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AsyncLocalStorage } from "node:async_hooks";
 * import { contextsMadeHere, outsideContexts } from "./lazy.ts";
 * contextsMadeHere(AsyncLocalStorage.snapshot());
 * const store = new AsyncLocalStorage<string>();
 * store.run("call 1", () => {
 *   assert.equal(outsideContexts(() => store.getStore()), undefined);
 *   assert.equal(store.getStore(), "call 1");
 * });
 * ```
 */
export function outsideContexts<T>(start: () => T): T {
  return contextFree ? contextFree(start) : start();
}

/** The modules loaded by URL, by name: paths from the repository root. */
export const LAZY_MODULES = {
  serve_aws: "src/modes/serve_aws.ts",
  serve_mcp_wrap: "src/modes/serve_mcp_wrap.ts",
  listen_http: "src/serving/listen_http.ts",
  oauth_resource_server: "src/oauth/resource_server.ts",
  oauth_access_tokens: "src/oauth/access_tokens.ts",
  oauth_profiles: "src/oauth/profiles.ts",
  oauth_exchange_setup: "src/oauth/exchange_setup.ts",
  oauth_token_exchange: "src/oauth/token_exchange.ts",
  telemetry: "src/ops/telemetry.ts",
  guard_sql: "src/guard/sql.ts",
  backtracking_analysis: "src/mcp/backtracking_analysis.ts",
  token_table: "src/inbound/token_table.ts",
  serve_exchange_flags: "src/modes/serve_exchange_flags.ts",
  guardfile_aws: "src/guardfile/aws.ts",
  guardfile_mcp_wrap: "src/guardfile/mcp_wrap.ts",
  guardfile_sql: "src/guardfile/sql.ts",
  guardfile_jmespath: "src/guardfile/jmespath.ts",
  http1_client: "src/outbound/http1_client.ts",
} as const;

/** A name of {@link LAZY_MODULES}. */
export type LazyName = keyof typeof LAZY_MODULES;

/** The root modules are loaded from and the extension they have there. */
let modules = { root: new URL("../../", import.meta.url).href, extension: ".ts" };

/**
 * Load every module named by its path from the root (a command, a
 * {@link LAZY_MODULES} entry, a Web Worker) from beside `entry`, with `entry`'s
 * extension: `cli.ts` calls it with its own URL, so the bundle (`cli.js`, its
 * entries `src/.../*.js` beside it) loads its own files, never the sources.
 * @param entry the URL of the program's entry module, at the root (`import.meta.url`)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadModulesBeside, moduleUrl } from "./lazy.ts";
 * const source = moduleUrl("src/guard/sql.ts");
 * loadModulesBeside("file:///opt/weir/bundle/cli.js");
 * assert.equal(moduleUrl("src/guard/sql.ts"), "file:///opt/weir/bundle/src/guard/sql.js");
 * loadModulesBeside(new URL("../../cli.ts", import.meta.url).href); // back to the sources
 * assert.equal(moduleUrl("src/guard/sql.ts"), source);
 * ```
 */
export function loadModulesBeside(entry: string): void {
  const url = new URL(entry);
  modules = {
    root: new URL("./", url).href,
    extension: /\.[^./]*$/.exec(url.pathname)?.[0] ?? ".ts",
  };
}

/**
 * The URL of a module by its path from the repository root (`src/guard/sql.ts`,
 * or `./src/...`), where {@link loadModulesBeside} says modules are.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { moduleUrl } from "./lazy.ts";
 * assert.equal(moduleUrl("src/ops/lazy.ts"), new URL("./lazy.ts", import.meta.url).href);
 * ```
 */
export function moduleUrl(path: string): string {
  return new URL(path.replace(/\.ts$/, modules.extension), modules.root).href;
}

/**
 * Import one of {@link LAZY_MODULES} by its URL (see the module doc).
 * @throws whatever the import throws (a missing read permission names the file)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lazy } from "./lazy.ts";
 * const { profileOf } = await lazy<typeof import("../oauth/profiles.ts")>("oauth_profiles");
 * assert.equal(typeof profileOf, "function");
 * ```
 */
export function lazy<T>(name: LazyName): Promise<T> {
  return importModule(LAZY_MODULES[name]);
}

/**
 * Deno was not allowed to read one of weir's own modules (a bundle or a
 * checkout run with `--allow-read` narrowed to the command's files): the
 * message names the module and the flag to give. The CLI prints it and exits 2.
 */
export class UnreadableModuleError extends Error {
  override name = "UnreadableModuleError";
}

/** The import of each module URL under way or done: one `import()` per URL for every caller. */
const imports = new Map<string, Promise<unknown>>();

/**
 * Import a module by its path from the root, from where {@link moduleUrl} says
 * modules are (a command, one of {@link LAZY_MODULES}). Callers asking for the
 * same URL share one `import()` (concurrent first calls pay Deno's preparation
 * of a dynamic import once); a failed import is forgotten, so the next caller
 * tries again, as each caller did before.
 * @throws {UnreadableModuleError} when Deno may not read a local module (a
 *   missing `--allow-read`), naming the file and the flag; else what the import throws
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { importModule } from "./lazy.ts";
 * const { moduleUrl } = await importModule<typeof import("./lazy.ts")>("src/ops/lazy.ts");
 * assert.equal(typeof moduleUrl, "function");
 * ```
 */
export function importModule<T>(path: string): Promise<T> {
  const url = moduleUrl(path);
  let pending = imports.get(url);
  if (!pending) {
    pending = importOnce(url);
    imports.set(url, pending);
    const forget = () => imports.get(url) === pending && imports.delete(url);
    pending.catch(forget);
  }
  return pending as Promise<T>;
}

async function importOnce(url: string): Promise<unknown> {
  try {
    return await outsideContexts(() => import(url));
  } catch (error) {
    if (!url.startsWith("file:")) throw error;
    const { state } = await Deno.permissions.query({ name: "read", path: new URL(url) });
    if (state === "granted") throw error;
    const file = decodeURIComponent(new URL(url).pathname);
    const dir = decodeURIComponent(new URL(modules.root).pathname);
    throw new UnreadableModuleError(
      `Deno may not read weir's own module ${file}: give it read access to ${dir} ` +
        `(--allow-read, or --allow-read=${dir} and the files the command reads)`,
      { cause: error },
    );
  }
}
