/**
 * `--against REV` of the benchmarks (bench/against.ts): what a maintainer
 * meets before a release. A revision git does not know, or named twice, ends
 * the bench before any work with exit code 2; one that cannot be cached ends
 * it with 1 and says what to do; the temporary worktree is removed however
 * the bench ends (normally, on an uncaught error, on SIGINT/SIGTERM); a
 * revision's bundle is built by its own `deno task bundle`, and a revision
 * without one, or whose build fails, says so.
 *
 * The revisions are commits of a scratch git repository holding this tree's
 * bench/against.ts and bench/common.ts, so each case is a few small commits,
 * not a checkout of weir.
 */
import assert from "node:assert/strict";
import { until } from "../support/wait.ts";

const BENCH = new URL("../../bench/", import.meta.url);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** Run `cmd args` in `cwd`; its exit code and output. */
async function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const out = await new Deno.Command(cmd, { args, cwd, env, stdout: "piped", stderr: "piped" })
    .output();
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

const DRIVER = `
import { bundleOf, weirsUnderTest } from "./bench/against.ts";
import { killAllOnInterrupt } from "./bench/common.ts";
const [mode, ...revs] = Deno.args;
killAllOnInterrupt();
const weirs = await weirsUnderTest(revs);
if (mode === "hold") {
  console.log("READY");
  setInterval(() => {}, 1000);
} else if (mode === "throw") {
  throw new Error("boom after the checkout");
} else if (mode === "bundle") {
  const b = await bundleOf(weirs[1], await Deno.makeTempDir(), ["--allow-read"]);
  console.log(JSON.stringify(b));
}
`;

/**
 * A scratch repository: this tree's against.ts and common.ts, and one commit
 * per entry of `revisions` (files written over the previous commit's), each
 * tagged with its name. Its own TMPDIR, so what a run leaves is visible.
 */
async function scratchRepo(revisions: Record<string, Record<string, string>>) {
  const root = await Deno.makeTempDir({ prefix: "against-test-" });
  const repo = `${root}/repo`;
  const tmp = `${root}/tmp`;
  await Deno.mkdir(`${repo}/bench`, { recursive: true });
  await Deno.mkdir(tmp);
  for (const name of ["against.ts", "common.ts"]) {
    await Deno.copyFile(new URL(name, BENCH), `${repo}/bench/${name}`);
  }
  await Deno.writeTextFile(`${repo}/driver.ts`, DRIVER);
  const git = (...args: string[]) =>
    run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], repo);
  await git("init", "-q");
  for (const [tag, files] of Object.entries(revisions)) {
    for (const [path, text] of Object.entries(files)) {
      await Deno.mkdir(`${repo}/${path}`.replace(/\/[^/]*$/, ""), { recursive: true });
      await Deno.writeTextFile(`${repo}/${path}`, text);
    }
    await git("add", "-A");
    assert.equal((await git("commit", "-qm", tag)).code, 0);
    await git("tag", tag);
  }
  const driver = (args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-lock", "driver.ts", ...args],
      cwd: repo,
      env: { TMPDIR: tmp, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    });
  /** What the runs left: worktrees besides the repository, and files in TMPDIR. */
  const leftovers = async () => {
    const list = (await git("worktree", "list", "--porcelain")).stdout;
    const worktrees = list.split("\n").filter((l) => l.startsWith("worktree ")).slice(1);
    const files = [];
    for await (const entry of Deno.readDir(tmp)) {
      if (entry.name.startsWith("weir-against-")) files.push(entry.name);
    }
    return { worktrees, files };
  };
  return { repo, tmp, driver, leftovers, remove: () => Deno.remove(root, { recursive: true }) };
}

const GOOD = { "deno.json": "{}\n", "cli.ts": 'console.log("weir");\n' };

Deno.test("--against: an unknown or repeated revision exits 2 before any work, naming what to give", async () => {
  const repo = await scratchRepo({ one: GOOD });
  try {
    const unknown = await repo.driver(["resolve", "nosuch"]).output();
    assert.equal(unknown.code, 2);
    assert.match(decode(unknown.stderr), /--against nosuch: git does not know that revision/);
    assert.match(decode(unknown.stderr), /commit hash, a branch, a tag or main/);
    const short = await repo.driver(["resolve", "a"]).output();
    assert.equal(short.code, 2);
    assert.match(decode(short.stderr), /no single commit starts with a: .*give 7 or more digits/);
    const twice = await repo.driver(["resolve", "one", "HEAD"]).output();
    assert.equal(twice.code, 2);
    assert.match(decode(twice.stderr), /--against one and --against HEAD are the same commit/);
    assert.deepEqual(await repo.leftovers(), { worktrees: [], files: [] });
  } finally {
    await repo.remove();
  }
});

Deno.test("--against: a revision that cannot be cached exits 1 saying so, its worktree removed", async () => {
  const repo = await scratchRepo({
    good: GOOD,
    broken: { "cli.ts": 'import "./not_there.ts";\n' },
  });
  try {
    const out = await repo.driver(["resolve", "good", "broken"]).output();
    assert.equal(out.code, 1, decode(out.stderr));
    assert.match(decode(out.stderr), /--against broken: deno cache of its cli.ts failed/);
    assert.match(decode(out.stderr), /compare with another revision/);
    assert.match(decode(out.stderr), /not_there\.ts/);
    assert.deepEqual(await repo.leftovers(), { worktrees: [], files: [] });
  } finally {
    await repo.remove();
  }
});

Deno.test("--against: the worktree is removed on an uncaught error, SIGINT and SIGTERM", async () => {
  const repo = await scratchRepo({ good: GOOD });
  try {
    const thrown = await repo.driver(["throw", "good"]).output();
    assert.equal(thrown.code, 1);
    assert.match(decode(thrown.stderr), /boom after the checkout/);
    assert.deepEqual(await repo.leftovers(), { worktrees: [], files: [] });

    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      const child = repo.driver(["hold", "good"]).spawn();
      let seen = "";
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      const reading = (async () => {
        for (let r = await reader.read(); !r.done; r = await reader.read()) seen += r.value;
      })();
      assert.ok(await until(() => seen.includes("READY")), `${signal}: the checkout was made`);
      assert.equal((await repo.leftovers()).worktrees.length, 1, "the worktree exists meanwhile");
      child.kill(signal);
      const status = await child.status;
      await reading;
      await child.stderr.cancel();
      assert.equal(status.code, code, signal);
      assert.deepEqual(await repo.leftovers(), { worktrees: [], files: [] }, signal);
    }
  } finally {
    await repo.remove();
  }
});

Deno.test("--against: REV's bundle comes from its own deno task bundle, or it says why there is none", async () => {
  const repo = await scratchRepo({
    plain: GOOD,
    bundles: {
      "deno.json": JSON.stringify({ tasks: { bundle: "deno run -A bundle.ts" } }),
      "bundle.ts": `const dir = Deno.args[Deno.args.indexOf("--out-dir") + 1];
await Deno.mkdir(dir, { recursive: true });
await Deno.writeTextFile(dir + "/cli.js", "console.log('bundled');\\n");
`,
      "scripts/build.ts": `export function bundleRunArgs(dir: string, permissions: string[]) {
  return ["run", "--no-config", "--quiet", "--v8-flags=--max-old-space-size=100", ...permissions, dir + "/cli.js"];
}
`,
    },
    fails: { "bundle.ts": 'console.error("error: esbuild broke"); Deno.exit(1);\n' },
  });
  try {
    const none = await repo.driver(["bundle", "plain"]).output();
    assert.equal(none.code, 0, decode(none.stderr));
    assert.match(
      JSON.parse(decode(none.stdout).trim().split("\n").at(-1)!).none,
      /has no deno task bundle/,
    );

    const built = await repo.driver(["bundle", "bundles"]).output();
    assert.equal(built.code, 0, decode(built.stderr));
    const { args } = JSON.parse(decode(built.stdout).trim().split("\n").at(-1)!);
    assert.deepEqual(
      args.slice(0, 5),
      ["run", "--no-config", "--quiet", "--v8-flags=--max-old-space-size=100", "--allow-read"],
      "REV's own bundleRunArgs, with the bench's permissions",
    );
    const ran = await run(Deno.execPath(), args, repo.repo);
    assert.equal(ran.stdout, "bundled\n", "the bundle its own task wrote runs");

    const failed = await repo.driver(["bundle", "fails"]).output();
    const b = JSON.parse(decode(failed.stdout).trim().split("\n").at(-1)!);
    assert.match(b.none, /deno task bundle failed/);
    assert.match(b.detail, /esbuild broke/);
    assert.deepEqual((await repo.leftovers()).worktrees, []);
  } finally {
    await repo.remove();
  }
});

Deno.test("bench:cold: usage errors and an unknown --against exit 2 before building anything", async () => {
  for (
    const args of [["--against"], ["0"], ["3", "4"], ["--rounds", "3"], [
      "1",
      "--against",
      "no-such-rev-x",
    ]]
  ) {
    const out = await run(
      Deno.execPath(),
      ["run", "--quiet", "--allow-all", new URL("cold_start.ts", BENCH).pathname, ...args],
      new URL("../..", import.meta.url).pathname,
      { NO_COLOR: "1" },
    );
    assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    assert.match(
      out.stderr,
      /usage: deno task bench:cold|git does not know that revision|needs a git clone/,
      args.join(" "),
    );
    assert.doesNotMatch(out.stdout, /bundle/);
  }
});

Deno.test("--against outside a git clone exits 2 saying it needs one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "against-test-nogit-" });
  try {
    await Deno.mkdir(`${dir}/bench`);
    for (const name of ["against.ts", "common.ts"]) {
      await Deno.copyFile(new URL(name, BENCH), `${dir}/bench/${name}`);
    }
    await Deno.writeTextFile(`${dir}/driver.ts`, DRIVER);
    const out = await run(
      Deno.execPath(),
      ["run", "-A", "--no-lock", "driver.ts", "resolve", "main"],
      dir,
      {
        GIT_CEILING_DIRECTORIES: dir.replace(/\/[^/]*$/, ""),
        NO_COLOR: "1",
      },
    );
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /--against needs a git clone of weir: .* is not in a git work tree/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
