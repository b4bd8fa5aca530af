/**
 * Make the checkout the JSR package: the CLI entry `jsr:@weir/weir/cli` (the
 * route the README gives MCP hosts) runs a bundle of weir's own modules,
 * generated here from the same sources, and the sources stay published beside
 * it for audit. The release workflow runs it after `scripts/stamp.ts` and
 * before `deno publish`:
 *
 *   deno run -A scripts/jsr_package.ts
 *
 * It writes `bundle/` (scripts/bundle.ts `writeBundle` with npm packages
 * outside: the CLI, each module loaded by URL beside it, the shared chunks;
 * every npm package stays an `npm:` import, pinned as deno.json pins it, so no
 * third-party code is inside the package), then edits deno.json: the `./cli`
 * export names `bundle/cli.js` and `publish.include` adds `bundle/`.
 *
 * `bundle/cli.js` is two lines calling `runProgram` of `bundle/weir.js`, the
 * bundled `cli.ts`: Deno 2.9.6 never finds the main module in its code cache
 * when it is named by a `jsr:` specifier (it compiles it and writes the cache
 * again at every start), so the main module holds nothing to compile. The
 * library exports (`.`, `./guard`) stay the sources, with their types.
 * `deno run cli.ts` in a checkout is unchanged (docs/performance.md, "Which
 * form starts how fast").
 *
 * Exit codes: 0 written, 1 the bundle failed (deno.json left as it was), 2
 * usage (it takes no arguments).
 *
 * @module
 */
import { writeBundle } from "./bundle.ts";

/** Where the JSR package's bundle goes, from the repository root. */
export const JSR_BUNDLE = "bundle";

/** The bundled `cli.ts` in {@linkcode JSR_BUNDLE}; its `cli.js` is {@linkcode ENTRY_STUB}. */
export const JSR_PROGRAM = "weir.js";

/** The package's CLI entry, `bundle/cli.js`: it runs {@linkcode JSR_PROGRAM}. */
export const ENTRY_STUB =
  `// jsr:@weir/weir/cli: weir's command line, ./${JSR_PROGRAM} (cli.ts bundled by
// scripts/jsr_package.ts). The main module stays this small: Deno compiles it at every start.
import { runProgram } from "./${JSR_PROGRAM}";
await runProgram();
`;

/** A package config (deno.json) as far as this script edits it. */
export interface PackageConfig {
  exports: Record<string, string>;
  publish: { include: string[]; exclude?: string[] };
  [key: string]: unknown;
}

/**
 * deno.json for the JSR package: `./cli` names the bundle's `cli.js`, and the
 * bundle's files are published (un-ignored too: `.gitignore` lists `bundle/`
 * so a local run is never committed, and `deno publish` skips ignored files
 * unless `publish.exclude` says `!PATH`). Everything else as it was.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { packageConfig } from "./jsr_package.ts";
 * const config = packageConfig({
 *   exports: { ".": "./mod.ts", "./cli": "./cli.ts" },
 *   publish: { include: ["mod.ts", "cli.ts"], exclude: ["src/**\/*_test.ts"] },
 * });
 * assert.deepEqual(config.exports, { ".": "./mod.ts", "./cli": "./bundle/cli.js" });
 * assert.deepEqual(config.publish.include, ["mod.ts", "cli.ts", "bundle/**\/*.js"]);
 * assert.deepEqual(config.publish.exclude, ["src/**\/*_test.ts", "!bundle/"]);
 * ```
 */
export function packageConfig(config: PackageConfig): PackageConfig {
  if (config.exports["./cli"] !== "./cli.ts") {
    throw new Error(`deno.json's "./cli" export is ${config.exports["./cli"]}, not ./cli.ts`);
  }
  return {
    ...config,
    exports: { ...config.exports, "./cli": `./${JSR_BUNDLE}/cli.js` },
    publish: {
      ...config.publish,
      include: [...config.publish.include, `${JSR_BUNDLE}/**/*.js`],
      exclude: [...config.publish.exclude ?? [], `!${JSR_BUNDLE}/`],
    },
  };
}

if (import.meta.main) {
  if (Deno.args.length) {
    console.error(`jsr_package: takes no arguments (got ${Deno.args.join(" ")})`);
    Deno.exit(2);
  }
  const root = new URL("../", import.meta.url);
  const file = new URL("deno.json", root);
  const config = packageConfig(JSON.parse(await Deno.readTextFile(file)));
  const dir = new URL(JSR_BUNDLE, root).pathname;
  const failure = await writeBundle(root, dir, { npm: "outside" });
  if (failure !== undefined) {
    console.error(`jsr_package: ${failure}`);
    Deno.exit(1);
  }
  // cli.js's own imports are "./chunk-...": the same from weir.js beside it.
  await Deno.rename(`${dir}/cli.js`, `${dir}/${JSR_PROGRAM}`);
  await Deno.writeTextFile(`${dir}/cli.js`, ENTRY_STUB);
  await Deno.writeTextFile(file, `${JSON.stringify(config, null, 2)}\n`);
  console.log(
    `jsr_package: wrote ${JSR_BUNDLE}/cli.js and the modules beside it; ` +
      `deno.json's "./cli" export names it`,
  );
}
