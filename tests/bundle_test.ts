/**
 * The bundle the release binaries and the image are compiled from
 * (`scripts/bundle.ts`, `deno task bundle`), built here into a directory
 * outside the checkout and run as the binary runs it: `deno run --no-config`
 * with deno.json's runtime features (`bundleRunArgs` in scripts/build.ts), from
 * an empty working directory. A module missing from the bundle, or one the
 * bundle would look for among the sources, fails here:
 *
 * - every command's `--help` and its module (a wrong flag is refused by the
 *   command's own parser), answering as the sources do;
 * - `lint` of every example guardfile and `describe` of each that wraps no MCP
 *   server (an AWS policy among them), byte for byte as the sources;
 * - every module loaded by URL (commands, the modes' lazy modules, the extract
 *   worker) is in the bundle and exports what its source exports;
 * - no two chunks are run and read by the same starts (scripts/bundle_merge.ts merged them);
 * - the test files of tests/support/shipped.ts, run again with
 *   `WEIR_TEST_BUNDLE` naming the bundle: `serve --stdio` with the official v1
 *   client, `serve --http` with real tool calls through a local upstream (v1,
 *   v2, the tool API), the wrap mode and `serve-upstream`, an AWS policy against
 *   s3rver, sql grants against PostgreSQL, OAuth, the backtracking analysis,
 *   the extract worker (PDF and feeds).
 */
import assert from "node:assert/strict";
import { bundled, bundleRunArgs, INCLUDE, STARTS } from "../scripts/build.ts";
import { COMMAND_MODULES } from "../cli.ts";
import { ROOT, runCommand, weirCommand } from "./support/cli.ts";
import { runShippedFormTests } from "./support/shipped.ts";

const work = await Deno.makeTempDir({ prefix: "weir-bundle-test-" });
const dir = `${work}/bundle`;
const build = await runCommand(Deno.execPath(), {
  args: ["run", "--quiet", "--allow-all", `${ROOT}scripts/bundle.ts`, "--out-dir", dir],
  cwd: ROOT,
});

const cwd = `${work}/cwd`;
await Deno.mkdir(cwd, { recursive: true });

/**
 * `weir ARGS` from the bundle, or from the sources with `sources`, with serve's permissions,
 * run from an empty directory.
 */
async function weir(args: string[], sources = false) {
  const permissions = ["--allow-net", "--allow-env", "--allow-read"];
  const { command, args: pre } = sources
    ? weirCommand(permissions)
    : { command: Deno.execPath(), args: bundleRunArgs(dir, permissions) };
  return await runCommand(command, { args: [...pre, ...args], cwd, stdin: "null" });
}

Deno.test("deno task bundle writes cli.js and every module loaded by URL beside it", async () => {
  assert.equal(build.code, 0, build.stderr);
  assert.match(build.stdout, /^bundle: wrote .*\/cli\.js/);
  for (const path of ["cli.ts", ...INCLUDE].map(bundled)) await Deno.stat(`${dir}/${path}`);
  // Nothing of the sources: the bundle holds JavaScript only.
  for await (const entry of Deno.readDir(dir)) assert.doesNotMatch(entry.name, /\.ts$/);
});

Deno.test("the bundle never replaces a directory holding anything a bundle does not write", async () => {
  const other = `${work}/other`;
  await Deno.mkdir(other);
  await Deno.writeTextFile(`${other}/notes.txt`, "mine");
  const refused = await runCommand(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", `${ROOT}scripts/bundle.ts`, "--out-dir", other],
  });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /holds "notes\.txt", which no bundle writes: give an empty or new/);
  assert.equal(await Deno.readTextFile(`${other}/notes.txt`), "mine");
  // Nor a project whose top holds only .js files and src/ (its sources at any depth), nor
  // .js files without the cli.js every bundle has.
  const project = `${work}/project`;
  await Deno.mkdir(`${project}/src/app`, { recursive: true });
  await Deno.writeTextFile(`${project}/index.js`, "");
  await Deno.writeTextFile(`${project}/src/app/main.rs`, "mine");
  const scripts = `${work}/scripts`;
  await Deno.mkdir(scripts);
  await Deno.writeTextFile(`${scripts}/tool.js`, "mine");
  for (
    const [target, said] of [
      [project, /holds "src\/app\/main\.rs", which no bundle writes/],
      [scripts, /holds no cli\.js, so it is no bundle/],
      ["/", /^bundle: \/ holds "/],
    ] as const
  ) {
    const r = await runCommand(Deno.execPath(), {
      args: ["run", "--quiet", "--allow-all", `${ROOT}scripts/bundle.ts`, "--out-dir", target],
    });
    assert.equal(r.code, 1, target);
    assert.match(r.stderr, said);
  }
  assert.equal(await Deno.readTextFile(`${project}/src/app/main.rs`), "mine");
  assert.equal(await Deno.readTextFile(`${scripts}/tool.js`), "mine");
});

Deno.test("without read access to its own directory the bundle says which to give, exit 2", async () => {
  const r = await runCommand(Deno.execPath(), {
    args: [...bundleRunArgs(dir, ["--no-prompt", `--allow-read=${cwd}`]), "lint", "a.mcp.kdl"],
    cwd,
    stdin: "null",
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr.trim(),
    `weir: Deno may not read weir's own module ${dir}/src/cli/lint.js: give it read access to ` +
      `${dir}/ (--allow-read, or --allow-read=${dir}/ and the files the command reads)`,
  );
});

Deno.test("an npm package loaded on first use that cannot be fetched is named, with the way out, exit 1", async () => {
  // An empty Deno cache and no fetching: the bundle holds every other package.
  const cache = `${work}/empty-deno-dir`;
  await Deno.mkdir(cache);
  await Deno.writeTextFile(`${cwd}/api.json`, JSON.stringify({ openapi: "3.0.3", paths: {} }));
  const r = await runCommand(Deno.execPath(), {
    args: [
      ...bundleRunArgs(dir, ["--cached-only", "--allow-read", "--allow-env"]),
      "scaffold",
      "api.json",
      "--no-interactive",
    ],
    cwd,
    env: { DENO_DIR: cache },
    stdin: "null",
  });
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr.trim(),
    /^weir: could not load the npm package @scalar\/openapi-parser, which this command needs \(.*\): Deno fetches it from the npm registry on first use; run it once where the registry is reachable, or use the weir binary or image, which hold it$/,
  );
});

Deno.test("a bundle reports no commit of the repository it was copied into", async () => {
  // Two directories under a git repository: where the bundle's code would look for `.git`.
  const repo = `${work}/repo`;
  await Deno.mkdir(`${repo}/tools`, { recursive: true });
  const git = (...args: string[]) =>
    runCommand("git", {
      args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
      cwd: repo,
    });
  assert.equal((await git("init", "-q")).code, 0);
  assert.equal((await git("commit", "-q", "--allow-empty", "-m", "other")).code, 0);
  await Deno.rename(dir, `${repo}/tools/bundle`);
  try {
    const r = await runCommand(Deno.execPath(), {
      args: [...bundleRunArgs(`${repo}/tools/bundle`, ["--allow-read"]), "--version"],
      cwd,
      stdin: "null",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^commit unknown$/m);
  } finally {
    await Deno.rename(`${repo}/tools/bundle`, dir);
  }
});

Deno.test("every command's --help, and its module, answer from the bundle as from the sources", async () => {
  const help = await weir(["help"]);
  assert.equal(help.code, 0, help.stderr);
  assert.equal(help.stdout, (await weir(["help"], true)).stdout);
  const commands = [...help.stdout.matchAll(/^ {2}weir ([a-z][a-z-]*[a-z])(?: |$)/gm)].map((m) =>
    m[1]
  )
    .filter((name) => name !== "help");
  for (const name of Object.keys(COMMAND_MODULES)) assert.ok(commands.includes(name), name);
  for (const name of commands) {
    const own = await weir([name, "--help"]);
    assert.equal(own.code, 0, `${name} --help: ${own.stderr}`);
    assert.match(own.stdout, new RegExp(`^Usage: weir ${name}\\b`));
    assert.equal(own.stdout, (await weir([name, "--help"], true)).stdout, name);
    // The command's own parser refuses the flag: its module and what it imports loaded.
    const wrong = await weir([name, "--not-a-flag"]);
    assert.equal(wrong.code, 2, `${name}: ${wrong.stderr}`);
    assert.equal(wrong.stderr, (await weir([name, "--not-a-flag"], true)).stderr, name);
  }
  const version = await weir(["--version"]);
  assert.equal(
    version.stdout.split("\n")[0],
    (await weir(["--version"], true)).stdout.split("\n")[0],
  );
});

Deno.test("lint and describe of the example guardfiles answer as the sources do", async () => {
  const files = [];
  for await (const entry of Deno.readDir(`${ROOT}guardfiles`)) {
    if (entry.name.endsWith(".mcp.kdl")) files.push(`${ROOT}guardfiles/${entry.name}`);
  }
  assert.ok(files.length >= 9);
  files.sort();
  // describe of a file wrapping an MCP server connects to it: those are lint's only.
  const spec = [];
  for (const file of files) {
    if (!/^\s*mcp-server\b/m.test(await Deno.readTextFile(file))) spec.push(file);
  }
  assert.ok(spec.some((f) => f.endsWith("s3-assets.mcp.kdl")), "an AWS policy is described");
  for (
    const args of [["lint", "--format", "json", ...files], ...spec.map((f) => ["describe", f])]
  ) {
    const [fromBundle, fromSources] = [await weir(args), await weir(args, true)];
    assert.equal(fromBundle.code, fromSources.code, `${args.join(" ")}: ${fromBundle.stderr}`);
    assert.equal(fromBundle.stdout, fromSources.stdout, args.join(" "));
  }
});

Deno.test("every module loaded by URL is in the bundle and exports what its source exports", async () => {
  for (const path of INCLUDE) {
    if (path === "src/guard/extract_worker.ts") continue; // a worker: its exports are its messages
    const source = Object.keys(await import(`${ROOT}${path}`)).sort();
    const inBundle = Object.keys(await import(`file://${dir}/${bundled(path)}`)).sort();
    assert.deepEqual(inBundle, source, path);
  }
});

Deno.test("no two chunks are run and read by the same modules: each start reads its code in few files", async () => {
  // Which starts (cli.js, each command, the worker) and other entries (lazy modules, literal
  // import() targets) run each chunk (static imports), and which only read it (Deno reads the
  // static graph of each literal import() before a start runs). The merge keys a chunk by the
  // starts and by some of the entries (scripts/bundle_merge.ts): two chunks all of these load
  // alike would have been one.
  const entries: string[] = [];
  const list = async (sub: string): Promise<void> => {
    for await (const entry of Deno.readDir(`${dir}/${sub}`)) {
      if (entry.isDirectory) await list(`${sub}${entry.name}/`);
      else if (!entry.name.startsWith("chunk-")) entries.push(`${sub}${entry.name}`);
    }
  };
  await list("");
  const starts = STARTS.map(bundled);
  const keyOf = new Map<string, string[]>();
  const files = new Map<string, string>();
  const body = async (file: string) => {
    if (!files.has(file)) files.set(file, await Deno.readTextFile(`${dir}/${file}`));
    return files.get(file)!;
  };
  const targets = async (file: string, pattern: RegExp) =>
    [...(await body(file)).matchAll(pattern)].map((m) =>
      new URL(m[1], `file:///${file}`).pathname.slice(1)
    );
  const STATIC = /(?:from|import)\s*"(\.\.?\/[^"]+)"/g;
  const LITERAL = /\bimport\("(\.\.?\/[^"]+\.js)"\)/g;
  for (const start of [...starts, ...entries.filter((entry) => !starts.includes(entry))]) {
    const run = new Set<string>();
    const visit = async (file: string) => {
      if (run.has(file)) return;
      run.add(file);
      for (const target of await targets(file, STATIC)) await visit(target);
      if (file.startsWith("chunk-")) keyOf.set(file, [...keyOf.get(file) ?? [], start]);
    };
    await visit(start);
    const read = new Set<string>();
    const walk = async (file: string) => {
      if (read.has(file)) return;
      read.add(file);
      for (const target of await targets(file, STATIC)) await walk(target);
      for (const target of await targets(file, LITERAL)) await walk(target);
      if (file.startsWith("chunk-") && !run.has(file)) {
        keyOf.set(file, [...keyOf.get(file) ?? [], `read by ${start}`]);
      }
    };
    await walk(start);
  }
  const runBy = [...keyOf].filter(([, key]) => key.some((k) => starts.includes(k)));
  const byKey = Object.groupBy(runBy, ([, key]) => key.join(" "));
  for (const [key, chunks] of Object.entries(byKey)) {
    assert.equal(chunks!.length, 1, `${chunks!.map(([f]) => f)} are all run/read by ${key}`);
  }
  // serve's start: cli.js, serve.js and one chunk per distinct set it is in.
  const serve = runBy.filter(([, key]) => key.includes("src/cli/serve.js")).length;
  assert.ok(serve > 0 && serve <= 14, `serve's start runs ${serve} chunks`);
});

Deno.test("serve (stdio, HTTP), the wrap mode, AWS, sql, OAuth and extraction pass their tests run on the bundle", async () => {
  await runShippedFormTests({ WEIR_TEST_BUNDLE: dir });
});

globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(work, { recursive: true });
  } catch { /* already gone */ }
});
