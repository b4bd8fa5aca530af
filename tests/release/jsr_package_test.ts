/**
 * The JSR package, published and used before it exists: a copy of the checkout
 * is stamped and made the JSR package as the release workflow does it
 * (`scripts/stamp.ts`, `scripts/jsr_package.ts`: the CLI entry a bundle of
 * weir's own modules, npm packages left as `npm:` imports) and published with
 * the real `deno publish` to a JSR registry on 127.0.0.1
 * (`tests/support/jsr_registry.ts`, `tests/support/jsr_publish.ts`), which then
 * serves exactly the files that upload held, with JSR's metadata and
 * checksums. From a scratch directory with an empty `DENO_DIR` and `JSR_URL`
 * pointing at it (npm packages still come from the npm registry), the CLI and
 * the library run from `jsr:` specifiers as a user runs them: `--version`,
 * `lint`, `serve --stdio` driven by the official client (with a feed
 * extraction, whose Web Worker module is loaded by URL), `demo`, and scripts
 * importing `jsr:@weir/weir` and `jsr:@weir/weir/guard`, type-checked and run;
 * and the shipped-form test files (tests/support/shipped.ts: serve over stdio
 * and HTTP with the official clients, the wrap mode, AWS against s3rver, sql
 * against PostgreSQL, OAuth, the extract worker) with the package as weir.
 *
 * The uploaded file set must be the product and nothing else: every module the
 * entry points reach (the bundle for `./cli`, the sources for `.` and
 * `./guard`; static and dynamic imports, plus the modules scripts/build.ts
 * loads by URL), the CLI's sources beside the bundle for audit, the docs, the
 * example guardfiles, README, CHANGELOG, LICENSE, deno.json; no test, bench,
 * fixture, script or deploy file, and no module that nothing reaches. The
 * bundle holds no third-party code: it imports every npm package the CLI's
 * sources import, each from npm.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { bundled, ENTRY, INCLUDE, LAZY_NPM } from "../../scripts/build.ts";
import { JSR_BUNDLE, JSR_PROGRAM } from "../../scripts/jsr_package.ts";
import { CONFIG, ROOT, runCli, runCommand } from "../support/cli.ts";
import { publishCheckout } from "../support/jsr_publish.ts";
import { type Files, startJsr } from "../support/jsr_registry.ts";
import { runShippedFormTests } from "../support/shipped.ts";
import { startRecorder } from "../support/upstream.ts";

const config = JSON.parse(await Deno.readTextFile(CONFIG));
/** Not the checkout's HEAD: the version line must come from the stamp. */
const STAMP = "5ca1ab1e".repeat(5);

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
  FILES = await publishCheckout(jsr, stage, STAMP);
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

/**
 * What `deno info` says `entry` (a path in the staged package) reaches: with
 * the package's deno.json, or without any (`--no-config`: no import map).
 */
async function graph(
  entry: string,
  config: "package" | "none" = "package",
): Promise<{ specifier: string; npmPackage?: string }[]> {
  const info = await runCommand(Deno.execPath(), {
    args: [
      "info",
      "--json",
      ...(config === "none" ? ["--no-config"] : ["--config", `${stage}/deno.json`]),
      entry,
    ],
    cwd: stage,
  });
  assert.equal(info.code, 0, info.stderr);
  return JSON.parse(info.stdout).modules;
}

/** Every local file the entries reach (static and dynamic imports), relative to the package. */
async function reachable(entries: string[]): Promise<Set<string>> {
  const files = new Set<string>();
  for (const entry of entries) {
    for (const module of await graph(entry)) {
      const url = new URL(module.specifier);
      if (url.protocol === "file:") files.add(url.pathname.slice(stage.length));
    }
  }
  return files;
}

/** Every npm package (name@version) the entries import. */
async function npmImports(entries: string[], config?: "none"): Promise<string[]> {
  const packages = new Set<string>();
  for (const entry of entries) {
    for (const module of await graph(entry, config)) {
      if (module.npmPackage) packages.add(module.npmPackage.replace(/_.*$/, ""));
    }
  }
  return [...packages].sort();
}

/** The CLI's modules: its entry and each module it loads by URL, as sources. */
const CLI_SOURCES = [ENTRY, ...INCLUDE];
/** ... and as the package's bundle. */
const CLI_BUNDLE = CLI_SOURCES.map((path) => `${JSR_BUNDLE}/${bundled(path)}`);

Deno.test("deno publish uploads the product: what the entry points reach, the docs, nothing else", async () => {
  assert.equal(publishError, "");
  const uploaded = [...FILES.keys()].sort();
  const published = JSON.parse(new TextDecoder().decode(FILES.get("/deno.json")));
  assert.deepEqual(published.exports, { ...config.exports, "./cli": `./${CLI_BUNDLE[0]}` });
  const entries = [...Object.values(published.exports as Record<string, string>), ...CLI_BUNDLE]
    .map((p) => p.replace(/^\.\//, ""));
  const needed = new Set([...await reachable(entries), ...await reachable(CLI_SOURCES)]);
  const missing = [...needed].filter((f) => !FILES.has(f));
  assert.deepEqual(
    missing,
    [],
    "modules the CLI, its sources or the library load that the upload misses",
  );
  assert.ok(FILES.has("/cli.ts") && FILES.has("/src/cli/serve.ts"), "the CLI's sources, for audit");
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
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: stage,
    env: { NO_COLOR: "1" },
  });
  assert.equal(dry.code, 0, dry.stderr);
  const listed = [...(dry.stdout + dry.stderr).matchAll(/^\s+file:\/\/(\S+) \(/gm)]
    .map((m) => m[1].slice(stage.length)).sort();
  assert.deepEqual(listed, uploaded);
});

Deno.test("the package's CLI bundle holds weir's own modules only: every npm package stays an npm: import", async () => {
  assert.equal(publishError, "");
  // The packages loaded by an import() of a constant (LAZY_NPM) `deno info` follows in the
  // sources, not in the minified bundle: they are checked by their specifiers below.
  const lazy = LAZY_NPM.map((specifier) => specifier.replace(/^npm:((?:@[^/]+\/)?[^/]+).*$/, "$1"));
  const fromSources = (await npmImports(CLI_SOURCES)).filter((p) => !lazy.includes(p));
  assert.ok(fromSources.includes("@bgotink/kdl@0.4.0"), `${fromSources}`);
  // Resolved without deno.json: no bare name is left for an import map to resolve.
  assert.deepEqual(
    (await npmImports(CLI_BUNDLE, "none")).filter((p) => !lazy.includes(p)),
    fromSources,
  );
  const text = [...FILES].filter(([path]) => path.startsWith(`/${JSR_BUNDLE}/`))
    .map(([, bytes]) => new TextDecoder().decode(bytes)).join("\n");
  for (const specifier of LAZY_NPM) assert.ok(text.includes(`"${specifier}"`), specifier);
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
  // The bundle, not the sources, is what the CLI entry runs.
  const served = jsr.served.filter((p) => p.endsWith(".ts") || p.endsWith(".js"));
  assert.ok(served.includes(`/${config.name}/${config.version}/${CLI_BUNDLE[0]}`), `${served}`);
  assert.ok(served.includes(`/${config.name}/${config.version}/${JSR_BUNDLE}/${JSR_PROGRAM}`));
  assert.deepEqual(served.filter((p) => !p.includes(`/${JSR_BUNDLE}/`)), [], "no source module");
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
      jsr.served.includes(
        `/${config.name}/${config.version}/${JSR_BUNDLE}/src/guard/extract_worker.js`,
      ),
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

Deno.test({
  name:
    "the shipped-form tests pass on jsr:@weir/weir/cli (stdio, HTTP, wrap, AWS, sql, OAuth, extraction)",
  ignore: Deno.build.os === "windows", // the stand-in below is a shell script
  fn: async () => {
    assert.equal(publishError, "");
    // The helpers run WEIR_TEST_BINARY as weir: here the package from the registry, as a user with
    // no deno.json runs it (--no-config: the tests run in the checkout), with this test's cache.
    const weir = `${scratch}/weir-from-jsr`;
    await Deno.writeTextFile(
      weir,
      `#!/bin/sh\nJSR_URL=${jsr.url} DENO_DIR=${denoDir} DENO_NO_UPDATE_CHECK=1 exec ` +
        `${JSON.stringify(Deno.execPath())} run --no-config --quiet -A jsr:@weir/weir/cli "$@"\n`,
    );
    await Deno.chmod(weir, 0o755);
    await runShippedFormTests({ WEIR_TEST_BINARY: weir });
  },
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
