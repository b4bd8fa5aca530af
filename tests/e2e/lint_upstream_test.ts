/**
 * `weir lint-upstream` run as CI runs it: the read-only heuristic offline,
 * strict read-only against a real upstream, fingerprints written and then
 * compared after the upstream changed, text and JSON output, exit codes.
 */
import assert from "node:assert/strict";
import { baseTools, startMcpUpstream } from "../support/mcp_upstream.ts";
import { ROOT } from "../support/cli.ts";
import { runWeir } from "../support/upstream_cli.ts";

Deno.test("lint-upstream --read-only heuristic works offline on names", async () => {
  const bad = await runWeir(["lint-upstream", "--tool", "delete_all", "--read-only", "heuristic"]);
  assert.equal(bad.code, 1);
  assert.match(
    bad.stderr,
    /tool "delete_all": the name looks like a mutation \(segment "delete"\)/,
  );
  assert.match(bad.stderr, /--read-only strict/);
  const good = await runWeir([
    "lint-upstream",
    "--tool",
    "get_field_values",
    "--tool",
    "list_sites",
    "--read-only",
    "heuristic",
  ]);
  assert.equal(good.code, 0, good.stderr);
  assert.equal(good.stdout, "get_field_values\tunchecked\nlist_sites\tunchecked\n");
  const camel = await runWeir(["lint-upstream", "--tool", "sendEmail", "--read-only", "heuristic"]);
  assert.equal(camel.code, 1);
  // The everything server's toggle-simulated-logging changes state: an unknown verb is a write.
  const toggle = await runWeir([
    "lint-upstream",
    "--tool",
    "toggle-simulated-logging",
    "--read-only",
    "heuristic",
  ]);
  assert.equal(toggle.code, 1, toggle.stderr);
  assert.match(toggle.stderr, /tool "toggle-simulated-logging": the name has no read verb/);
});

Deno.test("lint-upstream: usage errors exit 2", async () => {
  for (
    const args of [
      [],
      ["--tool", "a", "--tool", "a"],
      ["--tool", " "],
      ["--tool", "a", "--read-only", "loose"],
      ["--tool", "a", "--read-only", "strict"],
      ["--tool", "a", "--write-fingerprints", "x.json"],
      ["--tool", "a", "stray"],
      ["--tool", "a", "--format", "yaml"],
    ]
  ) {
    const r = await runWeir(["lint-upstream", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
  }
});

Deno.test("lint-upstream against an upstream: presence, strict, fingerprints, drift", async (t) => {
  const up = await startMcpUpstream();
  const dir = await Deno.makeTempDir();
  const file = `${dir}/fingerprints.json`;
  try {
    await t.step("missing tools are named with the nearest names", async () => {
      const r = await runWeir([
        "lint-upstream",
        "--tool",
        "echo",
        "--tool",
        "ecko",
        "--upstream",
        up.url,
      ]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "echo\tpresent\necko\tmissing\n");
      assert.match(r.stderr, /tool "ecko": the upstream does not list it \(nearest: echo/);
    });
    await t.step("strict: every tool must carry readOnlyHint: true", async () => {
      const bad = await runWeir([
        "lint-upstream",
        "--tool",
        "echo",
        "--tool",
        "whoami",
        "--read-only",
        "strict",
        "--upstream",
        up.url,
      ]);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /tool "whoami": it does not carry annotations.readOnlyHint: true/);
      assert.doesNotMatch(bad.stderr, /tool "echo"/);
      const good = await runWeir([
        "lint-upstream",
        "--tool",
        "echo",
        "--read-only",
        "strict",
        "--upstream",
        up.url,
      ]);
      assert.equal(good.code, 0, good.stderr);
    });
    await t.step(
      "--write-fingerprints, then a changed upstream exits 1 naming the tool",
      async () => {
        const tools = ["--tool", "echo", "--tool", "get_field_values"];
        const write = await runWeir([
          "lint-upstream",
          ...tools,
          "--upstream",
          up.url,
          "--write-fingerprints",
          file,
        ]);
        assert.equal(write.code, 0, write.stderr);
        const doc = JSON.parse(await Deno.readTextFile(file));
        assert.match(doc.tools.echo, /^sha256:[0-9a-f]{64}$/);
        const same = await runWeir([
          "lint-upstream",
          ...tools,
          "--upstream",
          up.url,
          "--fingerprints",
          file,
        ]);
        assert.equal(same.code, 0, same.stderr);
        const changed = baseTools();
        changed[1].description = "Values of one field on any site.";
        up.setTools(changed);
        const drifted = await runWeir([
          "lint-upstream",
          ...tools,
          "--upstream",
          up.url,
          "--fingerprints",
          file,
          "--format",
          "json",
        ]);
        assert.equal(drifted.code, 1);
        const report = JSON.parse(drifted.stdout);
        assert.equal(report.ok, false);
        assert.deepEqual(
          report.tools.map((x: { name: string; status: string }) => [x.name, x.status]),
          [["echo", "present"], ["get_field_values", "drifted"]],
        );
        const text = await runWeir([
          "lint-upstream",
          ...tools,
          "--upstream",
          up.url,
          "--fingerprints",
          file,
        ]);
        assert.equal(text.code, 1);
        assert.match(text.stderr, /tool "get_field_values": its definition changed/);
      },
    );
    await t.step("an unreachable upstream exits 1", async () => {
      await up.stop();
      const r = await runWeir(["lint-upstream", "--tool", "echo", "--upstream", up.url]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /upstream http:\/\/\S+: could not connect: connection refused/);
    });
    assert.equal(up.calls().length, 0, "lint never calls a tool");
  } finally {
    await up.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task weir lint-upstream --write-fingerprints writes the file (the task grants writing)", async () => {
  const up = await startMcpUpstream();
  const dir = await Deno.makeTempDir();
  const file = `${dir}/surface.json`;
  try {
    // What a user runs from a checkout: the `weir` task of deno.json, its permissions as written.
    const write = await new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "--quiet",
        "weir",
        "lint-upstream",
        "--tool",
        "echo",
        "--upstream",
        up.url,
        "--write-fingerprints",
        file,
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(write.code, 0, new TextDecoder().decode(write.stderr));
    const written = JSON.parse(await Deno.readTextFile(file));
    assert.match(written.tools.echo, /^sha256:[0-9a-f]{64}$/);
  } finally {
    await up.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an --upstream URL that answers some other JSON API: one short line, not the schema dump", async () => {
  // A plain REST API answering JSON at any path, as a mistyped --upstream URL would reach.
  const api = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => Response.json({ id: 7, name: "not MCP", state: "open", tags: [], count: 1 }),
  );
  const url = `http://127.0.0.1:${api.addr.port}/mcp`;
  try {
    for (const command of [["lint-upstream"], ["serve-upstream", "--stdio"]]) {
      const r = await runWeir([...command, "--tool", "get_thing", "--upstream", url]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /could not connect: the answer is not a valid MCP message \(/);
      assert.match(r.stderr, /jsonrpc: /);
      assert.doesNotMatch(r.stderr, /"code"|invalid_union/);
      assert.ok(r.stderr.trim().split("\n").length <= 2, r.stderr);
    }
  } finally {
    await api.shutdown();
  }
});

Deno.test("lint-upstream FILE takes its flags before FILE as after it", async () => {
  const up = await startMcpUpstream();
  const dir = await Deno.makeTempDir();
  const file = `${dir}/wrapped.mcp.kdl`;
  const prints = `${dir}/prints.json`;
  try {
    await Deno.writeTextFile(
      file,
      `wrap ward mcp recording {\n    mcp-server http "${up.url}"\n    proxy ${
        baseTools()[0].name
      }\n}\n`,
    );
    const after = await runWeir(["lint-upstream", file, "--format", "json"]);
    assert.equal(after.code, 0, after.stderr);
    for (
      const args of [
        ["--format", "json", file],
        ["--format=json", file],
        ["--write-fingerprints", prints, "--format", "json", file],
      ]
    ) {
      const before = await runWeir(["lint-upstream", ...args]);
      assert.equal(before.code, 0, `${args.join(" ")}: ${before.stderr}`);
      assert.deepEqual(JSON.parse(before.stdout), JSON.parse(after.stdout), args.join(" "));
    }
    assert.ok(JSON.parse(await Deno.readTextFile(prints)).tools, "the fingerprints were written");
    // A flag of the allowlist form is still read as that form (and refused as a usage error).
    const mixed = await runWeir(["lint-upstream", "--tool", "a", file]);
    assert.equal(mixed.code, 2, mixed.stderr);
  } finally {
    await up.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
