/**
 * The one definition of "read": an operation that changes nothing upstream.
 * `--read-only` (`surface read-only=#true`) serves only reads, `describe` and
 * `weir diff` say read or write from it, a grant's `readOnlyHint` is it,
 * scaffold's `--select-reads` picks operations by it, and a grant named as
 * a read whose SQL writes is a lint error by it.
 *
 * - An HTTP operation reads when its method is safe (GET or HEAD, RFC 9110
 *   section 9.2.1), it sends no request body (RFC 9110 section 9.3.1 leaves
 *   a GET body's meaning to the server) and nothing else says it writes (a
 *   verb whose method is not GET, `delete`, a GraphQL document).
 * - A sql grant reads when its statement is proven to read
 *   ({@link sqlStatementClass}): a single `SELECT`, `WITH`, `VALUES` or
 *   `TABLE` that modifies nothing and calls only built-in functions known to
 *   change nothing, in the transaction or outside it
 *   (src/guardfile/sql_functions.ts), or functions the guardfile states only
 *   read (`only-reads "<name>"`, on its author's word: `weir diff` reports
 *   such a statement as a widening). A statement is classified by its words
 *   outside literals and comments; what cannot be proven to read is not
 *   called a read. A grant named as a read runs in a read-only transaction
 *   whatever its statement (PostgreSQL refuses every write to the database
 *   there), but that transaction does not stop what a function does outside
 *   it (`dblink_exec` on another connection, a session's advisory lock or
 *   setting, `pg_notify`, `pg_terminate_backend`): a statement calling one of
 *   those writes, so a grant named as a read cannot hold it, and one calling
 *   a function weir does not know (a user function may call them) is named
 *   as a read but not counted as one (lint warns). A view the statement
 *   reads, an operator or a cast may run a function unseen: the database role
 *   weir connects as should not be able to (docs/guardfile.md, "sql").
 * - A tool of a wrapped MCP server reads when its `readOnlyHint` is true: the
 *   guardfile's `annotations read-only=` when stated, else the server's own.
 *
 * Pure: no I/O.
 *
 * @module
 */
import type { Grant, HttpMethod } from "./model.ts";
import { methodForVerb, READ_WORDS, readLikePrefix } from "./verbs.ts";
import { scanStatement, type StatementScan } from "./sql_scan.ts";
import { outsideTransaction, PURE_FUNCTIONS, SYNTAX_ONLY } from "./sql_functions.ts";

/** Read or write, and the rule that decided, in words. */
export interface Access {
  /** The operation changes nothing upstream. */
  reads: boolean;
  /** Why. */
  why: string;
}

/** The read words: `READ_WORDS` of the verb table (`src/guardfile/verbs.ts`), one list. */
export { READ_WORDS };

/**
 * Whether a grant's verb names a read: the verb table maps it to GET
 * (`get`, `list`, `list-...`, a word of {@link READ_WORDS}), or it is a
 * compound verb a reader takes for a read (`get-open`, `find_by_tag`:
 * `readLikePrefix`), which an HTTP grant must give a method and a sql grant
 * runs as a read.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { namedAsRead } from "./reads.ts";
 * assert.ok(namedAsRead("read") && namedAsRead("list-open") && !namedAsRead("create"));
 * assert.ok(namedAsRead("get-open") && namedAsRead("find_by_tag") && !namedAsRead("getall"));
 * ```
 */
export function namedAsRead(verb: string): boolean {
  const byTable = methodForVerb(verb);
  if (!byTable.inferred) return byTable.method === "GET";
  return readLikePrefix(verb) !== undefined;
}

/** What an HTTP operation is, for {@link httpAccess}. */
export interface HttpOperation {
  /** The method sent. */
  method: HttpMethod | string;
  /** Whether the request carries a body (fields, a fixed body, a GraphQL document). */
  sendsBody: boolean;
  /** Marked destructive. */
  destructive?: boolean;
  /** The verb, when a grant names one. */
  verb?: string;
}

/**
 * Whether an HTTP operation reads (see the module doc).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { httpAccess } from "./reads.ts";
 * assert.ok(httpAccess({ method: "GET", sendsBody: false }).reads);
 * assert.ok(!httpAccess({ method: "GET", sendsBody: true }).reads);
 * ```
 */
export function httpAccess(op: HttpOperation): Access {
  const method = op.method.toUpperCase();
  if (method !== "GET" && method !== "HEAD") {
    return { reads: false, why: `${method} is not a safe method (RFC 9110 section 9.2.1)` };
  }
  if (op.destructive) return { reads: false, why: "it is marked destructive" };
  if (op.verb !== undefined) {
    const byVerb = methodForVerb(op.verb);
    if (!byVerb.inferred && byVerb.method !== "GET") {
      return { reads: false, why: `its verb "${op.verb}" maps to ${byVerb.method}` };
    }
  }
  if (op.sendsBody) {
    return {
      reads: false,
      why:
        `a ${method} with a request body (RFC 9110 section 9.3.1 leaves its meaning to the server)`,
    };
  }
  return { reads: true, why: `${method} with no body` };
}

/** Whether a grant reads (see the module doc). */
export function grantAccess(grant: Grant): Access {
  if (grant.sql) return sqlAccess(grant.sql);
  if (grant.graphql) {
    return { reads: false, why: "a GraphQL document is sent as a body (it may hold a mutation)" };
  }
  return httpAccess({
    method: grant.method,
    destructive: grant.destructive,
    verb: grant.verb,
    sendsBody: grant.body.length > 0 || grant.bodyMap.length > 0 || grant.set !== undefined,
  });
}

/**
 * Whether a sql grant reads: its statement is proven to read (or reads by
 * the functions the guardfile states only read); see the module doc.
 * @param sql the grant's statement, whether it runs in a read-only transaction, and its `only-reads`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sqlAccess } from "./reads.ts";
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

/** The hints a wrapped MCP server's tool states, and the guardfile's overrides of them. */
export interface McpHints {
  /** The server's `readOnlyHint`. */
  upstream?: boolean;
  /** The guardfile's `annotations read-only=`. */
  stated?: boolean;
}

/** Whether a wrapped MCP server's tool reads (see the module doc). */
export function mcpToolAccess(hints: McpHints): Access {
  if (hints.stated !== undefined) {
    return {
      reads: hints.stated,
      why: `the guardfile states read-only=${hints.stated ? "#true" : "#false"}`,
    };
  }
  if (hints.upstream === true) return { reads: true, why: "the server says readOnlyHint: true" };
  return {
    reads: false,
    why: hints.upstream === false
      ? "the server says readOnlyHint: false"
      : "the server states no readOnlyHint (MCP's default is false)",
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
 * import { sqlStatementClass } from "./reads.ts";
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
