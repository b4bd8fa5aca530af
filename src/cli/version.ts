/**
 * `weir --version`: three lines a bug report can quote.
 *
 *   weir 0.1.0                               the version in deno.json (semver)
 *   commit 0123456789abcdef0123456789abcdef01234567
 *   deno 2.9.6 (x86_64-unknown-linux-gnu)    the runtime and its target
 *
 * The commit is the one the release stamped (`src/cli/commit.ts`); run from the
 * sources of a git checkout, it is that checkout's HEAD, read from `.git` (only
 * where read permission is already granted, so it never prompts); otherwise
 * `unknown`. A bundle (`deno task bundle`) does not look for `.git`: it may have
 * been built from another commit than the checkout's HEAD, or copied into
 * another repository, whose commit it would report.
 * Loads nothing but deno.json, so `--version` starts as fast as `help`.
 *
 * @module
 */
import config from "../../deno.json" with { type: "json" };
import { COMMIT } from "./commit.ts";
import { readBoundedTextSync } from "../ops/bounded_file.ts";

const ROOT = new URL("../../", import.meta.url);
/** Run from the sources (`.ts`), not from a bundle's JavaScript: only then is ROOT the checkout. */
const FROM_SOURCES = import.meta.url.endsWith(".ts");

/** The `weir --version` text (three lines, no trailing newline). */
export function versionText(): string {
  const commit = COMMIT || (FROM_SOURCES && checkoutCommit(ROOT)) || "unknown";
  return [
    `weir ${config.version}`,
    `commit ${commit}`,
    `deno ${Deno.version.deno} (${Deno.build.target})`,
  ].join("\n");
}

/**
 * A file's text, or undefined when it cannot be read, reading it would need a
 * prompt, or it is not a regular file of at most 16 MiB (a `.git/HEAD` that is
 * a FIFO or /dev/zero must not stop `--version`).
 */
function readText(path: string): string | undefined {
  try {
    if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") return undefined;
    return readBoundedTextSync(path, { what: "git file", maxBytes: 16 * 1024 * 1024 });
  } catch {
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") return false;
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

const SHA = /^[0-9a-f]{40}$/;

/**
 * HEAD's commit of the git checkout at `root`, read from its files (a `.git`
 * directory, or a `.git` file naming a worktree's git directory; loose or
 * packed refs). Undefined outside a checkout.
 */
export function checkoutCommit(root: URL): string | undefined {
  if (root.protocol !== "file:") return undefined;
  const dotGit = new URL(".git", root).pathname;
  let gitDir = dotGit;
  if (!isDirectory(dotGit)) {
    const pointer = readText(dotGit)?.match(/^gitdir: (.+)$/m)?.[1].trim();
    if (!pointer) return undefined;
    gitDir = new URL(pointer, root).pathname;
  }
  const head = readText(`${gitDir}/HEAD`)?.trim();
  if (head === undefined) return undefined;
  if (SHA.test(head)) return head;
  const ref = head.match(/^ref: (\S+)$/)?.[1];
  if (!ref) return undefined;
  const common = readText(`${gitDir}/commondir`)?.trim();
  const commonDir = common ? new URL(common, `file://${gitDir}/`).pathname : gitDir;
  for (const dir of [gitDir, commonDir]) {
    const loose = readText(`${dir}/${ref}`)?.trim();
    if (loose && SHA.test(loose)) return loose;
  }
  for (const line of (readText(`${commonDir}/packed-refs`) ?? "").split("\n")) {
    const [sha, name] = line.trim().split(" ");
    if (name === ref && SHA.test(sha)) return sha;
  }
  return undefined;
}
