/**
 * How much of a real API `weir scaffold` can express: for each document (the
 * ones tests/scaffold/documents_test.ts scaffolds, and every document of
 * `@readme/oas-examples` 8.2.2 with GET operations), the share of GET
 * operations that become grants, the operations not expressible by reason,
 * and the time to scaffold. Not a speed goal: a coverage figure, printed.
 *
 *   deno run -A bench/scaffold_coverage.ts [--all]
 *
 * Without --all: the six documents the tests use (the goal: >= 90% each).
 */
import { readOpenApi } from "../src/scaffold/document.ts";
import { buildScaffold, getCoverage } from "../src/scaffold/scaffold.ts";
import { benchArgs } from "./common.ts";

const TESTED: [string, string][] = [
  ["GitHub REST (@octokit/openapi)", "@octokit/openapi/generated/api.github.com.json"],
  ["Swagger Petstore 2.0", "@readme/oas-examples/2.0/json/petstore.json"],
  ["Train Travel 3.1", "@readme/oas-examples/3.1/json/train-travel.json"],
  ["ReadMe API 3.1", "@readme/oas-examples/3.1/json/readme.json"],
  ["Star Trek 3.0", "@readme/oas-examples/3.0/json/star-trek.json"],
  ["USPTO 3.0", "@readme/oas-examples/3.0/json/uspto.json"],
];
const MORE = [
  "2.0/json/api-with-examples.json",
  "2.0/json/petstore-expanded.json",
  "3.0/json/petstore.json",
  "3.0/json/http-status-codes.json",
  "3.0/json/link-example.json",
  "3.0/json/parameters-common.json",
  "3.0/json/parameters-style.json",
  "3.0/json/readme-legacy.json",
  "3.0/json/response-schemas.json",
  "3.0/json/schema-validation.json",
  "3.0/json/security.json",
  "3.0/json/server-path-level.json",
  "3.1/json/parameters-style.json",
  "3.1/json/petstore.json",
  "3.1/json/security.json",
].map((p): [string, string] => [`oas-examples ${p}`, `@readme/oas-examples/${p}`]);

const { values: flags } = benchArgs("usage: deno run -A bench/scaffold_coverage.ts [--all]", {
  args: Deno.args,
  options: { all: { type: "boolean", default: false } },
});
const docs = flags.all ? [...TESTED, ...MORE] : TESTED;
console.log(
  "document                                   GETs  expressed  share   not expressible (all methods)  ms",
);
for (const [name, spec] of docs) {
  const json = (await import(spec, { with: { type: "json" } })).default;
  const t0 = performance.now();
  const doc = await readOpenApi(JSON.stringify(json), spec);
  const s = buildScaffold(doc, { source: spec, maxBytes: 1024 * 1024, selectReads: true });
  const ms = performance.now() - t0;
  const { gets, expressed } = getCoverage(s.derivations);
  const no = s.derivations.filter((d) => !d.grant).length;
  const share = gets === 0 ? "-" : `${(100 * expressed / gets).toFixed(1)}%`;
  console.log(
    `${name.padEnd(42)} ${String(gets).padStart(5)} ${String(expressed).padStart(10)}  ${
      share.padStart(6)
    }  ${String(no).padStart(29)}  ${ms.toFixed(0)}`,
  );
  const reasons = new Map<string, number>();
  for (const d of s.derivations) {
    if (d.grant || d.op.method !== "GET") continue;
    const kind = (d.reason ?? "").replace(/"[^"]*"/g, "X").replace(/\{[^}]*\}/g, "{}");
    reasons.set(kind, (reasons.get(kind) ?? 0) + 1);
  }
  for (const [why, n] of reasons) console.log(`    GET not expressible (${n}): ${why}`);
}
