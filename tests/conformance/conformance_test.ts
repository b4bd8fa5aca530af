/**
 * The official MCP conformance suite (`npm:@modelcontextprotocol/conformance`,
 * the newest, pinned in deno.json; it needs Node 22, so its CLI runs under
 * Deno), every scenario each spec revision requires (`--requirements
 * 2025-11-25` and `--requirements 2026-07-28`), against two servers: the
 * shipped CLI, `weir serve` of a plain guardfile (tests/fixtures/conformance.mcp.kdl)
 * with default flags over HTTP, as a user starts it; and the fixture server
 * (tests/fixtures/conformance_server.ts), a host built only on `mod.ts`.
 *
 * Every scored scenario must pass except those tests/conformance/expected.json
 * lists, each with the reason it cannot apply; each of those must still fail,
 * so the list stays honest. The suite's own baseline check (its exit code with
 * `--expected-failures`) must agree, and docs/conformance.md must list every
 * scored scenario of both revisions as pass or not applicable, with the same
 * reasons. Scenarios the suite runs but never scores (extensions, pending
 * ones) are reported by it and held to nothing here.
 */
import assert from "node:assert/strict";
import { createConformanceHandler } from "../fixtures/conformance_server.ts";
import { listen } from "../support/listen.ts";
import { tapHandler, type WireLog } from "../support/wire.ts";
import { serveHttp } from "../support/cli.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;
const EXPECTED = new URL("./expected.json", import.meta.url);
const DOC = new URL("../../docs/conformance.md", import.meta.url);
const GUARDFILE = new URL("../fixtures/conformance.mcp.kdl", import.meta.url).pathname;
const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
type Revision = typeof REVISIONS[number];
type Server = "serve" | "library";

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
  details?: unknown;
}

const expected: Record<Server, Record<Revision, Record<string, string>>> = JSON.parse(
  await Deno.readTextFile(EXPECTED),
);

async function suiteSpecifier(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(CONFIG));
  const specifier = config.scopes?.["./tests/"]?.["@modelcontextprotocol/conformance"];
  assert.match(
    specifier,
    /^npm:@modelcontextprotocol\/conformance@0\.2\.\d+(-[a-z]+\.\d+)?$/,
    "pinned in deno.json (the tests' scope) to 0.2.x",
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

/** The scored server scenarios a revision requires, from `list --server --requirements`. */
async function scoredScenarios(revision: Revision, work: string): Promise<string[]> {
  const listing = await conformance(["list", "--server", "--requirements", revision], work);
  assert.equal(listing.code, 0, listing.stderr);
  const scored = listing.stdout.split(/\n\s*\n/).find((block) =>
    block.startsWith("Server scenarios")
  );
  assert.ok(scored, `no server scenarios in:\n${listing.stdout}`);
  const names = [...scored.matchAll(/^\s+- ([a-z0-9-]+)\s*$/gm)].map((m) => m[1]);
  assert.ok(names.length >= 25, `${revision}: only ${names.length} scored scenarios`);
  return names;
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
 * Run every scenario `revision` requires against `url` and hold the scored
 * ones to `server`'s expected failures.
 * @returns the scenarios held to passing
 */
async function runSuite(
  url: string,
  server: Server,
  revision: Revision,
  work: string,
): Promise<string[]> {
  const notApplicable = expected[server][revision];
  const scenarios = await scoredScenarios(revision, work);
  for (const [scenario, reason] of Object.entries(notApplicable)) {
    assert.ok(reason.length > 20, `${server} ${revision} ${scenario} needs a reason`);
    assert.ok(scenarios.includes(scenario), `${scenario} is not a scored ${revision} scenario`);
  }
  // The suite reads its baseline as YAML; JSON is YAML.
  const baseline = `${work}/expected-failures-${revision}.yml`;
  await Deno.writeTextFile(baseline, JSON.stringify({ server: Object.keys(notApplicable) }));
  const out = `${work}/results-${revision}`;
  const run = await conformance([
    "server",
    "--url",
    url,
    "--requirements",
    revision,
    "--expected-failures",
    baseline,
    "--output-dir",
    out,
  ], work);
  const log = `--- stdout\n${run.stdout.slice(-6000)}\n--- stderr\n${run.stderr.slice(-3000)}`;

  const results = await resultsIn(out);
  const missing = scenarios.filter((name) => !results.has(name));
  assert.deepEqual(missing, [], `every scored scenario ran\n${log}`);
  const unexpected = scenarios.filter((name) =>
    !(name in notApplicable) && failed(results.get(name)!)
  );
  assert.deepEqual(
    unexpected.map((name) => ({
      name,
      problems: results.get(name)!.filter((c) => c.status === "FAILURE" || c.status === "WARNING")
        .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? JSON.stringify(c.details)}`),
    })),
    [],
    `${server} ${revision}: scenarios that must pass`,
  );
  const stale = Object.keys(notApplicable).filter((name) => !failed(results.get(name)!));
  assert.deepEqual(stale, [], `${server} ${revision}: listed as not applicable, yet they pass`);
  assert.equal(run.code, 0, `the suite's own baseline check disagrees\n${log}`);
  return scenarios.filter((name) => !(name in notApplicable));
}

Deno.test("docs/conformance.md lists every scored scenario of both revisions, pass or not applicable with the reason", async () => {
  const work = await Deno.makeTempDir({ prefix: "weir-conformance-doc-" });
  try {
    const doc = await Deno.readTextFile(DOC);
    const suite = await suiteSpecifier();
    assert.ok(doc.includes(suite.replace(/^npm:/, "")), `the page names ${suite}`);
    for (const revision of REVISIONS) {
      const section = doc.split(/^## /m).find((s) =>
        s.startsWith(`\`--requirements ${revision}\``)
      );
      assert.ok(section, `a section for ${revision}`);
      const rows = new Map(
        [...section.matchAll(/^\| `([a-z0-9-]+)` +\| (.+?) +\| (.+?) +\|$/gm)].map((m) => [
          m[1],
          { serve: m[2], library: m[3] },
        ]),
      );
      const scenarios = await scoredScenarios(revision, work);
      assert.deepEqual([...rows.keys()].sort(), [...scenarios].sort(), `${revision} rows`);
      for (const name of scenarios) {
        for (const server of ["serve", "library"] as const) {
          const reason = expected[server][revision][name];
          assert.equal(
            rows.get(name)![server],
            reason === undefined ? "pass" : `not applicable: ${reason}`,
            `${revision} ${name} (${server})`,
          );
        }
      }
    }
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

for (const revision of REVISIONS) {
  Deno.test(`the official conformance suite (--requirements ${revision}) passes every scenario that applies against \`weir serve FILE --http\` with default flags`, async () => {
    const work = await Deno.makeTempDir({ prefix: "weir-conformance-serve-" });
    const served = await serveHttp(GUARDFILE);
    try {
      const passed = await runSuite(`${served.url}/mcp`, "serve", revision, work);
      const held = revision === "2025-11-25"
        ? ["server-initialize", "tools-call-error", "resources-read-text", "prompts-get-with-args"]
        : ["caching", "input-required-result-tampered-state", "input-required-result-result-type"];
      for (const name of ["tools-list", "dns-rebinding-protection", ...held]) {
        assert.ok(passed.includes(name), `${name} is held to passing against the CLI`);
      }
    } finally {
      assert.equal(await served.stop(), 0);
      await Deno.remove(work, { recursive: true });
    }
  });

  Deno.test(`the official conformance suite (--requirements ${revision}) passes every scenario that applies against a host built on mod.ts`, async () => {
    const work = await Deno.makeTempDir({ prefix: "weir-conformance-" });
    let wire: WireLog | undefined;
    const server = listen((port) => {
      const tap = tapHandler(createConformanceHandler(port));
      wire = tap.log;
      return tap.handler;
    });
    try {
      const passed = await runSuite(`${server.origin}/mcp`, "library", revision, work);
      assert.ok(passed.length >= 19, `only ${passed.length} scenarios are held to passing`);
      assert.deepEqual(
        wire!.problems,
        [],
        "every response the suite received conforms to the schema",
      );
    } finally {
      await server.close();
      await Deno.remove(work, { recursive: true });
    }
  });
}
