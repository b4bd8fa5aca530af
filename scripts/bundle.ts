/**
 * Bundle weir's command line into JavaScript: what the release binaries and
 * the image are compiled from (`scripts/compile.ts` runs this first), and a
 * program `deno run` starts faster than the sources (docs/performance.md,
 * "Cold start").
 *
 *   deno task bundle             dist/bundle/: cli.js, each module loaded by URL as
 *                                src/.../NAME.js beside it, and the shared chunk-*.js
 *   bundle.ts --out-dir DIR      write there instead (relative to where the task was typed;
 *                                replaced whole: DIR must be new, empty or a bundle, anything
 *                                else is refused and left as it was)
 *   bundle.ts --print            print the `deno bundle` command line (JSON) instead
 *
 * How (scripts/build.ts `bundleArgs`): `deno bundle` (esbuild) of `cli.ts` and
 * every module loaded by URL (`INCLUDE`: the commands, the modes' lazy modules,
 * the extract worker) as entries of their own, code-split, minified, npm
 * packages inside except the few loaded only when used (`LAZY_NPM`); then the
 * chunks the same starts load are merged into one (scripts/bundle_merge.ts:
 * `serve`'s start reads 10 files, not 41, and no start more code). `cli.js`
 * loads its commands and modules from beside itself (`loadModulesBeside` in
 * src/ops/lazy.ts), never from the sources. Run it as the binary runs, without
 * the repository's config but with its runtime features and V8 flags:
 *
 *   deno run --no-config --unstable-no-legacy-abort --unstable-npm-lazy-caching \
 *     --v8-flags=--no-lazy --allow-net --allow-env --allow-read dist/bundle/cli.js serve FILE --stdio
 *
 * (`bundleRunArgs` in scripts/build.ts spells it). Needs esbuild, which
 * `deno bundle` fetches from npm once. The bundle does not follow the sources:
 * build it again after they change (tests/support/cli.ts refuses a stale
 * `WEIR_TEST_BUNDLE`).
 *
 * Exit codes: 0 written, 1 the bundle failed (nothing left behind), 2 usage errors.
 *
 * @module
 */
import {
  bundleArgs,
  bundled,
  type BundleOptions,
  ENTRY,
  INCLUDE,
  npmSpecifier,
  STARTS,
  typedPath,
} from "./build.ts";
import { bundleFiles, mergeChunks } from "./bundle_merge.ts";
import { LAZY_MODULES } from "../src/ops/lazy.ts";

const ROOT = new URL("../", import.meta.url);
const USAGE = "usage: bundle.ts [--out-dir DIR] [--print]";

/**
 * Run `deno ARGS`; undefined on success, else the last lines of its stderr
 * (colours and Deno's stack backtrace taken out).
 */
export async function denoFailure(args: string[]): Promise<string | undefined> {
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "inherit", stderr: "piped" })
    .output();
  if (out.success) return undefined;
  const text = new TextDecoder().decode(out.stderr).replace(/\x1b\[[0-9;]*m/g, "");
  return text.split("Stack backtrace")[0].split("\n").map((l) => l.trim()).filter(Boolean)
    .slice(-5).join("\n") || `deno exited ${out.code}`;
}

/**
 * Write the bundle into `outDir`, replacing whatever was there.
 * @param root the repository root (a directory `file:` URL ending in `/`)
 * @param outDir where the bundle goes (`cli.js` at its top)
 * @param options `npm`: `"inside"` (default: the binary and the image) or `"outside"` (the JSR
 *   package, scripts/jsr_package.ts: every npm package stays an import, rewritten to the `npm:`
 *   specifier deno.json pins, so the bundle holds weir's own modules only and needs no deno.json)
 * @returns undefined when written, else what failed (and `outDir` is gone, unless it held
 *   something a bundle does not write: then it is left as it was)
 */
export async function writeBundle(
  root: URL,
  outDir: string,
  options: BundleOptions = {},
): Promise<string | undefined> {
  const foreign = await notABundle(outDir);
  if (foreign) {
    return `${outDir} ${foreign}: give an empty or new directory ` +
      `(a bundle's directory is replaced whole)`;
  }
  await Deno.remove(outDir, { recursive: true }).catch(() => {});
  let failure = await denoFailure(bundleArgs(root, outDir, options));
  if (failure !== undefined) failure = `deno bundle failed:\n${failure.replace(/^/gm, "  ")}`;
  else {
    // Every module cli.js loads by URL must be where it looks for it.
    const missing = [];
    for (const path of [ENTRY, ...INCLUDE].map(bundled)) {
      if (!await Deno.stat(`${outDir}/${path}`).then(() => true, () => false)) missing.push(path);
    }
    if (missing.length) failure = `the bundle lacks ${missing.join(", ")}`;
    else if (options.npm === "outside") failure = await npmImportsPinned(outDir);
    if (failure === undefined) {
      const lazy = Object.fromEntries(
        Object.entries(LAZY_MODULES).map(([name, path]) => [name, bundled(path)]),
      );
      failure = await mergeChunks(outDir, STARTS.map(bundled), denoFailure, lazy);
      if (failure !== undefined) failure = `merging the chunks failed: ${failure}`;
    }
  }
  if (failure !== undefined) await Deno.remove(outDir, { recursive: true }).catch(() => {});
  return failure;
}

/** An import of a module by a string, as esbuild writes it (minified or not). */
const IMPORT = /((?<![\w$."'`])(?:from|import)\s*\(?\s*)"((?:@[\w.-]+\/)?\w[\w.-]*(?:\/[^"]*)?)"/g;

/**
 * Rewrite each bare import of an npm package in the bundle's files to its
 * pinned `npm:` specifier (scripts/build.ts `npmSpecifier`), so the bundle runs
 * without deno.json; undefined when done, else the imports left that neither
 * Deno nor the bundle can resolve (a package missing from deno.json's scope).
 */
async function npmImportsPinned(dir: string): Promise<string | undefined> {
  const unresolved = new Set<string>();
  for (const name of await bundleFiles(dir)) {
    const file = `${dir}/${name}`;
    const text = await Deno.readTextFile(file);
    const pinned = text.replace(IMPORT, (whole, head: string, specifier: string) => {
      if (/^(node|npm):/.test(specifier)) return whole;
      const npm = npmSpecifier(specifier);
      if (npm === undefined) unresolved.add(specifier);
      return npm === undefined ? whole : `${head}"${npm}"`;
    });
    if (pinned !== text) await Deno.writeTextFile(file, pinned);
  }
  return unresolved.size
    ? `bare imports no npm package in deno.json's "./" scope stands for: ${
      [...unresolved].join(", ")
    }`
    : undefined;
}

/**
 * What in `dir` a bundle would not have written, so that replacing `dir` never
 * deletes anything else; undefined when `dir` is absent, empty or a bundle. A
 * bundle is `cli.js` with `.js` files and directories of `.js` files beside
 * it (`src/...`), nothing else at any depth: a directory with a `src/` of other
 * files is somebody's project, not a bundle.
 */
async function notABundle(dir: string): Promise<string | undefined> {
  try {
    if (!(await Deno.lstat(dir)).isDirectory) return "is not a directory";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  let empty = true;
  const walk = async (path: string, shown: string): Promise<string | undefined> => {
    for await (const entry of Deno.readDir(path)) {
      empty = false;
      const name = `${shown}${entry.name}`;
      if (entry.isDirectory) {
        const found = await walk(`${path}/${entry.name}`, `${name}/`);
        if (found) return found;
      } else if (!entry.isFile || !entry.name.endsWith(".js")) {
        return `holds "${name}", which no bundle writes`;
      }
    }
    return undefined;
  };
  const found = await walk(dir, "");
  if (found) return found;
  if (!empty && !await Deno.stat(`${dir}/${bundled(ENTRY)}`).then(() => true, () => false)) {
    return `holds no ${bundled(ENTRY)}, so it is no bundle`;
  }
  return undefined;
}

async function main(args: string[]): Promise<number> {
  let outDir = new URL("dist/bundle", ROOT).pathname;
  let print = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--print") print = true;
    else if (args[i] === "--out-dir" && args[i + 1]) {
      const dir = args[++i];
      outDir = typedPath(dir);
    } else {
      console.error(
        `bundle: ${
          args[i] === "--out-dir" ? "--out-dir needs a directory" : `unknown argument ${args[i]}`
        }\n${USAGE}`,
      );
      return 2;
    }
  }
  outDir = outDir.replace(/(.)\/+$/, "$1");
  if (print) {
    console.log(JSON.stringify(["deno", ...bundleArgs(ROOT, outDir)]));
    return 0;
  }
  const failure = await writeBundle(ROOT, outDir);
  if (failure !== undefined) {
    console.error(`bundle: ${failure}`);
    return 1;
  }
  console.log(`bundle: wrote ${outDir}/${bundled(ENTRY)} and the modules beside it`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
