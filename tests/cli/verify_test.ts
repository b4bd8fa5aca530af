/**
 * `weir verify` through the shipped CLI with default flags, as a user runs it
 * in CI: it passes on every example guardfile (spec mode, and both files that
 * wrap an MCP server: server-everything started as the file says, GitHub's
 * from a saved definitions file); its JSON report is one document and its
 * JUnit report reads with a real JUnit reader (npm junit2json); a seed
 * replays a run exactly; the calls it makes cover every hostile form it
 * claims; and a command line it cannot run is a usage error naming the fix.
 *
 * That verify can fail is tests/cli/verify_faults_test.ts.
 */
import assert from "node:assert/strict";
import { parse as parseJunit } from "junit2json";
import fc from "fast-check";
import { runCli, tempGuardfile } from "../support/cli.ts";
import { cacheEverything, runWeir } from "../support/upstream_cli.ts";
import { casesFor, HOSTILE_TEXT } from "../../src/verify/cases.ts";

const SPEC_EXAMPLES = [
  "demo",
  "forgejo-issues",
  "github-contents",
  "github-issues",
  "open-meteo",
  "plausible-stats",
  "prometheus",
];

interface JsonReport {
  file: string;
  seed: number;
  ok: boolean;
  violations: number;
  tools: {
    tool: string;
    cases: number;
    requests: number;
    violations: { message: string; index: number }[];
    replay: string;
  }[];
}

async function verifyJson(
  args: string[],
): Promise<{ code: number; report: JsonReport; stderr: string }> {
  const r = await runCli(["verify", ...args, "--format", "json"]);
  return { code: r.code, report: JSON.parse(r.stdout), stderr: r.stderr };
}

for (const name of SPEC_EXAMPLES) {
  Deno.test(`weir verify guardfiles/${name}.mcp.kdl passes with default flags`, async () => {
    const r = await runCli(["verify", `guardfiles/${name}.mcp.kdl`]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^ok: \d+ calls over \d+ tools, no violation/m);
    // Every tool ran its 200 cases; the grants were reached, not only refused.
    const lines = r.stdout.split("\n").filter((l) => /^ {2}\S+ +200 cases/.test(l));
    assert.ok(lines.length >= 2, r.stdout);
    const reached = lines.map((l) => Number(/(\d+) requests/.exec(l)![1]));
    assert.ok(reached.some((n) => n >= 20), `some tool's calls reached the stand-in: ${r.stdout}`);
  });
}

/** The run passed: exit 0 and no violation in any tool (each one printed when not). */
function passed(code: number, report: JsonReport, stderr: string): void {
  const found = report.tools.flatMap((t) => t.violations.map((v) => `${t.tool}: ${v.message}`));
  assert.deepEqual(found, [], stderr);
  assert.equal(code, 0, stderr);
  assert.equal(report.ok, true);
}

Deno.test("weir verify guardfiles/github-mcp.mcp.kdl --definitions F: a stand-in lists GitHub's tools", async () => {
  const { code, report, stderr } = await verifyJson([
    "guardfiles/github-mcp.mcp.kdl",
    "--definitions",
    "tests/fixtures/github_mcp_tools.json",
  ]);
  passed(code, report, stderr);
  const byTool = Object.fromEntries(report.tools.map((t) => [t.tool, t]));
  assert.deepEqual(Object.keys(byTool).sort(), [
    "add_issue_comment",
    "get_issue",
    "list_issues",
    "merge_pull_request",
    "weir_info",
  ]);
  assert.equal(byTool.merge_pull_request.requests, 0, "the withheld tool reached nothing");
  assert.ok(byTool.get_issue.requests > 20, "get_issue calls reached the stand-in");
  // add_issue_comment needs a person: only the 2026-07-28 calls that were asked reach it.
  assert.ok(byTool.add_issue_comment.requests > 0);
  // Without the definitions and without the token, verify says how to go on.
  const r = await runCli(["verify", "guardfiles/github-mcp.mcp.kdl"], {
    env: { GITHUB_TOKEN: "" },
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /give them with --definitions F/);
});

Deno.test("weir verify: a wrap file's pins (literal and secret), renames and bounds hold", async () => {
  const { code, report, stderr } = await verifyJson([
    "tests/fixtures/verify_wrap_pins.mcp.kdl",
    "--definitions",
    "tests/fixtures/verify_wrap_tools.json",
  ]);
  passed(code, report, stderr);
  const find = report.tools.find((t) => t.tool === "find")!;
  assert.ok(find.requests > 40, JSON.stringify(find));
  assert.match(find.replay, / --definitions tests\/fixtures\/verify_wrap_tools\.json$/);
});

Deno.test({
  name:
    "weir verify guardfiles/everything.mcp.kdl: the server's own definitions, served by a stand-in",
  // npx starts server-everything once to list its tools (as weir describe does).
  sanitizeResources: false,
  fn: async () => {
    await cacheEverything();
    // All permissions, as the binary has them: verify starts the server (npx) to list its tools.
    const r = await runWeir(["verify", "guardfiles/everything.mcp.kdl", "--format", "json"]);
    const { code, stderr } = r;
    const report = JSON.parse(r.stdout) as JsonReport;
    passed(code, report, stderr);
    const byTool = Object.fromEntries(report.tools.map((t) => [t.tool, t]));
    assert.equal(byTool["get-env"].requests, 0, "get-env is withheld");
    assert.ok(byTool.echo.requests > 50, JSON.stringify(byTool.echo));
  },
});

Deno.test("weir verify --format json and junit: one JSON document; a JUnit file a JUnit reader reads", async () => {
  const demo = (format: string) =>
    runCli([
      "verify",
      "guardfiles/demo.mcp.kdl",
      "--cases",
      "20",
      "--seed",
      "11",
      "--format",
      format,
    ]);
  const json = await demo("json");
  assert.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as JsonReport;
  assert.equal(report.seed, 11);
  assert.equal(report.ok, true);
  assert.equal(report.violations, 0);
  assert.deepEqual(report.tools.map((t) => t.cases), report.tools.map(() => 20));
  assert.match(
    report.tools[0].replay,
    /^weir verify guardfiles\/demo\.mcp\.kdl --seed=11 --cases 20 --tool /,
  );
  const junit = await demo("junit");
  assert.equal(junit.code, 0, junit.stderr);
  // deno-lint-ignore no-explicit-any
  const parsed = await parseJunit(junit.stdout) as any;
  assert.equal(parsed.name, "weir verify");
  assert.equal(parsed.tests, report.tools.length);
  assert.equal(parsed.failures, 0);
  const suite = parsed.testsuite[0];
  assert.equal(suite.name, "guardfiles/demo.mcp.kdl");
  assert.deepEqual(
    suite.testcase.map((c: { name: string }) => c.name),
    report.tools.map((t) => t.tool),
  );
  assert.equal(suite.testcase.filter((c: { failure?: unknown }) => c.failure).length, 0);
});

Deno.test("weir verify --seed replays a run exactly", async () => {
  const run = () => verifyJson(["guardfiles/github-issues.mcp.kdl", "--cases", "40", "--seed=-77"]);
  const [a, b] = [await run(), await run()];
  assert.equal(a.code, 0, a.stderr);
  const strip = (r: JsonReport) => ({ ...r, durationMs: 0 });
  assert.deepEqual(strip(a.report), strip(b.report));
  // Another seed draws other calls (the request counts differ somewhere).
  const c = await verifyJson(["guardfiles/github-issues.mcp.kdl", "--cases", "40", "--seed", "78"]);
  assert.notDeepEqual(c.report.tools.map((t) => t.requests), a.report.tools.map((t) => t.requests));
});

Deno.test("the generated calls cover every hostile form verify claims, for a tool with path, query and body", () => {
  const schema = {
    type: "object",
    properties: {
      board: { type: "string", description: "Matches demo-*." },
      id: { type: "integer", minimum: 1, maximum: 50 },
      title: { type: "string", maxLength: 20 },
      labels: { type: "array", items: { type: "string" }, maxItems: 3 },
    },
    required: ["board", "id"],
  };
  const cases = casesFor(
    fc,
    { name: "get_ticket", inputSchema: schema, restricts: { board: [["demo-*"]] } },
    ["get_ticket", "delete_ticket"],
    200,
    1234,
  );
  assert.equal(cases.length, 200);
  const kinds = cases.map((c) => c.kind).join("\n");
  for (
    const what of [
      "valid",
      "dot segment",
      "separator",
      "control character",
      "metacharacter",
      "ill-formed text",
      "number spelling",
      "number beyond a double",
      "deep nesting",
      "wrong type",
      "oversize",
      "outside the bounds",
      "a twin of",
      "an extra key",
      "arguments not an object",
      "another name",
    ]
  ) {
    assert.ok(
      kinds.includes(what),
      `no "${what}" case among 200: ${[...new Set(cases.map((c) => c.kind))]}`,
    );
  }
  assert.deepEqual(
    new Set(cases.map((c) => c.via)),
    new Set(["mcp 2026-07-28", "mcp 2025-11-25", "stdio 2025-11-25", "tool API"]),
  );
  // Valid cases keep the restrict and the bounds; every case is JSON a client can send.
  for (const c of cases) {
    const args = JSON.parse(c.args);
    if (c.kind !== "valid") continue;
    assert.match(args.board, /^demo-[^/]*$/);
    assert.ok(Number.isInteger(args.id) && args.id >= 1 && args.id <= 50, c.args);
  }
  assert.ok(HOSTILE_TEXT.some(([what]) => what === "dot segment"));
  // The same seed draws the same calls.
  assert.deepEqual(
    casesFor(fc, { name: "get_ticket", inputSchema: schema }, [], 50, 9),
    casesFor(fc, { name: "get_ticket", inputSchema: schema }, [], 50, 9),
  );
});

Deno.test("weir verify: usage errors exit 2 naming the fix; an AWS policy is refused with why", async () => {
  for (
    const [args, message] of [
      [["guardfiles/demo.mcp.kdl", "--format", "xml"], /--format must be text, json or junit/],
      [["guardfiles/demo.mcp.kdl", "--cases", "0"], /--cases takes 1 to 100000/],
      [["guardfiles/demo.mcp.kdl", "--seed", "abc"], /--seed takes the integer a report printed/],
      [
        ["guardfiles/demo.mcp.kdl", "--tool", "nope"],
        /--tool nope: not a tool of .*its tools: close_ticket/,
      ],
      [
        ["guardfiles/demo.mcp.kdl", "--definitions", "x.json"],
        /--definitions is for a guardfile that wraps/,
      ],
      [[], /verify: takes exactly one FILE/],
    ] as [string[], RegExp][]
  ) {
    const r = await runCli(["verify", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  const aws = await runCli(["verify", "guardfiles/ssm-forgejo-token.mcp.kdl"]);
  assert.equal(aws.code, 1);
  assert.match(aws.stderr, /is an AWS policy/);
  const broken = await runCli([
    "verify",
    await tempGuardfile("wrap ward mcp t {\n  auth none\n}\n"),
  ]);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /missing "base-url"/);
});

Deno.test("weir verify reads none of the operator's secrets: a credential in the environment is not what is sent", async () => {
  const secret = "real-secret-token-0123456789";
  const r = await runCli([
    "verify",
    "guardfiles/demo.mcp.kdl",
    "--cases",
    "30",
    "--seed",
    "3",
    "--format",
    "json",
  ], {
    env: { WEIR_DEMO_TOKEN: secret, WEIR_DEMO_BASE_URL: "https://example.invalid" },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret));
  assert.ok(JSON.parse(r.stdout).tools.some((t: { requests: number }) => t.requests > 0));
});

Deno.test("weir verify needs no rate-limit store URL: the limit is lifted (spec and wrap files)", async () => {
  const store = `rate-limit "60/1m" {\n  store redis env "WEIR_TEST_UNSET_STORE_URL"\n}\n`;
  const spec = await tempGuardfile(
    store + `wrap ward mcp limited {\n  base-url "https://api.example.com"\n  auth none\n` +
      `  can get thing { path "/things/{id}" }\n}\n`,
  );
  const wrap = await tempGuardfile(
    store + await Deno.readTextFile("tests/fixtures/verify_wrap_pins.mcp.kdl"),
  );
  const env = { ...Deno.env.toObject() };
  delete env.WEIR_TEST_UNSET_STORE_URL;
  for (
    const args of [[spec], [wrap, "--definitions", "tests/fixtures/verify_wrap_tools.json"]]
  ) {
    const r = await runCli(["verify", ...args, "--cases", "20", "--seed", "7"], { env });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /note: the rate-limit is lifted/);
    assert.doesNotMatch(r.stderr, /WEIR_TEST_UNSET_STORE_URL/);
  }
});

Deno.test("weir verify says a sql grant is not verified whole (no database), in every format; an HTTP grant beside it is", async () => {
  const file = await tempGuardfile(
    `wrap ward mcp shop {\n  base-url "https://api.example.com"\n  auth none\n` +
      `  database pgx { value env "SHOP_DSN" }\n` +
      `  can list orders {\n    sql {\n` +
      `      statement "SELECT id FROM orders WHERE customer = $1"\n` +
      `      param "customer" type="string" required=#true\n    }\n  }\n` +
      `  can get thing { path "/things/{id}" }\n}\n`,
  );
  const text = await runCli(["verify", file, "--cases", "20", "--seed", "7"]);
  assert.equal(text.code, 0, `${text.stdout}\n${text.stderr}`);
  assert.match(text.stdout, /list_orders .* ok, NOT VERIFIED WHOLE \(sql: .*no database\)/);
  assert.match(text.stdout, /get_thing .* ok$/m);
  assert.match(text.stdout, /^ok: .*; 1 tool\(s\) not verified whole/m);
  const json = await runCli(["verify", file, "--cases", "20", "--seed", "7", "--format", "json"]);
  const tools =
    (JSON.parse(json.stdout) as { tools: { tool: string; unchecked?: string }[] }).tools;
  assert.match(tools.find((t) => t.tool === "list_orders")?.unchecked ?? "", /no database/);
  assert.equal(tools.find((t) => t.tool === "get_thing")?.unchecked, undefined);
  const junit = await runCli(["verify", file, "--cases", "20", "--seed", "7", "--format", "junit"]);
  assert.match(junit.stdout, /not verified whole: sql/);
});
