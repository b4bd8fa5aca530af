/**
 * Which headers a grant's `header "<Name>"` may hand to the caller, through
 * `weir lint` (docs/guardfile.md, "`header`"): never one weir sets or frames
 * the request with, a credential, a trace header, a client-address header, a
 * method or path override, nor one the wrap already sends; in any letter case
 * and with `_` for `-` (servers that hand headers to the application as
 * CGI-style variables, `HTTP_X_FORWARDED_FOR`, read both alike). The headers
 * APIs document as parameters load. Form body keys a parser would read
 * otherwise (an array index inside an object) are refused at load too.
 */
import assert from "node:assert/strict";
import { runCli, tempGuardfile } from "../support/cli.ts";

const HTTP = `    base-url "https://api.example.com"\n    auth none\n`;

/** A file granting one tool per header name, each tool taking that header. */
function headersFile(names: string[], extra = ""): string {
  const grants = names.map((name, i) =>
    `    can get thing${i} {\n        path "/things/${i}"\n        header "${name}"\n    }\n`
  );
  return `wrap ward mcp t {\n${HTTP}${extra}${grants.join("")}}\n`;
}

/** Reserved header names with what the refusal says, each also written in the other spellings. */
const RESERVED: [string, RegExp][] = [
  ["Content-Type", /weir frames the request itself/],
  ["Content-Encoding", /weir frames the request itself/],
  ["Transfer-Encoding", /weir frames the request itself/],
  ["Http2-Settings", /changes how the request is sent/],
  ["User-Agent", /weir sets it/],
  ["Authorization", /weir sets it/],
  ["traceparent", /weir propagates the trace itself/],
  ["X-Forwarded-For", /the client's address/],
  ["X-Forwarded-Port", /the client's address/],
  ["X-Forwarded-Prefix", /the client's address/],
  ["True-Client-IP", /the client's address/],
  ["CF-Connecting-IP", /the client's address/],
  ["Via", /the client's address/],
  ["X-HTTP-Method-Override", /another HTTP method than the grant's/],
  ["X-Original-URL", /another path than the grant's/],
  ["X-Rewrite-URL", /another path than the grant's/],
  ["X-Original-URI", /another path than the grant's/],
  ["X-Original-Method", /another HTTP method than the grant's/],
  ["X-Original-Host", /the client's address/],
  ["X_Host", /the client's address/],
  ["X-API-Key", /reads as a credential/],
  ["X-RapidAPI-Key", /reads as a credential/],
  ["Ocp-Apim-Subscription-Key", /reads as a credential/],
  ["X-Auth-Token", /reads as a credential/],
  ["Sec-Fetch-Site", /reserve the Sec- and Proxy- prefixes/],
];

/** `X-Forwarded-For` as a request might spell it: upper case, and `_` for `-`. */
function spellings(name: string): string[] {
  return [
    name,
    name.toUpperCase(),
    name.replaceAll("-", "_"),
    name.toLowerCase().replaceAll("-", "_"),
  ]
    .filter((s, i, all) => all.indexOf(s) === i);
}

Deno.test("lint: a reserved header is refused as a caller input in every spelling, saying why", async () => {
  const cases = RESERVED.flatMap(([name, why]) => spellings(name).map((s) => [s, why] as const));
  const r = await runCli(["lint", await tempGuardfile(headersFile(cases.map(([s]) => s)))]);
  assert.equal(r.code, 1, r.stderr);
  for (const [spelling, why] of cases) {
    const line = r.stderr.split("\n").find((l) =>
      l.includes(`header "${spelling}" cannot be a caller input`)
    );
    assert.ok(line, `header "${spelling}" was refused:\n${r.stderr}`);
    assert.match(line, why, line);
  }
});

Deno.test("lint: the headers APIs take as parameters load", async () => {
  const names = [
    "If-Match",
    "If-None-Match",
    "Idempotency-Key",
    "X-Request-Id",
    "Stripe-Version",
    "X-GitHub-Api-Version",
    "Content-Language",
    "Prefer",
    "Range",
  ];
  const r = await runCli(["lint", await tempGuardfile(headersFile(names))]);
  assert.equal(r.code, 0, r.stderr);
});

Deno.test("lint: a header input the wrap already sends, or named twice, is refused with _ for -", async () => {
  const staticHeader = await runCli([
    "lint",
    await tempGuardfile(headersFile(["X_Tenant_Id"], `    header "X-Tenant-Id" "acme"\n`)),
  ]);
  assert.equal(staticHeader.code, 1);
  assert.match(
    staticHeader.stderr,
    /header input "X_Tenant_Id" would replace the header "X-Tenant-Id" this wrap sends/,
  );
  const authHeader = await runCli([
    "lint",
    await tempGuardfile(
      `wrap ward mcp t {\n    base-url "https://api.example.com"\n` +
        `    auth header-token {\n        header "X-Team"\n        value env "T"\n    }\n` +
        `    can get thing {\n        path "/things"\n        header "x_team"\n    }\n}\n`,
    ),
  ]);
  assert.equal(authHeader.code, 1);
  assert.match(authHeader.stderr, /header input "x_team" would replace the header "X-Team"/);
  const twice = await runCli([
    "lint",
    await tempGuardfile(
      `wrap ward mcp t {\n${HTTP}    can get thing {\n        path "/things"\n` +
        `        header "If-Match"\n        header "If_Match" input="other"\n    }\n}\n`,
    ),
  ]);
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /header "If_Match" is declared twice in this grant/);
});

Deno.test("lint: a form body key a parser reads as an array index is refused inside an object", async () => {
  const r = await runCli([
    "lint",
    await tempGuardfile(
      `wrap ward mcp t {\n${HTTP}` +
        `    can create a {\n        path "/a"\n        form arrays="brackets"\n` +
        `        body { object "m" { field "0" type="string"; field "12" type="string"; }; }\n    }\n` +
        `    can create b {\n        path "/b"\n        form\n        set { m { "7" "x"; }; }\n    }\n` +
        // At the top level a number is a key to every parser, and "01" is no index.
        `    can create c {\n        path "/c"\n        form\n` +
        `        body { field "0" type="string"; object "m" { field "01" type="string"; }; }\n    }\n` +
        `}\n`,
    ),
  ]);
  assert.equal(r.code, 1, r.stderr);
  for (const key of ["0", "12", "7"]) {
    assert.match(
      r.stderr,
      new RegExp(`form body key "${key}" is a number, which form parsers \\(qs, behind Express\\)`),
    );
  }
  assert.doesNotMatch(r.stderr, /create c|form body key "01"/);
});

Deno.test("lint: the operator's fixed headers are compared as servers read names too (case, _ for -), both forms", async () => {
  // issue 34 item 10, a sibling of the rules that decide two names are one:
  // the fixed headers compared by letter case only, so `header "X_Api_Key"`
  // was sent beside the credential `X-Api-Key` (one HTTP_X_API_KEY to a
  // CGI-style server, which keeps either).
  const auth =
    `    auth header-token {\n        header "X-Api-Key"\n        value env "K"\n    }\n`;
  const grant = `    can get thing { path "/things"; }\n`;
  const spec = (headers: string, withAuth = false) =>
    `wrap ward mcp t {\n    base-url "https://api.example.com"\n${
      withAuth ? auth : "    auth none\n"
    }${headers}${grant}}\n`;
  const mcp = (headers: string) =>
    `wrap ward mcp s {\n    mcp-server http "http://127.0.0.1:9/mcp" {\n${headers}    }\n` +
    `    proxy search\n}\n`;
  const cases: [string, RegExp][] = [
    [
      spec(`    header "x_api_key" "fixed"\n`, true),
      /header "x_api_key" would replace the credential auth header-token sends in "X-Api-Key"/,
    ],
    [spec(`    header "Proxy_Authorization" "x"\n`), /header "Proxy_Authorization" is reserved/],
    [spec(`    header "X_HTTP_Method_Override" "GET"\n`), /"X_HTTP_Method_Override"/],
    [
      spec(`    header "X-Team" "a"\n    header "x_team" "b"\n`),
      /header "x_team" is declared twice \(names ignore case, and servers read "_" as "-"\)/,
    ],
    [
      mcp(`        header "Mcp_Session_Id" { value literal "x"; }\n`),
      /header "Mcp_Session_Id" is set by weir or by the MCP transport itself/,
    ],
    [
      mcp(
        `        header "X-Team" { value literal "a"; }\n` +
          `        header "X_TEAM" { value literal "b"; }\n`,
      ),
      /header "X_TEAM" is declared twice \(names ignore case, and servers read "_" as "-"\)/,
    ],
  ];
  const files = await Promise.all(cases.map(([text]) => tempGuardfile(text)));
  const r = await runCli(["lint", ...files]);
  assert.equal(r.code, 1, r.stderr);
  cases.forEach(([, says], i) => {
    const lines = r.stderr.split("\n").filter((l) => l.includes(files[i]));
    assert.ok(lines.some((l) => says.test(l)), `${i}: ${lines.join("\n")}`);
  });
  // Headers that differ in more than case and separators load.
  const fine = await runCli([
    "lint",
    await tempGuardfile(spec(`    header "X-Api-Keys" "a"\n    header "X-Team-Id" "b"\n`, true)),
  ]);
  assert.equal(fine.code, 0, fine.stderr);
});
