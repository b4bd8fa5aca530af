/**
 * One definition of read (src/guardfile/reads.ts), and every reader agrees on
 * generated grants:
 * - HTTP: for a generated OpenAPI document, `weir scaffold --select-reads`
 *   chooses exactly the operations whose scaffolded grants `--read-only`
 *   keeps, `weir describe` calls reads and the advertised `readOnlyHint`
 *   marks (a GET that sends a body is none of them);
 * - sql: for generated verbs, statements and `only-reads`, the guardfile
 *   loader refuses exactly a grant named as a read whose statement writes
 *   (and an `only-reads` naming what the statement does not call or what
 *   acts outside the transaction); a grant runs read-only when its verb
 *   names a read or its statement reads, and counts as a read (`--read-only`
 *   keeps it, describe says read, the tool says `readOnlyHint`) exactly when
 *   its statement is proven to read or reads by what `only-reads` states;
 *   lint warns where a grant named as a read is not counted as one, and
 *   `weir diff` reports adding `only-reads` as a widening;
 * - a wrapped tool reads by its `readOnlyHint`, the file's stated hint first.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { readOpenApi } from "../../src/scaffold/document.ts";
import { buildScaffold } from "../../src/scaffold/scaffold.ts";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { readOnlyView } from "../../src/guardfile/surface.ts";
import { grantAccess, mcpToolAccess, namedAsRead, READ_WORDS } from "../../src/guardfile/reads.ts";
import { calledName, sqlStatementClass } from "../../src/guardfile/sql_reads.ts";
import { surfaceOfGuardfile } from "../../src/surface/spec.ts";
import { diffSurfaces } from "../../src/diff/surface_diff.ts";
import { scanStatement } from "../../src/guardfile/sql_scan.ts";
import { grantTool } from "../../src/guard/tools.ts";
import { READ_SEGMENTS } from "../../src/mcp_upstream/allowlist.ts";
import type { Guardfile } from "../../src/guardfile/model.ts";

const METHODS = ["get", "head", "post", "put", "patch", "delete"] as const;

/** One generated operation: a method, and whether it takes a JSON request body. */
const operation = fc.record({
  method: fc.constantFrom(...METHODS),
  body: fc.boolean(),
});

function documentOf(ops: { method: string; body: boolean }[]): string {
  const paths: Record<string, unknown> = {};
  ops.forEach((op, i) => {
    const path = `/things${i}/{id}`;
    paths[path] = {
      [op.method]: {
        operationId: `op${i}`,
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        ...(op.body
          ? {
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: { type: "object", properties: { note: { type: "string" } } },
                },
              },
            },
          }
          : {}),
        responses: { "200": { description: "ok" } },
      },
    };
  });
  return JSON.stringify({
    openapi: "3.1.0",
    info: { title: "gen", version: "1" },
    servers: [{ url: "https://api.example.com" }],
    paths,
  });
}

function load(text: string): Guardfile {
  const loaded = loadGuardfileText(text, "gen.mcp.kdl");
  assert.ok(
    loaded.guardfile,
    loaded.diagnostics.map((d) => `${d.position?.line}: ${d.message}`).join("\n") + "\n" + text,
  );
  return loaded.guardfile;
}

/** Each reader's word on every grant of a guardfile, by tool name. */
function verdicts(guardfile: Guardfile) {
  const kept = new Set(readOnlyView(guardfile).grants.map((g) => g.tool));
  const described = new Map(
    surfaceOfGuardfile(guardfile).tools.map((t) => [t.name, t.access.reads]),
  );
  return guardfile.grants.map((g) => ({
    tool: g.tool,
    access: grantAccess(g).reads,
    readOnly: kept.has(g.tool),
    describe: described.get(g.tool),
    hint: grantTool(g, guardfile).annotations?.readOnlyHint === true,
  }));
}

Deno.test("scaffold --select-reads, --read-only, describe and readOnlyHint agree on generated operations", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 8 }), async (ops) => {
      const doc = await readOpenApi(documentOf(ops), "gen.json");
      const all = buildScaffold(doc, {
        select: doc.operations.map((_, i) => `op${i}`),
        source: "gen.json",
        maxBytes: 1 << 20,
      });
      const guardfile = load(all.text);
      const byOp = new Map(all.selected.map((d) => [d.op.operationId, d.name.tool]));
      for (const v of verdicts(guardfile)) {
        assert.equal(v.readOnly, v.access, `${v.tool}: --read-only keeps what reads`);
        assert.equal(v.describe, v.access, `${v.tool}: describe says what reads`);
        assert.equal(v.hint, v.access, `${v.tool}: readOnlyHint says what reads`);
      }
      const reads = new Set(verdicts(guardfile).filter((v) => v.access).map((v) => v.tool));
      const hasRead = ops.some((o) => (o.method === "get" || o.method === "head") && !o.body);
      if (!hasRead) return;
      const picked = buildScaffold(doc, {
        selectReads: true,
        source: "gen.json",
        maxBytes: 1 << 20,
      });
      const chosen = new Set(picked.selected.map((d) => byOp.get(d.op.operationId)));
      assert.deepEqual([...chosen].sort(), [...reads].sort(), "--select-reads picks the reads");
      // What it picked is served whole by --read-only.
      const scaffolded = load(picked.text);
      assert.deepEqual(readOnlyView(scaffolded).withholds.length, scaffolded.withholds.length);
    }),
    { numRuns: 40 },
  );
});

const VERBS = ["get", "list", "read", "show", "fetch", "search", "create", "delete", "set", "run"];
const STATEMENTS = [
  "SELECT id FROM t WHERE id = $1",
  "SELECT count(*) FROM t WHERE lower(name) = $1",
  "VALUES ($1)",
  "WITH x AS (SELECT $1 AS id) SELECT id FROM x",
  "SELECT nextval('seq'), $1",
  "SELECT my_function($1)",
  "SELECT * FROM reports.my_function($1) AS r",
  "SELECT my_function($1), other_function($1)",
  "SELECT id FROM t WHERE id = $1 FOR UPDATE",
  "UPDATE t SET seen = true WHERE id = $1",
  "UPDATE t SET seen = my_function($1)",
  "DELETE FROM t WHERE id = $1",
  "INSERT INTO t (id) VALUES ($1)",
  "WITH d AS (DELETE FROM t WHERE id = $1 RETURNING *) SELECT * FROM d",
  "SELECT * INTO copy FROM t WHERE id = $1",
];
/** What `only-reads` states: nothing, a function, two, a built-in, one that acts outside the transaction. */
const STATED: string[][] = [
  [],
  [],
  ["my_function"],
  ["my_function", "other_function"],
  ["nextval"],
  ["lower"],
  ["set_config"],
];

Deno.test("sql grants: lint, the transaction, --read-only, describe, diff and readOnlyHint agree on generated verbs, statements and only-reads", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...VERBS),
      fc.constantFrom(...STATEMENTS),
      fc.constantFrom(...STATED),
      (verb, statement, stated) => {
        const onlyReads = stated.length
          ? `only-reads ${stated.map((f) => `"${f}"`).join(" ")}`
          : "";
        const text = `wrap ward mcp db {
    database pgx { value env "DSN"; }
    can ${verb} row {
        sql {
            statement "${statement}"
            param "id" type="string" required=#true
            ${onlyReads}
        }
    }
}
`;
        const loaded = loadGuardfileText(text, "db.mcp.kdl");
        const messages = loaded.diagnostics.map((d) => d.message).join("\n");
        const calls = new Set(scanStatement(statement).calls.map(calledName));
        const klass = sqlStatementClass(statement, stated).class;
        const named = namedAsRead(verb);
        if (stated.some((f) => f === "set_config" || !calls.has(f))) {
          assert.equal(loaded.guardfile, undefined, `${stated}: ${statement} is refused`);
          assert.match(
            messages,
            /only-reads "\w+": (.*acts outside the transaction|the statement calls no function named so)/,
          );
          return;
        }
        if (named && klass === "writes") {
          assert.equal(loaded.guardfile, undefined, `${verb}: ${statement} is refused`);
          assert.match(
            messages,
            new RegExp(`named as a read \\(verb "${verb}"\\).*this statement writes`),
          );
          return;
        }
        const guardfile = loaded.guardfile;
        assert.ok(guardfile, messages);
        const [grant] = guardfile.grants;
        // The transaction: read-only for a grant named as a read or a statement that reads.
        assert.equal(grant.sql!.reads, named || klass === "reads", `${verb}: ${statement}`);
        // Lint warns exactly where a read-named grant is not counted as a read.
        assert.equal(
          /weir cannot prove this statement reads/.test(messages),
          named && klass === "unproven",
          `${verb}: ${statement}: ${messages}`,
        );
        for (const v of verdicts(guardfile)) {
          // Counted as a read: proven only (or on only-reads' word).
          assert.equal(v.access, klass === "reads", `${verb}: ${statement} [${stated}]`);
          assert.equal(v.readOnly, v.access);
          assert.equal(v.describe, v.access);
          assert.equal(v.hint, v.access);
        }
        // diff: stating what the statement calls and weir cannot prove widens.
        if (onlyReads !== "" && !stated.includes("lower")) {
          const before = loadGuardfileText(text.replace(onlyReads, ""), "db.mcp.kdl").guardfile!;
          const found = diffSurfaces(surfaceOfGuardfile(before), surfaceOfGuardfile(guardfile));
          assert.ok(
            found.some((f) => f.effect === "widen" && /only-reads "/.test(f.what)),
            JSON.stringify(found),
          );
        }
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("a wrapped tool reads by its readOnlyHint, the file's stated hint first; the name heuristic reads the same words", () => {
  assert.equal(mcpToolAccess({ upstream: true }).reads, true);
  assert.equal(mcpToolAccess({}).reads, false);
  assert.equal(mcpToolAccess({ upstream: false }).reads, false);
  assert.equal(mcpToolAccess({ upstream: true, stated: false }).reads, false);
  assert.equal(mcpToolAccess({ upstream: false, stated: true }).reads, true);
  assert.deepEqual([...READ_SEGMENTS].sort(), [...READ_WORDS].sort());
  for (const w of READ_WORDS) assert.ok(namedAsRead(w), `${w} names a read`);
});
