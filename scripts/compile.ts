/**
 * Build weir's single-file binaries with `deno compile`, from the one build
 * definition in `scripts/build.ts` (flags, included modules, targets). Each
 * binary is compiled from the bundle (`scripts/bundle.ts`), written first into
 * `OUT_DIR/bundle` and removed once compiled: the binary holds what it runs, and
 * must never find a module among files on disk (`deno task bundle` writes a
 * bundle to keep).
 *
 *   deno task compile              dist/weir for this machine
 *   deno task release              dist/weir-<target>.tar.gz (.zip for Windows) for the five
 *                                  targets, each holding weir (weir.exe) and LICENSE, and
 *                                  dist/SHA256SUMS (sha256sum -c format)
 *   compile.ts --target TARGET     dist/weir for one target (cross-compiled)
 *   compile.ts --image PLATFORM    dist/weir for the container image on PLATFORM (linux/amd64,
 *                                  linux/arm64): the image's permission set (what the Dockerfile runs)
 *   --out-dir DIR                  write there instead of dist/ (relative to where typed)
 *   --v8-flags=LIST                V8 flags the binary starts with, comma-separated (default
 *                                  none; the release workflow's figures job compiles a binary
 *                                  with --v8-flags=--no-lazy to compare, docs/releasing.md)
 *   --print                        print the `deno bundle` and each `deno compile` command line
 *                                  (JSON) instead of running them
 *
 * `deno compile` needs `denort`, the runtime the binary is built on. Deno
 * downloads it from dl.deno.land for each target unless `DENORT_BIN` names a
 * local copy (only for the host's own target). When it cannot get one, this
 * script says so, removes what it half-wrote (never leaving an empty dist/),
 * and exits 1.
 *
 * Exit codes: 0 built, 1 a build failed, 2 usage errors.
 *
 * @module
 */
import {
  binaryName,
  bundleArgs,
  compileArgs,
  IMAGE,
  type Target,
  TARGETS,
  typedPath,
} from "./build.ts";
import { writeArchive, writeSums } from "./archive.ts";
import { denoFailure, writeBundle } from "./bundle.ts";

const ROOT = new URL("../", import.meta.url);
const USAGE = "usage: compile.ts [--release | --target TARGET | --image PLATFORM] " +
  "[--out-dir DIR] [--v8-flags=LIST] [--print]";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

interface Job {
  /** The target to cross-compile for; this machine's when undefined. */
  target?: Target;
  /** Where the binary goes. */
  output: string;
  image?: boolean;
}

interface Options {
  release: boolean;
  target?: Target;
  platform?: string;
  outDir: string;
  print: boolean;
  v8Flags?: string[];
}

function parse(args: string[]): Options | string {
  const options: Options = { release: false, outDir: new URL("dist", ROOT).pathname, print: false };
  for (let i = 0; i < args.length; i++) {
    const value = () => args[++i] ?? "";
    switch (args[i]) {
      case "--release":
        options.release = true;
        break;
      case "--print":
        options.print = true;
        break;
      case "--out-dir": {
        const dir = value();
        if (!dir) return `--out-dir needs a directory`;
        options.outDir = typedPath(dir);
        break;
      }
      case "--target": {
        const target = value();
        if (!Object.hasOwn(TARGETS, target)) {
          return `--target ${target}: one of ${Object.keys(TARGETS).join(", ")}`;
        }
        options.target = target as Target;
        break;
      }
      case "--image": {
        // BuildKit may spell arm64 with its variant.
        const platform = value().replace(/^linux\/arm64\/v8$/, "linux/arm64");
        if (!Object.hasOwn(IMAGE.platforms, platform)) {
          return `--image ${platform}: one of ${Object.keys(IMAGE.platforms).join(", ")}`;
        }
        options.platform = platform;
        break;
      }
      default: {
        const flags = /^--v8-flags=(.*)$/s.exec(args[i]);
        if (!flags) return `unknown argument ${args[i]}`;
        const list = flags[1].split(",");
        if (!list.every((flag) => /^--?[a-z0-9][a-z0-9_=.-]*$/i.test(flag))) {
          return `--v8-flags=${flags[1]}: V8 flags, comma-separated, e.g. --v8-flags=--no-lazy`;
        }
        options.v8Flags = list;
      }
    }
  }
  const modes = [options.release, options.target, options.platform].filter(Boolean).length;
  if (modes > 1) return "--release, --target and --image exclude each other";
  options.outDir = options.outDir.replace(/(.)\/+$/, "$1");
  return options;
}

async function main(args: string[]): Promise<number> {
  const options = parse(args);
  if (typeof options === "string") {
    console.error(`compile: ${options}\n${USAGE}`);
    return 2;
  }
  const { outDir } = options;
  // Release binaries are built in a scratch directory and shipped only as archives.
  const scratch = options.release && !options.print
    ? await Deno.makeTempDir({ prefix: "weir-compile-" })
    : outDir;
  const jobs: Job[] = options.release
    ? (Object.keys(TARGETS) as Target[]).map((target) => ({
      target,
      output: `${scratch}/${target}/${binaryName(target)}`,
    }))
    : options.platform
    ? [{ target: IMAGE.platforms[options.platform], output: `${outDir}/weir`, image: true }]
    : [{
      target: options.target,
      output: options.target
        ? `${outDir}/${binaryName(options.target)}`
        : `${outDir}/${Deno.build.os === "windows" ? "weir.exe" : "weir"}`,
    }];
  const bundle = `${outDir}/bundle`;
  const argsOf = (job: Job) =>
    compileArgs(ROOT, bundle, job.output, {
      target: job.target,
      image: job.image,
      v8Flags: options.v8Flags,
    });
  if (options.print) {
    console.log(JSON.stringify(["deno", ...bundleArgs(ROOT, bundle)]));
    for (const job of jobs) console.log(JSON.stringify(["deno", ...argsOf(job)]));
    return 0;
  }
  const outExisted = await exists(outDir);
  await Deno.mkdir(outDir, { recursive: true });
  const written: string[] = [];
  let bundled = false; // written by this run: only then is it this run's to remove
  try {
    const failure = await writeBundle(ROOT, bundle);
    bundled = failure === undefined;
    if (failure !== undefined) {
      if (!outExisted) await Deno.remove(outDir).catch(() => {}); // only if empty
      console.error(`compile: ${failure}`);
      return 1;
    }
    for (const job of jobs) {
      await Deno.mkdir(job.output.slice(0, job.output.lastIndexOf("/")), { recursive: true });
      const error = await denoFailure(argsOf(job));
      if (error !== undefined) {
        for (const file of [...written, job.output]) await Deno.remove(file).catch(() => {});
        await Deno.remove(bundle, { recursive: true }).catch(() => {});
        if (!outExisted) await Deno.remove(outDir).catch(() => {}); // only if empty
        console.error(
          `compile: deno compile${job.target ? ` --target ${job.target}` : ""} failed:`,
        );
        console.error(error.split("\n").slice(-6).map((l) => `  ${l}`).join("\n"));
        console.error(
          `compile: deno compile builds on "denort", which it downloads from dl.deno.land.\n` +
            `  Without network access, point DENORT_BIN at a denort ${Deno.version.deno} binary ` +
            `for this machine\n  (from the denort-<target>.zip of the Deno release) and run ` +
            `"deno task compile" again:\n    DENORT_BIN=/path/to/denort deno task compile\n` +
            `  Release builds for other targets need each target's denort, so they need the network.`,
        );
        return 1;
      }
      written.push(job.output);
      if (!options.release) console.log(`compile: wrote ${job.output}`);
    }
    if (options.release) {
      const names = [];
      for (const job of jobs) {
        const name = await writeArchive(
          job.output,
          new URL("LICENSE", ROOT).pathname,
          job.target!,
          outDir,
        );
        names.push(name);
        console.log(`compile: wrote ${outDir}/${name}`);
      }
      await writeSums(outDir, names);
      console.log(
        `compile: wrote ${outDir}/SHA256SUMS (check with: cd ${outDir} && sha256sum -c SHA256SUMS)`,
      );
    }
  } finally {
    if (scratch !== outDir) await Deno.remove(scratch, { recursive: true }).catch(() => {});
    // A build ships only the binary (or the archives); a failed one leaves nothing of its own.
    // Were the bundle kept at the path the binary embeds it from, a module the binary lacks
    // would still load from disk here and fail only on another machine.
    if (bundled) {
      await Deno.remove(bundle, { recursive: true }).catch(() => {});
    }
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
