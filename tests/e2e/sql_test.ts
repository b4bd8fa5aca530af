/**
 * `database pgx { value env "..." }` and `sql` grants against a real
 * PostgreSQL (initdb in a temp dir, 127.0.0.1, a free port), driven through
 * the real CLI: declared reads and writes work, values are bound (never SQL),
 * a read grant cannot write, max-rows truncation reaches coverage, the
 * statement timeout holds, and the DSN and its password never appear.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { postgresMissing, startPostgres } from "../support/postgres.ts";
import { until } from "../support/wait.ts";

const missing = postgresMissing();
if (missing) console.error(`SKIP sql_test: ${missing}`);

const APP_PASSWORD = "app-pass-7f3c9d21e5";

const GUARDFILE = `wrap ward mcp shop {
    database pgx { value env "SHOP_DSN" }

    can list orders {
        describe "Orders of one customer, newest first"
        sql {
            statement "SELECT id, customer, total FROM orders WHERE customer = $1 ORDER BY id"
            param "customer" type="string" required=#true
            max-rows "2"
        }
    }
    can get order {
        sql {
            statement "SELECT id, customer, total FROM orders WHERE id = $1"
            param "id" type="integer" required=#true
        }
    }
    can create order {
        sql {
            statement "INSERT INTO orders (customer, total) VALUES ($1, $2)"
            param "customer" type="string" required=#true
            param "total" type="integer" required=#true
        }
    }
    can list sneaky {
        sql {
            statement "SELECT nextval('orders_id_seq') AS n, $1::text AS note"
            param "note" type="string"
        }
    }
    can view big {
        sql {
            statement "SELECT repeat('x', $1) AS blob"
            param "n" type="integer" required=#true
        }
    }
    can view slow {
        sql {
            statement "SELECT pg_sleep($1) AS slept"
            param "seconds" type="number" required=#true
        }
    }
}
`;

Deno.test({
  name: "sql grants against a real PostgreSQL",
  ignore: missing !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const pg = await startPostgres();
    const admin = postgres(pg.adminUrl, { onnotice: () => {} });
    const file = await tempGuardfile(GUARDFILE);
    const dsn = `postgres://shop_app:${APP_PASSWORD}@127.0.0.1:${pg.port}/postgres`;
    let server: Awaited<ReturnType<typeof serveHttp>> | undefined;
    try {
      await admin.unsafe(`CREATE TABLE orders (id serial PRIMARY KEY, customer text, total int)`);
      await admin.unsafe(
        `INSERT INTO orders (customer, total) VALUES ('alice', 10), ('alice', 20), ('alice', 30), ('bob', 5)`,
      );
      await admin.unsafe(`CREATE ROLE shop_app LOGIN PASSWORD '${APP_PASSWORD}'`);
      await admin.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON orders TO shop_app`);
      await admin.unsafe(`GRANT USAGE, SELECT, UPDATE ON SEQUENCE orders_id_seq TO shop_app`);
      server = await serveHttp(file, {
        env: { SHOP_DSN: dsn },
        extra: ["--upstream-timeout", "5000", "--max-response-bytes", "100000"],
      });
      const url = server.url;

      await t.step(
        "a read returns rows and columns; max-rows cuts and coverage says so",
        async () => {
          const r = await callApi(url, "list_orders", { customer: "alice" });
          assert.equal(r.status, 200, r.text);
          const sc = r.body.structuredContent as {
            coverage: { truncated: boolean; items: Record<string, number> };
            result: {
              rows: { id: number; total: number }[];
              columns: string[];
              truncated: boolean;
            };
          };
          assert.deepEqual(sc.result.columns, ["id", "customer", "total"]);
          assert.deepEqual(sc.result.rows.map((row) => row.total), [10, 20]);
          assert.equal(sc.result.truncated, true);
          assert.equal(sc.coverage.truncated, true, "truncated lifted into coverage");
          assert.equal(sc.coverage.items.rows, 2);
          assert.match(r.text, /^\{"coverage":\{"truncated":true/);

          const bob = await callApi(url, "list_orders", { customer: "bob" });
          const b = bob.body.structuredContent as { coverage: { truncated: boolean } };
          assert.equal(b.coverage.truncated, false);
        },
      );

      await t.step("injection attempts stay data", async () => {
        const r = await callApi(url, "list_orders", { customer: "alice' OR '1'='1" });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual((r.body.structuredContent as { result: { rows: [] } }).result.rows, []);

        const wrongType = await callApi(url, "get_order", { id: "1; DROP TABLE orders" });
        assert.equal(wrongType.status, 400, "the schema says integer");

        const evil = "x'); DROP TABLE orders; --";
        const w = await callApi(url, "create_order", { customer: evil, total: 1 });
        assert.equal(w.status, 200, w.text);
        const stored = await admin.unsafe(
          `SELECT count(*)::int AS n FROM orders WHERE customer = $1`,
          [
            evil,
          ],
        );
        assert.equal(stored[0].n, 1, "stored verbatim, and the table is still there");
      });

      await t.step("a write returns rows_affected", async () => {
        const w = await callApi(url, "create_order", { customer: "carol", total: 42 });
        assert.equal(w.status, 200, w.text);
        const sc = w.body.structuredContent as {
          result: unknown;
          coverage: { truncated: boolean };
        };
        assert.deepEqual(sc.result, { rows_affected: 1 });
        assert.equal(sc.coverage.truncated, false);
      });

      await t.step("a read grant cannot write, whatever its parameter says", async () => {
        const before = await admin.unsafe(`SELECT last_value FROM orders_id_seq`);
        const r = await callApi(url, "list_sneaky", {
          note: "'); SELECT nextval('orders_id_seq'); --",
        });
        assert.equal(r.status, 400, r.text);
        assert.match(
          r.text,
          /^sql_error: list_sneaky: cannot execute nextval\(\) in a read-only transaction/,
        );
        assert.match(r.text, /SQLSTATE 25006/);
        const after = await admin.unsafe(`SELECT last_value FROM orders_id_seq`);
        assert.deepEqual(after[0], before[0], "the sequence did not move");
      });

      await t.step("the statement timeout stops a long query", async () => {
        // A 120 s sleep under a 5 s timeout: the answer and the end of the statement are
        // events that come 24x sooner than the sleep's end, so load cannot fake or break them.
        const running = async () =>
          (await admin.unsafe(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE usename = 'shop_app' AND state = 'active' AND query LIKE '%pg_sleep%'`,
          ))[0].n as number;
        const r = await callApi(url, "view_slow", { seconds: 120 }, { timeoutMs: 100_000 });
        assert.equal(r.status, 504, r.text);
        assert.match(
          r.text,
          /^sql_timeout: "view_slow" did not finish within 5000 ms \(running the statement\)/,
        );
        // Answered before the sleep ended (callApi gives up at 100 s, well inside 120 s), and
        // PostgreSQL no longer runs the statement: cancelled, not left to sleep on.
        assert.ok(
          await until(async () => (await running()) === 0),
          "PostgreSQL still runs the pg_sleep(120) statement after the timeout answer",
        );
      });

      await t.step("an answer over the size cap is refused, not sent", async () => {
        assert.equal((await callApi(url, "view_big", { n: 1000 })).status, 200);
        const r = await callApi(url, "view_big", { n: 200_000 });
        assert.equal(r.status, 502, r.text);
        assert.match(
          r.text,
          /^sql_too_large: view_big produced more than the 100000-byte answer cap \(the read stopped there\)/,
        );
      });

      await t.step("tools/list shows read grants as read-only with their params", async () => {
        const lint = await runCli(["lint", "--methods", file], { env: { SHOP_DSN: "" } });
        assert.equal(lint.code, 0, lint.stderr);
        assert.match(lint.stdout, /^create_order\t$/m, "a sql grant has no HTTP method");
        const described = await runCli(["describe", file]);
        assert.equal(described.code, 0, described.stderr);
        assert.match(described.stdout, /database pgx \(PostgreSQL\), DSN from env SHOP_DSN/);
        assert.match(
          described.stdout,
          /list_orders {2}SQL read \(read-only transaction, at most 2 rows\)/,
        );
        assert.match(described.stdout, /create_order {2}SQL write \(returns rows_affected\)/);
        assert.match(described.stdout, /sql \$1 +customer: string \(required\)/);
      });

      assert.doesNotMatch(server.stderr(), new RegExp(APP_PASSWORD), "no password in the log");
    } finally {
      await server?.stop();
      await admin.end();
      await pg.close();
      await Deno.remove(file);
    }
  },
});

Deno.test({
  name:
    "a database that refuses the login or is not there: a tool error saying what to check, without the DSN",
  ignore: missing !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const pg = await startPostgres();
    const file = await tempGuardfile(GUARDFILE);
    const wrong = `postgres://shop_app:wrong-${APP_PASSWORD}@127.0.0.1:${pg.port}/postgres`;
    const closed = `postgres://shop_app:${APP_PASSWORD}@127.0.0.1:1/postgres`;
    const nowhere = `postgres://shop_app:${APP_PASSWORD}@weir-test-no-such-host.invalid/postgres`;
    // Each refusal says what failed and what to check, naming only where the DSN comes from.
    const cases = [
      [
        wrong,
        /refused the login \(SQLSTATE 28P01\); .*; check the user and password in env SHOP_DSN/,
      ],
      [closed, /nothing is listening there .*; check that PostgreSQL is up and that env SHOP_DSN/],
      [nowhere, /host name does not resolve \(DNS\); .*; check the host in env SHOP_DSN$/],
    ] as const;
    try {
      for (const [dsn, kind] of cases) {
        const server = await serveHttp(file, { env: { SHOP_DSN: dsn } });
        try {
          const r = await callApi(server.url, "get_order", { id: 1 });
          assert.equal(r.status, 503, r.text);
          assert.match(r.text, /^sql_unavailable: the database \(DSN from env SHOP_DSN\) /);
          assert.match(r.text, kind);
          for (const text of [r.text, server.stderr()]) {
            assert.doesNotMatch(text, new RegExp(APP_PASSWORD));
            assert.doesNotMatch(
              text,
              /postgres:\/\/|shop_app|127\.0\.0\.1:1\b|no-such-host/,
            );
          }
        } finally {
          await server.stop();
        }
      }
    } finally {
      await pg.close();
      await Deno.remove(file);
    }
  },
});
