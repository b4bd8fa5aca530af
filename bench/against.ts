/**
 * `--against REV` for the benchmarks: another revision of weir, checked out
 * into a temporary git worktree (`git worktree add --detach`) with its module
 * graph cached (`deno cache` of its `cli.ts` under its own `deno.json` and
 * `deno.lock`), so a bench can start both revisions' `weir` alternating in
 * one run and print their ratios side by side. Only the command under test
 * comes from REV: the bench, its guardfile, its upstream and its baselines
 * are this tree's, so both revisions answer the same requests.
 *
 * The worktrees are removed when the bench exits, also on Ctrl-C or abort
 * (the `unload` event, which `Deno.exit` dispatches).
 *
 * @module
 */
import { fileURLToPath } from "node:url";

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
addEventListener("unload", () => {
  for (const dir of checkouts.splice(0)) {
    git(["worktree", "remove", "--force", dir]);
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // already removed by git
    }
  }
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

/**
 * Check out `rev` (anything `git rev-parse` takes: a hash, a branch, `main`,
 * `HEAD~3`) into a temporary worktree and cache its modules.
 * @throws {Error} naming the revision when git does not know it or it cannot
 *   be checked out or cached (the message is git's or deno's)
 */
export async function checkout(rev: string): Promise<Weir> {
  const commit = git(["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  if (!commit.ok || !commit.out) {
    throw new Error(
      `--against ${rev}: git does not know that revision here (try a commit hash, a branch or main)`,
    );
  }
  const short = commit.out.slice(0, 7);
  const dir = await Deno.makeTempDir({ prefix: `weir-against-${short}-` });
  const added = git(["worktree", "add", "--detach", dir, commit.out]);
  if (!added.ok) throw new Error(`--against ${rev}: git worktree add failed: ${added.out}`);
  checkouts.push(dir);
  const root = `${dir}/`;
  const weir: Weir = { label: `weir@${short}`, root, describe: `${rev} (${short})` };
  const cached = await new Deno.Command(Deno.execPath(), {
    args: [
      "cache",
      "--quiet",
      "--config",
      `${root}deno.json`,
      `--lock=${root}deno.lock`,
      `${root}cli.ts`,
    ],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!cached.success) {
    throw new Error(
      `--against ${rev}: deno cache of its cli.ts failed:\n${
        new TextDecoder().decode(cached.stderr)
      }`,
    );
  }
  return weir;
}

/**
 * This tree, then each of `revs` checked out ({@link checkout}); prints one
 * line per weir saying what it is.
 */
export async function weirsUnderTest(revs: string[]): Promise<Weir[]> {
  const weirs = [thisTree()];
  for (const rev of revs) weirs.push(await checkout(rev));
  for (const w of weirs) console.log(`  ${w.label.padEnd(13)} ${w.describe}`);
  return weirs;
}

/** `a / b` as `1.23x`, or `-` when either is missing. */
export function ratio(a: number, b: number): string {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}x` : "-";
}
