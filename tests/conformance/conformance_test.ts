/**
 * The official MCP conformance suite (`npm:@modelcontextprotocol/conformance`,
 * pinned in deno.json), every server scenario in one run of its CLI, against
 * two servers: the fixture server (`tests/fixtures/conformance_server.ts`,
 * built only on `mod.ts`), and the shipped CLI, `weir serve` of a plain
 * guardfile (`tests/fixtures/conformance.mcp.kdl`) with default flags over
 * HTTP, as a user starts it.
 *
 * Every scenario must pass except those in `expected-failures.json` (fixture
 * server) or `expected-failures-serve.json` (the CLI), each listed with the
 * reason it cannot apply; and each of those must still fail, so the list
 * stays honest. The suite's own baseline
 * check (`--expected-failures`, exit code) and this test's reading of every
 * scenario's `checks.json` must agree, and every response the suite received
 * must conform to the official schema.
 */
import assert from "node:assert/strict";
import { createConformanceHandler } from "../fixtures/conformance_server.ts";
import { listen } from "../support/listen.ts";
import { tapHandler, type WireLog } from "../support/wire.ts";
import { serveHttp } from "../support/cli.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;
const EXPECTED = new URL("./expected-failures.json", import.meta.url);
const EXPECTED_SERVE = new URL("./expected-failures-serve.json", import.meta.url);
const GUARDFILE = new URL("../fixtures/conformance.mcp.kdl", import.meta.url).pathname;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
  details?: unknown;
}

async function suiteSpecifier(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(CONFIG));
  const specifier = config.imports?.["@modelcontextprotocol/conformance"];
  assert.match(
    specifier,
    /^npm:@modelcontextprotocol\/conformance@\d+\.\d+\.\d+$/,
    "pinned in deno.json",
  );
  return specifier;
}

/** Run the suite's CLI (bounded: killed if it runs for 10 minutes). */
async function conformance(args: string[], cwd: string) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--quiet", "--config", CONFIG, await suiteSpecifier(), ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(600_000),
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

/** The server scenarios the suite lists, by name. */
function scenarioNames(listing: string): string[] {
  const server = listing.split(/\n\s*\n/).find((block) => block.startsWith("Server scenarios"));
  assert.ok(server, `no server scenarios in:\n${listing}`);
  return [...server.matchAll(/^\s+- ([a-z0-9-]+) \[/gm)].map((m) => m[1]);
}

/** Read every `server-<scenario>-<timestamp>/checks.json` the run wrote. */
async function resultsIn(dir: string): Promise<Map<string, Check[]>> {
  const results = new Map<string, Check[]>();
  for await (const entry of Deno.readDir(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry.name);
    if (!entry.isDirectory || !m) continue;
    results.set(m[1], JSON.parse(await Deno.readTextFile(`${dir}/${entry.name}/checks.json`)));
  }
  return results;
}

/** The suite's own rule (its `evaluateBaseline`): any FAILURE or WARNING fails a scenario. */
const failed = (checks: Check[]) =>
  checks.some((c) => c.status === "FAILURE" || c.status === "WARNING");

/**
 * Run every server scenario against `url` and hold the results to `expectedFile`.
 * @returns the scenarios held to passing
 */
async function runSuite(url: string, expectedFile: URL, work: string): Promise<string[]> {
  const expected: Record<string, string> = JSON.parse(await Deno.readTextFile(expectedFile)).server;
  for (const [scenario, reason] of Object.entries(expected)) {
    assert.ok(reason.length > 20, `expected failure ${scenario} needs a reason`);
  }
  const listing = await conformance(["list", "--server"], work);
  assert.equal(listing.code, 0, listing.stderr);
  const scenarios = scenarioNames(listing.stdout);
  assert.ok(scenarios.includes("dns-rebinding-protection"));
  for (const name of Object.keys(expected)) {
    assert.ok(scenarios.includes(name), `expected failure ${name} is not a scenario of the suite`);
  }

  // The suite reads its baseline as YAML; JSON is YAML.
  const baseline = `${work}/expected-failures.yml`;
  await Deno.writeTextFile(baseline, JSON.stringify({ server: Object.keys(expected) }));
  const run = await conformance([
    "server",
    "--url",
    url,
    "--suite",
    "all",
    "--expected-failures",
    baseline,
    "--output-dir",
    `${work}/results`,
  ], work);
  const log = `--- stdout\n${run.stdout.slice(-6000)}\n--- stderr\n${run.stderr.slice(-3000)}`;

  const results = await resultsIn(`${work}/results`);
  assert.deepEqual([...results.keys()].sort(), [...scenarios].sort(), `every scenario ran\n${log}`);
  const unexpected = [...results].filter(([name, checks]) => failed(checks) && !(name in expected));
  assert.deepEqual(
    unexpected.map(([name, checks]) => ({
      name,
      problems: checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING")
        .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? JSON.stringify(c.details)}`),
    })),
    [],
    "scenarios that must pass",
  );
  const stale = Object.keys(expected).filter((name) => !failed(results.get(name) ?? []));
  assert.deepEqual(stale, [], "expected failures that now pass: remove them from the list");

  const dns = results.get("dns-rebinding-protection")!;
  assert.deepEqual(dns.map((c) => [c.id, c.status]).sort(), [
    ["localhost-host-rebinding-rejected", "SUCCESS"],
    ["localhost-host-valid-accepted", "SUCCESS"],
  ]);
  assert.equal(run.code, 0, `the suite's own baseline check disagrees\n${log}`);
  return scenarios.filter((name) => !(name in expected));
}

Deno.test({
  name: "the official conformance suite passes every scenario that applies (fixture server)",
  fn: async () => {
    const work = await Deno.makeTempDir({ prefix: "weir-conformance-" });
    let wire: WireLog | undefined;
    const server = listen((port) => {
      const tap = tapHandler(createConformanceHandler(port));
      wire = tap.log;
      return tap.handler;
    });
    try {
      const passed = await runSuite(`${server.origin}/mcp`, EXPECTED, work);
      assert.ok(passed.length >= 20, `only ${passed.length} scenarios are held to passing`);
      assert.deepEqual(
        wire!.problems,
        [],
        "every response the suite received conforms to the schema",
      );
      assert.ok((wire!.checked.get("initialize") ?? 0) >= 20, "the tap saw the suite's traffic");
    } finally {
      await server.close();
      await Deno.remove(work, { recursive: true });
    }
  },
});

Deno.test("the official conformance suite passes against `weir serve FILE --http` with default flags", async () => {
  const work = await Deno.makeTempDir({ prefix: "weir-conformance-serve-" });
  const served = await serveHttp(GUARDFILE);
  try {
    const passed = await runSuite(`${served.url}/mcp`, EXPECTED_SERVE, work);
    for (
      const name of [
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-error",
        "resources-list",
        "resources-read-text",
        "prompts-list",
        "prompts-get-simple",
        "prompts-get-with-args",
        "dns-rebinding-protection",
      ]
    ) {
      assert.ok(passed.includes(name), `${name} is held to passing against the CLI`);
    }
  } finally {
    assert.equal(await served.stop(), 0);
    await Deno.remove(work, { recursive: true });
  }
});
