/**
 * Every guardfile message names its node, its position and a fix, and
 * leaks nothing of the implementation (`undefined`, `[object Object]`):
 * the repository's guardfiles, mutated node by node (drop, duplicate, rename,
 * change arguments and properties, add children, move nodes to the top),
 * through the loaders `lint` and `serve` share, and a few through the CLI.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { formatDiagnostic, parseGuardfile } from "../../src/guard/mod.ts";
import type { Diagnostic } from "../../src/guardfile/diagnostics.ts";
import { parseAwsPolicy } from "../../src/guardfile/aws.ts";
import { compileJmesPath } from "../../src/guardfile/jmespath.ts";
import { mutatedGuardfile, seedDocuments } from "../support/kdl_fuzz.ts";
import { runCli, tempGuardfile } from "../support/cli.ts";

/** Text of the implementation, never of the author's file. */
const LEAK = /\bundefined\b|\[object \w+\]|\bNaN\b/;

/**
 * A fix: an imperative at the start of a clause (`; remove it`, `: write
 * ...`, `, or use ...`), a "did you mean", or an example to copy.
 */
const FIX =
  /(?:^|[;:,(.]\s*|\bor\s+|\band\s+|\bthen\s+|\bto\s+)(?:add|remove|use|rename|give|declare|write|keep|quote|fix|drop|change|state|move|merge|say|send|split|choose|make|replace|lower|raise|shorten|name|spell|pick|put|set|list|mark|percent-encode|leave|turn|define|serve|wrap|grant|bound|narrow|select|close)\b|did you mean|e\.g\.|must be one of|use one of|such as/i;

/** Findings about the whole document (they name the file, and sit at 1:1 or the first node). */
const DOCUMENT_LEVEL = /^(?:parse KDL|no "wrap" block)/;

function checkDiagnostic(file: string, text: string, d: Diagnostic): void {
  const line = formatDiagnostic(file, d);
  const context = `${line}\n--- in ---\n${text}`;
  assert.ok(d.position, `no position: ${context}`);
  assert.ok(line.startsWith(`${file}:${d.position.line}:${d.position.column}: `), context);
  assert.ok(d.path !== "" || DOCUMENT_LEVEL.test(d.message), `no node named: ${context}`);
  assert.doesNotMatch(d.message, LEAK, `leaks the implementation: ${context}`);
  assert.match(d.message, FIX, `says no fix: ${context}`);
}

const seeds = seedDocuments();

Deno.test("parseGuardfile() and parseAwsPolicy(): every message of a mutated guardfile has node, position and fix", () => {
  fc.assert(
    fc.property(mutatedGuardfile(seeds), (text) => {
      const loaded = parseAwsPolicy(text, "g.mcp.kdl") ?? parseGuardfile(text, "g.mcp.kdl");
      for (const d of loaded.diagnostics) checkDiagnostic("g.mcp.kdl", text, d);
    }),
    { numRuns: 2500 },
  );
});

Deno.test("parseGuardfile(): the fuzzer's first findings, each named", () => {
  const cases: [string, RegExp][] = [
    // An empty name was warned about as resource "undefined".
    [
      `resource "" uri="a://b" { text "x"; }\nwrap ward mcp t { base-url "http://x"; auth none; can get t { path "/t"; }; }`,
      /resource name must not be empty/,
    ],
    [
      `wrap ward mcp t {\n base-url "http://x"\n auth query-param { param "" { env "X"; } }\n can get t { path "/t"; }\n}`,
      /needs value/,
    ],
    // The JMESPath parser's own words ended in ": undefined" and "value: [object Object]".
    [
      'wrap ward mcp t { base-url "http://x"; auth none; can get t { path "/t"; fail-when "&?a@*`"; }; }',
      /fail-when .* does not compile \(Syntax error: .*JSON literal\); fix/,
    ],
    [
      'wrap ward mcp t { base-url "http://x"; auth none; can get t { path "/t"; fail-when "@|$`{}"; }; }',
      /does not compile \(Syntax error: unexpected token type: Literal\)/,
    ],
    // No wrap: a position, and the other nodes' errors still reported.
    [`withhold "x" { reason "r"; }\nresource "a" uri="" { text "x"; }`, /no "wrap" block/],
    ["", /no "wrap" block/],
  ];
  for (const [text, message] of cases) {
    const { diagnostics } = parseGuardfile(text, "g.mcp.kdl");
    assert.ok(diagnostics.some((d) => message.test(d.message)), JSON.stringify(diagnostics));
    for (const d of diagnostics) checkDiagnostic("g.mcp.kdl", text, d);
  }
  const noWrap = parseGuardfile(
    `withhold "x" { reason "r"; }\nresource "a" uri="" { text "x"; }`,
    "g",
  );
  assert.ok(noWrap.diagnostics.some((d) => d.position?.line === 2 && /uri=/.test(d.message)));
});

Deno.test("compileJmesPath(): a generated expression that does not compile is refused in clean words", () => {
  fc.assert(
    fc.property(
      fc.string({ maxLength: 12, unit: fc.constantFrom(..."ab.[]{}()|&!=<>'`\"@$*?:,-0 1\\") }),
      (expression) => {
        const problem = compileJmesPath(expression);
        if (problem === null) return;
        assert.doesNotMatch(problem, LEAK, JSON.stringify(expression));
        assert.notEqual(problem.trim(), "");
      },
    ),
    { numRuns: 20_000 },
  );
});

Deno.test("weir lint: a file without wrap names file:line:column for every error, exit 1", async () => {
  const file = await tempGuardfile(
    `withhold "x" { reason "r"; }\nresource "a" uri="" { text "x"; }\n`,
  );
  try {
    const out = await runCli(["lint", file]);
    assert.equal(out.code, 1);
    const lines = out.stderr.trim().split("\n");
    assert.equal(lines.length, 2, out.stderr);
    assert.match(lines[0], new RegExp(`^weir: ${file}:1:1: no "wrap" block: add wrap`));
    assert.match(
      lines[1],
      new RegExp(`^weir: ${file}:2:1: resource a: resource needs uri=.*; add one`),
    );
  } finally {
    await Deno.remove(file);
  }
});
