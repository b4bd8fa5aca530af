/**
 * `--against REV` for the benchmarks: another revision of weir, checked out
 * into a temporary git worktree (`git worktree add --detach`) with its module
 * graph cached (`deno cache` of its `cli.ts` under its own `deno.json` and
 * `deno.lock`), so a bench can start both revisions' `weir` alternating in
 * one run and print their ratios side by side. Only the command under test
 * comes from REV: the bench, its guardfile, its upstream and its baselines
 * are this tree's, so both revisions answer the same requests.
 *
 * The worktrees are removed when the bench exits, however it ends (common.ts
 * `atExit`: an abort, an uncaught error, Ctrl-C or SIGTERM with
 * `killAllOnInterrupt`). A revision git does not know, or named twice, ends
 * the bench before any work with exit code 2; one that cannot be checked out
 * or cached, with 1.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { atExit, outputOfGroup } from "./common.ts";

/** The root of this tree (the folder holding `cli.ts`), with a trailing slash. */
export const ROOT: string = fileURLToPath(new URL("..", import.meta.url));

/** One weir under test: this tree, or a revision checked out for `--against`. */
export interface Weir {
  /** How the bench's output names it: `weir` for this tree, `weir@<short hash>` for REV. */
  label: string;
  /** Its root folder, with a trailing slash. */
  root: string;
  /** What it is: the commit, and for this tree whether it has uncommitted changes. */
  describe: string;
}

/**
 * `deno` arguments that run this weir's `cli.ts` under its own `deno.json` and
 * `deno.lock` (named: deno.json says `"lock": false` since the first-run change):
 * `run --config ROOT/deno.json --lock=ROOT/deno.lock PERMISSIONS... ROOT/cli.ts`.
 */
export function weirArgs(weir: Weir, permissions: string[]): string[] {
  return [
    "run",
    "--config",
    `${weir.root}deno.json`,
    `--lock=${weir.root}deno.lock`,
    ...permissions,
    `${weir.root}cli.ts`,
  ];
}

const checkouts: string[] = [];
atExit(() => {
  if (!checkouts.length) return;
  for (const dir of checkouts.splice(0)) {
    git(["worktree", "remove", "--force", dir]);
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // already removed by git
    }
  }
  git(["worktree", "prune"]);
});

function git(args: string[]): { ok: boolean; out: string } {
  const out = new Deno.Command("git", {
    args: ["-C", ROOT, ...args],
    stdout: "piped",
    stderr: "piped",
  })
    .outputSync();
  const text = new TextDecoder().decode(out.success ? out.stdout : out.stderr).trim();
  return { ok: out.success, out: text };
}

/** This tree as a {@link Weir}: label `weir`, its HEAD commit and whether it has changes. */
export function thisTree(): Weir {
  const head = git(["rev-parse", "--short", "HEAD"]);
  const dirty = git(["status", "--porcelain", "--untracked-files=no"]);
  const describe = head.ok
    ? `this tree (${head.out}${dirty.ok && dirty.out ? " + uncommitted changes" : ""})`
    : "this tree";
  return { label: "weir", root: ROOT, describe };
}

/** Why `--against` cannot be done; {@link exitCode} 2 for a usage error, 1 otherwise. */
export class AgainstError extends Error {
  /** The exit code a bench ends with: 2 when the command line is wrong, 1 when REV could not be set up. */
  exitCode: 1 | 2;
  constructor(message: string, exitCode: 1 | 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A revision named on the command line, resolved by git. */
export interface Revision {
  /** As typed (`main`, `HEAD~3`, `e1a5cc4`). */
  rev: string;
  /** The full commit hash. */
  commit: string;
  /** What it is: `<short hash> <commit date> <subject>`. */
  summary: string;
}

/**
 * Resolve each `--against` revision to its commit, before any slow work.
 * @throws {AgainstError} exit code 2 when this is no git clone, git does not
 *   know a revision, or two name the same commit
 */
export function resolveRevisions(revs: string[]): Revision[] {
  if (revs.length && !git(["rev-parse", "--git-dir"]).ok) {
    throw new AgainstError(
      `--against needs a git clone of weir: ${ROOT} is not in a git work tree ` +
        `(clone the repository, or run the bench without --against)`,
      2,
    );
  }
  const seen = new Map<string, string>();
  return revs.map((rev) => {
    const commit = git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`]);
    if (!commit.ok || !commit.out) {
      const hex = /^[0-9a-f]{1,39}$/i.test(rev)
        ? ` (no single commit starts with ${rev}: unknown, or shared by several; give 7 or more digits)`
        : "";
      throw new AgainstError(
        `--against ${rev}: git does not know that revision here${hex}; give a commit hash, a ` +
          `branch, a tag or main (git log --oneline lists them; git fetch for one from elsewhere)`,
        2,
      );
    }
    const before = seen.get(commit.out);
    if (before !== undefined) {
      throw new AgainstError(
        `--against ${before} and --against ${rev} are the same commit ` +
          `(${commit.out.slice(0, 7)}): give each revision once`,
        2,
      );
    }
    seen.set(commit.out, rev);
    const summary = git(["log", "-1", "--format=%h %cs %s", commit.out]).out;
    return {
      rev,
      commit: commit.out,
      summary: summary.length > 90 ? `${summary.slice(0, 89)}…` : summary,
    };
  });
}

/**
 * Check out a {@link Revision} into a temporary worktree and cache its modules.
 * @throws {AgainstError} exit code 1 naming the revision when it cannot be
 *   checked out or cached (git's or deno's message follows); the worktree is
 *   removed when the bench exits
 */
export async function checkout(revision: Revision): Promise<Weir> {
  const { rev, commit } = revision;
  const short = commit.slice(0, 7);
  const dir = await Deno.makeTempDir({ prefix: `weir-against-${short}-` });
  checkouts.push(dir);
  const added = git(["worktree", "add", "--detach", dir, commit]);
  if (!added.ok) {
    throw new AgainstError(
      `--against ${rev}: git worktree add failed (git worktree prune clears stale ones): ` +
        added.out,
      1,
    );
  }
  const root = `${dir}/`;
  const weir: Weir = {
    label: `weir@${short}`,
    root,
    describe: rev.startsWith(short) ? revision.summary : `${rev}: ${revision.summary}`,
  };
  const cached = await outputOfGroup(Deno.execPath(), [
    "cache",
    "--quiet",
    "--config",
    `${root}deno.json`,
    `--lock=${root}deno.lock`,
    `${root}cli.ts`,
  ], root);
  if (!cached.success) {
    throw new AgainstError(
      `--against ${rev}: deno cache of its cli.ts failed, so it cannot be run here (an npm ` +
        `package or module it needs is not in the cache and cannot be fetched, or it does not ` +
        `load); compare with another revision:\n${lastLines(cached.stderr)}`,
      1,
    );
  }
  return weir;
}

/** The last lines of a command's output, colours and Deno's stack backtrace taken out. */
function lastLines(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes).replace(/\x1b\[[0-9;]*m/g, "");
  return text.split("Stack backtrace")[0].split("\n").map((l) => l.trimEnd()).filter(Boolean)
    .slice(-8).join("\n");
}

/**
 * This tree, then each of `revs` checked out ({@link checkout}); prints one
 * line per weir saying what it is, each as soon as it is ready. On an {@link AgainstError} it prints the
 * message and exits with its code (the worktrees made so far are removed).
 */
export async function weirsUnderTest(revs: string[]): Promise<Weir[]> {
  const weirs = [thisTree()];
  const say = (w: Weir) => console.log(`  ${w.label.padEnd(13)} ${w.describe}`);
  try {
    const revisions = resolveRevisions(revs);
    say(weirs[0]);
    for (const revision of revisions) {
      weirs.push(await checkout(revision));
      say(weirs.at(-1)!);
    }
  } catch (error) {
    if (!(error instanceof AgainstError)) throw error;
    console.error(error.message);
    Deno.exit(error.exitCode);
  }
  return weirs;
}

/** One weir's bundle (`deno task bundle`): the `deno` arguments that run it, or why there is none. */
export type Bundle = { args: string[] } | { none: string; detail?: string };

/**
 * Build `weir`'s bundle into `dir` with its own build step (`deno task bundle
 * --out-dir DIR` under its own `deno.json`, so REV's bundle is what REV would
 * ship), and the `deno` arguments that run it as its binary runs it, from its
 * own scripts/build.ts `bundleRunArgs(dir, permissions)` (the command line
 * follows them). A revision from before the bundle (no `bundle` task) or whose
 * build fails has none, and says why.
 */
export async function bundleOf(weir: Weir, dir: string, permissions: string[]): Promise<Bundle> {
  const config = JSON.parse(await Deno.readTextFile(`${weir.root}deno.json`));
  if (!config.tasks?.bundle) {
    return { none: `${weir.label} has no deno task bundle (the bundle came with 83db222)` };
  }
  const built = await outputOfGroup(
    Deno.execPath(),
    ["task", "--quiet", "--config", `${weir.root}deno.json`, "bundle", "--out-dir", dir],
    weir.root,
  );
  if (!built.success) {
    return { none: `${weir.label}'s deno task bundle failed`, detail: lastLines(built.stderr) };
  }
  const build = JSON.stringify(`${weir.root}scripts/build.ts`);
  const runArgs = await outputOfGroup(Deno.execPath(), [
    "eval",
    "--quiet",
    "--no-lock",
    "--config",
    `${weir.root}deno.json`,
    `import { bundleRunArgs } from ${build};
     console.log(JSON.stringify(bundleRunArgs(${JSON.stringify(dir)}, ${
      JSON.stringify(permissions)
    })));`,
  ], weir.root);
  if (!runArgs.success) {
    return {
      none: `${weir.label}'s scripts/build.ts bundleRunArgs could not be read`,
      detail: lastLines(runArgs.stderr),
    };
  }
  return { args: JSON.parse(new TextDecoder().decode(runArgs.stdout)) };
}

/**
 * What to do when the weir a bench's message names is a revision under
 * `--against` (`weir@<short hash>...`): a line saying REV cannot run what this
 * bench asks of it; "" for anything else.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { revisionHint } from "./against.ts";
 * assert.match(revisionHint("weir@e1a5cc4 serve-upstream"), /compare with a newer revision/);
 * assert.equal(revisionHint("raw"), "");
 * ```
 */
export function revisionHint(name: string): string {
  const label = /^weir@[0-9a-f]{7}\b/.exec(name)?.[0];
  return label
    ? `\n${label} cannot run what this bench asks of it (this tree's guardfile, flags and ` +
      `requests): compare with a newer revision`
    : "";
}

/** `a / b` as `1.23x`, or `-` when either is missing. */
export function ratio(a: number, b: number): string {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}x` : "-";
}
