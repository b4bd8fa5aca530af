/**
 * What `weir lint` accepts, `weir serve` can build (issue 34 item 9): for
 * every generated guardfile (the repository's guardfiles mutated node by
 * node, tests/support/kdl_fuzz.ts), either the loader reports an error, or
 * the very server `serve` runs is built and listed through the module API
 * `serve` uses, in every mode (spec mode, the AWS policies, a file that wraps
 * an MCP server, against a local stand-in of it): never an uncaught error.
 * A bounded number here; scripts/fuzz_guardfiles.ts runs the long campaign.
 * Then each crash kind the campaigns found, named, through the loader and
 * through the CLI.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { mutatedGuardfile, seedDocuments } from "../support/kdl_fuzz.ts";
import { buildOutcome, startWrapStandIn } from "../support/build_fuzz.ts";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { formatDiagnostic } from "../../src/guardfile/diagnostics.ts";
import { runCli, tempGuardfile } from "../support/cli.ts";

const seeds = seedDocuments();

const clip = (text: string) => (text.length > 3000 ? `${text.slice(0, 3000)}...` : text);

Deno.test("a generated guardfile is refused by the loader, or serve's server builds and lists it", async () => {
  const standIn = startWrapStandIn();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          mutatedGuardfile(seeds),
          mutatedGuardfile(seeds, { hostile: true, maxMutations: 2 }),
        ),
        async (text) => {
          const outcome = await buildOutcome(text, standIn);
          if (outcome.kind !== "crash") return;
          assert.fail(
            `lint accepts what serve cannot build: ${
              (outcome.error as Error)?.stack ?? outcome.error
            }\n--- in ---\n${clip(text)}`,
          );
        },
      ),
      { numRuns: 300 },
    );
  } finally {
    await standIn.stop();
  }
});

Deno.test("every seed guardfile builds and lists as it is", async () => {
  const standIn = startWrapStandIn();
  try {
    const { writeKdl } = await import("../support/kdl_fuzz.ts");
    for (const nodes of seeds) {
      const outcome = await buildOutcome(writeKdl(nodes), standIn);
      assert.equal(outcome.kind, "built", JSON.stringify(outcome));
    }
  } finally {
    await standIn.stop();
  }
});

const SPEC = (body: string) =>
  `wrap ward mcp t {\n  base-url "http://127.0.0.1:9"\n  auth none\n${body}\n}\n`;
const WRAP = (body: string) =>
  `wrap ward mcp t {\n  mcp-server http "http://127.0.0.1:9/mcp"\n${body}\n}\n`;
const BIG = "[^/]*a".repeat(8000);

/** Each kind the campaigns found (and its siblings): the file, the line:column, what the error says. */
const KINDS: [string, string, string, RegExp][] = [
  [
    "an icon src with one non-ASCII character (spec mode)",
    `icon "https://example.com/é.png"\n${SPEC(`  can get t { path "/t"; }`)}`,
    "1:1",
    /icon source "https:\/\/example.com\/é.png" is not an RFC 3986 URI: percent-encode/,
  ],
  [
    "an icon src with no scheme (the wrap form)",
    `icon "icon.png"\n${WRAP("  proxy x")}`,
    "1:1",
    /icon source "icon.png" is not an absolute URI: start it with a scheme/,
  ],
  [
    "a resource uri with a bare %",
    `resource "r" uri="docs://a%zz" { text "x"; audience "user"; }\n${
      SPEC(`  can get t { path "/t"; }`)
    }`,
    "1:1",
    /uri="docs:\/\/a%zz" is not an RFC 3986 URI: .*write % only as %XX/,
  ],
  [
    "a proxy-resource that is not a URI",
    WRAP(`  proxy x\n  proxy-resource "ui://dashboard/é"`),
    "4:3",
    /proxy-resource "ui:\/\/dashboard\/é" is not an RFC 3986 URI/,
  ],
  [
    "a proxy-resource under a resource's uri",
    `${
      WRAP(`  proxy x\n  proxy-resource "ui://x"`)
    }resource "r" uri="ui://x" { text "x"; audience "user"; }\n`,
    "6:1",
    /resource uri "ui:\/\/x" is also a proxy-resource/,
  ],
  [
    "an untyped path parameter's pattern too large for the engine",
    SPEC(`  can get t {\n    path "/t/{id}"\n    param "id" pattern="${BIG}"\n  }`),
    "6:5",
    /pattern "\[\^\/\]\*a.*"\.\.\. is 48000 characters long, over weir's 4096 .*: shorten it/,
  ],
  [
    "a query field's pattern past the engine's stack",
    SPEC(
      `  can list t {\n    path "/t"\n    query {\n      field "q" type="string" pattern="${
        "a?".repeat(7000)
      }"\n    }\n  }`,
    ),
    "7:7",
    /pattern "a\?a\?.*is 14000 characters long/,
  ],
  [
    "a wrapped argument's pattern",
    WRAP(`  proxy x {\n    argument "a" pattern="${BIG}"\n  }`),
    "4:5",
    /pattern .* is 48000 characters long/,
  ],
  [
    "a restrict glob whose regular expression is too long (spec mode)",
    SPEC(`  restrict id matches "${"*a".repeat(800)}"\n  can get t { path "/t/{id}"; }`),
    "4:3",
    /pattern "\*a\*a.*: its regular expression is \d+ characters long, over weir's 4096/,
  ],
  [
    "a wrapped argument's restrict glob whose regular expression is too long",
    WRAP(
      `  proxy x {\n    argument "a" {\n      restrict "ok-*" "${"*a".repeat(800)}"\n    }\n  }`,
    ),
    "5:7",
    /pattern "\*a\*a.*: its regular expression is \d+ characters long, over weir's 4096/,
  ],
  [
    "a GraphQL variable name too long for a regular expression (the loader itself threw)",
    SPEC(
      `  can query issue {\n    path "/graphql"\n    graphql {\n      document "query($${
        "a".repeat(70_000)
      }: ID) { x }"\n      variable "${"b".repeat(70_000)}"\n    }\n  }`,
    ),
    "8:7",
    /variable "b{5}.*" is not used as \$b+ in the document/,
  ],
  [
    "a wrapped argument named __proto__ (the MCP clients never see it: serve refused to start)",
    WRAP(`  proxy x {\n    argument "__proto__" max-length=5\n  }`),
    "4:5",
    /argument "__proto__": the MCP clients read an argument of that name as no argument at all/,
  ],
  [
    "a pin of an argument named __proto__",
    `pin "x" { argument "__proto__" literal "a"; }\n${WRAP("  proxy x")}`,
    "1:11",
    /a pinned argument "__proto__": the MCP clients read/,
  ],
  [
    "an SSM convenience tool name past 128 characters",
    `wrap ward mcp aws ssm {\n  region "us-east-1"\n  parameter "/a/b"\n  can get "${
      "a".repeat(130)
    }"\n}\n`,
    "4:3",
    /mints a tool name of 134 characters; an MCP tool name is at most 128/,
  ],
];

Deno.test("each crash kind found is the loader's error, at its line:column", async () => {
  const standIn = startWrapStandIn();
  try {
    for (const [name, text, at, message] of KINDS) {
      const { diagnostics } = loadGuardfileText(text, "g.mcp.kdl");
      const lines = diagnostics.filter((d) => d.severity === "error").map((d) =>
        formatDiagnostic("g.mcp.kdl", d)
      );
      const hit = lines.find((l) => message.test(l));
      assert.ok(hit, `${name}: ${clip(lines.join("\n"))}`);
      assert.ok(hit.startsWith(`g.mcp.kdl:${at}: `), `${name}: ${clip(hit)}`);
      if (!/GraphQL/.test(name)) {
        assert.ok(
          hit.length < 600,
          `${name}: the message quotes too much: ${hit.length} characters`,
        );
      }
      assert.equal((await buildOutcome(text, standIn)).kind, "diagnosed", name);
    }
  } finally {
    await standIn.stop();
  }
});

Deno.test("weir lint and weir serve: the file's line and the fix, exit 1, no stack trace (both forms)", async () => {
  for (
    const [name, text, at] of KINDS.filter(([n]) =>
      /icon|untyped|wrapped argument's pattern/.test(n)
    )
  ) {
    const file = await tempGuardfile(text);
    for (const args of [["lint", file], ["serve", file, "--stdio"]]) {
      const out = await runCli(args, { stdin: "" });
      assert.equal(out.code, 1, `${name}: ${args[0]}: ${clip(out.stderr)}`);
      assert.ok(out.stderr.includes(`${file}:${at}: `), `${name}: ${args[0]}: ${clip(out.stderr)}`);
      assert.doesNotMatch(out.stderr, /Uncaught|\n\s+at /, `${name}: ${args[0]}`);
    }
  }
});

Deno.test("weir lint --schema-profile: a grant the profile cannot list is an error at the grant", async () => {
  const file = await tempGuardfile(
    SPEC(
      `  can create t {\n    path "/t"\n    body {\n      field "extra" type="object" raw=#true\n    }\n  }`,
    ),
  );
  const clean = await runCli(["lint", file]);
  assert.equal(clean.code, 0, clean.stderr);
  const out = await runCli(["lint", "--schema-profile", "openai-strict", file]);
  assert.equal(out.code, 1, out.stderr);
  assert.match(
    out.stderr,
    new RegExp(
      `${file}:4:3: wrap > can create t: the MCP server core refuses .*an object open to ` +
        `undeclared keys .*--schema-profile full`,
    ),
  );
});

Deno.test("a long allowlist of globs is served: only each glob is bounded, not their number", async () => {
  const globs = Array.from({ length: 600 }, (_, i) => `"org/repo-${i}-*"`).join(" ");
  const standIn = startWrapStandIn();
  try {
    for (
      const text of [
        SPEC(
          `  restrict id matches ${globs}\n  can get t { path "/t/{id}"; param "id" slashes="encoded"; }`,
        ),
        WRAP(`  proxy x {\n    argument "a" {\n      restrict ${globs}\n    }\n  }`),
      ]
    ) {
      assert.equal((await buildOutcome(text, standIn)).kind, "built");
    }
  } finally {
    await standIn.stop();
  }
});
