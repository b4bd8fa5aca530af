/**
 * Write the commit a release is built from into `src/cli/commit.ts`, so that
 * `weir --version` names it in the binaries, the image and the JSR package.
 * The release workflow runs it first in every job that builds or publishes:
 *
 *   deno run --allow-read --allow-write scripts/stamp.ts "$GITHUB_SHA"
 *
 * Exit codes: 0 written, 2 the argument is not a full 40-hex commit hash.
 *
 * @module
 */
const FILE = new URL("../src/cli/commit.ts", import.meta.url);

/** The stamped module's text for `commit` (validated by the caller). */
export function stampedSource(source: string, commit: string): string {
  const line = /^export const COMMIT: string = ".*";$/m;
  if (!line.test(source)) throw new Error(`${FILE.pathname}: no COMMIT line to stamp`);
  return source.replace(line, `export const COMMIT: string = "${commit}";`);
}

if (import.meta.main) {
  const commit = Deno.args[0] ?? "";
  if (Deno.args.length !== 1 || !/^[0-9a-f]{40}$/.test(commit)) {
    console.error(
      `stamp: give the full 40-hex commit hash, e.g. "$GITHUB_SHA" (got ${
        Deno.args.join(" ") || "nothing"
      })`,
    );
    Deno.exit(2);
  }
  await Deno.writeTextFile(FILE, stampedSource(await Deno.readTextFile(FILE), commit));
  console.log(`stamp: ${FILE.pathname} names commit ${commit}`);
}
