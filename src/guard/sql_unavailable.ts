/**
 * Why a sql grant could not reach its database, and what the operator should
 * check, in fixed words: never the DSN, its host or its password (the words
 * reach the caller). The codes are PostgreSQL's SQLSTATE classes (08
 * connection exception, 28 invalid authorization, 3D invalid catalog name,
 * 53 insufficient resources, 57P operator intervention) and the Node-style
 * socket error codes `npm:postgres` reports (`ECONNREFUSED`, `ENOTFOUND`, ...).
 *
 * @module
 */

/** What went wrong (`kind`, logged and answered) and what to check (`fix`, answered). */
export interface SqlUnavailable {
  /** E.g. "refused the login (SQLSTATE 28P01)". */
  kind: string;
  /** E.g. "check the user and password in env SHOP_DSN". */
  fix: string;
}

/**
 * The words for a connection failure, or `undefined` when `code` is not one
 * (a statement's own error is answered as `sql_error` instead).
 * @param code the driver error's `code`: a SQLSTATE, a socket error code, or
 *   `CONNECT_TIMEOUT`
 * @param origin where the DSN comes from, e.g. `env SHOP_DSN` (never the DSN)
 * @returns the kind and the fix, both without any part of the DSN
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sqlUnavailable } from "./sql_unavailable.ts";
 * assert.deepEqual(sqlUnavailable("ENOTFOUND", "env SHOP_DSN"), {
 *   kind: "is not reachable: its host name does not resolve (DNS)",
 *   fix: "check the host in env SHOP_DSN",
 * });
 * assert.equal(sqlUnavailable("42P01", "env SHOP_DSN"), undefined);
 * ```
 */
export function sqlUnavailable(code: string, origin: string): SqlUnavailable | undefined {
  const up = `check that PostgreSQL is up and that ${origin} names its host and port`;
  if (code.startsWith("28")) {
    return {
      kind: `refused the login (SQLSTATE ${code})`,
      fix: `check the user and password in ${origin}, and that pg_hba.conf lets that user in`,
    };
  }
  if (code.startsWith("3D")) {
    return { kind: "has no such database", fix: `check the database name in ${origin}` };
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return {
      kind: "is not reachable: its host name does not resolve (DNS)",
      fix: `check the host in ${origin}`,
    };
  }
  if (code === "ECONNREFUSED") {
    return { kind: "is not reachable: nothing is listening there (ECONNREFUSED)", fix: up };
  }
  if (code === "ECONNRESET") {
    return {
      kind: "closed the connection at once (ECONNRESET)",
      fix: `${up}, and with sslmode=require that the server offers TLS`,
    };
  }
  if (code === "CONNECT_TIMEOUT" || code === "ETIMEDOUT") {
    return {
      kind: `did not answer in time (${code})`,
      fix: `${up}, and that no firewall drops the connection`,
    };
  }
  if (/^E[A-Z]+$/.test(code)) return { kind: `is not reachable (${code})`, fix: up };
  if (/^(53|57P)/.test(code)) {
    return {
      kind: `is unavailable (SQLSTATE ${code})`,
      fix: "retry later; if it lasts, check the server's connection limit and state",
    };
  }
  if (code.startsWith("08")) return { kind: `dropped the connection (SQLSTATE ${code})`, fix: up };
  return undefined;
}
