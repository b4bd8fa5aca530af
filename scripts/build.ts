/**
 * How weir is built and shipped, written once. Everything that compiles or
 * publishes weir reads it from here, and `tests/release/build_definition_test.ts`
 * holds the files that cannot import it (the `Dockerfile`, the release workflow,
 * the Helm chart) to it:
 *
 * - `scripts/bundle.ts` (`deno task bundle`) bundles the CLI with
 *   {@linkcode bundleArgs}: one JavaScript entry, `cli.js`, with each module
 *   loaded by URL its own entry beside it ({@linkcode INCLUDE}), code-split and
 *   minified, npm packages inside;
 * - `scripts/compile.ts` (`deno task compile`, `deno task release`) bundles, then
 *   builds the binaries from the bundle with {@linkcode compileArgs};
 * - the `Dockerfile` runs `scripts/compile.ts --image PLATFORM`, so the image's
 *   binary gets the same flags and included modules, less the permissions the
 *   image has no use for ({@linkcode IMAGE}`.permissions`), and its default
 *   command is {@linkcode IMAGE}`.command`;
 * - `.github/workflows/release.yml` runs `scripts/compile.ts --release`, pushes
 *   the image to {@linkcode IMAGE}`.repository` for {@linkcode IMAGE}`.platforms`
 *   and the chart to {@linkcode CHART}`.repository`, which the chart's default
 *   `image.repository` names.
 *
 * @module
 */

import config from "../deno.json" with { type: "json" };
import { COMMAND_MODULES } from "../cli.ts";
import { LAZY_MODULES } from "../src/ops/lazy.ts";

/** The program: the CLI, the bundle's entry (`cli.js` in the bundle). */
export const ENTRY = "cli.ts";

/**
 * Modules loaded by URL (`moduleUrl` in src/ops/lazy.ts), which neither a
 * bundler nor `deno compile` can find by following imports: each Web Worker
 * module, each command's module, which `cli.ts` imports by a specifier Deno
 * cannot follow before it runs ({@linkcode COMMAND_MODULES}), and each module a
 * mode loads by URL when it starts ({@linkcode LAZY_MODULES}). Each is an entry
 * of the bundle ({@linkcode bundleArgs}) and embedded in the binary
 * (`--include`). Paths are relative to the repository root.
 */
export const INCLUDE: readonly string[] = [
  "src/guard/extract_worker.ts",
  ...new Set(Object.values(COMMAND_MODULES).map((m) => m.replace(/^\.\/|#.*$/g, ""))),
  ...Object.values(LAZY_MODULES),
];

/**
 * The modules a start of weir loads first: {@linkcode ENTRY}, each command's
 * module and each Web Worker module ({@linkcode INCLUDE} less
 * {@linkcode LAZY_MODULES}, which a running command loads). The bundle's
 * chunks are merged by which of these load them (scripts/bundle_merge.ts).
 */
export const STARTS: readonly string[] = [
  ENTRY,
  ...INCLUDE.filter((path) => !(Object.values(LAZY_MODULES) as string[]).includes(path)),
];

/**
 * npm modules weir imports only when one command needs them, by an `import()`
 * of a constant rather than of a string literal, so that Deno does not fetch
 * them before any command starts (a string-literal `import()` is part of the
 * module graph): the tokenizer (`lint`), OpenTelemetry (telemetry on), ioredis
 * (a Redis store), postgres.js (`sql` grants), the OpenAPI and YAML parsers
 * (`scaffold`), fast-check (`verify`). `deno compile` cannot see such an import either, so each is
 * embedded with `--include`. tests/release/lazy_npm_test.ts holds this list to
 * the specifiers in src/ and to the versions deno.json pins.
 */
export const LAZY_NPM: readonly string[] = [
  "npm:gpt-tokenizer@4.0.0/encoding/o200k_base",
  "npm:@opentelemetry/api@1.10.0",
  "npm:@opentelemetry/context-async-hooks@3.1.0",
  "npm:@opentelemetry/core@3.1.0",
  "npm:@opentelemetry/resources@3.1.0",
  "npm:@opentelemetry/sdk-trace@3.1.0",
  "npm:@opentelemetry/sdk-metrics@3.1.0",
  "npm:@opentelemetry/exporter-trace-otlp-http@0.301.0",
  "npm:@opentelemetry/exporter-metrics-otlp-http@0.301.0",
  "npm:ioredis@6.0.0",
  "npm:postgres@3.4.9",
  "npm:@scalar/openapi-parser@0.29.22",
  "npm:yaml@2.9.1",
  "npm:fast-check@4.11.0",
];

/**
 * The binary's permissions: network, environment, reading files (guardfiles,
 * `value file` secrets), running the one command a `serve-upstream -- CMD`
 * names (`--allow-run`) and writing the file `lint-upstream
 * --write-fingerprints FILE` names (`--allow-write`). Nothing else spawns or
 * writes.
 */
export const PERMISSIONS: readonly string[] = [
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-run",
  "--allow-write",
];

/** The release targets, as `deno compile --target` spells them, with their archive format. */
export const TARGETS = {
  "x86_64-unknown-linux-gnu": "tar.gz",
  "aarch64-unknown-linux-gnu": "tar.gz",
  "x86_64-apple-darwin": "tar.gz",
  "aarch64-apple-darwin": "tar.gz",
  "x86_64-pc-windows-msvc": "zip",
} as const;

/** One of {@linkcode TARGETS}. */
export type Target = keyof typeof TARGETS;

/** The container image. */
export const IMAGE = {
  /** Where the release pushes it (tags `<version>` and `latest`); the chart's default. */
  repository: "ghcr.io/weir-mcp/weir",
  /** Docker platform -> the `deno compile` target its binary is built for. */
  platforms: {
    "linux/amd64": "x86_64-unknown-linux-gnu",
    "linux/arm64": "aarch64-unknown-linux-gnu",
  } as Record<string, Target>,
  /**
   * {@linkcode PERMISSIONS} less `--allow-run` (the image holds no other program to
   * start) and `--allow-write` (its root filesystem is read-only).
   */
  permissions: ["--allow-net", "--allow-env", "--allow-read"] as readonly string[],
  /** Where the binary sits in the image (its `ENTRYPOINT`). */
  entrypoint: "/usr/local/bin/weir",
  /**
   * The default command (`CMD`): serve the mounted guardfile on every interface,
   * with the bearer tokens in `WEIR_INBOUND_TOKEN` required of every caller (the
   * chart sets that variable from `inboundAuth.existingSecret`). Without the
   * variable weir refuses to start and says which variable to set.
   */
  command: [
    "serve",
    "/config/guardfile.mcp.kdl",
    "--http",
    "0.0.0.0:8080",
    "--inbound-token-env",
    "WEIR_INBOUND_TOKEN",
  ] as readonly string[],
} as const;

/** The Helm chart, pushed as an OCI artifact. */
export const CHART = {
  /** The chart's folder in the repository. */
  path: "deploy/helm/weir",
  /** The OCI repository the release pushes the packaged chart to (`helm push`). */
  repository: "oci://ghcr.io/weir-mcp/charts",
} as const;

/** The archive name of a target's release binary, as the release and `install.sh` spell it. */
export function archiveName(target: Target): string {
  return `weir-${target}.${TARGETS[target]}`;
}

/** The binary's file name inside a target's archive. */
export function binaryName(target: Target): string {
  return target.includes("windows") ? "weir.exe" : "weir";
}

/**
 * A source module's path in the bundle: the same path, `.js` for `.ts`
 * (`deno bundle` keeps each entry's path from the repository root).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bundled } from "./build.ts";
 * assert.equal(bundled("src/guard/extract_worker.ts"), "src/guard/extract_worker.js");
 * ```
 */
export function bundled(path: string): string {
  return path.replace(/\.ts$/, ".js");
}

/**
 * An absolute path for a directory the user named on a build script's command
 * line (`--out-dir`): relative paths from where they typed it, which under
 * `deno task` is `INIT_CWD` (a task runs in the repository root), else the
 * working directory.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { typedPath } from "./build.ts";
 * assert.equal(typedPath("/opt/out"), "/opt/out");
 * assert.equal(typedPath("out", "/home/me/weir/docs"), "/home/me/weir/docs/out");
 * ```
 */
export function typedPath(
  dir: string,
  from: string = Deno.env.get("INIT_CWD") || Deno.cwd(),
): string {
  return dir.startsWith("/") ? dir : `${from.replace(/\/+$/, "")}/${dir}`;
}

/**
 * The arguments after `deno` that bundle weir into `outDir` (esbuild through
 * `deno bundle`): {@linkcode ENTRY} and each of {@linkcode INCLUDE} an entry of
 * its own (a module loaded by URL cannot be followed by a bundler, and each
 * stays the one copy every chunk shares), code-split so each literal `import()`
 * stays a chunk loaded when taken, minified, for the Deno platform. npm
 * packages are bundled, except {@linkcode LAZY_NPM}, which stay `npm:`
 * imports (from the npm cache, or embedded in the binary); with `npm:
 * "outside"` (the JSR package's CLI: weir's own modules only) every npm
 * package stays an import, by its bare name ({@linkcode NPM_IMPORTS}; the
 * bundle step rewrites each to its `npm:` specifier, {@linkcode npmSpecifier}).
 * @param root the repository root (a directory `file:` URL ending in `/`)
 * @param outDir an empty or absent directory the bundle is written to
 * @param options `npm`: `"inside"` (default, the binary and the image) or `"outside"`
 */
export function bundleArgs(root: URL, outDir: string, options: BundleOptions = {}): string[] {
  return [
    "bundle",
    "--quiet",
    "--config",
    new URL("deno.json", root).pathname,
    `--lock=${new URL("deno.lock", root).pathname}`,
    "--frozen",
    "--platform",
    "deno",
    "--code-splitting",
    "--minify",
    "--outdir",
    outDir,
    ...(options.npm === "outside"
      ? Object.keys(NPM_IMPORTS).map((name) => `--external=${name}${name.endsWith("/") ? "*" : ""}`)
      : []),
    ...[ENTRY, ...INCLUDE].map((path) => new URL(path, root).pathname),
  ];
}

/** How a bundle holds npm packages: `"inside"` (default: the binary, the image) or `"outside"` (JSR). */
export interface BundleOptions {
  npm?: "inside" | "outside";
}

/**
 * The npm packages weir's own modules import, by the bare name they import
 * (deno.json's scope for the repository, `"./"`): name (or name prefix ending
 * in `/`) -> its `npm:` specifier, version pinned.
 */
export const NPM_IMPORTS: Readonly<Record<string, string>> = config.scopes["./"];

/**
 * The `npm:` specifier a bare import of weir's modules stands for
 * ({@linkcode NPM_IMPORTS}: an exact name, else the longest prefix ending in
 * `/`, the rest appended), or undefined when it names no npm package there.
 * A bundle with npm packages outside ({@linkcode bundleArgs} `npm: "outside"`)
 * has its bare imports rewritten to these, so it runs without deno.json (from
 * JSR, or `deno run --no-config`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { npmSpecifier } from "./build.ts";
 * assert.equal(npmSpecifier("@bgotink/kdl"), "npm:@bgotink/kdl@0.4.0");
 * assert.equal(npmSpecifier("@noble/hashes/sha2.js"), "npm:@noble/hashes@2.4.0/sha2.js");
 * assert.equal(npmSpecifier("./chunk-A.js"), undefined);
 * ```
 */
export function npmSpecifier(bare: string): string | undefined {
  const exact = NPM_IMPORTS[bare];
  if (exact !== undefined) return exact;
  const prefix =
    Object.keys(NPM_IMPORTS).filter((name) => name.endsWith("/") && bare.startsWith(name)).sort((
      a,
      b,
    ) => b.length - a.length)[0];
  if (prefix === undefined) return undefined;
  return `${NPM_IMPORTS[prefix]}${bare.slice(prefix.length)}`.replace(/^npm:\//, "npm:");
}

/**
 * The runtime's unstable features deno.json turns on (`--unstable-NAME`): a
 * compiled binary keeps its config's, so a bundle run with `--no-config` names them.
 */
export const RUNTIME_FLAGS: readonly string[] = config.unstable.map((name) => `--unstable-${name}`);

/**
 * The V8 flags `deno run` of the bundle starts with (`--v8-flags=`, {@linkcode bundleRunArgs}):
 * `--no-lazy` compiles every function of a module when the module is compiled,
 * so Deno's code cache (in DENO_DIR), written at that moment, holds them all,
 * and a start after the first compiles nothing (serve --stdio to the first
 * tools/list: ~210 M -> ~155 M instructions, docs/performance.md). Without it V8
 * compiles a function when it is first called, which that cache never holds.
 * Not given to the compiled binary ({@linkcode compileArgs}): a binary's code
 * cache is one file written on its first run, without the modules it imports
 * dynamically (each command's and serve's code), so there `--no-lazy` would
 * compile all of serve's code eagerly at every start (~265 M -> ~308 M without
 * a cache). The cost here: the bytecode of functions never run (RSS at the
 * first answer unchanged, 46-47 MiB; ~8 MiB more once the PDF extractor loads).
 */
export const V8_FLAGS: readonly string[] = ["--no-lazy"];

/**
 * The `deno` arguments that run the bundle in `dir` as the binary runs:
 * without the repository's config or lock, with its runtime features
 * ({@linkcode RUNTIME_FLAGS}), its V8 flags ({@linkcode V8_FLAGS}) and the given
 * permissions; the command line follows.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bundleRunArgs } from "./build.ts";
 * const args = bundleRunArgs("dist/bundle", ["--allow-read"]);
 * assert.deepEqual([args[0], args[1], args.at(-1)], ["run", "--no-config", "dist/bundle/cli.js"]);
 * ```
 */
export function bundleRunArgs(dir: string, permissions: readonly string[]): string[] {
  return [
    "run",
    "--no-config",
    "--quiet",
    ...RUNTIME_FLAGS,
    `--v8-flags=${V8_FLAGS.join(",")}`,
    ...permissions,
    `${dir}/${bundled(ENTRY)}`,
  ];
}

/**
 * The arguments after `deno` that compile weir from its bundle (written by
 * {@linkcode bundleArgs}), with the modules loaded by URL and {@linkcode LAZY_NPM}
 * embedded; the config and lock pin the npm packages and the runtime's unstable
 * features. Not {@linkcode V8_FLAGS} unless asked: see there (the release
 * workflow's figures job compiles a second binary with them only to compare;
 * docs/releasing.md).
 * @param root the repository root (a directory `file:` URL ending in `/`)
 * @param bundle the bundle's directory
 * @param output where to write the binary
 * @param options `target` to cross-compile (default: this machine); `image`
 *   for the container image's permission set; `v8Flags` for V8 flags the
 *   binary starts with (default none, e.g. `["--no-lazy"]`)
 */
export function compileArgs(
  root: URL,
  bundle: string,
  output: string,
  options: { target?: Target; image?: boolean; v8Flags?: readonly string[] } = {},
): string[] {
  return [
    "compile",
    "--quiet",
    "--config",
    new URL("deno.json", root).pathname,
    `--lock=${new URL("deno.lock", root).pathname}`,
    "--frozen",
    ...(options.image ? IMAGE.permissions : PERMISSIONS),
    ...(options.target ? ["--target", options.target] : []),
    ...INCLUDE.flatMap((path) => ["--include", `${bundle}/${bundled(path)}`]),
    ...LAZY_NPM.flatMap((specifier) => ["--include", specifier]),
    ...(options.v8Flags?.length ? [`--v8-flags=${options.v8Flags.join(",")}`] : []),
    "--output",
    output,
    `${bundle}/${bundled(ENTRY)}`,
  ];
}
