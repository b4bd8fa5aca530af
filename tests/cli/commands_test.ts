/**
 * The command table: `--version` is deno.json's version, and the commands that
 * need no guardfile load no npm package at all (so no KDL parser): Deno's
 * `--no-npm` makes any npm import fail, and these must still succeed.
 */
import assert from "node:assert/strict";
import { CLI, CONFIG, ROOT, runCli, runCommand, serveHttp } from "../support/cli.ts";

const config = JSON.parse(await Deno.readTextFile(CONFIG));

async function withoutNpm(args: string[]) {
  return await runCommand(Deno.execPath(), {
    args: ["run", "--quiet", "--no-npm", "--config", CONFIG, CLI, ...args],
    cwd: ROOT,
  });
}

Deno.test("--version prints the version in deno.json, the checkout's commit and Deno's version", async () => {
  const r = await runCli(["--version"]);
  assert.equal(r.code, 0);
  const head = await runCommand("git", { args: ["rev-parse", "HEAD"], cwd: ROOT });
  assert.deepEqual(r.stdout.trim().split("\n"), [
    `weir ${config.version}`,
    `commit ${head.code === 0 ? head.stdout.trim() : "unknown"}`,
    `deno ${Deno.version.deno} (${Deno.build.target})`,
  ]);
  // Without read permission for .git it says so rather than prompting.
  const bare = await runCommand(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", "--config", CONFIG, CLI, "--version"],
    cwd: ROOT,
  });
  assert.equal(bare.code, 0, bare.stderr);
  assert.match(bare.stdout, /^commit unknown$/m);
});

Deno.test("help, --version and usage errors load no npm package (no KDL parser)", async () => {
  for (const args of [["--version"], ["help"], ["help", "serve"], ["serve", "--help"]]) {
    const r = await withoutNpm(args);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.notEqual(r.stdout, "");
  }
  const unknown = await withoutNpm(["frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  // The guard rail itself: lint does need the parser, so --no-npm must break it.
  const lint = await withoutNpm(["lint", "guardfiles/demo.mcp.kdl"]);
  assert.notEqual(lint.code, 0);
});

Deno.test("help lists every command with its usage line, and help for each exists", async () => {
  const r = await runCli(["help"]);
  const names = [...r.stdout.matchAll(/^ {2}weir ([a-z][a-z0-9-]*)/gm)].map((m) => m[1])
    .filter((n) => n !== "help");
  assert.ok(names.includes("serve") && names.includes("lint"), r.stdout);
  for (const name of names) {
    const help = await runCli(["help", name]);
    assert.equal(help.code, 0, name);
    assert.match(help.stdout, new RegExp(`^Usage: weir ${name}`), name);
  }
  const none = await runCli(["help", "nope"]);
  assert.equal(none.code, 2);
  for (const args of [["help", "--help"], ["help", "help"]]) {
    const general = await runCli(args);
    assert.equal(general.code, 0, args.join(" "));
    assert.equal(general.stdout, r.stdout, args.join(" "));
  }
});

Deno.test("healthcheck exits 0 while weir serves and 1 when nothing answers", async () => {
  const served = await serveHttp(`${ROOT}guardfiles/demo.mcp.kdl`);
  try {
    const up = await runCli(["healthcheck", `${served.url}/healthz`]);
    assert.equal(up.code, 0, up.stderr);
  } finally {
    await served.stop();
  }
  const port = new URL(served.url).port;
  const down = await runCli([
    "healthcheck",
    `http://127.0.0.1:${port}/healthz`,
    "--timeout",
    "2000",
  ]);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /healthcheck: http:\/\/127\.0\.0\.1/);
  const bad = await runCli(["healthcheck", "ftp://x/"]);
  assert.equal(bad.code, 2);
});
