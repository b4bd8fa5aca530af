/**
 * Running `sql` grants against PostgreSQL (`database pgx { value ... }`).
 *
 * - The statement is sent exactly as authored; every input goes as a bind
 *   parameter (`$1..$N`) through the extended query protocol, which also
 *   refuses a second statement ("cannot insert multiple commands into a
 *   prepared statement"): a value is data, never SQL.
 * - A reading grant runs in `BEGIN READ ONLY` (PostgreSQL refuses any write
 *   there, whatever the statement or its values do), fetches at most
 *   `max-rows + 1` rows through a portal (so a huge result is never read), and
 *   answers `{rows, columns, truncated}`; `truncated` is lifted into
 *   `coverage.truncated`. A writing grant answers `{rows_affected}`.
 * - Every statement runs under `SET LOCAL statement_timeout` (the upstream
 *   deadline, `--upstream-timeout`), and a cancelled call cancels its query.
 * - The host refuses an answer larger than the upstream answer cap
 *   (`--max-response-bytes`) as `sql_too_large`.
 * - The DSN is resolved at call time like a credential; the pool is opened on
 *   the first call. Messages never carry the DSN, its password or host: a
 *   connection or authentication failure is named by its kind only.
 *
 * Driver: `npm:postgres` (loaded only when a guardfile declares a database).
 *
 * @module
 */
import { type Logger, ToolError } from "../mcp/server.ts";
import type { Database, Grant, SqlSpec } from "../guardfile/model.ts";
import { resolveValue, type ValueResolver } from "./values.ts";
import { toHex } from "../transport/bytes.ts";
import type { Sql, TransactionSql } from "postgres";
import { WeirError } from "../errors/kinds.ts";

/** What one sql call produced, before the coverage envelope. */
export interface SqlAnswer {
  /** `{rows, columns, truncated}` for a read, `{rows_affected}` for a write. */
  result: Record<string, unknown>;
  /** Size of the encoded result in bytes. */
  bytes: number;
  /** A read had more rows than `max-rows`. */
  truncated: boolean;
}

const POOLS = new Map<string, Promise<Sql>>();

/** Runs sql grants; connection pools are kept per DSN for the process. */
export class SqlRunner {
  readonly #database: Database;
  readonly #resolver: ValueResolver;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  #dsn: string | undefined;

  /**
   * @param timeoutMs statement timeout in ms (0 = none)
   */
  constructor(database: Database, resolver: ValueResolver, timeoutMs: number, log: Logger) {
    this.#database = database;
    this.#resolver = resolver;
    this.#timeoutMs = timeoutMs;
    this.#log = log;
  }

  /**
   * Run a grant's statement with the call's arguments.
   * @throws {ToolError} `sql_unavailable` 503 (no connection), `sql_error` 400 (the
   *   database refused the statement or a value), `sql_timeout` 504, `cancelled` 499
   */
  async run(grant: Grant, args: Record<string, unknown>, signal: AbortSignal): Promise<SqlAnswer> {
    const spec = grant.sql!;
    const values = spec.params.map((p) => toParam(args[p.name]));
    const dsn = (await resolveValue(this.#database.dsn, this.#resolver, "the database DSN", {
      code: "dsn_missing",
    })).value;
    const sql = await this.#connect(dsn);
    const timeout = this.#timeoutMs > 0 ? Math.ceil(this.#timeoutMs) : 0;
    try {
      if (spec.reads) {
        return await sql.begin("read only", async (tx) => {
          await tx.unsafe(`set local statement_timeout = ${timeout}`);
          return await readRows(tx, spec, values, signal);
        }) as SqlAnswer;
      }
      return await sql.begin(async (tx) => {
        await tx.unsafe(`set local statement_timeout = ${timeout}`);
        const query = tx.unsafe(spec.statement, values as never[], EXTENDED);
        const stop = () => query.cancel();
        signal.addEventListener("abort", stop, { once: true });
        try {
          const done = await query;
          const result = { rows_affected: typeof done.count === "number" ? done.count : null };
          return { result, bytes: JSON.stringify(result).length, truncated: false };
        } finally {
          signal.removeEventListener("abort", stop);
        }
      }) as SqlAnswer;
    } catch (error) {
      throw this.#refusal(error, grant, signal);
    }
  }

  /** Close the pool of the DSN last used (shared by every runner on that DSN). */
  async close(): Promise<void> {
    if (this.#dsn === undefined) return;
    const pool = POOLS.get(this.#dsn);
    POOLS.delete(this.#dsn);
    if (pool) await (await pool.catch(() => null))?.end({ timeout: 1 });
  }

  /**
   * The process's pool for a DSN: a reload that builds a new server reuses it.
   * A pool no longer used (a rotated DSN) holds no connection once they have
   * been idle for 30 s.
   */
  #connect(dsn: string): Promise<Sql> {
    this.#dsn = dsn;
    const existing = POOLS.get(dsn);
    if (existing) return existing;
    const sql = (async () => {
      const { default: postgres } = await import("postgres");
      return postgres(dsn, {
        max: 4,
        idle_timeout: 30,
        connect_timeout: 10,
        // Tell PostgreSQL the application; its notices are not ours to print.
        connection: { application_name: "weir" },
        onnotice: () => {},
      });
    })();
    POOLS.set(dsn, sql);
    return sql;
  }

  #refusal(error: unknown, grant: Grant, signal: AbortSignal): ToolError {
    if (error instanceof ToolError) return error;
    const code = String((error as { code?: unknown })?.code ?? "");
    if (signal.aborted) {
      return new WeirError("cancelled", `${grant.tool} was cancelled; its query was stopped`, {
        status: 499,
      });
    }
    if (code === "57014") {
      return new WeirError(
        "sql_timeout",
        `${grant.tool} ran past the statement timeout (${this.#timeoutMs} ms) and was ` +
          `stopped`,
        { status: 504 },
      );
    }
    const origin = this.#database.dsn.chain.map((c) =>
      c.provider === "literal" ? "a literal" : `${c.provider} ${c.address}`
    ).join(", else ");
    // Class 08 connection exceptions, 28 authorization, 3D unknown database,
    // 53/57P server unavailable, and the client's own socket errors.
    if (/^(08|28|3D|53|57P)/.test(code) || /^E[A-Z]+$/.test(code) || code === "CONNECT_TIMEOUT") {
      const kind = code.startsWith("28")
        ? "authentication failed"
        : code.startsWith("3D")
        ? "no such database"
        : /^E[A-Z]+$/.test(code) || code === "CONNECT_TIMEOUT"
        ? `not reachable (${code})`
        : `unavailable (SQLSTATE ${code})`;
      this.#log({ level: "warn", event: "sql_unavailable", tool: grant.tool, reason: kind });
      return new WeirError(
        "sql_unavailable",
        `the database (DSN from ${origin}) ${kind}; nothing was run`,
        { status: 503 },
      );
    }
    if (/^[0-9A-Z]{5}$/.test(code)) {
      // A server error about the statement or a value: its message names SQL
      // objects and the caller's own values, never connection settings.
      const message = (error as Error).message.replace(/\s+/g, " ").slice(0, 300);
      const hint = code === "25006"
        ? " (a reading grant runs in a read-only transaction)"
        : code === "42601" && /multiple commands/.test(message)
        ? " (a grant runs exactly one statement)"
        : "";
      return new WeirError("sql_error", `${grant.tool}: ${message} (SQLSTATE ${code})${hint}`, {
        status: 400,
      });
    }
    this.#log({
      level: "error",
      event: "sql_failed",
      tool: grant.tool,
      reason: error instanceof Error ? error.name : "error",
    });
    return new WeirError("sql_failed", `${grant.tool} failed in the database driver`, {
      status: 502,
    });
  }
}

/**
 * Always the extended query protocol (postgres.js uses the simple one for a
 * query without parameters, which would run several `;`-separated statements).
 */
const EXTENDED = { prepare: true, simple: false } as { prepare: boolean };

type Tx = TransactionSql;

async function readRows(
  tx: Tx,
  spec: SqlSpec,
  values: unknown[],
  signal: AbortSignal,
): Promise<SqlAnswer> {
  const query = tx.unsafe(spec.statement, values as never[], EXTENDED);
  const stop = () => query.cancel();
  signal.addEventListener("abort", stop, { once: true });
  let rows: Record<string, unknown>[] = [];
  let columns: string[] | undefined;
  try {
    // One portal fetch of max-rows + 1: the extra row only tells "there is more".
    for await (const batch of query.cursor(spec.maxRows + 1)) {
      rows = batch as unknown as Record<string, unknown>[];
      columns = (batch as unknown as { columns?: { name: string }[] }).columns?.map((c) => c.name);
      break;
    }
  } finally {
    signal.removeEventListener("abort", stop);
  }
  if (!columns) {
    const described = await tx.unsafe(spec.statement, values as never[], EXTENDED)
      .describe();
    columns = (described.columns ?? []).map((c: { name: string }) => c.name);
  }
  const truncated = rows.length > spec.maxRows;
  const kept = rows.slice(0, spec.maxRows).map(jsonRow);
  const result = { rows: kept, columns, truncated };
  return { result, bytes: new TextEncoder().encode(JSON.stringify(result)).length, truncated };
}

/** A row as plain JSON: bytes as `\x<hex>` (PostgreSQL's bytea text form), dates as ISO text. */
function jsonRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    Object.defineProperty(out, k, { value: jsonValue(v), enumerable: true });
  }
  return out;
}

function jsonValue(v: unknown): unknown {
  if (v instanceof Uint8Array) {
    return "\\x" + toHex(v);
  }
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return v.map(jsonValue);
  return v;
}

/** An argument as a bind value: absent -> NULL; objects never reach here (schema types). */
function toParam(v: unknown): unknown {
  return v === undefined ? null : v;
}
