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
 *   (`sqlStatementClass`, src/guardfile/sql_reads.ts, loaded with the sql
 *   reader: src/guardfile/readers.ts): a single `SELECT`, `WITH`, `VALUES` or
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
import { readerOf } from "./readers.ts";

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
  if (grant.sql) return readerOf("sql").sqlAccess(grant.sql);
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
