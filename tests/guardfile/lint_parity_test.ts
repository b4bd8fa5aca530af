/**
 * Lint parity with the reference (docs/guardfile.md, "Lint"): every error
 * case its tests pin, and weir's stricter ones ("Where weir is stricter"), each
 * with a small fixture of our own, loaded through the same loader lint and
 * serve use. Each case names what the message must say; a case also checks
 * that the error points at a line:column.
 */
import assert from "node:assert/strict";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import type { Guardfile } from "../../src/guardfile/model.ts";

/** A minimal valid guardfile around `body` (inside wrap) and `siblings` (beside it). */
function file(body: string, siblings = "", head = `base-url "t.example"\n  auth none`): string {
  return `${siblings}\nwrap ward mcp t {\n  ${head}\n  ${body}\n}\n`;
}
const GET = `can get issue { path "/issues/{id}" }`;

function errorsOf(text: string): string[] {
  const r = parseGuardfile(text, "case.mcp.kdl");
  return r.diagnostics.filter((d) => d.severity === "error").map((d) =>
    `${d.position ? `${d.position.line}:${d.position.column} ` : ""}${d.path}: ${d.message}`
  );
}

function load(text: string): Guardfile {
  const r = parseGuardfile(text, "case.mcp.kdl");
  assert.ok(r.guardfile, r.diagnostics.map((d) => d.message).join("\n"));
  return r.guardfile;
}

const FAILURES: [string, string, RegExp][] = [
  // --- found by attacking weir ---
  // A method override makes the upstream run another method than the grant's
  // (a GET served under --read-only that deletes): refused wherever it is set.
  ...["X-HTTP-Method-Override", "x-http-method", "X-Method-Override"].map((
    h,
  ): [string, string, RegExp] => [
    `method-override header ${h}`,
    file(GET, "", `base-url "t.example"\n  auth none\n  header "${h}" "DELETE"`),
    /a method override\): remove it/,
  ]),
  [
    "method-override header as the credential header",
    file(
      GET,
      "",
      `base-url "t.example"\n  auth header-token { header "X-HTTP-Method-Override"; value env "K" }`,
    ),
    /a method override\): remove it/,
  ],
  [
    "a query input sent as _method",
    file(`can create issue { path "/x"; query { field "m" type="string" upstream="_method"; } }`),
    /query input "m" sends "_method".*method override/,
  ],
  [
    "a body input named _method",
    file(`can create issue { path "/x"; body { field "_method" type="string"; } }`),
    /body input "_method" sends "_method"/,
  ],
  [
    "a fixed body holding _method",
    file(`can create issue { path "/x"; set _method="DELETE" }`),
    /set _method= sends "_method"/,
  ],
  [
    "a body map to _method",
    file(
      `can create issue { path "/x"; body { map "verb" to="_METHOD"; } }`,
    ),
    /body map to "_METHOD" sends "_METHOD"/,
  ],
  [
    "a pin on _method",
    file(GET, `pin "get_issue" { query "_method" literal "DELETE"; }`),
    /a pin on query "_method".*method override/,
  ],
  [
    "header replacing the credential header",
    file(
      GET,
      "",
      `base-url "t.example"\n  auth header-token { header "X-Key"; value env "K" }\n  header "x-key" "static"`,
    ),
    /would replace the credential/,
  ],
  [
    "hop-by-hop header",
    file(GET, "", `base-url "t.example"\n  auth none\n  header "Transfer-Encoding" "chunked"`),
    /reserved/,
  ],
  [
    "query-param credential shadowing a query input",
    file(
      `can get issue { path "/x"; query "key" }`,
      "",
      `base-url "t.example"\n  auth query-param { param "key" { value env "K" } }`,
    ),
    /silently replaced/,
  ],
  [
    "dot segment in a path template",
    file(`can get issue { path "/a/../admin/{id}" }`),
    /"\." or "\.\." segment/,
  ],
  [
    "encoded dot segment in a path template",
    file(`can get issue { path "/a/%2E%2e/{id}" }`),
    /"\." or "\.\." segment/,
  ],
  // --- document and wrap (umbra inline tests) ---
  ["no wrap", `withhold "x" { reason "y" }`, /no "wrap" block/],
  [
    "empty wrap path",
    `wrap {\n  base-url "t.example"\n  auth none\n  ${GET}\n}`,
    /"wrap" needs a name path/,
  ],
  ["unknown wrap node", file(`${GET}\n  colour "red"`), /unknown node "colour" in wrap/],
  ["missing auth", file(GET, "", `base-url "t.example"`), /`auth` block is required/],
  ["missing path", file(`can get issue { query "x" }`), /missing "path"/],
  ["can with one arg", file(`can get { path "/x" }`), /"can" takes exactly 2 arguments/],
  [
    "unknown grant child",
    file(`can get issue { path "/x"; colour "red" }`),
    /unknown node "colour" in can/,
  ],
  [
    "empty describe",
    file(`can get issue { path "/x"; describe "" }`),
    /describe must not be empty/,
  ],
  [
    "duplicate describe",
    file(`can get issue { path "/x"; describe "a"; describe "b" }`),
    /"describe" appears more than once/,
  ],
  [
    "malformed fail-when",
    file(`can get issue { path "/x"; fail-when "foo[?" }`),
    /fail-when "foo\[\?" does not compile/,
  ],
  [
    "duplicate fail-when",
    file(`can get issue { path "/x"; fail-when "a"; fail-when "b" }`),
    /"fail-when" appears more than once/,
  ],
  ["empty set", file(`can close issue { path "/x"; set }`), /"set" needs at least one key=value/],
  ["bare query", file(`can get issue { path "/x"; query }`), /"query" needs names/],
  [
    "both base-url forms",
    file(GET, "", `base-url "t.example"\n  base-url { value env "U" }\n  auth none`),
    /"base-url" appears more than once/,
  ],
  [
    "auth none with a block",
    file(GET, "", `base-url "t.example"\n  auth none { value env "X" }`),
    /auth none takes no block/,
  ],
  [
    "method not HTTP",
    file(`can search web { path "/s"; method "FETCH" }`),
    /"FETCH" is not an HTTP method/,
  ],
  [
    "method repeated",
    file(`can search web { path "/s"; method "GET"; method "POST" }`),
    /"method" appears more than once/,
  ],
  [
    "reserved input name",
    file(`can get issue { path "/x"; query "output" }`),
    /input name "output" is reserved/,
  ],
  [
    "same name in query and body",
    file(`can create issue { path "/x"; query "title"; body "title" }`),
    /two inputs both name "title"/,
  ],
  [
    "flat body and block in one node",
    file(`can create issue { path "/x"; body "a" { field "b" type="string" } }`),
    /"body" takes either names or a block/,
  ],
  [
    "raw on a scalar",
    file(`can create issue { path "/x"; body { field "a" type="string" raw=#true } }`),
    /raw= applies to objects and arrays/,
  ],
  // --- query aliases ---
  [
    "alias with a reserved local name",
    file(`can get issue { path "/x"; query "output" upstream="o" }`),
    /input name "output" is reserved/,
  ],
  [
    "alias on several names",
    file(`can get issue { path "/x"; query "a" "b" upstream="q" }`),
    /upstream= renames one input/,
  ],
  [
    "alias equal to the local name",
    file(`can get issue { path "/x"; query "q" upstream="q" }`),
    /is the same as the input name/,
  ],
  [
    "two locals on one wire name",
    file(`can get issue { path "/x"; query "a" upstream="q"; query "b" upstream="q" }`),
    /both sent as "q"/,
  ],
  [
    "alias clashing with an unaliased wire name",
    file(`can get issue { path "/x"; query "q"; query "a" upstream="q" }`),
    /both sent as "q"/,
  ],
  [
    "unknown property on flat query",
    file(`can get issue { path "/x"; query "a" colour="red" }`),
    /unknown property colour=/,
  ],
  [
    "alias on body",
    file(`can create issue { path "/x"; body "a" upstream="b" }`),
    /takes no properties/,
  ],
  // --- typed query ---
  [
    "typed query args and block",
    file(`can get issue { path "/x"; query "a" { field "b" type="string" } }`),
    /either names or a block/,
  ],
  [
    "props on typed query",
    file(`can get issue { path "/x"; query x=1 { field "b" type="string" } }`),
    /takes no properties on "query"/,
  ],
  [
    "object in query",
    file(`can get issue { path "/x"; query { object "o" } }`),
    /unknown node "object" in query/,
  ],
  [
    "unknown node in query block",
    file(`can get issue { path "/x"; query { thing "o" } }`),
    /unknown node "thing" in query/,
  ],
  [
    "unsupported query type",
    file(`can get issue { path "/x"; query { field "a" type="date" } }`),
    /type="date" is not supported/,
  ],
  [
    "duplicate query field",
    file(
      `can get issue { path "/x"; query { field "a" type="string"; field "a" type="integer" } }`,
    ),
    /two inputs both name "a"/,
  ],
  [
    "unknown query field prop",
    file(`can get issue { path "/x"; query { field "a" type="string" colour="red" } }`),
    /unknown property colour=/,
  ],
  [
    "min > max",
    file(`can get issue { path "/x"; query { field "a" type="integer" minimum=5 maximum=1 } }`),
    /minimum=5 is greater than maximum=1/,
  ],
  [
    "numeric bound on a string",
    file(`can get issue { path "/x"; query { field "a" type="string" minimum=1 } }`),
    /apply to integer and number fields/,
  ],
  [
    "array bound on a scalar",
    file(`can get issue { path "/x"; query { field "a" type="string" max-items=3 } }`),
    /unknown property max-items=/,
  ],
  [
    "negative item bound",
    file(`can get issue { path "/x"; query { array "a" min-items=-1 } }`),
    /min-items=-1 must be a whole number/,
  ],
  [
    "fractional item bound",
    file(`can get issue { path "/x"; query { array "a" max-items=1.5 } }`),
    /max-items=1.5 must be a whole number/,
  ],
  [
    "object items",
    file(`can get issue { path "/x"; query { array "a" items="object" } }`),
    /items="object" cannot be sent in a query string/,
  ],
  [
    "nested block in query",
    file(
      `can get issue { path "/x"; query { field "a" type="string" { field "b" type="string" } } }`,
    ),
    /a query input.s block holds only "enum"/,
  ],
  [
    "exclusive group < 2",
    file(`can get issue { path "/x"; query { field "a" type="string"; mutually-exclusive "a" } }`),
    /at least two inputs/,
  ],
  [
    "exclusive unknown name",
    file(
      `can get issue { path "/x"; query { field "a" type="string"; mutually-exclusive "a" "z" } }`,
    ),
    /names "z", which this grant does not declare/,
  ],
  [
    "exclusive repeated name",
    file(
      `can get issue { path "/x"; query { field "a" type="string"; field "b" type="string"; mutually-exclusive "a" "a" } }`,
    ),
    /names an input twice/,
  ],
  [
    "exclusive group repeated",
    file(
      `can get issue { path "/x"; query { field "a" type="string"; field "b" type="string"; mutually-exclusive "a" "b"; mutually-exclusive "b" "a" } }`,
    ),
    /repeats an earlier one/,
  ],
  [
    "exclusive group with a required member",
    file(
      `can get issue { path "/x"; query { field "a" type="string" required=#true; field "b" type="string"; mutually-exclusive "a" "b" } }`,
    ),
    /names "a", which is required, so "b" could never be given; drop required=#true or the group/,
  ],
  // --- body map ---
  [
    "map without target",
    file(`can create issue { path "/x"; body { map "a.b" } }`),
    /map needs to=/,
  ],
  [
    "map with an extra prop",
    file(`can create issue { path "/x"; body { map "a.b" to="c" colour="red" } }`),
    /unknown property colour=/,
  ],
  [
    "map with a non-string source",
    file(`can create issue { path "/x"; body { map 12 to="c" } }`),
    /map source must be a quoted string/,
  ],
  [
    "map with an empty segment",
    file(`can create issue { path "/x"; body { map "a..b" to="c" } }`),
    /must be dot-separated non-empty names/,
  ],
  [
    "map with a dotted target",
    file(`can create issue { path "/x"; body { map "a.b" to="c.d" } }`),
    /to="c.d" must be one key/,
  ],
  [
    "map duplicate target",
    file(`can create issue { path "/x"; body { map "a.b" to="c"; map "a.d" to="c" } }`),
    /map target "c" appears twice/,
  ],
  [
    "map duplicate source",
    file(`can create issue { path "/x"; body { map "a.b" to="c"; map "a.b" to="d" } }`),
    /map source "a.b" appears twice/,
  ],
  [
    "map parent and child sources",
    file(`can create issue { path "/x"; body { map "a" to="c"; map "a.b" to="d" } }`),
    /overlap/,
  ],
  [
    "map mixed with fields",
    file(`can create issue { path "/x"; body { map "a.b" to="c"; field "d" type="string" } }`),
    /holds only map nodes/,
  ],
  [
    "map beside fields in another body node",
    file(`can create issue { path "/x"; body { map "a.b" to="c" }; body "d" }`),
    /cannot be combined with body fields/,
  ],
  // --- header ---
  [
    "reserved header",
    file(GET, "", `base-url "t.example"\n  auth none\n  header "Authorization" "x"`),
    /reserved/,
  ],
  [
    "header missing its value",
    file(GET, "", `base-url "t.example"\n  auth none\n  header "X-A"`),
    /takes exactly 2 arguments/,
  ],
  [
    "header empty value",
    file(GET, "", `base-url "t.example"\n  auth none\n  header "X-A" ""`),
    /must not be empty/,
  ],
  [
    "header with 3 args",
    file(GET, "", `base-url "t.example"\n  auth none\n  header "X-A" "b" "c"`),
    /takes exactly 2 arguments/,
  ],
  [
    "duplicate header in any case",
    file(GET, "", `base-url "t.example"\n  auth none\n  header "X-A" "1"\n  header "x-a" "2"`),
    /declared twice/,
  ],
  // --- auth and values ---
  [
    "unknown auth scheme",
    file(GET, "", `base-url "t.example"\n  auth basic`),
    /unknown auth scheme "basic"/,
  ],
  [
    "header-token without header",
    file(GET, "", `base-url "t.example"\n  auth header-token { value env "X" }`),
    /needs header/,
  ],
  [
    "header-token without value",
    file(GET, "", `base-url "t.example"\n  auth header-token { header "X-Key" }`),
    /needs value/,
  ],
  [
    "bearer with an unknown child",
    file(GET, "", `base-url "t.example"\n  auth bearer { token "x" }`),
    /unknown node "token"/,
  ],
  [
    "value with one arg",
    file(GET, "", `base-url "t.example"\n  auth bearer { value env }`),
    /takes exactly 2 arguments/,
  ],
  [
    "value with an unknown provider",
    file(GET, "", `base-url "t.example"\n  auth bearer { value vault "x" }`),
    /unknown value provider "vault"/,
  ],
  [
    "value inline and block",
    file(GET, "", `base-url "t.example"\n  auth bearer { value env "X" { env "Y" } }`),
    /either inline/,
  ],
  [
    "query-param without params",
    file(GET, "", `base-url "t.example"\n  auth query-param`),
    /at least one param/,
  ],
  // --- weir's stricter rules (section 8) ---
  [
    "second auth",
    file(GET, "", `base-url "t.example"\n  auth none\n  auth none`),
    /"auth" appears more than once/,
  ],
  ["missing base-url", file(GET, "", `auth none`), /missing "base-url"/],
  [
    "base-url with credentials",
    file(GET, "", `base-url "https://u:p@t.example"\n  auth none`),
    /must not carry credentials/,
  ],
  [
    "base-url with a query",
    file(GET, "", `base-url "https://t.example/?a=1"\n  auth none`),
    /query or fragment/,
  ],
  [
    "base-url not http",
    file(GET, "", `base-url "ftp://t.example"\n  auth none`),
    /http:\/\/ or https:\/\//,
  ],
  ["second wrap", `${file(GET)}\n${file(GET)}`, /a second "wrap" block/],
  [
    "unknown top-level node (typo)",
    file(GET, `withold "x" { reason "y" }`),
    /unknown top-level node "withold"; did you mean "withhold"/,
  ],
  ["properties on can", file(`can get issue x=1 { path "/x" }`), /"can" takes no properties/],
  [
    "properties on path",
    file(`can get issue { path "/x" strict=#true }`),
    /"path" takes no properties/,
  ],
  [
    "properties on restrict",
    file(`${GET}\n  restrict id matches "a*" strict=#true`),
    /"restrict" takes no properties/,
  ],
  [
    "inline proxy grant",
    file(`${GET}\n  proxy web { upstream "s" "t" }`),
    /"proxy" serves a tool of an MCP server, and this wrap names an HTTP API/,
  ],
  [
    "restrict on an unused parameter",
    file(`${GET}\n  restrict owner matches "a*"`),
    /restrict names "owner", which no grant's path uses/,
  ],
  ["restrict without matches", file(`${GET}\n  restrict id is "a*"`), /must be the word matches/],
  ["restrict with a malformed glob", file(`${GET}\n  restrict id matches "[a-"`), /unclosed "\["/],
  [
    "set beside body inputs",
    file(`can close issue { path "/x"; body "a"; set state="closed" }`),
    /"set" fixes the whole body/,
  ],
  [
    "path param shares a name with a query input",
    file(`can get issue { path "/x/{id}"; query "id" }`),
    /two inputs both name "id" \(path and query\)/,
  ],
  [
    "path param shares a name with a body input",
    file(`can create issue { path "/x/{id}"; body "id" }`),
    /two inputs both name "id" \(path and body\)/,
  ],
  [
    "path template with a query",
    file(`can get issue { path "/x?y=1" }`),
    /declare query inputs with "query"/,
  ],
  [
    "path template without a leading slash",
    file(`can get issue { path "x" }`),
    /must start with "\/"/,
  ],
  ["path parameter twice", file(`can get issue { path "/x/{id}/{id}" }`), /appears twice/],
  [
    "duplicate tool name",
    file(`${GET}\n  can get issue { path "/y" }`),
    /duplicate tool name "get_issue" from grant "can get issue"/,
  ],
  [
    "sql grant without a database",
    file(`can list orders { sql { statement "select 1" } }`),
    /is a sql grant, which needs a database/,
  ],
  [
    "database no grant uses",
    file(`${GET}\n  database pgx { value env "DSN" }`),
    /"database" is declared but no grant uses it/,
  ],
  [
    "database unknown driver",
    file(`can list orders { sql { statement "select 1" } }\n  database mysql { value env "DSN" }`),
    /database driver "mysql" is not available/,
  ],
  [
    "database without a value",
    file(`can list orders { sql { statement "select 1" } }\n  database pgx`),
    /database needs a DSN/,
  ],
  [
    "database twice",
    file(
      `can list orders { sql { statement "select 1" } }\n  database pgx { value env "A" }\n  database pgx { value env "B" }`,
    ),
    /"database"/,
  ],
  ...([
    ["sql beside path", `path "/x"; sql { statement "select 1" }`, /remove "path"/],
    ["sql beside query", `query "a"; sql { statement "select 1" }`, /remove "query"/],
    [
      "sql with raw-response",
      `raw-response; sql { statement "select 1" }`,
      /remove "raw-response"/,
    ],
    ["sql without statement", `sql { max-rows "5" }`, /sql needs a statement/],
    ["sql twice", `sql { statement "select 1" }; sql { statement "select 2" }`, /"sql"/],
    [
      "sql multiple statements",
      `sql { statement "select 1; delete from orders" }`,
      /more than one statement/,
    ],
    [
      "sql placeholder without a param",
      `sql { statement "select * from o where a = $1 and b = $2"; param "a" }`,
      /uses \$2 but the grant declares 1 param/,
    ],
    [
      "sql param never used",
      `sql { statement "select * from o where a = $1"; param "a"; param "b" }`,
      /param "b" is \$2, which the statement never uses/,
    ],
    [
      "sql question-mark placeholders",
      `sql { statement "select * from o where a = ?"; param "a" }`,
      /PostgreSQL numbers them/,
    ],
    [
      "sql read verb with a write",
      `sql { statement "delete from orders where id = $1"; param "id" type="integer" }`,
      /named as a read .* this statement writes: it starts with "DELETE"/,
    ],
    [
      "sql read verb with a data-modifying WITH",
      `sql { statement "with d as (delete from o returning *) select * from d" }`,
      /data-modifying "DELETE"/,
    ],
    ["sql bare max-rows", `sql { statement "select 1"; max-rows 50 }`, /quoted whole number/],
    [
      "sql max-rows too big",
      `sql { statement "select 1"; max-rows "10001" }`,
      /between 1 and 10000/,
    ],
    ["sql max-rows zero", `sql { statement "select 1"; max-rows "0" }`, /between 1 and 10000/],
    [
      "sql param type",
      `sql { statement "select $1"; param "a" type="date" }`,
      /must be one of string, integer, number, boolean/,
    ],
    [
      "sql param twice",
      `sql { statement "select $1, $2"; param "a"; param "a" }`,
      /declared twice/,
    ],
    [
      "sql param required not boolean",
      `sql { statement "select $1"; param "a" required="yes" }`,
      /must be a boolean/,
    ],
    ["sql unknown child", `sql { statement "select 1"; limit "5" }`, /unknown node "limit" in sql/],
    [
      "sql unterminated literal",
      `sql { statement "select 'abc" }`,
      /a string literal that is never closed/,
    ],
  ] as [string, string, RegExp][]).map(([name, inner, expected]): [string, string, RegExp] => [
    name,
    file(`can list orders { ${inner} }\n  database pgx { value env "DSN" }`),
    expected,
  ]),
  [
    "graphql with a body",
    file(
      `can search web { path "/g"; body "a"; graphql { document "query($q: String){ a }"; variable "q" } }`,
    ),
    /"graphql" builds the body itself/,
  ],
  [
    "graphql variable unused",
    file(`can search web { path "/g"; graphql { document "query { a }"; variable "q" } }`),
    /not used as \$q/,
  ],
  [
    "fail-when with raw-response",
    file(`can get feed { path "/f"; raw-response; fail-when "a" }`),
    /cannot be used with "raw-response"/,
  ],
  // --- siblings (mcp-beaver section 4) ---
  [
    "withhold duplicate",
    file(GET, `withhold "x" { reason "a" }\nwithhold "x" { reason "b" }`),
    /withheld twice/,
  ],
  [
    "withhold without reason",
    file(GET, `withhold "x" { alternative "get_issue" }`),
    /withhold needs reason/,
  ],
  [
    "withhold unknown child",
    file(GET, `withhold "x" { reason "a"; why "b" }`),
    /unknown node "why"/,
  ],
  ["withhold property form", file(GET, `withhold "x" reason="a"`), /takes a block/],
  ["withhold shadows a grant", file(GET, `withhold "get_issue" { reason "a" }`), /mints it/],
  [
    "withhold alternative not served",
    file(GET, `withhold "x" { reason "a"; alternative "nope" }`),
    /alternative "nope" is not a tool this guardfile serves/,
  ],
  [
    "server-info duplicate",
    file(GET, `server-info\nserver-info`),
    /"server-info" appears more than once/,
  ],
  ["server-info other arg", file(GET, `server-info enabled`), /must be the word disabled/],
  ["server-info two args", file(GET, `server-info disabled disabled`), /at most one argument/],
  ["server-info name with disabled", file(GET, `server-info disabled name="x"`), /takes no name=/],
  ["server-info empty name", file(GET, `server-info name=""`), /name= must be a non-empty/],
  ["server-info unknown prop", file(GET, `server-info colour="red"`), /unknown property colour=/],
  [
    "server-info collides with a grant",
    file(`can weir info { path "/i" }`),
    /collides with the info tool/,
  ],
  ["instructions with args", file(GET, `instructions "x" { text "a" }`), /takes no arguments/],
  ["instructions with props", file(GET, `instructions x=1 { text "a" }`), /takes no properties/],
  ["instructions unknown child", file(GET, `instructions { line "a" }`), /unknown node "line"/],
  ["instructions empty", file(GET, `instructions { text "  " }`), /at least one non-empty/],
  [
    "instructions over budget",
    file(GET, `instructions { text "${"x".repeat(501)}" }`),
    /over the 500-character budget/,
  ],
  [
    "instructions duplicate",
    file(GET, `instructions { text "a" }\ninstructions { text "b" }`),
    /appears more than once/,
  ],
  ["resource without uri", file(GET, `resource "r" { text "a" }`), /needs uri=/],
  ["resource empty uri", file(GET, `resource "r" uri="" { text "a" }`), /needs uri=/],
  [
    "resource uri not RFC 3986",
    file(GET, `resource "r" uri="docs://café" { text "a" }`),
    /not an RFC 3986 URI/,
  ],
  [
    "resource duplicate uri",
    file(GET, `resource "a" uri="x://a" { text "a" }\nresource "b" uri="x://a" { text "b" }`),
    /declared twice/,
  ],
  [
    "resource unknown prop",
    file(GET, `resource "r" uri="x://a" colour="red" { text "a" }`),
    /unknown property colour=/,
  ],
  [
    "resource unknown child",
    file(GET, `resource "r" uri="x://a" { body "a" }`),
    /unknown node "body"/,
  ],
  [
    "resource without text",
    file(GET, `resource "r" uri="x://a" { description "d" }`),
    /needs at least one text/,
  ],
  [
    "resource priority not a number",
    file(GET, `resource "r" uri="x://a" priority="high" { text "a" }`),
    /priority="high" must be a number/,
  ],
  [
    "resource priority outside 0..1",
    file(GET, `resource "r" uri="x://a" priority=1.5 { text "a" }`),
    /outside 0..1/,
  ],
  [
    "resource empty audience",
    file(GET, `resource "r" uri="x://a" { audience; text "a" }`),
    /at least one role/,
  ],
  [
    "resource unknown role",
    file(GET, `resource "r" uri="x://a" { audience "robot"; text "a" }`),
    /role "robot" is unknown/,
  ],
  [
    "resource repeated role",
    file(GET, `resource "r" uri="x://a" { audience "user" "user"; text "a" }`),
    /"user" is repeated/,
  ],
  [
    "prompt duplicate",
    file(GET, `prompt "p" { text "a" }\nprompt "p" { text "b" }`),
    /declared twice/,
  ],
  [
    "prompt unknown prop",
    file(GET, `prompt "p" colour="red" { text "a" }`),
    /unknown property colour=/,
  ],
  ["prompt unknown child", file(GET, `prompt "p" { line "a" }`), /unknown node "line"/],
  ["prompt without text", file(GET, `prompt "p" { argument "a" }`), /needs at least one text/],
  [
    "prompt required not boolean",
    file(GET, `prompt "p" { argument "a" required="yes"; text "{a}" }`),
    /boolean/,
  ],
  ["icon without src", file(GET, `icon`), /"icon" takes exactly 1 argument/],
  ["icon empty src", file(GET, `icon ""`), /must not be empty/],
  [
    "icon unknown prop",
    file(GET, `icon "https://x/i.png" colour="red"`),
    /unknown property colour=/,
  ],
  ["cache on a non-grant", file(GET, `cache "weir_info" ttl="1m"`), /not a grant-backed tool/],
  ["cache without ttl", file(GET, `cache "get_issue"`), /needs a ttl/],
  ["cache bad ttl", file(GET, `cache "get_issue" ttl="soon"`), /must be a duration/],
  ["cache unquoted ttl", file(GET, `cache "get_issue" ttl=15`), /must be a duration/],
  ["cache negative ttl", file(GET, `cache "get_issue" ttl="-1m"`), /must be positive/],
  ["cache over 24h", file(GET, `cache "get_issue" ttl="25h"`), /over the 24h0m0s ceiling/],
  [
    "cache unknown prop",
    file(GET, `cache "get_issue" ttl="1m" colour="red"`),
    /unknown property colour=/,
  ],
  [
    "cache duplicate",
    file(GET, `cache "get_issue" ttl="1m"\ncache "get_issue" ttl="2m"`),
    /duplicate/,
  ],
  [
    "cache on a destructive grant",
    file(`can delete issue { path "/x/{id}" }`, `cache "delete_issue" ttl="1m"`),
    /which is destructive/,
  ],
  ["reject-empty on a non-grant", file(GET, `reject-empty "nope"`), /not a grant-backed tool/],
  [
    "reject-empty with a prop",
    file(GET, `reject-empty "get_issue" strict=#true`),
    /takes no properties/,
  ],
  [
    "reject-empty duplicate",
    file(GET, `reject-empty "get_issue"\nreject-empty "get_issue"`),
    /duplicate/,
  ],
  [
    "reject-empty-argument without field",
    file(GET, `reject-empty-argument "get_issue"`),
    /needs field=/,
  ],
  [
    "reject-empty-argument unknown field",
    file(GET, `reject-empty-argument "get_issue" field="title"`),
    /declares no input "title"/,
  ],
  [
    "reject-empty-argument unknown prop",
    file(GET, `reject-empty-argument "get_issue" field="id" x=1`),
    /unknown property x=/,
  ],
  [
    "reject-empty-argument duplicate",
    file(
      GET,
      `reject-empty-argument "get_issue" field="id"\nreject-empty-argument "get_issue" field="id"`,
    ),
    /duplicate/,
  ],
  [
    "reject-empty-argument on a non-grant",
    file(GET, `reject-empty-argument "nope" field="id"`),
    /not a grant-backed tool/,
  ],
  ["pin on a non-grant", file(GET, `pin "nope" { query "k" env "K" }`), /not a grant-backed tool/],
  ["pin with props", file(GET, `pin "get_issue" x=1 { query "k" env "K" }`), /not properties/],
  [
    "pin unknown child",
    file(GET, `pin "get_issue" { header "k" env "K" }`),
    /unknown node "header"/,
  ],
  ["pin without children", file(GET, `pin "get_issue"`), /needs a block/],
  ["pin arity", file(GET, `pin "get_issue" { query "k" env }`), /takes exactly 3 arguments/],
  ["pin empty name", file(GET, `pin "get_issue" { query "" env "K" }`), /must not be empty/],
  [
    "pin unknown provider",
    file(GET, `pin "get_issue" { query "k" vault "K" }`),
    /unknown provider "vault"/,
  ],
  [
    "pin duplicate query",
    file(GET, `pin "get_issue" { query "k" env "K"; query "k" env "J" }`),
    /pinned twice/,
  ],
  [
    "pin duplicate node",
    file(GET, `pin "get_issue" { query "k" env "K" }\npin "get_issue" { query "j" env "J" }`),
    /duplicate/,
  ],
  [
    "pin bad from",
    file(GET, `pin "get_issue" { query "k" env "K" from="header:x" }`),
    /must be "query:<parameter>"/,
  ],
  [
    "pin collides with a caller input",
    file(`can get issue { path "/x"; query "k" }`, `pin "get_issue" { query "k" env "K" }`),
    /caller input/,
  ],
  [
    "rate-limit duplicate",
    file(GET, `rate-limit "1/1s"\nrate-limit "2/1s"`),
    /appears more than once/,
  ],
  ["rate-limit props", file(GET, `rate-limit "1/1s" burst=2`), /takes no properties/],
  ["rate-limit no arg", file(GET, `rate-limit`), /takes exactly 1 argument/],
  ["rate-limit two args", file(GET, `rate-limit "1/1s" "2/1s"`), /takes exactly 1 argument/],
  ["rate-limit count not positive", file(GET, `rate-limit "0/1s"`), /positive whole count/],
  ["rate-limit bad duration", file(GET, `rate-limit "5/soon"`), /positive duration/],
  [
    "rate-limit unknown child",
    file(GET, `rate-limit "5/1s" { shard "a" }`),
    /unknown node "shard" in rate-limit/,
  ],
  [
    "rate-limit store arity",
    file(GET, `rate-limit "5/1s" { store redis "R" }`),
    /a driver, a provider and an address/,
  ],
  [
    "rate-limit store driver not redis",
    file(GET, `rate-limit "5/1s" { store memcached env "R" }`),
    /unknown store driver "memcached"/,
  ],
  [
    "rate-limit store provider",
    file(GET, `rate-limit "5/1s" { store redis file "/r" }`),
    /store provider "file" is not allowed/,
  ],
  [
    "rate-limit store empty address",
    file(GET, `rate-limit "5/1s" { store redis env "" }`),
    /must not be empty/,
  ],
  [
    "rate-limit duplicate store",
    file(GET, `rate-limit "5/1s" { store redis env "R"; store redis env "S" }`),
    /"store" appears more than once/,
  ],
  [
    "rate-limit duplicate bucket",
    file(GET, `rate-limit "5/1s" { store redis env "R"; bucket "a"; bucket "b" }`),
    /"bucket" appears more than once/,
  ],
  [
    "rate-limit bucket without store",
    file(GET, `rate-limit "5/1s" { bucket "a" }`),
    /needs a store/,
  ],
  [
    "rate-limit literal URL not redis",
    file(GET, `rate-limit "5/1s" { store redis literal "https://cache:6379" }`),
    /not a redis URL/,
  ],
  ["confirm without a tool", file(GET, `confirm`), /confirm needs the tool it gates/],
  ["confirm unknown tool", file(GET, `confirm "get_nope"`), /not a grant-backed tool/],
  ["confirm empty message", file(GET, `confirm "get_issue" message=""`), /non-empty/],
  ["confirm unknown property", file(GET, `confirm "get_issue" text="x"`), /unknown property/],
  [
    "confirm duplicate",
    file(GET, `confirm "get_issue"\nconfirm "get_issue"`),
    /confirm "get_issue" is a duplicate/,
  ],
  ["confirm with a block", file(GET, `confirm "get_issue" { message "x" }`), /takes no block/],
  [
    "cache on a confirm-gated grant",
    file(GET, `confirm "get_issue"\ncache "get_issue" ttl="1m"`),
    /skip the human gate/,
  ],
  ...([
    [`extract "get_doc"`, /needs `as=/],
    [`extract "get_doc" as="docx"`, /is not an extraction/],
    [`extract "get_doc" as="pdf-text" max-items="5"`, /bounds pages rather than items/],
    [`extract "get_doc" as="feed-entries" max-pages="5"`, /bounds items rather than pages/],
    [`extract "get_doc" as="pdf-text" max-pages=5`, /must be a whole number/],
    [`extract "get_doc" as="pdf-text" max-pages="2.5"`, /must be a whole number/],
    [`extract "get_doc" as="pdf-text" max-pages="0"`, /must be between 1 and 200/],
    [`extract "get_doc" as="pdf-text" max-pages="201"`, /must be between 1 and 200/],
    [`extract "get_doc" as="feed-entries" max-items="251"`, /must be between 1 and 250/],
    [`extract "get_doc" as="pdf-text" pages="2"`, /unknown property pages=/],
    [`extract "get_doc" as="pdf-text"\nextract "get_doc" as="pdf-text"`, /is a duplicate/],
    [`extract "get_issue" as="pdf-text"`, /needs the grant to declare raw-response/],
    [`extract "get_nope" as="pdf-text"`, /not a grant-backed tool/],
  ] as [string, RegExp][]).map(([siblings, expected], i): [string, string, RegExp] => [
    `extract case ${i + 1}: ${siblings}`,
    file(`${GET}\n  can get doc { path "/d"; raw-response }`, siblings),
    expected,
  ]),
];

for (const [name, text, expected] of FAILURES) {
  Deno.test(`lint refuses: ${name}`, () => {
    const errors = errorsOf(text);
    assert.ok(errors.length > 0, `expected an error matching ${expected}, got none`);
    const hit = errors.find((e) => expected.test(e));
    assert.ok(hit, `expected ${expected}, got:\n${errors.join("\n")}`);
    if (name !== "no wrap") assert.match(hit, /^\d+:\d+ /, `the error has a line:column: ${hit}`);
  });
}

Deno.test("parseGuardfile(): a guardfile with no grant loads, with a warning that it grants nothing", () => {
  const r = parseGuardfile(file("", `withhold "delete_issue" { reason "never"; }`), "case.mcp.kdl");
  assert.ok(r.guardfile, r.diagnostics.map((d) => d.message).join("\n"));
  assert.deepEqual(r.guardfile.grants, []);
  assert.deepEqual(r.guardfile.withholds.map((w) => w.tool), ["delete_issue"]);
  const warnings = r.diagnostics.filter((d) => d.severity === "warning");
  assert.equal(warnings.length, 1);
  assert.match(warnings[0].message, /grants nothing/);
  assert.equal(warnings[0].position?.line, 2); // the wrap node
  assert.deepEqual(r.diagnostics.filter((d) => d.severity === "error"), []);
});

Deno.test("several errors are reported at once", () => {
  const errors = errorsOf(
    file(`can get issue { colour "red" }\n  can x { path "/" }`, `withold "y"`),
  );
  assert.ok(errors.length >= 3, errors.join("\n"));
});

Deno.test("a grant with an error still counts for restrict: one error, at the grant, not a second at the restrict", () => {
  for (
    const grant of [
      `can get issue { path "repos/{owner}/issues"; }`, // no leading "/"
      `can get issue { path "/repos/{owner}/issues?all=1"; }`,
      `can get issue { path "/repos/{owner}/../issues"; param "owner" type="string"; }`,
      `can get issue { path "/repos/{owner}/issues"; colour "red"; }`, // an unknown child
      `can get issue { path "/repos/{owner}/issues"; param "owner" type="int"; }`,
    ]
  ) {
    const errors = errorsOf(
      file(
        `restrict owner matches "me"\n  ${grant}`,
        `reject-empty-argument "get_issue" field="owner"`,
      ),
    );
    assert.equal(errors.length, 1, errors.join("\n"));
    assert.match(errors[0], /^6:.* > can get issue/, errors[0]);
  }
  // A restrict that names no grant's parameter at all is still refused, naming the ones there are.
  assert.match(
    errorsOf(file(`restrict ownr matches "me"\n  can get issue { path "repos/{owner}"; }`)).join(),
    /restrict names "ownr", which no grant's path uses.*path parameters: owner/,
  );
});

Deno.test("the boolean shim: required=true and raw=true are read as #true", () => {
  const g = load(
    file(
      `can create issue { path "/x"; body { field "t" type="string" required=true; object "m" raw=true } }`,
    ),
  );
  assert.deepEqual(g.grants[0].body, [
    { name: "t", type: "string", required: true },
    { name: "m", type: "object", required: false, raw: true },
  ]);
});

Deno.test("a bare true elsewhere is a KDL error that points at it", () => {
  const errors = errorsOf(
    file(`can get issue { path "/x"; query { field "a" type="string" upstream=true } }`),
  );
  assert.match(errors[0], /^\d+:\d+ : parse KDL: /);
});

Deno.test("verb table, method override and destructive flag", () => {
  const g = load(file(`
  can get a { path "/a" }
  can list-open b { path "/b" }
  can create-on-board c { path "/c" }
  can archive d { path "/d" }
  can set e { path "/e" }
  can remove f { path "/f" }
  can delete g { path "/g" }
  can transfer h { path "/h" }
  can search i { path "/i"; method "post" }
  can purge j { path "/j"; method "DELETE" }`));
  const m = Object.fromEntries(
    g.grants.map((x) => [x.tool, [x.method, x.methodInferred, x.destructive]]),
  );
  assert.deepEqual(m, {
    get_a: ["GET", false, false],
    "list-open_b": ["GET", false, false],
    "create-on-board_c": ["POST", false, false],
    archive_d: ["PATCH", false, false],
    set_e: ["PUT", false, false],
    remove_f: ["DELETE", false, false],
    delete_g: ["DELETE", false, true],
    transfer_h: ["POST", true, false],
    search_i: ["POST", false, false],
    purge_j: ["DELETE", false, true],
  });
});

Deno.test("server name is the last argument of wrap; base-url is normalized", () => {
  const g = load(file(GET, "", `base-url "api.example.com/v2/"\n  auth none`));
  assert.equal(g.name, "t");
  assert.equal(g.baseUrl, "https://api.example.com/v2");
});

Deno.test("resources without audience warn, and only those", () => {
  const r = parseGuardfile(
    file(
      GET,
      `resource "a" uri="x://a" { audience "assistant"; text "a" }
resource "b" uri="x://b" { text "b" }
resource "c" uri="x://c" priority=0.5 { text "c" }
resource "d" uri="x://d" { audience "user"; text "d" }`,
    ),
    "case.mcp.kdl",
  );
  assert.ok(r.guardfile);
  const warnings = r.diagnostics.filter((d) => d.severity === "warning").map((d) => d.message);
  assert.equal(warnings.length, 2);
  assert.match(warnings[0], /resource "b".*"assistant".*"user"/);
  assert.match(warnings[1], /resource "c"/);
});

Deno.test("controls are read into the model", () => {
  const g = load(file(
    `can get issue { path "/x/{id}"; query "q" }\n  can create issue { path "/x"; body "title" }`,
    `cache "get_issue" ttl="1m30s"
reject-empty "get_issue"
reject-empty-argument "create_issue" field="title"
pin "get_issue" { query "key" env "K" from="query:key"; query "org" literal "acme" }
rate-limit "5/1s"`,
  ));
  assert.deepEqual(g.controls, {
    extract: {},
    confirm: {},
    cache: { get_issue: 90_000 },
    rejectEmpty: ["get_issue"],
    rejectEmptyArguments: { create_issue: ["title"] },
    pins: {
      get_issue: [
        { name: "key", source: { chain: [{ provider: "env", address: "K" }] }, fromQuery: "key" },
        { name: "org", source: { chain: [{ provider: "literal", address: "acme" }] } },
      ],
    },
    rateLimit: { count: 5, windowMs: 1000 },
  });
});

Deno.test("param nodes, value rules and the gate opt-out are read into the model", () => {
  const g = load(file(`
  can get file {
    path "/repos/{owner}/contents/{path}/{index}"
    param "path" slashes="segments" metacharacters="allow" max-length=200
    param "index" type="integer" minimum=1 maximum=99 { enum 1 2 3; }
    query {
      field "q" type="string" metacharacters="allow" pattern="^[a-z ]+$" min-length=1 max-length=500
      field "state" type="string" { enum "open" "closed"; }
      array "tag" items="string" max-length=10
    }
    body {
      field "title" type="string" min-length=1
      array "labels" items="string" { enum "bug" "docs"; }
    }
    method "POST"
  }`));
  const grant = g.grants[0];
  assert.deepEqual(grant.params, [
    { name: "owner", type: "string", untyped: true, slashes: "refuse", metacharacters: "refuse" },
    {
      name: "path",
      type: "string",
      untyped: true,
      slashes: "segments",
      metacharacters: "allow",
      maxLength: 200,
    },
    {
      name: "index",
      type: "integer",
      slashes: "refuse",
      metacharacters: "refuse",
      minimum: 1,
      maximum: 99,
      enum: [1, 2, 3],
    },
  ]);
  assert.equal(grant.query[0].metacharacters, "allow");
  assert.equal(grant.query[0].pattern, "^[a-z ]+$");
  assert.deepEqual([grant.query[0].minLength, grant.query[0].maxLength], [1, 500]);
  assert.deepEqual(grant.query[1].enum, ["open", "closed"]);
  assert.equal(grant.query[1].metacharacters, "refuse");
  assert.equal(grant.query[2].maxLength, 10);
  assert.equal(grant.body[0].minLength, 1);
  assert.deepEqual(grant.body[1].enum, ["bug", "docs"]);
});

Deno.test("an unanchored pattern is a warning that points at its line", () => {
  const r = parseGuardfile(
    file(`can get issue { path "/x"; query { field "s" type="string" pattern="[a-z]" } }`),
    "case.mcp.kdl",
  );
  assert.ok(r.guardfile, "a warning does not stop the load");
  const w = r.diagnostics.filter((d) => d.severity === "warning");
  assert.equal(w.length, 1);
  assert.match(w[0].message, /not anchored with \^\.\.\.\$/);
  assert.equal(w[0].position?.line, 5);
});
