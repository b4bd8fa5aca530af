/**
 * A sql grant named as a read whose statement weir cannot prove reads (issue
 * 35 item 4): `can list report { sql { statement "SELECT * FROM report($1)" } }`
 * runs in a read-only transaction, but a user function may act outside it
 * (here `report()` deletes rows through dblink), so weir does not call it a
 * read: lint warns naming the function and how to state it, `--read-only`
 * withholds it, its readOnlyHint is false (both MCP revisions, official
 * clients), describe says "not proven to read" and `weir verify` of the
 * read-only file agrees. A function the file states only reads
 * (`only-reads "summary"`) is counted as a read and served read-only.
 * Against a real PostgreSQL.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { postgresMissing, postgresTest, shopWithDblink } from "../support/postgres.ts";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";

const missing = postgresMissing();
if (missing) console.error(`SKIP sql_unproven_read_test: ${missing}`);

const APP_PASSWORD = "app-pass-7d41c9e2b0";

const FILE = `wrap ward mcp shop {
    database pgx { value env "SHOP_DSN"; }
    can list report {
        sql {
            statement "SELECT * FROM report($1) AS n"
            param "month" type="string"
        }
    }
    can list summary {
        sql {
            statement "SELECT summary() AS n"
            only-reads "summary"
        }
    }
    can list rows { sql { statement "SELECT id FROM t ORDER BY id"; }; }
}
`;

type Annotated = { name: string; description?: string; annotations?: { readOnlyHint?: boolean } };

/** tools/list through both official clients: name -> [v1's readOnlyHint, v2's]. */
async function listedHints(url: string): Promise<Map<string, Annotated[]>> {
  const v2 = new ClientV2(
    { name: "sql-read-test", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await v2.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  const v1 = new ClientV1({ name: "sql-read-test", version: "1.0.0" });
  await v1.connect(new HttpV1(new URL(`${url}/mcp`)));
  try {
    const out = new Map<string, Annotated[]>();
    for (const client of [v1, v2]) {
      const { tools } = await client.listTools();
      for (const t of tools as Annotated[]) out.set(t.name, [...(out.get(t.name) ?? []), t]);
    }
    return out;
  } finally {
    await v1.close();
    await v2.close();
  }
}

Deno.test("weir lint warns about a read it cannot prove; it is served as a write, withheld by --read-only", async () => {
  const file = await tempGuardfile(FILE);
  const lint = await runCli(["lint", file]);
  assert.equal(lint.code, 0, lint.stderr);
  const warnings = lint.stderr.split("\n").filter((l) => l.includes("warning"));
  assert.equal(warnings.length, 1, lint.stderr);
  assert.match(
    warnings[0],
    /can list report > sql > statement .*named as a read \(verb "list"\).*cannot prove this statement reads: it calls report\(\).*add only-reads "report" to the sql block/,
  );

  const described = await runCli(["describe", "--format", "json", file]);
  assert.equal(described.code, 0, described.stderr);
  const access = new Map(
    (JSON.parse(described.stdout).tools as { name: string; access: { reads: boolean } }[])
      .map((t) => [t.name, t.access.reads]),
  );
  assert.deepEqual(Object.fromEntries(access), {
    list_report: false,
    list_summary: true,
    list_rows: true,
    weir_info: true,
  });
  const text = await runCli(["describe", file]);
  assert.match(text.stdout, /list_report {2}SQL, not proven to read \(read-only transaction/);
  assert.match(text.stdout, /list_summary {2}SQL read .*\n(.*\n)*? {2}reads: .*guardfile's word/);

  // verify of the read-only file serves what describe --read-only lists.
  const readOnly = await tempGuardfile(`surface read-only=#true\n${FILE}`);
  const ro = await runCli(["describe", "--format", "json", readOnly]);
  const kinds = Object.fromEntries(
    (JSON.parse(ro.stdout).tools as { name: string; kind: string }[]).map((t) => [t.name, t.kind]),
  );
  assert.equal(kinds.list_report, "withheld");
  assert.equal(kinds.list_summary, "grant");
  const verify = await runCli(["verify", "--cases", "20", readOnly], {
    env: { SHOP_DSN: "postgres://nobody@127.0.0.1:9/none" },
  });
  assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  assert.match(verify.stdout, /list_report .* ok/);
});

postgresTest(
  "served by the shipped CLI against PostgreSQL: an unproven read is a write on both revisions",
  async (pg, admin) => {
    const file = await tempGuardfile(FILE);
    const rowsLeft = async () => (await admin`SELECT count(*)::int AS n FROM t`)[0].n as number;
    let server: Awaited<ReturnType<typeof serveHttp>> | undefined;
    try {
      const { libpq, dsn } = await shopWithDblink(pg, admin, APP_PASSWORD);
      // A report that looks like a read and deletes through another connection.
      await admin.unsafe(`CREATE FUNCTION report(m text) RETURNS SETOF int LANGUAGE plpgsql AS $f$
        BEGIN
          PERFORM dblink_exec('${libpq}', 'DELETE FROM t');
          RETURN QUERY SELECT 1;
        END $f$`);
      await admin.unsafe(
        `CREATE FUNCTION summary() RETURNS int LANGUAGE sql AS $f$ SELECT count(*)::int FROM t $f$`,
      );

      server = await serveHttp(file, { env: { SHOP_DSN: dsn }, extra: ["--read-only"] });
      const listed = await listedHints(server.url);
      for (const [name, seen] of listed) assert.equal(seen.length, 2, `${name}: both revisions`);
      for (const t of listed.get("list_report")!) {
        assert.match(t.description ?? "", /^NOT AVAILABLE: read-only mode/);
      }
      for (const name of ["list_summary", "list_rows"]) {
        for (const t of listed.get(name)!) {
          assert.equal(t.annotations?.readOnlyHint, true, name);
          assert.match(t.description ?? "", /\(a read-only query returning at most 200 rows\)/);
        }
      }
      const withheld = await callApi(server.url, "list_report", { month: "2026-11" });
      assert.notEqual(withheld.status, 200, withheld.text);
      assert.equal(await rowsLeft(), 3, "--read-only ran the unproven read");
      const summary = await callApi(server.url, "list_summary", {});
      assert.equal(summary.status, 200, summary.text);
      assert.match(summary.text, /"n":3/);
      await server.stop();

      // Served without --read-only: listed as a write (readOnlyHint false), and
      // what its function does outside the read-only transaction happens.
      server = await serveHttp(file, { env: { SHOP_DSN: dsn } });
      for (const t of (await listedHints(server.url)).get("list_report")!) {
        assert.equal(t.annotations?.readOnlyHint ?? false, false);
        assert.match(t.description ?? "", /in a read-only transaction, .*not proven to read/);
      }
      const ran = await callApi(server.url, "list_report", { month: "2026-11" });
      assert.equal(ran.status, 200, ran.text);
      assert.equal(await rowsLeft(), 0, "the read-only transaction does not stop dblink");
    } finally {
      await server?.stop();
    }
  },
  1,
);
