/**
 * Nothing weir calls a sql read may write (issue 35 item 4), held against a
 * real PostgreSQL: a grant runs read-only when its verb names a read or its
 * statement is proven to read (src/guardfile/reads.ts), and PostgreSQL's
 * read-only transaction refuses writes to the database, but not what a
 * function does outside it. For generated statements (functions that act
 * outside the transaction, and pure ones, spelled in every way PostgreSQL
 * reads a call: any case, quoted, schema-qualified, with comments or line
 * breaks before the parenthesis), every statement the loader lets a grant
 * named as a read keep is run as weir runs a read (`BEGIN READ ONLY`) and
 * must change nothing another session can see: rows (dblink), advisory
 * locks held past the transaction, the pooled session's settings,
 * notifications, other sessions (pg_terminate_backend).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import fc from "../support/property.ts";
import { postgresMissing, postgresTest, shopWithDblink } from "../support/postgres.ts";
import { sqlStatementClass } from "../../src/guardfile/sql_reads.ts";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";

const missing = postgresMissing();
if (missing) console.error(`SKIP sql_read_only_test: ${missing}`);

const APP_PASSWORD = "app-pass-2c9e71f0a4";

/** Calls, by name and arguments (`{dsn}`, `{victim}` filled in per run). */
const CALLS: readonly [string, string][] = [
  ["dblink_exec", "'{dsn}', 'DELETE FROM t'"],
  ["dblink", "'{dsn}', 'DELETE FROM t RETURNING 1'"],
  ["set_config", "'search_path', 'evil', false"],
  ["set_config", "'application_name', 'hijacked', false"],
  ["pg_advisory_lock", "42"],
  ["pg_try_advisory_lock", "43"],
  ["pg_advisory_lock_shared", "44"],
  ["pg_notify", "'weir', 'x'"],
  ["pg_terminate_backend", "{victim}"],
  ["pg_cancel_backend", "{victim}"],
  // A query given as a string: the scan does not read it.
  ["query_to_xml", "'SELECT dblink_exec(''{dsn}'', ''DELETE FROM t'')', true, false, ''"],
  ["nextval", "'s'"],
  ["lower", "'X'"],
  ["length", "'abc'"],
  ["coalesce", "NULL, 1"],
];

/** Ways PostgreSQL reads `name(` as a call. */
const BEFORE_PAREN = [
  "",
  " ",
  "/**/",
  "/* a /* nested */ b */ ",
  "-- note\n",
  "\n\t",
  // PostgreSQL ends a line comment at a carriage return too.
  "-- note\r",
  "-- note\r\n",
];

const callText = fc.record({
  call: fc.constantFrom(...CALLS),
  spelling: fc.constantFrom("plain", "upper", "quoted", "qualified", "spaced", "commented"),
  gap: fc.constantFrom(...BEFORE_PAREN),
}).map(({ call: [name, args], spelling, gap }) => {
  const schema = name.startsWith("dblink") ? "public" : "pg_catalog";
  const written = spelling === "upper"
    ? name.toUpperCase()
    : spelling === "quoted"
    ? `"${name}"`
    : spelling === "qualified"
    ? `${schema}.${name}`
    : spelling === "spaced"
    ? `${schema} . ${name}`
    : spelling === "commented"
    ? `${schema}./* x */${name}`
    : name;
  const shaped = name === "dblink"
    ? `(SELECT count(*) FROM ${written}${gap}(${args}) AS d(n int))`
    : `${written}${gap}(${args})`;
  return shaped;
});

const statement = fc.tuple(
  fc.constantFrom(
    "SELECT {c} AS v",
    "SELECT x.* FROM (SELECT {c} AS v) x",
    "WITH a AS (SELECT {c} AS v) SELECT * FROM a",
    "VALUES ({c})",
    "SELECT id FROM t WHERE ({c}) IS NOT NULL LIMIT 1",
  ),
  callText,
).map(([shape, call]) => shape.replace("{c}", call));

postgresTest(
  "a statement weir runs as a read changes nothing another session sees",
  async (pg, admin) => {
    const appDsn = `postgres://app:${APP_PASSWORD}@127.0.0.1:${pg.port}/postgres`;
    const libpq =
      `host=127.0.0.1 port=${pg.port} dbname=postgres user=app password=${APP_PASSWORD}`;
    // One connection, as a pooled session weir reuses for the next call.
    const app = postgres(appDsn, { onnotice: () => {}, max: 1 });
    const victim = postgres(appDsn, { onnotice: () => {}, max: 1 });
    const notified: string[] = [];
    try {
      await admin.unsafe(`CREATE EXTENSION dblink`);
      await admin.unsafe(`CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2), (3)`);
      await admin.unsafe(`CREATE SEQUENCE s`);
      await admin.unsafe(`CREATE ROLE app LOGIN PASSWORD '${APP_PASSWORD}'`);
      await admin.unsafe(
        `GRANT SELECT, DELETE ON t TO app; GRANT USAGE, UPDATE ON SEQUENCE s TO app`,
      );
      await admin.listen("weir", (payload) => notified.push(payload));
      const session = async () =>
        (await app`SELECT current_setting('search_path') AS path,
                          current_setting('application_name') AS name`)[0];
      const before = await session();

      let ran = 0;
      await fc.assert(
        fc.asyncProperty(statement, async (text) => {
          // Each run starts from the same state (a shrinking run repeats an earlier one).
          await admin.unsafe(`DELETE FROM t; INSERT INTO t VALUES (1), (2), (3)`);
          await app.unsafe(
            `SELECT pg_advisory_unlock_all(); RESET search_path; RESET application_name`,
          );
          notified.length = 0;
          const victimPid = (await victim`SELECT pg_backend_pid() AS pid`)[0].pid as number;
          const sql = text.replaceAll("{dsn}", libpq).replaceAll("{victim}", String(victimPid));
          // What the loader lets a grant named as a read keep: anything not proven to write.
          const file = `wrap ward mcp shop {
    database pgx { value env "DSN"; }
    can list rows { sql { statement ${JSON.stringify(sql)}; }; }
}`;
          const loaded = loadGuardfileText(file, "shop.mcp.kdl");
          const refused = loaded.diagnostics.some((d) => d.severity === "error");
          assert.equal(refused, sqlStatementClass(sql).class === "writes", sql);
          if (refused) return;
          ran++;
          // As weir runs a read (src/guard/sql.ts): a read-only transaction.
          await app.begin("read only", (tx) => tx.unsafe(sql, [], { prepare: true }))
            .catch(() => {});
          const rows = (await admin`SELECT count(*)::int AS n FROM t`)[0].n;
          const locks = await admin`SELECT objid FROM pg_locks WHERE locktype = 'advisory'`;
          const now = await session();
          const alive = await victim`SELECT 1 AS one`.then(() => true, () => false);
          assert.equal(rows, 3, `${sql}: weir runs it as a read, and it deleted rows`);
          assert.deepEqual([...locks], [], `${sql}: it holds an advisory lock past the read`);
          assert.deepEqual(now, before, `${sql}: it changed the pooled session's settings`);
          assert.deepEqual(notified, [], `${sql}: it notified another session`);
          assert.ok(alive, `${sql}: it ended another session`);
        }),
        { numRuns: 150 },
      );
      assert.ok(ran > 20, `only ${ran} statements ran as reads: the generator lost its reads`);
    } finally {
      await app.end({ timeout: 1 }).catch(() => {});
      await victim.end({ timeout: 1 }).catch(() => {});
    }
  },
);

Deno.test("weir lint refuses a read that calls dblink; --read-only withholds a call hidden by a comment", async () => {
  const named = await tempGuardfile(`wrap ward mcp shop {
    database pgx { value env "DSN"; }
    can list orders {
        sql { statement "SELECT * FROM dblink('dbname=shop', 'DELETE FROM orders RETURNING id') AS d(id int)"; }
    }
}`);
  const lint = await runCli(["lint", named]);
  assert.equal(lint.code, 1, lint.stderr);
  assert.match(
    lint.stderr,
    /named as a read \(verb "list"\).*it calls dblink\(\), which acts outside the transaction/,
  );

  // A compound verb a reader takes for a read (issue 34 item 8) is a read for sql too.
  const compound = await tempGuardfile(`wrap ward mcp shop {
    database pgx { value env "DSN"; }
    can get-open orders { sql { statement "DELETE FROM orders WHERE open"; }; }
}`);
  const refused = await runCli(["lint", compound]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /named as a read \(verb "get-open"\)/);

  const hidden = await tempGuardfile(`wrap ward mcp shop {
    database pgx { value env "DSN"; }
    can run cleanup {
        sql { statement "SELECT dblink_exec /* the other database */ ('dbname=shop', 'DELETE FROM orders')"; }
    }
}`);
  const described = await runCli(["describe", "--format", "json", "--read-only", hidden]);
  assert.equal(described.code, 0, described.stderr);
  const tool = JSON.parse(described.stdout).tools.find((t: { name: string }) =>
    t.name === "run_cleanup"
  );
  assert.equal(tool.kind, "withheld", "a write is not served in read-only mode");
  const plain = await runCli(["describe", hidden]);
  assert.match(plain.stdout, /run_cleanup {2}SQL write/);
});

postgresTest(
  "a database with standard_conforming_strings off reads a statement as weir's lint did",
  async (pg, admin) => {
    let server: Awaited<ReturnType<typeof serveHttp>> | undefined;
    try {
      const { libpq, dsn } = await shopWithDblink(pg, admin, APP_PASSWORD);
      // A legacy setting: a backslash then escapes a quote inside '...'.
      await admin.unsafe(`ALTER DATABASE postgres SET standard_conforming_strings = off`);
      // The scan (standard strings) sees two literals and no call: a read. With the
      // setting off, PostgreSQL sees one literal, then dblink_exec.
      const statement = `SELECT 'x\\' AS a, ' AS b, dblink_exec($q$${libpq}$q$, ` +
        `$q$DELETE FROM t$q$) AS c --'`;
      assert.equal(sqlStatementClass(statement).class, "reads");
      const file = await tempGuardfile(`wrap ward mcp shop {
    database pgx { value env "SHOP_DSN"; }
    can run report { sql { statement ${JSON.stringify(statement)}; }; }
}`);
      server = await serveHttp(file, {
        env: { SHOP_DSN: dsn },
      });
      const r = await callApi(server.url, "run_report", {});
      assert.equal(r.status, 200, r.text);
      const rows = (await admin`SELECT count(*)::int AS n FROM t`)[0].n;
      assert.equal(rows, 3, "the statement ran dblink_exec, which the lint read as text");
    } finally {
      await server?.stop();
    }
  },
  1,
);

postgresTest(
  "a line comment ends at a carriage return, as PostgreSQL's lexer ends it: no call hides past one",
  async (pg, admin) => {
    let server: Awaited<ReturnType<typeof serveHttp>> | undefined;
    try {
      const { libpq, dsn } = await shopWithDblink(pg, admin, APP_PASSWORD);
      // PostgreSQL's "--" comment ends at \n or \r (scan.l: newline [\n\r]); a scan that ends
      // it at \n only reads the rest of the line as a comment, and the statement as a read.
      const call = `dblink_exec($q$${libpq}$q$, $q$DELETE FROM t$q$)`;
      for (
        const statement of [
          `SELECT 1 AS a -- the total\r, ${call} AS b`,
          `SELECT dblink_exec -- on the other database\r($q$${libpq}$q$, $q$DELETE FROM t$q$)`,
        ]
      ) {
        assert.equal(sqlStatementClass(statement).class, "writes", JSON.stringify(statement));
        const named = await tempGuardfile(`wrap ward mcp shop {
    database pgx { value env "SHOP_DSN"; }
    can list rows { sql { statement ${JSON.stringify(statement)}; }; }
}`);
        const lint = await runCli(["lint", named]);
        assert.equal(lint.code, 1, lint.stderr);
        assert.match(lint.stderr, /named as a read.*it calls dblink_exec\(\), which acts outside/);
        // Not named as a read: served as a write, never under --read-only.
        const file = await tempGuardfile(`wrap ward mcp shop {
    database pgx { value env "SHOP_DSN"; }
    can run report { sql { statement ${JSON.stringify(statement)}; }; }
}`);
        const described = await runCli(["describe", "--format", "json", "--read-only", file]);
        assert.equal(described.code, 0, described.stderr);
        const tool = JSON.parse(described.stdout).tools.find((t: { name: string }) =>
          t.name === "run_report"
        );
        assert.equal(tool.kind, "withheld", "a write is not served in read-only mode");
        server = await serveHttp(file, {
          env: { SHOP_DSN: dsn },
          extra: ["--read-only"],
        });
        const r = await callApi(server.url, "run_report", {});
        assert.equal(r.status, 403, r.text);
        await server.stop();
        server = undefined;
        const rows = (await admin`SELECT count(*)::int AS n FROM t`)[0].n;
        assert.equal(rows, 3, `${JSON.stringify(statement)} deleted rows under --read-only`);
      }
    } finally {
      await server?.stop();
    }
  },
  1,
);
