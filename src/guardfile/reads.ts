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
 * - A sql grant reads when it runs in a read-only transaction (PostgreSQL
 *   refuses every write to the database there): its verb names a read, or
 *   its statement is proven to read ({@link sqlStatementClass}). A statement
 *   is classified by its words outside literals and comments; what cannot be
 *   proven to read is not called a read. What a function does outside the
 *   transaction, a read-only one does not stop (`dblink_exec` on another
 *   connection, a session's advisory lock or setting, `pg_notify`,
 *   `pg_terminate_backend`): a statement calling one writes, so a grant named
 *   as a read cannot hold it. A view or a function the statement reaches may
 *   call one unseen: the database role weir connects as should not be able to
 *   (docs/guardfile.md, "sql").
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
  if (grant.sql) {
    return grant.sql.reads
      ? { reads: true, why: "a sql read: it runs in a read-only transaction" }
      : { reads: false, why: "a sql write: it runs in a transaction that may write" };
  }
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
  | { class: "reads" }
  | { class: "writes"; why: string }
  | { class: "unproven"; why: string };

/** Statement starts that read. */
const READ_STARTS = ["select", "with", "values", "table"];

/**
 * Words that modify data inside a statement that starts as a read: a
 * data-modifying statement in a `WITH`, or `SELECT ... INTO` (which creates a
 * table). Other writing statements cannot start with a reading word.
 */
const WRITE_WORDS = ["insert", "update", "delete", "merge", "into"];

/**
 * Functions proven to change nothing (PostgreSQL's built-in aggregates,
 * string, number, date and JSON functions a query uses most). Any other
 * function call may write (a user function, `nextval`, `set_config`,
 * `dblink_exec`), so a statement calling one is not proven to read.
 */
const PURE_FUNCTIONS = new Set([
  "abs",
  "array_agg",
  "array_length",
  "array_to_string",
  "avg",
  "bool_and",
  "bool_or",
  "btrim",
  "cardinality",
  "ceil",
  "ceiling",
  "char_length",
  "character_length",
  "coalesce",
  "concat",
  "concat_ws",
  "count",
  "current_date",
  "date_part",
  "date_trunc",
  "every",
  "extract",
  "floor",
  "format",
  "greatest",
  "initcap",
  "json_agg",
  "json_build_array",
  "json_build_object",
  "json_object_agg",
  "jsonb_agg",
  "jsonb_build_array",
  "jsonb_build_object",
  "jsonb_object_agg",
  "jsonb_path_query",
  "least",
  "left",
  "length",
  "lower",
  "lpad",
  "ltrim",
  "max",
  "md5",
  "min",
  "mod",
  "now",
  "nullif",
  "position",
  "power",
  "regexp_replace",
  "replace",
  "right",
  "round",
  "row_number",
  "rank",
  "dense_rank",
  "rpad",
  "rtrim",
  "split_part",
  "sqrt",
  "string_agg",
  "strpos",
  "substr",
  "substring",
  "sum",
  "to_char",
  "to_date",
  "to_json",
  "to_jsonb",
  "to_number",
  "to_timestamp",
  "trim",
  "trunc",
  "unnest",
  "upper",
]);

/**
 * PostgreSQL functions whose effect a read-only transaction does not stop:
 * they act on another connection (dblink), on the session past the
 * transaction (an advisory lock, a setting), on other sessions or the server
 * (a notification, ending a backend, reloading the configuration, resetting
 * statistics, WAL and replication state), or on the server's files. Each name
 * ending in `*` stands for every name it starts. A call of any of them, in any
 * schema, writes.
 */
const OUTSIDE_TRANSACTION = [
  "dblink*",
  "pg_advisory_lock*",
  "pg_try_advisory_lock*",
  "set_config",
  "pg_notify",
  "pg_cancel_backend",
  "pg_terminate_backend",
  "pg_signal_backend",
  "pg_reload_conf",
  "pg_rotate_logfile*",
  "pg_log_backend_memory_contexts",
  "pg_stat_reset*",
  "pg_stat_statements_reset",
  "pg_switch_wal",
  "pg_create_restore_point",
  "pg_logical_emit_message",
  "pg_promote",
  "pg_wal_replay_pause",
  "pg_wal_replay_resume",
  "pg_backup_start",
  "pg_backup_stop",
  "pg_create_physical_replication_slot",
  "pg_create_logical_replication_slot",
  "pg_copy_physical_replication_slot",
  "pg_copy_logical_replication_slot",
  "pg_drop_replication_slot",
  "pg_replication_slot_advance",
  "pg_replication_origin_*",
  "pg_file_*",
  "lo_export",
];

/** The function of {@link OUTSIDE_TRANSACTION} a called name is, if any. */
function outsideTransaction(call: string): string | undefined {
  const name = call.startsWith(".") ? call.slice(1) : call;
  const hit = OUTSIDE_TRANSACTION.some((f) =>
    f.endsWith("*") ? name.startsWith(f.slice(0, -1)) : name === f
  );
  return hit ? name : undefined;
}

/**
 * SQL words that may stand before `(` without calling a function: keywords,
 * type names and clauses.
 */
const NOT_CALLS = new Set([
  "all",
  "and",
  "any",
  "array",
  "as",
  "between",
  "by",
  "case",
  "cast",
  "else",
  "exists",
  "filter",
  "from",
  "in",
  "is",
  "join",
  "lateral",
  "not",
  "on",
  "or",
  "over",
  "row",
  "select",
  "some",
  "then",
  "using",
  "values",
  "when",
  "where",
  "with",
  "within",
  "numeric",
  "decimal",
  "varchar",
  "char",
  "character",
  "interval",
  "timestamp",
  "time",
]);

/**
 * What a statement does, from its words outside literals, quoted
 * identifiers and comments (the lexer of src/guardfile/sql_scan.ts).
 * Proven to write: it starts with a writing statement, or holds a
 * data-modifying word, `SELECT ... INTO`, a row lock (`FOR UPDATE`,
 * `FOR SHARE`), or a call of a function that acts outside the transaction
 * (`dblink_exec`, `pg_advisory_lock`, `set_config`, ...). Proven to read: a single `SELECT`, `WITH`, `VALUES` or
 * `TABLE` with none of those that calls only functions known to change
 * nothing. Anything else is unproven (and not called a read).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sqlStatementClass } from "./reads.ts";
 * assert.equal(sqlStatementClass("SELECT id FROM t WHERE lower(name) = $1").class, "reads");
 * assert.equal(sqlStatementClass("DELETE FROM t").class, "writes");
 * assert.equal(sqlStatementClass("SELECT nextval('s')").class, "unproven");
 * assert.equal(sqlStatementClass("SELECT dblink_exec('db', 'DELETE FROM t')").class, "writes");
 * ```
 */
export function sqlStatementClass(statement: string | StatementScan): StatementClass {
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
  const unknown = scan.calls.find((c) => !PURE_FUNCTIONS.has(c) && !NOT_CALLS.has(c));
  if (unknown) {
    return {
      class: "unproven",
      why: `it calls ${unknown}(), which may write (weir proves only built-in functions read)`,
    };
  }
  return { class: "reads" };
}
