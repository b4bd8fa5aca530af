/** The statement scan behind the sql lint rules: literals, comments and dollar quotes are skipped. */
import assert from "node:assert/strict";
import { scanStatement } from "../../src/guardfile/sql_scan.ts";
import { sqlStatementClass } from "../../src/guardfile/sql_reads.ts";

Deno.test("placeholders inside literals, identifiers, comments and dollar quotes do not count", () => {
  const s = scanStatement(
    `SELECT '$9', E'it\\'s $8', "col$7", $$ $6; $$, $tag$ $5 $tag$ -- $4;\n /* $3; /* nested */ */ FROM t WHERE a = $1 AND b = $2;`,
  );
  assert.deepEqual(s.placeholders, [1, 2]);
  assert.equal(s.multiple, false, "a trailing ; and ; inside literals are fine");
  assert.equal(s.unterminated, undefined);
});

Deno.test("a second statement after ; is found, even after a comment", () => {
  assert.equal(scanStatement("select 1; select 2").multiple, true);
  assert.equal(scanStatement("select 1; -- done\n").multiple, false);
  assert.equal(scanStatement("select 1; /* x */ drop table t").multiple, true);
});

Deno.test("reading statements and the ways a statement writes", () => {
  const verdict = (sql: string) => sqlStatementClass(sql);
  assert.equal(verdict("/* hi */ (select 1)").class, "reads");
  assert.equal(verdict("values (1)").class, "reads");
  assert.equal(verdict("SELECT count(*), lower(name) FROM t WHERE id IN (1, 2)").class, "reads");
  const writes = (sql: string, why: RegExp) => {
    const v = verdict(sql);
    assert.equal(v.class, "writes", sql);
    assert.match((v as { why: string }).why, why);
  };
  writes("update t set a = 1", /"UPDATE"/);
  writes(
    "with x as (insert into t values (1) returning *) select * from x",
    /data-modifying "INSERT"/,
  );
  writes("copy t to stdout", /"COPY"/);
  // A row lock is refused by a read-only transaction: it is not a read.
  writes("SELECT * FROM t FOR UPDATE", /locks rows/);
  writes("SELECT * FROM t FOR NO KEY UPDATE", /locks rows/);
  writes("SELECT * INTO archive FROM t", /INTO/);
});

Deno.test("what cannot be proven to read is not called a read", () => {
  for (
    const sql of [
      "SELECT nextval('ids')",
      "SELECT public.lower(name) FROM t",
      'SELECT "Lower"(name) FROM t',
      "SELECT 1; SELECT 2",
    ]
  ) {
    assert.equal(sqlStatementClass(sql).class, "unproven", sql);
  }
  // Words inside literals, quoted identifiers and comments are not read.
  assert.equal(sqlStatementClass(`SELECT 'delete', "update" FROM t -- insert`).class, "reads");
});

Deno.test("a sql guardfile with a database and no auth or base-url loads and lists its tool", async () => {
  const { parseGuardfile } = await import("../../src/guardfile/load.ts");
  const { guardfile, diagnostics } = parseGuardfile(
    `wrap ward mcp analytics {
    database pgx { value literal "postgres://u:p@127.0.0.1:1/db?sslmode=disable" }
    can list orders {
        sql {
            statement "SELECT id FROM orders WHERE customer = $1"
            param "customer" type="string" required=#true
        }
    }
}`,
    "analytics.mcp.kdl",
  );
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(guardfile?.grants.map((g) => g.tool), ["list_orders"]);
  assert.equal(guardfile?.auth.scheme, "none");
  assert.equal(guardfile?.baseUrl, "");
  assert.equal(guardfile?.grants[0].sql?.reads, true);
  assert.equal(guardfile?.grants[0].sql?.maxRows, 200);
});

Deno.test("a call is seen wherever PostgreSQL sees one: comments, line breaks, quotes, any letters", () => {
  const calls = (sql: string) => scanStatement(sql).calls;
  assert.deepEqual(calls("SELECT nextval /* x */ ('s')"), ["nextval"]);
  assert.deepEqual(calls("SELECT nextval -- x\n('s')"), ["nextval"]);
  assert.deepEqual(calls("SELECT pg_catalog . /* x */ nextval\n\t('s')"), [".nextval"]);
  assert.deepEqual(calls(`SELECT "dblink_exec" /**/ ('a', 'b')`), ["dblink_exec"]);
  assert.deepEqual(calls(`SELECT "we""ird"('a')`), ['we"ird']);
  assert.deepEqual(calls(`SELECT U&"\\0064blink_exec"('a', 'b')`), ["U&"]);
  // PostgreSQL folds only ASCII letters, and every character past ASCII is a letter.
  assert.deepEqual(calls("SELECT RAN\u212A() FROM t"), ["ran\u212a"]);
  assert.deepEqual(calls("SELECT évil('x'), lowerñ(x)"), ["évil", "lowerñ"]);
  // A dollar quote's tag may hold letters past ASCII: its body is a literal.
  assert.deepEqual(calls("SELECT $é$ ' $é$, dblink_exec('a', 'b') --'"), ["dblink_exec"]);
  assert.deepEqual(calls("SELECT 1e5, x.nextval FROM t x"), []);
});

Deno.test("a function that acts outside the transaction writes, however its call is written", () => {
  for (
    const sql of [
      "SELECT dblink_exec('dbname=x', 'DELETE FROM t')",
      "SELECT * FROM public.dblink /**/ ('dbname=x', 'DELETE FROM t RETURNING 1') AS d(n int)",
      `SELECT "dblink_exec"('a', 'b')`,
      "SELECT pg_advisory_lock(1)",
      "SELECT PG_TRY_ADVISORY_LOCK_SHARED(1)",
      "SELECT pg_catalog.set_config('search_path', $1, false)",
      "SELECT set_config -- x\n('role', 'admin', false)",
      "SELECT pg_notify('c', 'x')",
      "SELECT pg_terminate_backend($1)",
      "SELECT pg_stat_reset()",
      "VALUES (pg_reload_conf())",
      `SELECT U&"\\0064blink_exec"('a', 'b')`,
    ]
  ) {
    const verdict = sqlStatementClass(sql);
    assert.equal(verdict.class, "writes", sql);
  }
  // The advisory lock a transaction releases, and functions that only read, are not writes.
  assert.equal(sqlStatementClass("SELECT pg_advisory_xact_lock(1)").class, "unproven");
  assert.equal(sqlStatementClass("SELECT lower(name) FROM t").class, "reads");
});

Deno.test("a keyword PostgreSQL calls as a function is a call; its clause is not", () => {
  const verdict = (sql: string) => sqlStatementClass(sql).class;
  // PostgreSQL 15 calls a function of these names (verified: tests/e2e/sql_keyword_call_test.ts).
  for (const sql of ["SELECT filter(1)", "SELECT over(1)", "SELECT join(1)", "SELECT within(1)"]) {
    assert.equal(verdict(sql), "unproven", sql);
  }
  assert.equal(verdict("SELECT is(1)"), "unproven");
  // A quoted name always calls, whatever keyword it spells.
  for (const word of ["any", "in", "exists", "row", "cast", "values", "numeric"]) {
    assert.deepEqual(scanStatement(`SELECT "${word}"(1)`).calls, [word], word);
  }
  assert.deepEqual(scanStatement("SELECT x IN (1) AND EXISTS (SELECT 1)").calls, []);
  // SQL syntax unquoted, a function of that name (in some schema) quoted.
  assert.equal(verdict("SELECT coalesce(a, 1), greatest(a, 2) FROM t"), "reads");
  assert.equal(verdict('SELECT "coalesce"(a, 1) FROM t'), "unproven");
  assert.equal(verdict('SELECT "lower"(a) FROM t'), "reads");
  // The clauses those words are.
  assert.equal(verdict("SELECT count(*) FILTER (WHERE a) FROM t"), "reads");
  assert.equal(verdict("SELECT rank() OVER (ORDER BY a) FROM t"), "reads");
  assert.equal(verdict("SELECT * FROM t INNER JOIN (SELECT 1) s ON true"), "reads");
  assert.equal(verdict("SELECT * FROM t CROSS JOIN (SELECT 2) b"), "reads");
  assert.equal(verdict("SELECT * FROM t NATURAL JOIN (SELECT 1 AS id) b"), "reads");
  // After a name, JOIN ( may be a call: unproven, with the way out.
  const aliased = sqlStatementClass("SELECT * FROM t a JOIN (SELECT 1) s ON true");
  assert.equal(aliased.class, "unproven");
  assert.match((aliased as { why: string }).why, /write INNER JOIN/);
});

Deno.test("only PostgreSQL's whitespace separates tokens: U+00A0 is part of a name", () => {
  // PostgreSQL calls a function named "\u00a0lower" here, not lower().
  assert.deepEqual(scanStatement("SELECT \u00a0lower(1)").calls, ["\u00a0lower"]);
  assert.equal(sqlStatementClass("SELECT \u00a0lower(1)").class, "unproven");
  assert.equal(sqlStatementClass("SELECT 1,\u2028lower(1)").class, "unproven");
  assert.deepEqual(scanStatement("SELECT\t\f\v\r\nlower (1)").calls, ["lower"]);
});

Deno.test("large objects, setseed, advisory unlocks, query strings and the catalog act outside the transaction", () => {
  for (
    const sql of [
      "SELECT lo_create(0)",
      "SELECT lo_from_bytea(0, 'x')",
      "SELECT lo_import('/etc/passwd')",
      "SELECT setseed(0.5)",
      "SELECT pg_advisory_unlock_all()",
      "SELECT pg_catalog.lo_put(1, 0, 'x')",
      "SELECT lowrite(0, 'x')",
      "SELECT query_to_xml($1, true, false, '')",
      "SELECT * FROM ts_stat('SELECT dblink_exec(1)')",
      "SELECT pg_import_system_collations('public'::regnamespace)",
      "SELECT pg_logical_slot_get_changes('s', NULL, NULL)",
    ]
  ) {
    assert.equal(sqlStatementClass(sql).class, "writes", sql);
  }
});

Deno.test("only-reads cannot name a function that runs a query string", async () => {
  const { loadGuardfileText } = await import("../../src/guardfile/load.ts");
  const loaded = loadGuardfileText(
    `wrap ward mcp shop {
    database pgx { value env "DSN"; }
    can list rows { sql { statement "SELECT query_to_xml($1, true, false, '') AS x"; param "q"; only-reads "query_to_xml"; }; }
}`,
    "shop.mcp.kdl",
  );
  const errors = loaded.diagnostics.filter((d) => d.severity === "error").map((d) => d.message);
  assert.ok(
    errors.some((m) => /query_to_xml\(\).*acts outside the transaction/.test(m)),
    errors.join("\n"),
  );
});

Deno.test("a number takes no letter: PostgreSQL 14 reads 1E'...' as 1 and an E'' string", () => {
  // PostgreSQL 14 runs dblink_exec here (15 refuses the statement): the scan must see it.
  const hidden = String.raw`SELECT 1E'\'' , dblink_exec('db', 'DELETE FROM t') -- '`;
  assert.equal(sqlStatementClass(hidden).class, "writes");
  assert.deepEqual(scanStatement("SELECT 1upper('x')").calls, ["upper"]);
  assert.deepEqual(scanStatement("SELECT 1e5, 1.5e-3, .5, 2. FROM t").calls, []);
});

Deno.test("a string continued on the next line keeps its mode: E'x' then '\\'' is one E'' string", () => {
  // PostgreSQL 15 (verified) calls the function after the continued E'' string ends.
  for (const gap of ["\n", " -- c\n  -- d\n", "\n\n", "\r\n\t"]) {
    const hidden = `SELECT E'x'${gap}'\\'' , dblink_exec('db', 'DELETE FROM t') -- '`;
    assert.equal(sqlStatementClass(hidden).class, "writes", JSON.stringify(hidden));
  }
  // Continued standard strings and the literal's own doubled quote still scan as one string.
  assert.deepEqual(scanStatement("SELECT 'a'\n'b''c', upper(x) FROM t").calls, ["upper"]);
  assert.deepEqual(scanStatement("SELECT 'a'\n'dblink_exec(1)' FROM t").calls, []);
  // Without a line break it is not a continuation.
  assert.equal(scanStatement("SELECT E'x' 'y'").unterminated, undefined);
});
