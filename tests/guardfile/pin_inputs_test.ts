/**
 * A pinned value never travels beside a caller's value under the same
 * upstream name (issue 34 item 10: a mutation of this check went unseen; the
 * upstream got `?org=<caller>&org=<pin>`, and many frameworks read the
 * first). The check, by what the upstream receives: a spec-mode query pin
 * against each caller input's wire name (its `upstream=`, or its own name),
 * a wrapped tool's argument pin against each served argument's upstream name
 * (and its served name). Each refusal is the loader's, with its own words
 * (the loose-match twin check behind it says something else), through the
 * loader and `weir lint`.
 */
import assert from "node:assert/strict";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { formatDiagnostic } from "../../src/guardfile/diagnostics.ts";
import { runCli, tempGuardfile } from "../support/cli.ts";

const spec = (query: string, pin: string) =>
  `pin "list_repo" { ${pin}; }
wrap ward mcp t {
  base-url "http://127.0.0.1:9"
  auth none
  can list repo {
    path "/repos"
    ${query}
  }
}
`;

const wrap = (argument: string, pin: string) =>
  `pin "get_repo" { ${pin}; }
wrap ward mcp t {
  mcp-server http "http://127.0.0.1:9/mcp"
  proxy get_repo {
    ${argument}
  }
}
`;

function errors(text: string): string[] {
  return loadGuardfileText(text, "g.mcp.kdl").diagnostics
    .filter((d) => d.severity === "error")
    .map((d) => formatDiagnostic("g.mcp.kdl", d));
}

const CASES: [string, string, RegExp][] = [
  [
    "spec: a query pin on a caller input's upstream= name",
    spec(`query "team" upstream="org"`, `query "org" literal "acme"`),
    /^g\.mcp\.kdl:1:\d+: .*query "org" is a caller input of list_repo; a pin cannot override a caller input/,
  ],
  [
    "spec: a query pin on a caller input's own name",
    spec(`query "org"`, `query "org" env "ORG"`),
    /query "org" is a caller input of list_repo/,
  ],
  [
    "spec: a query pin on one of several inputs' upstream= names",
    spec(`query "q"\n    query "team" upstream="org"`, `query "org" literal "acme"`),
    /query "org" is a caller input of list_repo/,
  ],
  [
    "wrap: an argument pin on a served argument's upstream name",
    wrap(`argument "team" upstream="org" max-length=20`, `argument "org" literal "acme"`),
    /argument "org" of "get_repo" is both pinned and served \(argument "team"\)/,
  ],
  [
    "wrap: an argument pin on a served argument's own name",
    wrap(`argument "org" max-length=20`, `argument "org" literal "acme"`),
    /argument "org" of "get_repo" is both pinned and served \(argument "org"\)/,
  ],
];

Deno.test("a pin under a caller input's upstream name is refused in its own words, both forms", () => {
  for (const [name, text, message] of CASES) {
    const found = errors(text);
    assert.ok(found.some((l) => message.test(l)), `${name}:\n${found.join("\n")}`);
  }
});

Deno.test("a pin beside caller inputs of other upstream names loads", () => {
  for (
    const text of [
      spec(`query "team" upstream="group"`, `query "org" literal "acme"`),
      spec(`query "org_name"`, `query "org" literal "acme"`),
      wrap(`argument "team" upstream="group" max-length=20`, `argument "org" literal "acme"`),
    ]
  ) {
    assert.deepEqual(errors(text), [], text);
  }
});

Deno.test("weir lint: a pin under a caller input's upstream= name exits 1 naming both", async () => {
  const file = await tempGuardfile(
    spec(`query "team" upstream="org"`, `query "org" literal "acme"`),
  );
  const out = await runCli(["lint", file]);
  assert.equal(out.code, 1, out.stderr);
  assert.match(
    out.stderr,
    new RegExp(`${file}:1:\\d+: .*query "org" is a caller input of list_repo`),
  );
});
