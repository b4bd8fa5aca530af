/**
 * The README's first command on a fresh machine: `deno task --quiet demo` with
 * an empty `DENO_DIR` fetches what the demo runs and nothing else.
 *
 * `deno task` installs every npm package of the configuration's top-level
 * `imports` and of its lock file before any task runs (denoland/deno#30887).
 * deno.json therefore says `"lock": false` and maps packages in scopes only:
 * `"./"` for the product, `"./tests/"` and `"./bench/"` for what only they
 * import; each task passes `--lock=deno.lock --frozen` itself. What is held:
 *
 * - the demo passes, and the cache it leaves is at most 60 MB;
 * - no package that only the tests or benchmarks import was fetched;
 * - the run leaves deno.lock as it was.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CONFIG, LOCK, ROOT, runCommand } from "../support/cli.ts";

const LIMIT = 60_000_000;

const config = JSON.parse(await Deno.readTextFile(CONFIG)) as {
  lock: unknown;
  imports?: Record<string, string>;
  scopes: Record<string, Record<string, string>>;
};

/** Bytes of every file under `dir` (their lengths, not disk blocks). */
async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) total += await treeBytes(path);
    else if (entry.isFile) total += (await Deno.stat(path)).size;
  }
  return total;
}

/** `npm:/@scope/name@1.2.3/` or `npm:name@1.2.3` -> its package name and version. */
function parseNpm(target: string): { name: string; version: string } {
  const m = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)@([^/]+)/.exec(target);
  assert.ok(m, `${target} is an npm specifier with a version`);
  return { name: m[1], version: m[2] };
}

const lock = JSON.parse(await Deno.readTextFile(LOCK)) as {
  specifiers: Record<string, string>;
  npm: Record<string, { dependencies?: string[] }>;
};

/** The lock's package ids (`name@version[_peers]`) that `roots` (npm: targets) reach. */
function reached(roots: string[]): Set<string> {
  const ids = Object.keys(lock.npm);
  const idOf = (ref: string): string => {
    // A dependency is named `name` when the lock holds one version of it, else `name@version`.
    const at = ref.lastIndexOf("@");
    const exact = at > 0 ? ids.find((id) => id === ref || id.startsWith(`${ref}_`)) : undefined;
    const id = exact ?? ids.find((id) => id.startsWith(`${ref}@`));
    assert.ok(id, `deno.lock holds ${ref}`);
    return id;
  };
  const seen = new Set<string>();
  const todo = roots.map((target) => {
    const { name, version } = parseNpm(target);
    const resolved = lock.specifiers[`npm:${name}@${version}`];
    assert.ok(resolved, `deno.lock resolves npm:${name}@${version}`);
    return `${name}@${resolved}`;
  });
  while (todo.length > 0) {
    const id = todo.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const dep of lock.npm[id]?.dependencies ?? []) todo.push(idOf(dep));
  }
  return seen;
}

Deno.test("deno.json leaves deno task nothing to install: no lock, no top-level npm imports", () => {
  assert.equal(config.lock, false);
  const topLevel = Object.values(config.imports ?? {}).filter((t) => t.startsWith("npm:"));
  assert.deepEqual(topLevel, [], "top-level imports are installed by every deno task");
  assert.deepEqual(Object.keys(config.scopes).sort(), ["./", "./bench/", "./tests/"]);
  // A package a test and a benchmark both import is pinned once: the same version in each scope.
  const pinned = new Map<string, string>();
  for (const [scope, map] of Object.entries(config.scopes)) {
    for (const target of Object.values(map)) {
      const { name, version } = parseNpm(target);
      const before = pinned.get(name);
      assert.ok(before === undefined || before === version, `${scope}: ${name}@${version}`);
      pinned.set(name, version);
    }
  }
});

Deno.test({
  name: "deno task --quiet demo on an empty cache fetches at most 60 MB, no test-only package",
  fn: async () => {
    const denoDir = await Deno.makeTempDir({ prefix: "weir-first-run-" });
    try {
      const lockBefore = await Deno.readTextFile(LOCK);
      const r = await runCommand(Deno.execPath(), {
        args: ["task", "--quiet", "demo"],
        cwd: ROOT,
        env: { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /all 5 checks passed/);
      const bytes = await treeBytes(denoDir);
      const product = reached(Object.values(config.scopes["./"]));
      const testOnly = [...reached([
        ...Object.values(config.scopes["./tests/"]),
        ...Object.values(config.scopes["./bench/"]),
      ])].filter((id) => !product.has(id));
      assert.ok(testOnly.some((id) => id.startsWith("@octokit/openapi@")), "the lock was read");
      const fetched = [];
      for (const id of testOnly) {
        // An id is `name@version`, then `_peer@version` for each peer dependency it was resolved with.
        const [, name, version] = /^((?:@[^/@]+\/)?[^/@]+)@([^_]+)/.exec(id)!;
        const dir = `${denoDir}/npm/registry.npmjs.org/${name}/${version}`;
        if (await Deno.stat(dir).then(() => true, () => false)) fetched.push(id);
      }
      assert.deepEqual(fetched, [], "packages only the tests or benchmarks import");
      assert.ok(
        bytes <= LIMIT,
        `the first run left ${(bytes / 1e6).toFixed(1)} MB in DENO_DIR (at most 60 MB)`,
      );
      assert.equal(await Deno.readTextFile(LOCK), lockBefore, "deno.lock unchanged");
    } finally {
      await Deno.remove(denoDir, { recursive: true });
    }
  },
});

Deno.test("the install page's from-source command: deno task --quiet weir serve ... --stdio serves", async () => {
  const client = new Client({ name: "weir-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: ["task", "--quiet", "weir", "serve", "guardfiles/open-meteo.mcp.kdl", "--stdio"],
      cwd: ROOT,
      stderr: "ignore",
    }),
  );
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name).sort(), [
      "get_forecast",
      "weir_info",
    ]);
  } finally {
    await client.close();
  }
});
