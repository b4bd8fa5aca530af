/**
 * Whether a sql grant reads: its statement classified by its words
 * (src/guardfile/sql_scan.ts) and the functions it calls
 * (src/guardfile/sql_functions.ts). The sql part of the one definition of
 * "read" (src/guardfile/reads.ts gives the rule); loaded with the sql reader
 * (src/guardfile/readers.ts), so a file without `sql` never loads the scanner.
 *
 * Pure: no I/O.
 *
 * @module
 */
import type { Access } from "./reads.ts";
import { scanStatement, type StatementScan } from "./sql_scan.ts";
import { outsideTransaction, PURE_FUNCTIONS, SYNTAX_ONLY } from "./sql_functions.ts";

/**
 * Whether a sql grant reads: its statement is proven to read (or reads by
 * the functions the guardfile states only read); see the module doc.
 * @param sql the grant's statement, whether it runs in a read-only transaction, and its `only-reads`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sqlAccess } from "./sql_reads.ts";
 * const report = { statement: "SELECT * FROM report($1)", reads: true };
 * assert.ok(!sqlAccess(report).reads);
 * assert.ok(sqlAccess({ ...report, onlyReads: ["report"] }).reads);
 * ```
 */
export function sqlAccess(
  sql: { statement: string; reads: boolean; onlyReads?: readonly string[] },
): Access {
  const verdict = sqlStatementClass(sql.statement, sql.onlyReads);
  const transaction = sql.reads
    ? "it runs in a read-only transaction"
    : "it runs in a transaction that may write";
  if (verdict.class === "reads") {
    return {
      reads: true,
      why: verdict.stated
        ? `a sql read on the guardfile's word: it reads if ${
          verdict.stated.map((f) => `${f}()`).join(" and ")
        } only read${verdict.stated.length === 1 ? "s" : ""} (only-reads); ${transaction}`
        : `a sql read: its statement is proven to read; ${transaction}`,
    };
  }
  if (verdict.class === "writes") return { reads: false, why: `a sql write: ${verdict.why}` };
  return {
    reads: false,
    why: `not proven to read: ${verdict.why}; ${transaction}` +
      (sql.reads ? ", which does not stop what a function does outside it" : ""),
  };
}

/** What a statement does: proven to read, proven to write, or not proven either way. */
export type StatementClass =
  | {
    class: "reads";
    /**
     * The functions it calls that weir cannot prove read, taken to only read
     * because the guardfile states so (`only-reads`); absent when proven.
     */
    stated?: string[];
  }
  | { class: "writes"; why: string }
  | {
    class: "unproven";
    why: string;
    /** The function it calls that weir cannot prove reads, when that is why. */
    call?: string;
  };

/** Statement starts that read. */
const READ_STARTS = ["select", "with", "values", "table"];

/**
 * Words that modify data inside a statement that starts as a read: a
 * data-modifying statement in a `WITH`, or `SELECT ... INTO` (which creates a
 * table). Other writing statements cannot start with a reading word.
 */
const WRITE_WORDS = ["insert", "update", "delete", "merge", "into"];

/**
 * What a statement does, from its words outside literals, quoted
 * identifiers and comments (the lexer of src/guardfile/sql_scan.ts).
 * Proven to write: it starts with a writing statement, or holds a
 * data-modifying word, `SELECT ... INTO`, a row lock (`FOR UPDATE`,
 * `FOR SHARE`), or a call of a function that acts outside the transaction
 * (`dblink_exec`, `pg_advisory_lock`, `set_config`, ...). Proven to read: a
 * single `SELECT`, `WITH`, `VALUES` or `TABLE` with none of those that calls
 * only functions known to change nothing (src/guardfile/sql_functions.ts) or
 * named in `onlyReads` (then `stated` lists those it called). Anything else
 * is unproven (and not called a read).
 * @param onlyReads function names the guardfile states only read (`only-reads`), matched in any schema
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sqlStatementClass } from "./sql_reads.ts";
 * assert.equal(sqlStatementClass("SELECT id FROM t WHERE lower(name) = $1").class, "reads");
 * assert.equal(sqlStatementClass("DELETE FROM t").class, "writes");
 * assert.equal(sqlStatementClass("SELECT nextval('s')").class, "unproven");
 * assert.equal(sqlStatementClass("SELECT dblink_exec('db', 'DELETE FROM t')").class, "writes");
 * assert.deepEqual(sqlStatementClass("SELECT * FROM report($1)", ["report"]), {
 *   class: "reads",
 *   stated: ["report"],
 * });
 * ```
 */
export function sqlStatementClass(
  statement: string | StatementScan,
  onlyReads: readonly string[] = [],
): StatementClass {
  const scan = typeof statement === "string" ? scanStatement(statement) : statement;
  const words = scan.words;
  const first = words[0];
  if (!first) return { class: "unproven", why: "it holds no statement" };
  if (!READ_STARTS.includes(first)) {
    return { class: "writes", why: `it starts with "${first.toUpperCase()}"` };
  }
  for (let i = 0; i + 1 < words.length; i++) {
    if (words[i] === "for" && ["update", "share", "no", "key"].includes(words[i + 1])) {
      return { class: "writes", why: `it locks rows (FOR ${words[i + 1].toUpperCase()} ...)` };
    }
  }
  for (const call of scan.calls) {
    if (call === "U&") {
      return {
        class: "writes",
        why: `it calls a function named with Unicode escapes (U&"..."), which weir does not ` +
          `read: write its name plainly`,
      };
    }
    const outside = outsideTransaction(call);
    if (outside) {
      return {
        class: "writes",
        why: `it calls ${outside}(), which acts outside the transaction (a read-only ` +
          `transaction does not stop it)`,
      };
    }
  }
  const hit = words.find((w) => WRITE_WORDS.includes(w));
  if (hit) {
    return {
      class: "writes",
      why: hit === "into"
        ? `it holds "INTO" (SELECT INTO creates a table)`
        : first === "with"
        ? `its WITH holds a data-modifying "${hit.toUpperCase()}"`
        : `it holds a data-modifying "${hit.toUpperCase()}"`,
    };
  }
  if (scan.multiple) return { class: "unproven", why: "it holds more than one statement" };
  const unknown = scan.calls.filter((c) =>
    !PURE_FUNCTIONS.has(c) || (SYNTAX_ONLY.has(c) && scan.quotedCalls.includes(c))
  );
  const unstated = unknown.find((c) => !onlyReads.includes(calledName(c)));
  if (unstated) {
    const name = calledName(unstated);
    return {
      class: "unproven",
      call: name,
      why: `it calls ${name}(), which may act outside the transaction (weir proves only ` +
        `built-in functions read${
          unstated.startsWith(".") ? ", called by their plain name" : ""
        })` +
        (unstated === "join"
          ? `; JOIN ( after a name may call a function join(): write INNER JOIN (...)`
          : ""),
    };
  }
  if (unknown.length === 0) return { class: "reads" };
  return { class: "reads", stated: [...new Set(unknown.map(calledName))] };
}

/** A called name as `only-reads` states it: without the schema (`.report` is `report`). */
export function calledName(call: string): string {
  return call.startsWith(".") ? call.slice(1) : call;
}
