/**
 * Every message about an AWS policy (serve-ssm, serve-s3) names its node, its
 * position and a fix, and leaks nothing of the implementation (issue 22, kind
 * 15): generated values for each node of both policy kinds (bucket, region,
 * base-url, prefix, max-bytes, content-type, parameter, tool=, can), quoted
 * or not. The mutation fuzzer of messages_test.ts rarely reaches these values
 * (six messages without a fix hid there: a bucket name, max-bytes 0 and over
 * the ceiling, a markup content-type, a prefix with "..", an unsupported S3
 * grant).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { formatDiagnostic } from "../../src/guard/mod.ts";
import { parseAwsPolicy } from "../../src/guardfile/aws.ts";

const LEAK = /\bundefined\b|\[object \w+\]|\bNaN\b/;
/** As in messages_test.ts: an imperative at the start of a clause, or an example. */
const FIX =
  /(?:^|[;:,(.]\s*|\bor\s+|\band\s+|\bthen\s+|\bto\s+)(?:add|remove|use|rename|give|declare|write|keep|quote|fix|drop|change|state|move|merge|say|send|split|choose|make|replace|lower|raise|shorten|name|spell|pick|put|set|list|mark|percent-encode|leave|turn|define|serve|wrap|grant|bound|narrow|select|close)\b|did you mean|e\.g\.|must be one of|use one of|such as/i;

/** A KDL value: a quoted string (any text), a number, a boolean or null. */
const value = fc.oneof(
  fc.string({ maxLength: 30 }).map((s) => JSON.stringify(s)),
  fc.constantFrom(
    '""',
    '"."',
    '".."',
    '"../x"',
    '"/a/"',
    '"a//b"',
    '"text/html"',
    '"image/svg+xml"',
  ),
  fc.constantFrom(
    '"B"',
    '"ab"',
    '"a..b"',
    '"-ab"',
    `"${"a".repeat(64)}"`,
    '"us east"',
    '"ftp://x"',
  ),
  fc.integer({ min: -5, max: 2 ** 40 }).map(String),
  fc.constantFrom("0", "1.5", "-1", "#true", "#null", "1e3", "67108865"),
);

const S3_NODES = ["region", "bucket", "base-url", "prefix", "max-bytes", "content-type"];
const SSM_NODES = ["region", "parameter"];
const S3_BASE: Record<string, string> = {
  region: '"us-east-1"',
  bucket: '"weir-assets"',
  "base-url": '"https://files.example.com"',
  prefix: '"charts"',
  "max-bytes": "1048576",
  "content-type": '"image/png"',
};

const verb = fc.constantFrom("get", "put", "list", "delete", "create", "read");
const noun = fc.constantFrom("object", "objects", "object-url", "parameter", "x", "bucket");

Deno.test("parseAwsPolicy(): every message for generated node values has node, position and fix", () => {
  const check = (text: string) => {
    const loaded = parseAwsPolicy(text, "p.mcp.kdl");
    assert.ok(loaded, text);
    for (const d of loaded.diagnostics) {
      const line = formatDiagnostic("p.mcp.kdl", d);
      const context = `${line}\n--- in ---\n${text}`;
      assert.ok(d.position, `no position: ${context}`);
      assert.ok(d.path !== "" || /^parse KDL/.test(d.message), `no node: ${context}`);
      assert.doesNotMatch(d.message, LEAK, `leaks: ${context}`);
      assert.match(d.message, FIX, `says no fix: ${context}`);
    }
  };
  fc.assert(
    fc.property(
      fc.constantFrom(...S3_NODES),
      value,
      fc.tuple(verb, noun),
      (node, v, [cv, cn]) => {
        const lines = S3_NODES.map((n) => `    ${n} ${n === node ? v : S3_BASE[n]}`);
        check(`wrap ward mcp aws s3 {\n${lines.join("\n")}\n    can ${cv} ${cn}\n}\n`);
      },
    ),
    { numRuns: 800 },
  );
  fc.assert(
    fc.property(
      fc.constantFrom(...SSM_NODES),
      value,
      value,
      fc.tuple(verb, noun),
      (node, v, tool, [cv, cn]) => {
        const region = node === "region" ? v : '"us-east-1"';
        const parameter = node === "parameter" ? v : '"/team/token"';
        check(
          `wrap ward mcp aws ssm {\n    region ${region}\n    parameter ${parameter} tool=${tool}\n` +
            `    can ${cv} ${cn}\n}\n`,
        );
      },
    ),
    { numRuns: 800 },
  );
});
