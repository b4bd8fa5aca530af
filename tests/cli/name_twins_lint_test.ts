/**
 * Name twins at load (issue 34, item 4): `weir lint` refuses two keys of one
 * request that an upstream matching names loosely (letter case, width,
 * format characters, separators: src/guardfile/name_fold.ts) would read as
 * one, wherever a guardfile names them: two query or body keys of a grant, a
 * caller input beside a pinned query or the `auth query-param` credential, a
 * fullwidth method override key, two argument rules of a proxy, a served
 * argument beside a pinned one. Keys that are only alike (`repo`,
 * `repository`) load. (At call time: tests/e2e/name_twins_test.ts.)
 */
import assert from "node:assert/strict";
import { runCli, tempGuardfile } from "../support/cli.ts";

const HTTP = `    base-url "https://api.example.com"\n    auth none\n`;
const MCP = `    mcp-server http "http://127.0.0.1:9/mcp"\n`;

const CASES: { name: string; text: string; says: RegExp | null }[] = [
  {
    name: "two query keys of a grant",
    text: `wrap ward mcp t {\n${HTTP}    can list issue {\n        path "/issues"\n` +
      `        query "repo"\n        query "repo_name" upstream="Repo"\n    }\n}\n`,
    says:
      /query input "repo_name" sends "Repo" and query input "repo" sends "repo", which differ only by letter case, width or separators/,
  },
  {
    name: "a query key and a body key",
    text: `wrap ward mcp t {\n${HTTP}    can create issue {\n        path "/issues"\n` +
      `        query "org"\n        body { field "ORG" type="string"; }\n    }\n}\n`,
    says: /body input "ORG" sends "ORG" and query input "org" sends "org"/,
  },
  {
    name: "a fullwidth separator",
    text: `wrap ward mcp t {\n${HTTP}    can list issue {\n        path "/issues"\n` +
      `        query "state"\n        query "s2" upstream="ｓｔａｔｅ"\n    }\n}\n`,
    says: /sends "ｓｔａｔｅ" and query input "state" sends "state"/,
  },
  {
    name: "a caller input beside a pinned query",
    text: `pin "list_issue" {\n    query "org" literal "acme"\n}\n` +
      `wrap ward mcp t {\n${HTTP}    can list issue {\n        path "/issues"\n` +
      `        query "Org"\n    }\n}\n`,
    says: /the pinned query "org" and query input "Org" \("Org"\) differ only by letter case/,
  },
  {
    name: "a caller input beside the auth query-param credential",
    text: `wrap ward mcp t {\n    base-url "https://api.example.com"\n` +
      `    auth query-param {\n        param "api_key" { value env "KEY"; }\n    }\n` +
      `    can list issue {\n        path "/issues"\n        query "API-KEY"\n    }\n}\n`,
    says:
      /auth query-param "api_key" and the query input "API-KEY" of list_issue .* differ only by letter case/,
  },
  {
    name: "a fullwidth method override key",
    text: `wrap ward mcp t {\n${HTTP}    can create issue {\n        path "/issues"\n` +
      `        query "m" upstream="＿ＭＥＴＨＯＤ"\n    }\n}\n`,
    says: /sends "＿ＭＥＴＨＯＤ", which many frameworks read as another HTTP method/,
  },
  {
    name: "two argument rules of a proxy",
    text: `wrap ward mcp s {\n${MCP}    proxy search {\n` +
      `        argument "repo" { restrict "acme/*"; }\n        argument "Repo"\n    }\n}\n`,
    says:
      /the MCP server's arguments "repo" \(argument "repo"\) and "Repo" \(argument "Repo"\) differ only by letter case/,
  },
  {
    name: "a served argument beside a pinned one",
    text: `pin "search" {\n    argument "org" literal "acme"\n}\n` +
      `wrap ward mcp s {\n${MCP}    proxy search {\n        argument "ORG" maximum=5\n    }\n}\n`,
    says:
      /the pinned argument "org" of "search" and the served argument "ORG" .* differ only by letter case/,
  },
  {
    name: "alike keys that are not twins",
    text: `pin "list_issue" {\n    query "org" literal "acme"\n}\n` +
      `wrap ward mcp t {\n${HTTP}    can list issue {\n        path "/issues"\n` +
      `        query "repo"\n        query "repository"\n        query "orgs"\n    }\n}\n`,
    says: null,
  },
];

for (const c of CASES) {
  Deno.test(`weir lint, name twins: ${c.name}`, async () => {
    const file = await tempGuardfile(c.text);
    const out = await runCli(["lint", file]);
    if (c.says === null) {
      assert.equal(out.code, 0, out.stderr);
      assert.doesNotMatch(out.stderr, /letter case, width|loosely/);
      return;
    }
    assert.equal(out.code, 1, `${out.stdout}\n${out.stderr}`);
    assert.match(out.stderr, c.says);
  });
}

Deno.test("weir lint warns (exit 0) where a fixed value shares its name with a path parameter: a query pin, a set key", async () => {
  const pinned = await tempGuardfile(
    `pin "get_thing" {\n    query "ORG_" literal "acme"\n}\n` +
      `wrap ward mcp t {\n${HTTP}    can get thing { path "/orgs/{org}/things"; }\n` +
      `    can get other { path "/other/{id}"; }\n}\n` +
      `pin "get_other" {\n    query "org" literal "acme"\n}\n`,
  );
  const pin = await runCli(["lint", pinned]);
  assert.equal(pin.code, 0, pin.stderr);
  const warnings = pin.stderr.split("\n").filter((l) => /merge path, query and body/.test(l));
  assert.equal(warnings.length, 1, pin.stderr); // get_other's path has no {org}
  assert.match(warnings[0], /warning: .*the pinned query "ORG_" and the path parameter \{org\}/);
  assert.match(warnings[0], /write the fixed value into the path instead of \{org\}/);
  const set = await tempGuardfile(
    `wrap ward mcp t {\n${HTTP}    can create thing {\n        path "/orgs/{org}/things"\n` +
      `        set org="acme"\n    }\n}\n`,
  );
  const body = await runCli(["lint", set]);
  assert.equal(body.code, 0, body.stderr);
  assert.match(
    body.stderr,
    /warning: .*the fixed body key set org= and the path parameter \{org\}/,
  );
});
