/**
 * The single-file binary, built by `deno task compile`'s script into a temp
 * dir (from the bundle, scripts/bundle.ts): `--version`, `lint`, `describe` and
 * `serve --stdio` driven by the official MCP client, with no Deno, no
 * checkout and no bundle beside it (compile.ts removes the bundle it compiled,
 * so a module missing from the binary cannot load from disk); and the test
 * files the bundle passes
 * (tests/support/shipped.ts) run on the binary.
 *
 * `deno compile` needs the `denort` runtime: it downloads it from dl.deno.land
 * unless `DENORT_BIN` names a local copy. Where it can get neither, the build
 * must fail the documented way (a message naming DENORT_BIN, nothing left
 * behind), which is asserted; the binary tests then report themselves skipped
 * with the reason in their names.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CONFIG, ROOT, runCommand } from "./support/cli.ts";
import { runShippedFormTests } from "./support/shipped.ts";

const config = JSON.parse(await Deno.readTextFile(CONFIG));
const work = await Deno.makeTempDir();
const outDir = `${work}/dist`;
const build = await new Deno.Command(Deno.execPath(), {
  args: ["run", "--quiet", "--allow-all", `${ROOT}scripts/compile.ts`, "--out-dir", outDir],
  cwd: ROOT,
  stdout: "piped",
  stderr: "piped",
}).output();
const buildErr = new TextDecoder().decode(build.stderr);
const binary = `${outDir}/${Deno.build.os === "windows" ? "weir.exe" : "weir"}`;
const why = build.success
  ? ""
  : /dns|lookup|connect/i.test(buildErr)
  ? "dl.deno.land is unreachable"
  : "deno compile failed";
const skip = build.success ? "" : ` (skipped: no denort runtime here, ${why}; set DENORT_BIN)`;

Deno.test({
  name: `compiled binary: only the binary is left in the output directory${skip}`,
  ignore: !build.success,
  fn: async () => {
    const left = [];
    for await (const entry of Deno.readDir(outDir)) left.push(entry.name);
    assert.deepEqual(left, [Deno.build.os === "windows" ? "weir.exe" : "weir"]);
  },
});

Deno.test({
  name: "a failed build names DENORT_BIN, exits 1 and leaves no dist/ behind",
  ignore: build.success,
  fn: async () => {
    assert.equal(build.code, 1);
    assert.match(buildErr, /DENORT_BIN=\/path\/to\/denort deno task compile/);
    await assert.rejects(Deno.stat(outDir), Deno.errors.NotFound);
  },
});

async function run(args: string[]) {
  // Run from an empty directory with a minimal environment: nothing of the
  // checkout or of Deno's cache is there to lean on.
  return await runCommand(binary, {
    args,
    cwd: work,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: work },
  });
}

Deno.test({
  name: `compiled binary: --version, lint, describe${skip}`,
  ignore: !build.success,
  fn: async () => {
    await Deno.copyFile(`${ROOT}guardfiles/demo.mcp.kdl`, `${work}/demo.mcp.kdl`);
    const version = await run(["--version"]);
    assert.equal(version.stdout.split("\n")[0], `weir ${config.version}`);
    assert.match(version.stdout, /^commit ([0-9a-f]{40}|unknown)$/m);
    const lint = await run(["lint", "demo.mcp.kdl"]);
    assert.equal(lint.code, 0, lint.stderr);
    assert.match(lint.stdout, /^delete_ticket$/m);
    const describe = await run(["describe", "demo.mcp.kdl"]);
    assert.equal(describe.code, 0, describe.stderr);
    assert.match(describe.stdout, /withheld/i);
    const bad = await run(["lint", "missing.mcp.kdl"]);
    assert.equal(bad.code, 1);
  },
});

Deno.test({
  name: `compiled binary: serve --stdio answers the official MCP client${skip}`,
  ignore: !build.success,
  fn: async () => {
    await Deno.copyFile(`${ROOT}guardfiles/demo.mcp.kdl`, `${work}/demo.mcp.kdl`);
    const client = new Client({ name: "compile-test", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: binary,
        args: ["serve", `${work}/demo.mcp.kdl`, "--stdio"],
        cwd: work,
        stderr: "pipe",
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      assert.ok(names.includes("list_ticket") && names.includes("weir_info"), `${names}`);
      const info = await client.callTool({ name: "weir_info", arguments: {} });
      assert.notEqual(info.isError, true);
    } finally {
      await client.close();
    }
  },
});

Deno.test({
  name:
    `compiled binary: serve (stdio, HTTP), wrap, AWS, sql, OAuth, extraction pass their tests${skip}`,
  ignore: !build.success,
  fn: async () => {
    // The binary holds every module it loads by URL: the same test files as the bundle's.
    await runShippedFormTests({ WEIR_TEST_BINARY: binary });
  },
});

globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(work, { recursive: true });
  } catch { /* already gone */ }
});
