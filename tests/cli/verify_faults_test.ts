/**
 * `weir verify` can fail: each test plants one fault in a copy of weir (a
 * mutated module of the guard, the copy's own `cli.ts` run as a user runs
 * weir) and shows verify reports it, with the seed and the command that
 * replays it, and exits 1; the same file verified by the unmutated weir
 * passes. The faults are the kinds a guard must never have: a path value sent
 * unencoded, a pin skipped (spec mode, and a wrapped call's), a secret echoed
 * back, a confirmation skipped, and with token exchange the caller's own token
 * sent upstream, one caller's exchanged token sent for another, or one caller's
 * kept answer given to another.
 *
 * A mutation names the code it changes by a pattern; when the code moves (a
 * refactor), the test fails saying which mutation lost its target, rather
 * than passing without a fault planted.
 */
import assert from "node:assert/strict";
import { parse as parseJunit } from "junit2json";
import { ROOT, runCommand, tempGuardfile } from "../support/cli.ts";

interface Mutation {
  /** What the fault is, in words. */
  fault: string;
  /** Every `[file, pattern, replacement]` applied; each pattern must match. */
  edits: [string, RegExp, string][];
}

const MUTATIONS: Record<string, Mutation> = {
  callerTokenUpstream: {
    fault: "the caller's own token sent upstream instead of the exchanged one",
    edits: [[
      "src/oauth/upstream_credential.ts",
      /return token\.accessToken;/,
      "return held.token;",
    ]],
  },
  answerShared: {
    fault: "a kept answer shared between callers though each has their own identity upstream",
    edits: [[
      "src/guard/pipeline.ts",
      /\$\{ResponseCache\.key\(call\.args\)\}\\n\$\{ctx\.caller \?\? ""\}/,
      "${ResponseCache.key(call.args)}",
    ]],
  },
  exchangeShared: {
    fault: "exchanged tokens kept per scope set only, shared between callers",
    edits: [[
      "src/oauth/exchange_cache.ts",
      /await sha256Hex\(subjectToken\),/,
      '"",',
    ]],
  },
  unencoded: {
    fault: "a path value sent without percent-encoding",
    edits: [[
      "src/guard/request.ts",
      /return encodeURIComponent\(value\);/,
      "return value;",
    ]],
  },
  pinSkipped: {
    fault: "a pin skipped",
    edits: [[
      "src/guard/outgoing.ts",
      /for \(const pin of forTool\(guardfile\.controls\.pins, grant\.tool\) \?\? \[\]\)/,
      "for (const pin of [] as QueryPin[])",
    ]],
  },
  secretEchoed: {
    fault: "a secret echoed (redaction off)",
    edits: [[
      "src/guard/secrets.ts",
      /text\(text: string\): string \{\n/,
      "text(text: string): string {\n    return text;\n",
    ]],
  },
  wrapPinSkipped: {
    fault: "a wrapped tool's pin skipped",
    edits: [[
      "src/mcp_upstream/overrides.ts",
      /for \(const \[name, value\] of pins\) \{\n\s*define\(sent, name, value\);/,
      "for (const [name, value] of pins) {",
    ]],
  },
  confirmSkipped: {
    fault: "a confirmation skipped",
    edits: [[
      "src/guard/confirm.ts",
      /async confirm\([^)]*\): Promise<void> \{\n/,
      "$&    if (tool) return;\n",
    ]],
  },
  formBracketsDropped: {
    fault: "a form array written without the brackets its grant declares",
    edits: [[
      "src/guard/form.ts",
      /if \(encoding\.arrays === "brackets"\) walk\(`\$\{name\}\[\]`, item, depth \+ 1, at\);/,
      'if (encoding.arrays === "brackets") walk(name, item, depth, at);',
    ]],
  },
  headerAltered: {
    fault: "a header input's value altered",
    edits: [[
      "src/guard/request.ts",
      /headers\.push\(\[input\.wire, text\]\);/,
      "headers.push([input.wire, text.toUpperCase()]);",
    ]],
  },
};

/** A copy of weir (what `weir verify` runs) with one mutation applied. */
async function mutatedCopy(mutation: Mutation): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "weir-mutant-" });
  for (const entry of ["cli.ts", "mod.ts", "deno.json", "deno.lock", "src"]) {
    await new Deno.Command("cp", { args: ["-R", `${ROOT}${entry}`, `${dir}/${entry}`] }).output();
  }
  for (const [file, pattern, replacement] of mutation.edits) {
    const path = `${dir}/${file}`;
    const text = await Deno.readTextFile(path);
    assert.match(
      text,
      pattern,
      `the mutation "${mutation.fault}" lost its target in ${file}: the code moved; point the ` +
        `pattern at the code that now does this`,
    );
    await Deno.writeTextFile(path, text.replace(pattern, replacement));
  }
  return dir;
}

async function verify(root: string, args: string[]) {
  return await runCommand(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      "--config",
      `${root}/deno.json`,
      `${root}/cli.ts`,
      "verify",
      ...args,
    ],
    cwd: ROOT,
  });
}

const CONFIRM_FILE = Deno.readTextFileSync(`${ROOT}guardfiles/demo.mcp.kdl`).replace(
  "instructions {",
  `confirm "close_ticket" message="Close it?"\ninstructions {`,
);

/** A spec-mode file with token exchange (verify's stand-in identity provider is its issuer). */
const EXCHANGE = Deno.readTextFileSync(`${ROOT}tests/fixtures/verify_exchange.mcp.kdl`);

const CASES: {
  mutation: keyof typeof MUTATIONS;
  file: () => Promise<string>;
  tool: string;
  expect: RegExp;
  /** More arguments (a wrap file's definitions). */
  extra?: string[];
}[] = [
  {
    mutation: "callerTokenUpstream",
    file: () => Promise.resolve("tests/fixtures/verify_exchange.mcp.kdl"),
    tool: "get_ticket",
    expect: /(alice|bob)'s own access token reached the upstream/,
  },
  {
    mutation: "answerShared",
    file: () => tempGuardfile(`${EXCHANGE}cache "get_ticket" ttl="15m"\n`),
    tool: "get_ticket",
    expect: /(alice|bob) was answered with the answer kept for (alice|bob)'s call/,
  },
  {
    mutation: "exchangeShared",
    file: () => Promise.resolve("tests/fixtures/verify_exchange.mcp.kdl"),
    tool: "get_ticket",
    expect: /(alice|bob)'s call carried the token exchanged for (alice|bob)/,
  },
  {
    mutation: "unencoded",
    file: () => Promise.resolve("guardfiles/demo.mcp.kdl"),
    tool: "get_ticket",
    expect: /path value "(board|id)"|does not fill the grant's template|query "[^"]*"=/,
  },
  {
    mutation: "pinSkipped",
    file: () => Promise.resolve("guardfiles/plausible-stats.mcp.kdl"),
    tool: "get_aggregate",
    expect: /query "site_id" is missing or altered/,
  },
  {
    mutation: "wrapPinSkipped",
    file: () => Promise.resolve("tests/fixtures/verify_wrap_pins.mcp.kdl"),
    tool: "find",
    expect: /pinned argument "(org|token)" is missing/,
    extra: ["--definitions", "tests/fixtures/verify_wrap_tools.json"],
  },
  {
    mutation: "secretEchoed",
    file: () => Promise.resolve("guardfiles/demo.mcp.kdl"),
    tool: "list_ticket",
    expect: /the credential \([^)]*\) is in the answer/,
  },
  {
    mutation: "formBracketsDropped",
    file: () => Promise.resolve("guardfiles/stripe-billing.mcp.kdl"),
    tool: "create_customer",
    expect: /form field "preferred_locales" is repeated under arrays="brackets"/,
  },
  {
    mutation: "headerAltered",
    file: () => Promise.resolve("guardfiles/stripe-billing.mcp.kdl"),
    tool: "create_invoice-item",
    expect: /header Idempotency-Key arrived as "[^"]*", sent as "[^"]*"/,
  },
  {
    mutation: "confirmSkipped",
    file: () => tempGuardfile(CONFIRM_FILE),
    tool: "close_ticket",
    expect: /the call was sent upstream without asking a person \(confirm\)/,
  },
];

for (const c of CASES) {
  Deno.test(`weir verify reports a planted fault: ${MUTATIONS[c.mutation].fault}, with its seed`, async () => {
    const file = await c.file();
    const args = [file, "--cases", "60", "--seed", "4242", "--tool", c.tool, ...(c.extra ?? [])];
    const root = await mutatedCopy(MUTATIONS[c.mutation]);
    try {
      const faulty = await verify(root, args);
      assert.equal(
        faulty.code,
        1,
        `verify must fail on the mutant:\n${faulty.stdout}\n${faulty.stderr}`,
      );
      assert.match(faulty.stdout, c.expect, faulty.stdout);
      assert.match(faulty.stdout, /seed 4242/);
      assert.match(
        faulty.stdout,
        new RegExp(`replay: weir verify \\S+ --seed=4242 --cases 60 --tool ${c.tool}`),
      );
      assert.match(faulty.stdout, /^FAILED: \d+ violation/m);
      // The JUnit report says the same to a JUnit reader: the tool's test case failed.
      const junit = await verify(root, [...args, "--format", "junit"]);
      assert.equal(junit.code, 1);
      // deno-lint-ignore no-explicit-any
      const parsed = await parseJunit(junit.stdout) as any;
      assert.equal(parsed.failures, 1);
      const failure = parsed.testsuite[0].testcase[0].failure[0];
      assert.match(failure.message, /violation\(s\); replay: weir verify .* --seed=4242 /);
      assert.match(failure.inner, c.expect);
      // The same run on weir as it is: no violation.
      const clean = await verify(ROOT.replace(/\/$/, ""), args);
      assert.equal(clean.code, 0, `${clean.stdout}\n${clean.stderr}`);
      assert.match(clean.stdout, /^ok: 60 calls over 1 tools, no violation/m);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
