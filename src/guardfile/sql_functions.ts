/**
 * Which function calls a sql statement may make and still be proven to read
 * (src/guardfile/sql_reads.ts `sqlStatementClass`), by PostgreSQL's built-in
 * function names (PostgreSQL documentation, "Functions and Operators"):
 *
 * - {@link PURE_FUNCTIONS}: built-ins that change nothing, in the transaction
 *   or outside it (string, number, date, JSON, array functions, aggregates,
 *   window functions, set-returning `generate_series` and `unnest`, `pg_sleep`).
 * - {@link outsideTransaction}: built-ins whose effect a read-only transaction
 *   does not stop (another connection, the session past the transaction,
 *   other sessions, the server, its files). A call of one writes.
 * - Every other name (a user function, `nextval`, an extension's function, a
 *   built-in name called in a named schema) is unproven: it may do anything
 *   its body does, so weir does not call the statement a read unless the
 *   guardfile states the function only reads (`only-reads "<name>"`).
 * - {@link NOT_CALLS}: words that stand before `(` without calling anything.
 *
 * An unqualified name is matched as the scan records it (ASCII letters
 * lower-cased, a quoted name exactly); a schema-qualified call (`.lower`) is
 * never pure: another schema may hold a function of that name.
 *
 * Pure: no I/O.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outsideTransaction, PURE_FUNCTIONS } from "./sql_functions.ts";
 * assert.ok(PURE_FUNCTIONS.has("lower") && !PURE_FUNCTIONS.has("nextval"));
 * assert.equal(outsideTransaction(".dblink_exec"), "dblink_exec");
 * assert.equal(outsideTransaction("lower"), undefined);
 * ```
 *
 * @module
 */

/** Space-separated names, one group per line of the source. */
const names = (...groups: string[]): Set<string> =>
  new Set(groups.join(" ").split(/\s+/).filter((w) => w !== ""));

/**
 * Built-in functions proven to change nothing, in the transaction or outside
 * it. `random` advances only the session's own random sequence; `setseed`
 * (which sets it) is not here.
 */
export const PURE_FUNCTIONS: ReadonlySet<string> = names(
  // Aggregates and window functions.
  "array_agg avg bit_and bit_or bool_and bool_or count every max min string_agg sum",
  "json_agg json_object_agg jsonb_agg jsonb_object_agg corr covar_pop covar_samp",
  "stddev stddev_pop stddev_samp variance var_pop var_samp mode percentile_cont percentile_disc",
  "row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value",
  "nth_value",
  // Conditionals.
  "coalesce nullif greatest least num_nulls num_nonnulls",
  // Numbers.
  "abs cbrt ceil ceiling degrees div exp factorial floor gcd lcm ln log log10 mod pi power",
  "radians round scale sign sqrt trunc width_bucket random",
  // Strings.
  "ascii bit_length btrim char_length character_length chr concat concat_ws decode encode",
  "format initcap left length lower lpad ltrim md5 octet_length overlay position quote_ident",
  "quote_literal quote_nullable regexp_count regexp_instr regexp_like regexp_match",
  "regexp_matches regexp_replace regexp_split_to_array regexp_split_to_table regexp_substr",
  "repeat replace reverse right rpad rtrim sha224 sha256 sha384 sha512 split_part starts_with",
  "string_to_array string_to_table strpos substr substring to_ascii to_hex translate trim",
  "unistr upper normalize",
  // Formatting.
  "to_char to_date to_number to_timestamp",
  // Dates and times.
  "age clock_timestamp current_date date_bin date_part date_trunc",
  "extract isfinite justify_days justify_hours justify_interval make_date make_interval",
  "make_time make_timestamp make_timestamptz now statement_timestamp timeofday timezone",
  "transaction_timestamp pg_sleep",
  // JSON.
  "array_to_json json_array_elements json_array_elements_text json_array_length",
  "json_build_array json_build_object json_each json_each_text json_extract_path",
  "json_extract_path_text json_object json_object_keys json_strip_nulls json_typeof",
  "jsonb_array_elements jsonb_array_elements_text jsonb_array_length jsonb_build_array",
  "jsonb_build_object jsonb_each jsonb_each_text jsonb_extract_path jsonb_extract_path_text",
  "jsonb_insert jsonb_object jsonb_object_keys jsonb_path_exists jsonb_path_match",
  "jsonb_path_query jsonb_path_query_array jsonb_path_query_first jsonb_pretty jsonb_set",
  "jsonb_strip_nulls jsonb_typeof row_to_json to_json to_jsonb",
  // Arrays and sets.
  "array_append array_cat array_dims array_length array_lower array_position array_positions",
  "array_prepend array_remove array_replace array_to_string array_upper cardinality",
  "generate_series generate_subscripts unnest",
  // Text search and UUIDs.
  "plainto_tsquery phraseto_tsquery to_tsquery to_tsvector ts_rank ts_rank_cd ts_headline",
  "websearch_to_tsquery gen_random_uuid",
);

/**
 * Names in {@link PURE_FUNCTIONS} that are SQL syntax, not functions in
 * `pg_catalog` (PostgreSQL 15): unquoted, the grammar reads them; quoted
 * (`"coalesce"(x)`), PostgreSQL calls a function of that name, which only
 * another schema can hold, so a quoted call of one is not pure.
 */
export const SYNTAX_ONLY: ReadonlySet<string> = names(
  "coalesce nullif greatest least trim current_date",
);

/**
 * PostgreSQL functions whose effect a read-only transaction does not stop:
 * they act on another connection (dblink), on the session past the
 * transaction (an advisory lock, a setting), on other sessions or the server
 * (a notification, ending a backend, reloading the configuration, resetting
 * statistics, WAL and replication state), on large objects, the catalog or
 * indexes (which a read-only transaction does not guard), or on the server's
 * files; and functions that run a query given as a string. Each name
 * ending in `*` stands for every name it starts.
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
  // Large objects: lo_create and lo_from_bytea create one even in a read-only
  // transaction (PostgreSQL 15, verified); lo_import/lo_export read and write
  // the server's files.
  "lo_*",
  "loread",
  "lowrite",
  // The session past the transaction: its random sequence, its advisory locks.
  "setseed",
  "pg_advisory_unlock*",
  // A query given as a string, which the scan does not read (and a parameter
  // may fill): query_to_xml('SELECT dblink_exec(...)') and ts_stat run it
  // (verified: rows deleted through dblink inside BEGIN READ ONLY).
  "query_to_xml*",
  "cursor_to_xml*",
  "ts_stat",
  "ts_rewrite",
  // The catalog, indexes and replication slots, written past the read-only
  // check (pg_import_system_collations added 808 collations inside BEGIN READ
  // ONLY on PostgreSQL 15).
  "pg_import_system_collations",
  "brin_summarize*",
  "brin_desummarize_range",
  "gin_clean_pending_list",
  "pg_logical_slot_get_*",
];

/**
 * The function acting outside the transaction a called name is, if any (in
 * any schema: `.dblink_exec` is `dblink_exec`).
 */
export function outsideTransaction(call: string): string | undefined {
  const name = call.startsWith(".") ? call.slice(1) : call;
  const hit = OUTSIDE_TRANSACTION.some((f) =>
    f.endsWith("*") ? name.startsWith(f.slice(0, -1)) : name === f
  );
  return hit ? name : undefined;
}

/**
 * SQL words that, unquoted, stand before `(` without calling a function:
 * keywords PostgreSQL never takes as a function's name there, and type names
 * (`numeric(10, 2)`). Not here: keywords it does call as a function when one
 * of that name exists (`is`, `within`; `filter`, `over` and `join` are calls
 * unless they follow a `)`, src/guardfile/sql_scan.ts). A quoted name
 * (`"any"(x)`) always calls.
 */
export const NOT_CALLS: ReadonlySet<string> = names(
  "all and any array as between by case cast else exists from in lateral not",
  "on or row select some then using values when where with",
  "group having limit offset distinct union intersect except only fetch",
  "numeric decimal varchar char character interval timestamp time",
);
