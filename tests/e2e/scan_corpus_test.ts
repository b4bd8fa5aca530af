/**
 * The definition scan's corpus, as a user runs it (issue 32): the shipped
 * CLI, real MCP servers over stdio.
 *
 * - Negatives, listed for real: server-everything, the GitHub reference
 *   server (pinned for bench:context), the filesystem and memory reference
 *   servers from npm, and the fetch reference server's definition (that
 *   server is on PyPI, unreachable here: tests/fixtures/scan/ serves its
 *   definition from the SDK). `weir lint-upstream` with every tool of each
 *   exits 0 with every tool `present`: 0 false positives. The live lists
 *   equal tests/fixtures/scan/real_tools.json (the unit test's copy).
 * - Positives: every poisoned definition of tests/fixtures/poisoned_tools.ts
 *   is `flagged` by lint-upstream (exit 1, the tool and the span named with
 *   the rule the corpus expects); serve-upstream lists each as a stub whose
 *   description relays none of the poisoned text, refuses calls to it, and
 *   leaves one audit line per flagged definition.
 * - The rug pull: a clean first listing is served; the poisoned later one
 *   makes the tool a stub at the next verification (both revisions' clients).
 * - The guardfile form: `describe` replaces the text, `accept-finding` accepts
 *   a finding (describe shows it), anything else stays flagged.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CONFIG, ROOT } from "../support/cli.ts";
import {
  cacheEverything,
  everythingCommand,
  runWeir,
  startWrapper,
  textOf,
  v1Http,
  v2Http,
} from "../support/upstream_cli.ts";
import { until } from "../support/wait.ts";
import { POISONED } from "../fixtures/poisoned_tools.ts";

const deno = Deno.execPath();
const run = [deno, "run", "--quiet", "-A", "--config", CONFIG];
const LISTING = new URL("../fixtures/scan/listing_server.ts", import.meta.url).pathname;

interface Real {
  command: string[];
  env?: Record<string, string>;
}

/** The reference servers from npm, at their pinned versions (deno.json's tests scope). */
const FILESYSTEM = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
const MEMORY = "npm:@modelcontextprotocol/server-memory@2026.8.31";

async function realServers(dir: string): Promise<Record<string, Real>> {
  await cacheEverything();
  // Downloaded before any server starts, so a cold cache costs no handshake its deadline.
  const cached = await new Deno.Command(deno, {
    args: [
      "cache",
      "--quiet",
      "--config",
      CONFIG,
      FILESYSTEM,
      MEMORY,
      `${ROOT}/bench/servers/github_official.ts`,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(cached.success, new TextDecoder().decode(cached.stderr));
  return {
    everything: { command: everythingCommand() },
    github: { command: [...run, `${ROOT}/bench/servers/github_official.ts`] },
    filesystem: {
      command: [...run, FILESYSTEM, dir],
    },
    memory: {
      command: [...run, MEMORY],
      env: { MEMORY_FILE_PATH: `${dir}/memory.jsonl` },
    },
    fetch: { command: [...run, LISTING, "fetch"] },
  };
}

/** Every tool a stdio server lists, to a client declaring no capabilities (as weir's). */
async function listLive(server: Real): Promise<Record<string, unknown>[]> {
  const client = new Client({ name: "weir-scan-corpus", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: server.command[0],
      args: server.command.slice(1),
      env: { ...Deno.env.toObject(), ...server.env },
      stderr: "ignore",
    }),
  );
  try {
    const tools: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools({ cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } finally {
    await client.close();
  }
}

/** `name<TAB>status` lines of lint-upstream's stdout. */
function statuses(stdout: string): Map<string, string> {
  return new Map(
    stdout.trim().split("\n").filter(Boolean).map((l) => l.split("\t") as [string, string]),
  );
}

Deno.test("scan corpus: the real tool lists are served whole (0 false positives)", async () => {
  const dir = await Deno.makeTempDir();
  const snapshot = JSON.parse(
    await Deno.readTextFile(new URL("../fixtures/scan/real_tools.json", import.meta.url)),
  ).servers;
  try {
    for (const [name, server] of Object.entries(await realServers(dir))) {
      const tools = await listLive(server);
      assert.ok(tools.length > 0, name);
      if (snapshot[name]) assert.deepEqual(tools, snapshot[name].tools, `${name}'s list changed`);
      const allow = tools.flatMap((t) => ["--tool", t.name as string]);
      const out = await runWeir(
        ["lint-upstream", ...allow, "--format", "json", "--", ...server.command],
        server.env,
      );
      const report = JSON.parse(out.stdout);
      const flagged = report.tools.filter((t: { status: string }) => t.status !== "present");
      assert.deepEqual(flagged, [], `${name}: ${out.stderr}`);
      const warned = report.tools.filter((t: { warnings: string[] }) => t.warnings.length > 0);
      assert.deepEqual(warned, [], `${name}: warnings`);
      assert.equal(out.code, 0, `${name}: ${out.stderr}`);
      assert.equal(report.tools.length, tools.length);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("scan corpus: every poisoned definition is flagged by lint-upstream and stubbed by serve-upstream (0 misses)", async () => {
  const upstream = [...run, LISTING, "poisoned"];
  const allow = POISONED.flatMap((p) => ["--tool", p.tool.name]);
  const lint = await runWeir(["lint-upstream", ...allow, "--", ...upstream]);
  assert.equal(lint.code, 1, lint.stderr);
  const status = statuses(lint.stdout);
  for (const p of POISONED) {
    assert.equal(status.get(p.tool.name), "flagged", `${p.tool.name}: ${p.shape}`);
    // The tool, the rule, where, the span, and how to accept it, on one line.
    const line = lint.stderr.split("\n").find((l) =>
      l.startsWith(`weir: lint-upstream: tool "${p.tool.name}": ${p.rule} in /`)
    );
    assert.ok(line, `${p.tool.name}: no ${p.rule} line in\n${lint.stderr}`);
    assert.match(line, / at \d+-\d+: .*\[.*\].*\(finding [a-z-]+:[0-9a-f]{16}\)/);
    assert.match(line, new RegExp(`--accept-finding ${p.tool.name}=${p.rule}:[0-9a-f]{16}`));
  }
  const weir = await startWrapper([...allow, "--", ...upstream]);
  try {
    const client = await v1Http(weir.url);
    try {
      const listed = (await client.listTools()).tools as { name: string; description: string }[];
      assert.equal(listed.length, POISONED.length);
      for (const p of POISONED) {
        const stub = listed.find((t) => t.name === p.tool.name)!;
        assert.match(
          stub.description,
          /^NOT AVAILABLE: its definition failed weir's tool-poisoning scan/,
        );
        // The stub names the rule and the place, never the poisoned text.
        assert.ok(stub.description.includes(p.rule), stub.description);
        const original = p.tool.description as string | undefined;
        if (original) assert.ok(!stub.description.includes(original.slice(0, 30)));
        assert.ok(!JSON.stringify(stub).includes("IMPORTANT"));
      }
      const refused = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /^tool_unavailable: .*tool-poisoning scan/);
    } finally {
      await client.close();
    }
    const audit = weir.stderr().split("\n").filter((l) => l.includes("upstream_definition_scan"));
    assert.equal(audit.length, POISONED.length);
    const add = JSON.parse(audit.find((l) => l.includes(`"tool":"add"`))!);
    assert.equal(add.level, "error");
    assert.equal(add.served, false);
    assert.ok(add.errors.some((e: string) => /^hidden-markup:[0-9a-f]{16} \/description$/.test(e)));
    assert.ok(!weir.stderr().includes("~/.cursor"), "no poisoned text in weir's log");
    assert.ok(!weir.stderr().includes(`"event":"tool_call"`), "the refused call reached nothing");
  } finally {
    await weir.stop();
  }
});

Deno.test("scan corpus: the rug pull (clean first listing, poisoned later) is a stub from the next verification", async () => {
  for (const client of [v1Http, v2Http]) {
    const weir = await startWrapper([
      "--tool",
      "fact_of_the_day",
      // Only the server's list_changed (sent after the first call) makes weir list again.
      "--max-staleness",
      "10m",
      "--",
      ...run,
      LISTING,
      "rug",
    ]);
    try {
      const c = await client(weir.url);
      try {
        const first = await c.callTool({ name: "fact_of_the_day", arguments: { topic: "owls" } });
        assert.equal(textOf(first), "ran fact_of_the_day");
        const second = await c.callTool({ name: "fact_of_the_day", arguments: { topic: "owls" } });
        assert.equal(second.isError, true);
        assert.match(textOf(second), /^schema_drift: /);
        const [stub] = (await c.listTools()).tools as { name: string; description?: string }[];
        assert.match(stub.description ?? "", /^NOT AVAILABLE: /);
        assert.ok(!stub.description?.includes("credentials"));
      } finally {
        await c.close();
      }
      await until(() => weir.stderr().includes(`"event":"upstream_drift"`));
    } finally {
      await weir.stop();
    }
  }
});

Deno.test("scan corpus: the guardfile form replaces or accepts, and describe shows what was accepted", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/poisoned.mcp.kdl`;
  const server = [...run, LISTING, "poisoned"].map((w) => JSON.stringify(w)).join(" ");
  const write = (accept: string) =>
    Deno.writeTextFile(
      file,
      `wrap ward mcp poisoned {\n  mcp-server stdio ${server}\n` +
        `  proxy lint_text {\n    describe "Checks spelling."\n  }\n` +
        `  proxy notify${accept}\n  proxy summarize\n}\n`,
    );
  try {
    await write("");
    const first = await runWeir(["lint-upstream", file]);
    assert.equal(first.code, 1);
    const status = statuses(first.stdout);
    assert.equal(status.get("lint_text"), "present", "describe replaces the poisoned description");
    assert.equal(status.get("notify"), "flagged");
    assert.equal(status.get("summarize"), "flagged");
    const id = /accept-finding "(address:[0-9a-f]{16})" in proxy notify/.exec(first.stderr)?.[1];
    assert.ok(id, first.stderr);
    await write(` {\n    accept-finding "${id}" reason="our own hook"\n  }`);
    const second = await runWeir(["lint-upstream", file]);
    assert.equal(statuses(second.stdout).get("notify"), "present", second.stderr);
    assert.equal(statuses(second.stdout).get("summarize"), "flagged");
    assert.equal(second.code, 1);
    const described = await runWeir(["describe", file]);
    assert.match(
      described.stdout,
      new RegExp(
        `accepted finding ${id} in /inputSchema/properties/callback/default: our own hook`,
      ),
    );
    assert.match(described.stdout, /summarize {2}WITHHELD\n {2}reason: its definition failed/);
    // A malformed id is the file's error, offline.
    await write(` {\n    accept-finding "address:xyz"\n  }`);
    const lint = await runWeir(["lint", file]);
    assert.equal(lint.code, 1);
    assert.match(lint.stderr, /accept-finding "address:xyz" is not a finding id/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
