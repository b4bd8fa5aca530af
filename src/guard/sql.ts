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
 * - Every statement runs with `standard_conforming_strings` on (as the
 *   guardfile's lint read it: src/guardfile/sql_scan.ts) and under
 *   `SET LOCAL statement_timeout` (the upstream
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
import type { Database, Grant, SqlParam, SqlSpec } from "../guardfile/model.ts";
import { resolveValue, type ValueResolver } from "./values.ts";
import { toHex } from "../transport/bytes.ts";
import type { Sql, TransactionSql } from "postgres";
import { WeirError } from "../errors/kinds.ts";
import { outsideContexts } from "../ops/lazy.ts";
import { clipText, isRawJson } from "../mcp/text.ts";
import type { Redactor } from "./secrets.ts";
import { sqlUnavailable } from "./sql_unavailable.ts";
import { decimalText } from "../surface/untyped.ts";

/**
 * postgres.js, loaded only when a `sql` grant first runs. Held in a constant so
 * that Deno fetches the package only when this import runs (a string-literal
 * `import()` is fetched before any command starts); the version deno.json
 * pins, held to it by tests/release/lazy_npm_test.ts.
 */
const POSTGRES_MODULE = "npm:postgres@3.4.9";

/** What one sql call produced, before the coverage envelope. */
export interface SqlAnswer {
  /** `{rows, columns, truncated}` for a read, `{rows_affected}` for a write. */
  result: Record<string, unknown>;
  /** Size of the encoded result in bytes. */
  bytes: number;
  /** A read had more rows than `max-rows`. */
  truncated: boolean;
  /** The read stopped as soon as its rows passed the answer cap (`bytes` is then over it). */
  tooLarge?: boolean;
}

const POOLS = new Map<string, Promise<Sql>>();

/** Connections a pool holds: calls beyond them wait for a slot (inside their deadline). */
export const POOL_SIZE = 4;

/** The deadline a call gives its sql work (src/guard/spec_call.ts, `SpecCall`). */
export interface SqlBudget {
  /** Milliseconds the call has left (at least 1), or 0 for no deadline. */
  remainingMs(): number;
  /** What the call waits for now, and whether its statement has been sent. */
  phase(doing: string, sent: boolean): void;
  /** The answer cap in bytes (0: none): a read stops as soon as its rows pass it. */
  maxBytes?: number;
}

/**
 * The pool's connections as slots a call waits for in order, giving up when
 * its signal aborts (then it never runs): postgres.js's own queue has no
 * deadline, and a query queued there runs whenever a connection comes free,
 * long after its caller was told it failed.
 */
class Slots {
  #free = POOL_SIZE;
  readonly #waiting: { grant: () => void }[] = [];

  /** Wait for a slot; resolves with its release, rejects with the signal's reason. */
  take(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next.grant();
      else this.#free++;
    };
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener("abort", abort);
          resolve(release);
        },
      };
      const abort = () => {
        const i = this.#waiting.indexOf(waiter);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", abort, { once: true });
      this.#waiting.push(waiter);
    });
  }
}

const SLOTS = new Map<string, Slots>();

function slotOf(dsn: string): Slots {
  let slots = SLOTS.get(dsn);
  if (!slots) SLOTS.set(dsn, slots = new Slots());
  return slots;
}

/**
 * The transaction's outcome, or its signal's reason as soon as it aborts; the
 * slot is given back only when the transaction has settled (its connection is
 * free again), whichever the caller saw first.
 */
function untilSettledOrAborted<T>(
  work: Promise<T>,
  signal: AbortSignal,
  release: () => void,
): Promise<T> {
  work.then(release, release);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

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
   * The DSN as it reads now (stage (a): before a person is asked or a slot
   * taken), its password registered with `redactor` when it comes from the
   * environment or a file (no argument may then hold it).
   * @throws {ToolError} `dsn_missing` 500 (unset), `dsn_invalid` 500 (not a URL the driver reads)
   */
  async dsn(redactor?: Redactor): Promise<string> {
    const resolved = await resolveValue(this.#database.dsn, this.#resolver, "the database DSN", {
      code: "dsn_missing",
    });
    const dsn = resolved.value;
    const problem = dsnProblem(dsn);
    if (problem) {
      throw new WeirError(
        "dsn_invalid",
        `the database DSN (from ${dsnOrigin(this.#database)}) ${problem}; nothing was run`,
      );
    }
    if (resolved.secret && redactor) {
      const password = new URL(dsn).password;
      redactor.add(password);
      redactor.add(decodeURIComponent(password));
    }
    return dsn;
  }

  /**
   * Run a grant's statement with the call's arguments, on the database `dsn`
   * names (from {@link dsn}).
   * @throws {ToolError} `sql_unavailable` 503 (no connection), `sql_error` 400 (the
   *   database refused the statement or a value), `sql_timeout` 504, `cancelled` 499
   */
  async run(
    grant: Grant,
    args: Record<string, unknown>,
    dsn: string,
    signal: AbortSignal,
    budget?: SqlBudget,
    spelled?: Record<string, unknown>,
  ): Promise<SqlAnswer> {
    const spec = grant.sql!;
    const values = spec.params.map((p) => toParam(p, args[p.name], spelled?.[p.name]));
    const sql = await this.#connect(dsn);
    // The statement may run only as long as the call has left.
    const timeout = () =>
      budget ? budget.remainingMs() : this.#timeoutMs > 0 ? Math.ceil(this.#timeoutMs) : 0;
    // Nothing runs once the call is over: checked in the transaction, before the
    // statement, since a connection can come free (or connect) after the deadline.
    // The statement is read as weir's lint read it (src/guardfile/sql_scan.ts):
    // with standard_conforming_strings on (PostgreSQL's default since 9.1), as
    // a database set to off would end a literal at \' where the scan does not,
    // and run code the scan took for text.
    const start = (tx: Tx) => {
      signal.throwIfAborted();
      budget?.phase("running the statement", true);
      return tx.unsafe(
        `set local statement_timeout = ${timeout()}; set local standard_conforming_strings = on`,
      );
    };
    budget?.phase("waiting for a database connection", false);
    let release: () => void;
    try {
      release = await slotOf(dsn).take(signal);
    } catch (error) {
      throw this.#refusal(error, grant, signal);
    }
    try {
      if (spec.reads) {
        // A read that stopped itself (max-rows, the cap) cancelled its query,
        // which fails the read-only transaction: its answer stands all the same.
        const read: { answer?: SqlAnswer } = {};
        try {
          return await untilSettledOrAborted(
            sql.begin("read only", async (tx) => {
              await start(tx);
              signal.throwIfAborted();
              read.answer = await readRows(tx, spec, values, signal, budget?.maxBytes ?? 0);
              return read.answer;
            }) as Promise<SqlAnswer>,
            signal,
            release,
          );
        } catch (error) {
          if (read.answer && !signal.aborted) return read.answer;
          throw error;
        }
      }
      return await untilSettledOrAborted(
        sql.begin(async (tx) => {
          await start(tx);
          // The setting took a round trip: check again, then send in the same turn.
          signal.throwIfAborted();
          const query = tx.unsafe(spec.statement, values as never[], EXTENDED);
          const stop = () => query.cancel();
          signal.addEventListener("abort", stop, { once: true });
          try {
            const done = await query;
            // Past the deadline the caller was told it timed out: roll back
            // rather than commit what it gave up on.
            signal.throwIfAborted();
            const result = { rows_affected: typeof done.count === "number" ? done.count : null };
            return { result, bytes: JSON.stringify(result).length, truncated: false };
          } finally {
            signal.removeEventListener("abort", stop);
          }
        }) as Promise<SqlAnswer>,
        signal,
        release,
      );
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
    // Outside the first call's context: the pool (and postgres's first import) serves later calls.
    const sql = outsideContexts(async () => {
      const { default: postgres }: { default: typeof import("postgres") } = await import(
        POSTGRES_MODULE
      );
      return postgres(dsn, {
        max: POOL_SIZE,
        idle_timeout: 30,
        connect_timeout: 10,
        // Tell PostgreSQL the application; its notices are not ours to print.
        connection: { application_name: "weir" },
        onnotice: () => {},
      });
    });
    POOLS.set(dsn, sql);
    return sql;
  }

  #refusal(error: unknown, grant: Grant, signal: AbortSignal): ToolError {
    if (error instanceof ToolError) return error;
    const code = String((error as { code?: unknown })?.code ?? "");
    if (signal.aborted) {
      // A deadline (or a shutdown) aborts with its own words.
      if (signal.reason instanceof ToolError) return signal.reason;
      return new WeirError("cancelled", `${grant.tool} was cancelled; its query was stopped`, {
        status: 499,
      });
    }
    if (code === "57014") {
      // The statement timeout is what the call had left of its deadline.
      return new WeirError(
        "sql_timeout",
        `"${grant.tool}" did not finish within ${this.#timeoutMs} ms (running the statement); ` +
          `it was stopped and nothing was committed`,
        { status: 504 },
      );
    }
    const origin = dsnOrigin(this.#database);
    const unavailable = sqlUnavailable(code, origin);
    if (unavailable) {
      const { kind, fix } = unavailable;
      this.#log({ level: "warn", event: "sql_unavailable", tool: grant.tool, reason: kind });
      return new WeirError(
        "sql_unavailable",
        `the database (DSN from ${origin}) ${kind}; nothing was run; ${fix}`,
        { status: 503 },
      );
    }
    if (/^[0-9A-Z]{5}$/.test(code)) {
      // A server error about the statement or a value: its message names SQL
      // objects and the caller's own values, never connection settings.
      const message = clipText((error as Error).message.replace(/\s+/g, " "), 300);
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
  maxBytes: number,
): Promise<SqlAnswer> {
  const query = tx.unsafe(spec.statement, values as never[], EXTENDED);
  const stop = () => query.cancel();
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  // Rows are taken one by one as they arrive (forEach), each measured as JSON:
  // the read stops (the query is cancelled) at max-rows + 1 rows or once the
  // kept rows pass the answer cap, so memory holds at most the cap plus the
  // row being read, never the whole result.
  const kept: Record<string, unknown>[] = [];
  let columns: string[] | undefined;
  let bytes = 0;
  let truncated = false;
  let tooLarge = false;
  let stopped: Promise<unknown> | undefined;
  // The query is stopped with a cancel request; it is awaited before the
  // transaction ends, so it cannot reach a later statement on this connection.
  const stopHere = () => stopped = Promise.resolve(query.cancel()).catch(() => {});
  try {
    const done = await query.forEach((row) => {
      if (stopped) return;
      if (kept.length === spec.maxRows) {
        truncated = true;
        stopHere();
        return;
      }
      const json = jsonRow(row as Record<string, unknown>);
      columns ??= Object.keys(json);
      bytes += utf8Length(JSON.stringify(json)) + 1;
      if (maxBytes > 0 && bytes > maxBytes) {
        tooLarge = true;
        stopHere();
        return;
      }
      kept.push(json);
    });
    columns ??= (done as unknown as { columns?: { name: string }[] }).columns?.map((c) => c.name);
  } catch (error) {
    // Our own cancellation ends the query with an error (57014): the rows are read.
    if (!stopped || signal.aborted) throw error;
  } finally {
    signal.removeEventListener("abort", stop);
    await stopped;
  }
  if (tooLarge) return { result: {}, bytes: maxBytes + 1, truncated: false, tooLarge: true };
  if (!columns) {
    const described = await tx.unsafe(spec.statement, values as never[], EXTENDED)
      .describe();
    columns = (described.columns ?? []).map((c: { name: string }) => c.name);
  }
  const result = { rows: kept, columns, truncated };
  return { result, bytes: utf8Length(JSON.stringify(result)), truncated };
}

const utf8 = new TextEncoder();

/** The UTF-8 length of a text, without keeping its bytes. */
function utf8Length(text: string): number {
  // One byte per character below U+0080 (most JSON); encode only otherwise.
  return /^[\x00-\x7f]*$/.test(text) ? text.length : utf8.encode(text).length;
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
function toParam(param: SqlParam, value: unknown, spelled: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number") return value;
  // An integer (of an integer or untyped parameter) in decimal, never in
  // exponent form (String(1e21) is "1e+21", which no integer column reads).
  if (param.type !== "number") {
    return Number.isInteger(value) ? decimalText(value) : String(value);
  }
  // A number as the caller wrote it ("2.50", "1e21", "-0", "0.0000001"):
  // bound as text, PostgreSQL reads its value from those very digits.
  return isRawJson(spelled) ? spelled.rawJSON : String(value);
}

/** Where a database's DSN comes from, for messages: `env SHOP_DSN, else file /run/dsn`. */
export function dsnOrigin(database: Database): string {
  return database.dsn.chain.map((c) =>
    c.provider === "literal" ? "a literal" : `${c.provider} ${c.address}`
  ).join(", else ");
}

/**
 * Why a DSN cannot be used, in words that never repeat it (it holds a
 * password), or `undefined` when it is a PostgreSQL URL the driver can read:
 * `postgres://` or `postgresql://`, a URL (a port of 1-65535, IPv6 hosts in
 * brackets), and a user and password whose percent-escapes decode (RFC 3986
 * section 2.1: `%` followed by two hex digits).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dsnProblem } from "./sql.ts";
 * assert.equal(dsnProblem("postgres://app:pw@127.0.0.1:5432/shop"), undefined);
 * assert.match(dsnProblem("postgres://app:pw@127.0.0.1:99999/shop") ?? "", /port/);
 * ```
 */
export function dsnProblem(dsn: string): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(dsn)?.[1]?.toLowerCase();
  if (scheme !== "postgres" && scheme !== "postgresql") {
    return "is not a PostgreSQL URL: write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE";
  }
  const host = /^[^:]+:\/\/(?:[^@/?#]*@)?([^/?#]*)/.exec(dsn)?.[1] ?? "";
  if (host.startsWith("[") && !host.includes("]")) {
    return "has an IPv6 host without its closing bracket: write it as [::1]";
  }
  const port = /^[^:]+:\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*)(?::([^/?#]*))?/.exec(dsn)?.[1];
  if (
    port !== undefined && port !== "" && !(/^\d{1,5}$/.test(port) && +port >= 1 && +port <= 65535)
  ) {
    return "has a port that is not a number from 1 to 65535: fix the port";
  }
  let url: URL;
  try {
    url = new URL(dsn);
  } catch {
    return "is not a URL (check the host, and brackets around an IPv6 address such as [::1]): " +
      "write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE";
  }
  for (const [part, text] of [["user", url.username], ["password", url.password]]) {
    try {
      decodeURIComponent(text);
    } catch {
      return `has a ${part} with a "%" that is not followed by two hex digits: percent-encode ` +
        `"%" as %25 (and other reserved characters as %XX)`;
    }
  }
  if (url.hostname === "" && !url.searchParams.has("host")) {
    return "names no host: write postgres://USER:PASSWORD@HOST:PORT/DATABASE";
  }
  return undefined;
}
