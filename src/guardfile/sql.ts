/**
 * `sql { statement "..."; param "<n>" type=... [required=#true]; max-rows "N" }`
 * inside a grant, and `database pgx { value ... }` inside `wrap`
 * (`docs/guardfile.md`, "sql"; PostgreSQL only).
 *
 * Checked here, with no database: the statement is one statement; its
 * placeholders are exactly `$1..$N` for N declared params (values are sent
 * as bind parameters, never written into the text); a grant named as a read
 * (its verb, src/guardfile/reads.ts `namedAsRead`) holds no statement proven
 * to write (`sqlStatementClass`); `max-rows` is a quoted whole number in
 * 1..10000. A grant named as a read, or whose statement is proven to read,
 * runs in a read-only transaction (`SqlSpec.reads`). The statement is split
 * as PostgreSQL's lexer does (src/guardfile/sql_scan.ts).
 *
 * @module
 */
import type { ScalarType, SqlParam, SqlSpec } from "./model.ts";
import { type NodeReader, onlyOnce, show } from "./nodes.ts";
import { scanStatement, type StatementScan } from "./sql_scan.ts";
import { namedAsRead } from "./reads.ts";
import { calledName, sqlStatementClass } from "./sql_reads.ts";
import { outsideTransaction, PURE_FUNCTIONS, SYNTAX_ONLY } from "./sql_functions.ts";

export { SQL_DRIVERS } from "./model.ts";
export { sqlAccess } from "./sql_reads.ts";
/** Rows a reading grant returns when `max-rows` is not stated. */
export const DEFAULT_MAX_ROWS = 200;
/** The largest `max-rows`. */
export const MAX_ROWS_CEILING = 10_000;

const PARAM_TYPES: readonly ScalarType[] = ["string", "integer", "number", "boolean"];

/**
 * Read a grant's `sql` block.
 * @param verb the grant's verb (whether it names a read decides, with the statement, `reads`)
 */
export function readSql(node: NodeReader, verb: string): SqlSpec | undefined {
  node.onlyProperties();
  if (node.node.values.length > 0) {
    node.error(`"sql" takes a block, not arguments; write sql { statement "..."; }`);
  }
  const kids = node.onlyChildren(["statement", "param", "max-rows", "only-reads"]);
  const statementNode = onlyOnce(kids, "statement");
  const maxRowsNode = onlyOnce(kids, "max-rows");
  if (!statementNode) {
    node.error(`sql needs a statement: add statement "SELECT ... WHERE id = $1"`);
    return undefined;
  }
  statementNode.onlyProperties();
  statementNode.noChildren();
  if (!statementNode.argCount(1, 1, "the SQL statement")) return undefined;
  const statement = statementNode.stringArg(0, "statement");
  if (!statement) return undefined;
  if (statement.trim() === "") {
    statementNode.error(`statement must not be blank; write one SQL statement`);
    return undefined;
  }

  const params: SqlParam[] = [];
  for (const p of kids.filter((k) => k.name === "param")) {
    p.onlyProperties(["type", "required"]);
    p.noChildren();
    if (!p.argCount(1, 1, `the parameter's input name, e.g. param "customer" type="string"`)) {
      continue;
    }
    const name = p.stringArg(0, "param name");
    if (!name) continue;
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) {
      p.error(
        `param name ${
          show(name)
        } must be letters, digits, _ or - (starting with a letter); rename it`,
      );
      continue;
    }
    const untyped = p.node.properties.type === undefined;
    const type = p.node.properties.type ?? "string";
    if (typeof type !== "string" || !PARAM_TYPES.includes(type as ScalarType)) {
      p.error(`param "${name}" type=${show(type)} must be one of ${PARAM_TYPES.join(", ")}`);
      continue;
    }
    const required = p.node.properties.required ?? false;
    if (typeof required !== "boolean") {
      p.error(
        `required= must be a boolean (#true or #false), found ${
          show(required)
        }: write required=#true or drop it`,
      );
      continue;
    }
    if (params.some((q) => q.name === name)) {
      p.error(`param "${name}" is declared twice; keep one param per placeholder`);
      continue;
    }
    params.push({ name, type: type as ScalarType, required, ...(untyped ? { untyped } : {}) });
  }

  let maxRows = DEFAULT_MAX_ROWS;
  if (maxRowsNode) {
    maxRowsNode.onlyProperties();
    maxRowsNode.noChildren();
    if (maxRowsNode.argCount(1, 1, `a quoted whole number, e.g. max-rows "50"`)) {
      const raw = maxRowsNode.node.values[0];
      if (typeof raw !== "string" || !/^\d+$/.test(raw)) {
        maxRowsNode.error(
          `max-rows ${show(raw)} must be a quoted whole number, e.g. max-rows "50"`,
        );
      } else if (Number(raw) < 1 || Number(raw) > MAX_ROWS_CEILING) {
        maxRowsNode.error(`max-rows ${raw} must be between 1 and ${MAX_ROWS_CEILING}`);
      } else maxRows = Number(raw);
    }
  }

  const scan = scanStatement(statement);
  let ok = true;
  if (scan.unterminated) {
    statementNode.error(`statement has ${scan.unterminated} that is never closed`);
    ok = false;
  }
  if (scan.multiple) {
    statementNode.error(
      `statement holds more than one statement (a ";" followed by more); a grant runs exactly one`,
    );
    ok = false;
  }
  if (scan.placeholders.length === 0 && scan.questionMarks > 0 && params.length > 0) {
    statementNode.error(
      `statement uses "?" placeholders; PostgreSQL numbers them: write $1..$${params.length}`,
    );
    ok = false;
  } else {
    const used = new Set(scan.placeholders);
    const highest = Math.max(0, ...used);
    if (highest > params.length) {
      statementNode.error(
        `statement uses $${highest} but the grant declares ${params.length} param(s); ` +
          `declare one param per placeholder, in order`,
      );
      ok = false;
    }
    params.forEach((p, i) => {
      if (!used.has(i + 1)) {
        statementNode.error(
          `param "${p.name}" is $${i + 1}, which the statement never uses; ` +
            `use it or remove the param`,
        );
        ok = false;
      }
    });
  }
  const onlyReads = readOnlyReads(kids.filter((k) => k.name === "only-reads"), scan);
  if (!onlyReads) ok = false;
  // One definition of read (src/guardfile/reads.ts): a grant named as a read
  // runs in a read-only transaction, and so does a statement proven to read;
  // only a statement proven to read counts as a read.
  const named = namedAsRead(verb);
  const verdict = sqlStatementClass(scan, onlyReads ?? []);
  if (named && verdict.class === "unproven" && !scan.multiple) {
    const called = verdict.call;
    statementNode.warn(
      `the grant is named as a read (verb "${verb}") and runs in a read-only transaction, but ` +
        `weir cannot prove this statement reads: ${verdict.why}; it counts as a write ` +
        `(--read-only withholds it, its readOnlyHint is false)` +
        (called
          ? `. If ${called}() changes nothing, in the transaction or outside it, state it: ` +
            `add only-reads "${called}" to the sql block (weir diff reports that as a widening)`
          : ""),
    );
  }
  if (named && verdict.class === "writes") {
    statementNode.error(
      `the grant is named as a read (verb "${verb}") and runs in a read-only transaction, but ` +
        `this statement writes: ${verdict.why}; use a writing verb (create, edit, set, ` +
        `delete, ...) for it`,
    );
    ok = false;
  }
  const reads = named || verdict.class === "reads";
  if (!ok) return undefined;
  return { statement, params, maxRows, reads, ...(onlyReads?.length ? { onlyReads } : {}) };
}

/**
 * `only-reads "<function>" ...` nodes: names the statement calls that weir
 * cannot prove read (not a built-in it knows, nor one that acts outside the
 * transaction). Undefined on an error.
 */
function readOnlyReads(nodes: NodeReader[], scan: StatementScan): string[] | undefined {
  const out: string[] = [];
  let ok = true;
  for (const n of nodes) {
    n.onlyProperties();
    n.noChildren();
    if (n.node.values.length === 0) {
      n.error(
        `only-reads names the functions the statement calls that only read, e.g. ` +
          `only-reads "report"; name one or remove the node`,
      );
      ok = false;
    }
    for (let i = 0; i < n.node.values.length; i++) {
      const name = n.stringArg(i, "function name");
      const problem = name === undefined ? "" : onlyReadsProblem(name, scan, out);
      if (name === undefined || problem) {
        if (problem) n.error(problem);
        ok = false;
        continue;
      }
      const syntax = SYNTAX_ONLY.has(name) && scan.quotedCalls.includes(name);
      if (PURE_FUNCTIONS.has(name) && !syntax && !scan.calls.includes(`.${name}`)) {
        n.warn(
          `only-reads "${name}": ${name}() is a built-in weir already proves changes nothing; ` +
            `remove it`,
        );
      }
      out.push(name);
    }
  }
  return ok ? out : undefined;
}

/** Why `only-reads` cannot name a function, if it cannot. */
function onlyReadsProblem(name: string, scan: StatementScan, stated: string[]): string {
  if (outsideTransaction(name)) {
    return `only-reads "${name}": ${name}() acts outside the transaction (a read-only ` +
      `transaction does not stop it), so it cannot be taken to only read; remove it and use ` +
      `a writing verb`;
  }
  const called = [...new Set(scan.calls.map(calledName))];
  if (!called.includes(name)) {
    return `only-reads "${name}": the statement calls no function named so (an unquoted ` +
      `name is matched in lower case, as PostgreSQL folds it); ${
        called.length ? `it calls ${called.map((c) => `${c}()`).join(", ")}` : "it calls none"
      }: name one of those or remove it`;
  }
  if (stated.includes(name)) return `only-reads names "${name}" twice; name it once`;
  return "";
}
