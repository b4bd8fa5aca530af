/**
 * A statement weir proves to read calls no function it did not see, held
 * against a real PostgreSQL. PostgreSQL calls a function where weir's scan
 * (src/guardfile/sql_scan.ts) once saw a keyword: a quoted name (`"any"(x)`),
 * a quoted name of SQL syntax that is no built-in function (`"coalesce"(1)`),
 * an unquoted keyword PostgreSQL also takes as a function's name (`filter(1)`,
 * `over(1)`, `join(1)`, `within(1)`, `is(1)`), a name starting with a
 * character past ASCII the scan took for a space (U+00A0 before `lower`).
 * For generated statements calling such functions (each takes a session
 * advisory lock, which a read-only transaction does not stop), and the
 * clauses those words really are (`FILTER (`, `OVER (`, `INNER JOIN (`),
 * every statement weir proves to read is run as weir runs a read
 * (`BEGIN READ ONLY`) and must hold no lock past it and create no large
 * object (lo_create creates one in a read-only transaction).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import fc from "../support/property.ts";
import { postgresMissing, postgresTest, shopWithDblink } from "../support/postgres.ts";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { sqlStatementClass } from "../../src/guardfile/sql_reads.ts";
import { NOT_CALLS, SYNTAX_ONLY } from "../../src/guardfile/sql_functions.ts";

const missing = postgresMissing();
if (missing) console.error(`SKIP sql_keyword_call_test: ${missing}`);

const NBSP = "\u00a0";
/** Functions the database defines, each named as a keyword or a near-built-in. */
const TRAPS = [
  ...NOT_CALLS,
  ...SYNTAX_ONLY,
  "filter",
  "over",
  "join",
  "within",
  "is",
  `${NBSP}lower`,
];
/** Keywords PostgreSQL calls as a function unquoted (verified on PostgreSQL 15). */
const UNQUOTED_CALLS = ["filter", "over", "join", "within", "is"];

const call = fc.oneof(
  fc.record({ name: fc.constantFrom(...TRAPS), quoted: fc.constant(true) }),
  fc.record({ name: fc.constantFrom(...UNQUOTED_CALLS, `${NBSP}lower`), quoted: fc.boolean() }),
  fc.constant({ name: "lo_create", quoted: false }),
).chain(({ name, quoted }) =>
  fc.constantFrom("", " ", "/* c */", "\n").map((gap) => {
    const written = quoted ? `"${name}"` : name;
    return name === "lo_create" ? `lo_create${gap}(0)` : `${written}${gap}(1)`;
  })
);

const statement = fc.oneof(
  fc.tuple(
    fc.constantFrom(
      "SELECT {c} AS v",
      "SELECT 1 AS one, {c} AS v",
      "SELECT x.* FROM (SELECT {c} AS v) x",
      "SELECT id FROM t WHERE {c} IS NOT NULL",
      "SELECT count(*) FROM t WHERE id IN (SELECT {c})",
      // A continued E'' string ends after \'' (scan.l quotecontinue), before the call.
      "SELECT E'x'\n'\\'' , {c} AS v -- '",
    ),
    call,
  ).map(([shape, c]) => shape.replace("{c}", c)),
  // The clauses these words are: weir still proves these read.
  fc.constantFrom(
    "SELECT count(*) FILTER (WHERE id > 1) FROM t",
    "SELECT row_number() OVER (ORDER BY id) FROM t",
    "SELECT sum(id) OVER (PARTITION BY id) FROM t",
    "SELECT * FROM t INNER JOIN (SELECT 1 AS one) s ON true",
    "SELECT * FROM t LEFT JOIN (SELECT 1 AS one) s ON true",
    "SELECT * FROM t NATURAL JOIN (SELECT 1 AS id) b",
    "SELECT * FROM t WHERE id IN (1, 2) AND EXISTS (SELECT 1)",
    "SELECT CAST(id AS numeric(10, 2)) FROM t",
  ),
);

postgresTest(
  "a proven read calls no function weir did not see (keywords, quoted names, U+00A0)",
  async (pg, admin) => {
    // One connection: a pooled session weir reuses for the next call.
    const app = postgres(pg.adminUrl, { onnotice: () => {}, max: 1 });
    try {
      await admin.unsafe(`CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2), (3)`);
      for (const name of TRAPS) {
        const quoted = `"${name.replaceAll('"', '""')}"`;
        await admin.unsafe(
          `CREATE FUNCTION public.${quoted}(int) RETURNS int VOLATILE LANGUAGE plpgsql AS
           $f$ BEGIN PERFORM pg_advisory_lock(hashtext(${
            JSON.stringify(name).replaceAll('"', "'")
          })); RETURN 1; END $f$`,
        );
      }
      let proven = 0;
      let caught = 0;
      await fc.assert(
        fc.asyncProperty(statement, async (sql) => {
          await app.unsafe(`SELECT pg_advisory_unlock_all()`);
          await admin.unsafe(`SELECT lo_unlink(oid) FROM pg_largeobject_metadata`);
          const verdict = sqlStatementClass(sql);
          if (verdict.class !== "reads") {
            caught++;
            return;
          }
          proven++;
          // As weir runs a read (src/guard/sql.ts): a read-only transaction.
          await app.begin("read only", (tx) => tx.unsafe(sql, [], { prepare: true }))
            .catch(() => {});
          const locks = await admin`SELECT objid FROM pg_locks WHERE locktype = 'advisory'`;
          const objects = await admin`SELECT count(*)::int AS n FROM pg_largeobject_metadata`;
          assert.deepEqual([...locks], [], `${sql}: proven to read, it called a function`);
          assert.equal(objects[0].n, 0, `${sql}: proven to read, it created a large object`);
        }),
        { numRuns: 120 },
      );
      assert.ok(proven > 10, `only ${proven} statements proven to read: the clauses were lost`);
      assert.ok(caught > 30, `only ${caught} statements unproven: the generator lost its calls`);
    } finally {
      await app.end({ timeout: 1 }).catch(() => {});
    }
  },
);

postgresTest(
  "weir serve --read-only withholds a keyword-named or quoted call and serves the clause",
  async (pg, admin) => {
    const file = await tempGuardfile(`wrap ward mcp shop {
    database pgx { value env "SHOP_DSN"; }
    can list keyword { sql { statement "SELECT filter(1) AS v"; }; }
    can list quoted { sql { statement "SELECT \\"any\\"(1) AS v"; }; }
    can list syntax { sql { statement "SELECT \\"coalesce\\"(1) AS v"; }; }
    can list counted { sql { statement "SELECT count(*) FILTER (WHERE id > 1) AS n FROM t"; }; }
}`);
    const rowsLeft = async () => (await admin`SELECT count(*)::int AS n FROM t`)[0].n as number;
    let server: Awaited<ReturnType<typeof serveHttp>> | undefined;
    try {
      const { libpq, dsn } = await shopWithDblink(pg, admin, "app-pass-5d1e0c");
      // Functions the database defines under names the scan once took for keywords.
      for (const name of ["filter", "any", "coalesce"]) {
        await admin.unsafe(
          `CREATE FUNCTION public."${name}"(int) RETURNS int LANGUAGE plpgsql AS $f$
          BEGIN PERFORM dblink_exec('${libpq}', 'DELETE FROM t'); RETURN 1; END $f$`,
        );
      }
      server = await serveHttp(file, { env: { SHOP_DSN: dsn }, extra: ["--read-only"] });
      for (const name of ["list_keyword", "list_quoted", "list_syntax"]) {
        const withheld = await callApi(server.url, name, {});
        assert.notEqual(withheld.status, 200, `${name}: ${withheld.text}`);
        assert.equal(await rowsLeft(), 3, `--read-only ran ${name}, which deleted rows`);
      }
      const counted = await callApi(server.url, "list_counted", {});
      assert.equal(counted.status, 200, counted.text);
      assert.match(counted.text, /"n":"2"/);
    } finally {
      await server?.stop();
    }
  },
  1,
);

/** Pieces of PostgreSQL's lexer (scan.l states): quotes, escapes, comments, tags, numbers, breaks. */
const PIECES = [
  "'",
  "''",
  "E'",
  "e'",
  "\\'",
  "\\\\",
  "\\",
  '"',
  '""',
  'U&"',
  "U&'",
  "B'",
  "X'",
  "$$",
  "$a$",
  "$ab$",
  "$",
  "$1",
  "--",
  "/*",
  "*/",
  "\n",
  "\r",
  " ",
  "\t",
  "\u00a0",
  "1",
  "1E",
  "1.5e",
  "0x",
  ";",
  ",",
  "(",
  ")",
  "::",
  "x",
  "AS",
  "trap(1)",
  " trap (1)",
  '"trap"(1)',
  "FILTER",
  "OVER",
];

postgresTest(
  "generated lexer pieces: a statement weir proves to read never runs a function it missed",
  async (pg, admin) => {
    const app = postgres(pg.adminUrl, { onnotice: () => {}, max: 1 });
    try {
      await admin.unsafe(
        `CREATE FUNCTION public.trap(int) RETURNS int VOLATILE LANGUAGE plpgsql AS
         $f$ BEGIN PERFORM pg_advisory_lock(7); RETURN 1; END $f$`,
      );
      let proven = 0;
      let ran = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 12 }),
          async (pieces) => {
            const sql = `SELECT 1 AS a, ${pieces.join("")} , 2 AS b`;
            if (sqlStatementClass(sql).class !== "reads") return;
            proven++;
            await app.unsafe(`SELECT pg_advisory_unlock_all()`);
            const ok = await app.begin("read only", (tx) => tx.unsafe(sql, [], { prepare: true }))
              .then(() => true, () => false);
            if (ok) ran++;
            const locks = await admin`SELECT objid FROM pg_locks WHERE locktype = 'advisory'`;
            assert.deepEqual(
              [...locks],
              [],
              `${JSON.stringify(sql)}: proven to read, it ran trap()`,
            );
          },
        ),
        { numRuns: 800 },
      );
      assert.ok(proven > 20, `only ${proven} statements proven: the generator lost its reads`);
      assert.ok(ran > 5, `only ${ran} proven statements ran: the generator lost its valid SQL`);
    } finally {
      await app.end({ timeout: 1 }).catch(() => {});
    }
  },
);
