/**
 * The JSR package, published and used before it exists: a copy of the checkout
 * is stamped as the release workflow stamps it (`scripts/stamp.ts`) and
 * published with the real `deno publish` to a JSR registry on 127.0.0.1
 * (`tests/support/jsr_registry.ts`), which then serves exactly the files that
 * upload held, with JSR's metadata and checksums. From a scratch directory
 * with an empty `DENO_DIR` and `JSR_URL` pointing at it (npm packages still
 * come from the npm registry), the CLI and the library run from `jsr:`
 * specifiers as a user runs them: `--version`, `lint`, `serve --stdio` driven
 * by the official client (with a feed extraction, whose Web Worker module is
 * loaded by URL), `demo`, and scripts importing `jsr:@weir/weir` and
 * `jsr:@weir/weir/guard`, type-checked and run.
 *
 * The uploaded file set must be the product and nothing else: every module the
 * entry points reach (static and dynamic imports, plus the worker modules
 * scripts/build.ts includes), the docs, the example guardfiles, README,
 * CHANGELOG, LICENSE, deno.json; no test, bench, fixture, script or deploy file,
 * and no module that nothing reaches.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { INCLUDE } from "../../scripts/build.ts";
import { CONFIG, ROOT, runCli, runCommand } from "../support/cli.ts";
import { type Files, startJsr } from "../support/jsr_registry.ts";
import { startRecorder } from "../support/upstream.ts";

const config = JSON.parse(await Deno.readTextFile(CONFIG));
const PACKAGE = `${config.name}@${config.version}`;
/** Not the checkout's HEAD: the version line must come from the stamp. */
const STAMP = "5ca1ab1e".repeat(5);

/** The checkout's files as git sees them (tracked, or new and not ignored), copied to `dir`. */
async function copyCheckout(dir: string): Promise<void> {
  const list = await runCommand("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: ROOT,
  });
  assert.equal(list.code, 0, `git ls-files: ${list.stderr}`);
  for (const file of new Set(list.stdout.split("\0").filter(Boolean))) {
    const from = `${ROOT}${file}`;
    const info = await Deno.lstat(from).catch(() => undefined);
    if (!info?.isFile) continue; // deleted in the work tree, or a link
    await Deno.mkdir(`${dir}/${file}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.copyFile(from, `${dir}/${file}`);
  }
}

const jsr = startJsr();
const stage = await Deno.makeTempDir({ prefix: "weir-publish-" });
const scratch = await Deno.makeTempDir({ prefix: "weir-jsr-user-" });
const denoDir = await Deno.makeTempDir({ prefix: "weir-jsr-cache-" });
/** The user's environment: this machine's, with the local registry and an empty cache. */
const userEnv: Record<string, string> = {
  ...Deno.env.toObject(),
  JSR_URL: jsr.url,
  DENO_DIR: denoDir,
  DENO_NO_UPDATE_CHECK: "1",
  NO_COLOR: "1",
};
delete userEnv.DENO_CERT;

let FILES: Files = new Map();
let publishError = "";
try {
  await copyCheckout(stage);
  const stamp = await runCommand(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", "scripts/stamp.ts", STAMP],
    cwd: stage,
  });
  assert.equal(stamp.code, 0, stamp.stderr);
  const publish = await runCommand(Deno.execPath(), {
    args: ["publish", "--token", "local-test", "--no-provenance", "--allow-dirty"],
    cwd: stage,
    env: { JSR_URL: jsr.url, NO_COLOR: "1", GITHUB_ACTIONS: "" },
  });
  assert.equal(publish.code, 0, `deno publish: ${publish.stderr}`);
  FILES = jsr.published.get(PACKAGE) ?? new Map();
  assert.ok(FILES.size > 0, `deno publish uploaded no ${PACKAGE}: ${publish.stderr}`);
} catch (error) {
  publishError = (error as Error).message;
}

globalThis.addEventListener("unload", () => {
  for (const dir of [stage, scratch, denoDir]) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* gone */ }
  }
});

/** `deno run -A <args>` in the scratch directory, as a user with only the registry. */
function userRun(args: string[]) {
  return runCommand(Deno.execPath(), { args: ["run", "-A", ...args], cwd: scratch, env: userEnv });
}

/** Every local file the entry points reach (static and dynamic imports), relative to the root. */
async function reachable(entries: string[]): Promise<Set<string>> {
  const files = new Set<string>();
  for (const entry of entries) {
    const info = await runCommand(Deno.execPath(), {
      args: ["info", "--json", "--config", CONFIG, entry],
      cwd: ROOT,
    });
    assert.equal(info.code, 0, info.stderr);
    for (const module of JSON.parse(info.stdout).modules as { specifier: string }[]) {
      const url = new URL(module.specifier);
      if (url.protocol === "file:") files.add(`/${url.pathname.slice(ROOT.length)}`);
    }
  }
  return files;
}

Deno.test("deno publish uploads the product: what the entry points reach, the docs, nothing else", async () => {
  assert.equal(publishError, "");
  const uploaded = [...FILES.keys()].sort();
  const entries = [...Object.values(config.exports as Record<string, string>), ...INCLUDE]
    .map((p) => p.replace(/^\.\//, ""));
  const needed = await reachable(entries);
  const missing = [...needed].filter((f) => !FILES.has(f));
  assert.deepEqual(missing, [], "modules the CLI or library load that the upload misses");
  const stray = uploaded.filter((f) =>
    /(^|\/)(tests?|bench|fixtures|testdata|scripts|deploy|\.github|\.ci|dist)\//.test(f) ||
    /(_test|_bench|\.test|\.bench)\.[jt]sx?$/.test(f) ||
    ["/deno.lock", "/Dockerfile", "/.dockerignore"].includes(f)
  );
  assert.deepEqual(stray, [], "test, bench, fixture or build files in the upload");
  const unused = uploaded.filter((f) => /\.[jt]sx?$/.test(f) && !needed.has(f));
  assert.deepEqual(unused, [], "modules nothing in the package reaches");
  const other = uploaded.filter((f) =>
    !needed.has(f) && !/^\/(docs\/|guardfiles\/[^/]+\.mcp\.kdl$)/.test(f) &&
    !["/README.md", "/CHANGELOG.md", "/LICENSE", "/deno.json"].includes(f)
  );
  assert.deepEqual(other, [], "files that are neither code, docs, example guardfiles nor metadata");
  for (const f of ["/LICENSE", "/README.md", "/CHANGELOG.md", "/guardfiles/demo.mcp.kdl"]) {
    assert.ok(FILES.has(f), `${f} is published`);
  }
  // What `deno publish --dry-run` lists is the same set.
  const dry = await runCommand(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty", "--config", CONFIG],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
  });
  assert.equal(dry.code, 0, dry.stderr);
  const listed = [...(dry.stdout + dry.stderr).matchAll(/^\s+file:\/\/(\S+) \(/gm)]
    .map((m) => `/${m[1].slice(ROOT.length)}`).sort();
  assert.deepEqual(listed, uploaded);
});

Deno.test("jsr:@weir/weir/cli --version from an empty cache: version, the stamped commit, Deno", async () => {
  assert.equal(publishError, "");
  assert.deepEqual([...Deno.readDirSync(denoDir)], [], "DENO_DIR starts empty");
  const r = await userRun(["jsr:@weir/weir/cli", "--version"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), [
    `weir ${config.version}`,
    `commit ${STAMP}`,
    `deno ${Deno.version.deno} (${Deno.build.target})`,
  ]);
  assert.ok(jsr.served.includes(`/${config.name}/meta.json`), "resolved through the registry");
  assert.ok(jsr.served.includes(`/${config.name}/${config.version}/cli.ts`));
});

Deno.test("jsr:@weir/weir/cli lint of an example guardfile lists what a checkout lists", async () => {
  assert.equal(publishError, "");
  await Deno.copyFile(`${ROOT}guardfiles/open-meteo.mcp.kdl`, `${scratch}/open-meteo.mcp.kdl`);
  const r = await userRun(["jsr:@weir/weir/cli", "lint", "open-meteo.mcp.kdl"]);
  assert.equal(r.code, 0, r.stderr);
  const local = await runCli(["lint", `${ROOT}guardfiles/open-meteo.mcp.kdl`]);
  assert.equal(r.stdout, local.stdout);
  assert.notEqual(r.stdout.trim(), "");
  const bad = await userRun(["jsr:@weir/weir/cli", "lint", "missing.mcp.kdl"]);
  assert.equal(bad.code, 1);
});

async function stdioClient(args: string[]): Promise<Client> {
  const client = new Client({ name: "jsr-test", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: ["run", "-A", ...args],
      cwd: scratch,
      env: userEnv,
      stderr: "pipe",
    }),
  );
  return client;
}

Deno.test("jsr:@weir/weir/cli serve --stdio: the official client lists the tools and extracts a feed", async () => {
  assert.equal(publishError, "");
  const upstream = await startRecorder(() =>
    new Response(
      `<rss version="2.0"><channel><title>Notes</title><item><title>One</title></item></channel></rss>`,
      { headers: { "content-type": "application/rss+xml" } },
    )
  );
  await Deno.writeTextFile(
    `${scratch}/notes.mcp.kdl`,
    `extract "get_feed" as="feed-entries"
wrap ward mcp notes {
    base-url "${upstream.url}"
    auth none
    can get feed { path "/feed"; raw-response }
}
`,
  );
  const client = await stdioClient(["jsr:@weir/weir/cli", "serve", "notes.mcp.kdl", "--stdio"]);
  try {
    const names = (await client.listTools()).tools.map((t: { name: string }) => t.name);
    assert.ok(names.includes("get_feed") && names.includes("weir_info"), `${names}`);
    const result = await client.callTool({ name: "get_feed", arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    const env = result.structuredContent as { result: { title: string; entries: unknown[] } };
    assert.deepEqual(env.result, { title: "Notes", entries: [{ title: "One" }] });
    // The Web Worker module came from the registry like every other module.
    assert.ok(
      jsr.served.includes(`/${config.name}/${config.version}/src/guard/extract_worker.ts`),
      "the extract worker was fetched from the registry",
    );
  } finally {
    await client.close();
    await upstream.close();
  }
});

Deno.test("jsr:@weir/weir/cli demo runs its scripted session", async () => {
  assert.equal(publishError, "");
  const r = await userRun(["jsr:@weir/weir/cli", "demo"]);
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
});

Deno.test("a program importing jsr:@weir/weir serves a one-tool server; the guard loads a guardfile", async () => {
  assert.equal(publishError, "");
  await Deno.writeTextFile(
    `${scratch}/server.ts`,
    `import { McpServer, serveStdio } from "jsr:@weir/weir";

const server = new McpServer({
  name: "adder",
  version: "1.0.0",
  catalog: {
    tools: [{
      name: "add",
      description: "Add two numbers.",
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
        additionalProperties: false,
      },
    }],
    resources: [],
    prompts: [],
  },
  dispatch: (_tool, { a, b }) => ({
    content: [{ type: "text", text: String((a as number) + (b as number)) }],
  }),
});
await serveStdio(server, { readable: Deno.stdin.readable, writable: Deno.stdout.writable });
`,
  );
  await Deno.writeTextFile(
    `${scratch}/guard.ts`,
    `import { createGuard, parseGuardfile } from "jsr:@weir/weir/guard";
import { McpServer } from "jsr:@weir/weir";

const { guardfile, diagnostics } = parseGuardfile(await Deno.readTextFile("open-meteo.mcp.kdl"), "open-meteo.mcp.kdl");
if (!guardfile) throw new Error(diagnostics.map((d) => d.message).join("; "));
const server = new McpServer(createGuard(guardfile, {
  resolver: { env: (n) => Deno.env.get(n), readFile: (p) => Deno.readTextFile(p) },
}));
console.log(server.capabilities.tools ? "tools" : "none");
`,
  );
  await Deno.copyFile(`${ROOT}guardfiles/open-meteo.mcp.kdl`, `${scratch}/open-meteo.mcp.kdl`);
  // The published types check for a user (no slow types, nothing missing).
  const check = await runCommand(Deno.execPath(), {
    args: ["check", "server.ts", "guard.ts"],
    cwd: scratch,
    env: userEnv,
  });
  assert.equal(check.code, 0, check.stderr);
  const client = await stdioClient(["server.ts"]);
  try {
    const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
    assert.deepEqual(tools, ["add"]);
    const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
    assert.deepEqual(sum.content, [{ type: "text", text: "42" }]);
  } finally {
    await client.close();
  }
  const guard = await userRun(["guard.ts"]);
  assert.equal(guard.code, 0, guard.stderr);
  assert.equal(guard.stdout.trim(), "tools");
});

Deno.test("deno doc --lint passes on every entry point", async () => {
  for (const entry of Object.values(config.exports as Record<string, string>)) {
    const out = await runCommand(Deno.execPath(), {
      args: ["doc", "--lint", "--config", CONFIG, entry],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
    });
    assert.equal(
      out.code,
      0,
      `deno doc --lint ${entry}: document every exported symbol and field, and export ` +
        `the types public ones name:\n${out.stderr.slice(0, 3000)}`,
    );
  }
});

Deno.test({
  name: "the local registry closes",
  sanitizeResources: false,
  fn: async () => await jsr.close(),
});
