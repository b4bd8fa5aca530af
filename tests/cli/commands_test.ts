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

Deno.test("a command Deno may not read the module of says which read access to give, exit 2", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "weir-unreadable-" });
  try {
    await Deno.writeTextFile(`${cwd}/a.mcp.kdl`, "");
    // Read access to the working directory (the guardfile) only, not to weir's own files.
    const r = await runCommand(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--config",
        CONFIG,
        `--allow-read=${cwd}`,
        CLI,
        "lint",
        "a.mcp.kdl",
      ],
      cwd,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr.trim(),
      `weir: Deno may not read weir's own module ${ROOT}src/cli/lint.ts: give it read access to ` +
        `${ROOT} (--allow-read, or --allow-read=${ROOT} and the files the command reads)`,
    );
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
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
    // The server's address alone asks "/": the answer says where the health check is.
    const bare = await runCli(["healthcheck", served.url]);
    assert.equal(bare.code, 1);
    assert.equal(
      bare.stderr.trim(),
      `weir: healthcheck: ${served.url}/ answered 404; weir answers its health check at ` +
        `/healthz (${served.url}/healthz)`,
    );
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
  // The URL, what happened, and what to check: not Deno's bare "fetch failed".
  assert.equal(
    down.stderr.trim(),
    `weir: healthcheck: http://127.0.0.1:${port}/healthz: connection refused: nothing is ` +
      `listening there; is weir serving there (weir serve FILE --http PORT)?`,
  );
  const bad = await runCli(["healthcheck", "ftp://x/"]);
  assert.equal(bad.code, 2);
});

Deno.test("every command refuses an unknown option in one form, exit 2, naming its help", async () => {
  const help = (await runCli(["help"])).stdout;
  const names = [...new Set([...help.matchAll(/^ {2}weir ([a-z][a-z0-9-]*)/gm)].map((m) => m[1]))]
    .filter((n) => n !== "help");
  assert.ok(names.length >= 10, names.join(" "));
  for (const name of names) {
    // serve-upstream: the option before "--", which hands the rest to the upstream command.
    const r = await runCli([name, "--no-such-flag", "--", "true"]);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.equal(
      r.stderr.trim(),
      `weir: ${name}: unknown option --no-such-flag; run "weir help ${name}"`,
      name,
    );
  }
  // Other usage errors take the same form and never say the command twice.
  for (
    const [args, name] of [
      [["describe"], "describe"],
      [["serve", "x.mcp.kdl"], "serve"],
      [["serve-upstream", "--tool", "echo", "--stdio"], "serve-upstream"],
      [["lint-upstream", "--tool", "a", "--format", "xml"], "lint-upstream"],
      [["serve-upstream", "--tool"], "serve-upstream"],
    ] as const
  ) {
    const r = await runCli([...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    const line = r.stderr.trim();
    assert.match(line, new RegExp(`^weir: ${name}: .+; run "weir help ${name}"$`), line);
    assert.doesNotMatch(line, new RegExp(`^weir: ${name}: ${name}\\b`), line);
    assert.doesNotMatch(line, /Unknown option|To specify a positional/, line);
  }
});

/** Each command's flags in a synopsis: the `weir CMD ...` lines and their continuations. */
function synopsisFlags(text: string): Map<string, Set<string>> {
  const flags = new Map<string, Set<string>>();
  let current: string[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*weir ([a-z][a-z0-9-]*(?: FILE \| [a-z][a-z0-9-]*)?)/.exec(line);
    if (m) current = m[1].split(/ FILE \| /);
    else if (!/^\s{4,}\S/.test(line)) continue;
    for (const name of current) {
      const set = flags.get(name) ?? new Set();
      for (const f of line.matchAll(/--[a-z][a-z0-9-]*/g)) set.add(f[0]);
      flags.set(name, set);
    }
  }
  return flags;
}

Deno.test("weir help's synopsis, each command's usage and docs/cli.md's synopsis name the same flags", async () => {
  const top = (await runCli(["help"])).stdout;
  const usage = top.slice(top.indexOf("Usage:\n") + 7, top.indexOf("\n\nCommands:"));
  const fromHelp = synopsisFlags(usage);
  const doc = await Deno.readTextFile(`${ROOT}docs/cli.md`);
  const block = /```text\n([\s\S]*?)```/.exec(doc)![1];
  const fromDoc = synopsisFlags(block);
  for (const [name, flags] of fromHelp) {
    if (name === "help") continue;
    const own = (await runCli(["help", name])).stdout;
    const ownUsage = synopsisFlags(own.split("\n\n")[0].replace(/^Usage: /, "")).get(name);
    assert.deepEqual([...flags].sort(), [...(ownUsage ?? [])].sort(), `weir help ${name}`);
    assert.deepEqual(
      [...flags].sort(),
      [...(fromDoc.get(name) ?? [])].sort(),
      `docs/cli.md synopsis for ${name}`,
    );
    // Every flag of the synopsis is explained in the command's help (or serve's, which
    // serve-ssm and serve-s3 refer to).
    const body = own.split("\n\n").slice(1).join("\n") +
      (own.includes(`"weir help serve"`) ? (await runCli(["help", "serve"])).stdout : "");
    for (const f of flags) assert.ok(body.includes(f), `${name}: ${f} unexplained`);
  }
  assert.deepEqual([...fromDoc.keys()].sort(), [...fromHelp.keys()].sort());
});

Deno.test("start-up configuration refusals exit 2 in serve and serve-upstream alike", async () => {
  const serve = ["serve", "guardfiles/demo.mcp.kdl", "--http", "127.0.0.1:0"];
  const upstream = ["serve-upstream", "--tool", "echo", "--http", "127.0.0.1:0"];
  const cases: [string[], Record<string, string>, RegExp][] = [
    [["--state-keys-env", "K"], { K: "short" }, /--state-keys-env K: key 1 is 5 characters/],
    [["--state-keys-env", "WEIR_TEST_UNSET_K"], {}, /WEIR_TEST_UNSET_K: the variable is not set/],
    [["--inbound-token-env", "T"], { T: "short" }, /--inbound-token-env T: token 1 is 5/],
  ];
  for (const [command, tail] of [[serve, []], [upstream, ["--", "true"]]]) {
    for (const [flags, env, message] of cases) {
      const r = await runCli([...command, ...flags, ...tail], { env });
      assert.equal(r.code, 2, `${command[0]} ${flags.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.match(
        r.stderr,
        new RegExp(`^weir: ${command[0]}: .*; run "weir help ${command[0]}"$`, "m"),
      );
      assert.doesNotMatch(r.stderr, /short/, "the value is never printed");
    }
  }
});
