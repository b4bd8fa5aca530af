/**
 * The declarations of a tool's read or write ({@link ACCESS}) and of the
 * operation it sends ({@link OPERATION}), and when two tools do the same
 * operation (a rename: {@link sameOperation}). Part of the table in
 * src/diff/tool_declarations.ts.
 *
 * @module
 */
import { compareWithin } from "./aws_scope.ts";
import type { Access, Operation, Tool } from "../surface/model.ts";
import {
  type Context,
  type Fields,
  type Found,
  ignored,
  type Leaf,
  prefix,
  rule,
  same,
} from "./declare.ts";
import { operationWords } from "../surface/words.ts";

/** Read or write: proven, stated by the file, hinted by a wrapped server, or left to its unread hint. */
export const ACCESS: Fields<Access> = {
  why: "read or write",
  fields: {
    reads: rule(
      "either",
      "a grant that only reads changes nothing, one that writes may; a proxied tool's read " +
        "is a hint about one fixed operation: said to only read, --read-only serves it and a " +
        "client may call it without asking",
      (o, n, at) => {
        if (Boolean(o) === Boolean(n)) return [];
        // Known on one side only: judged by `unknown`.
        if (Boolean(at.access?.old.unknown) !== Boolean(at.access?.next.unknown)) return [];
        if (at.statedRead) {
          return n
            ? [{
              effect: "widen",
              what: `${prefix(at)}now counted as a read on the guardfile's word (only-reads): ` +
                `--read-only serves it, and a client may call it without asking`,
            }]
            : [{ effect: "narrow", what: `${prefix(at)}no longer counted as a read` }];
        }
        if (!at.hinted) {
          return [{
            effect: n ? "narrow" : "widen",
            what: `${prefix(at)}now ${n ? "only reads" : "writes"}`,
          }];
        }
        return n
          ? [{
            effect: "widen",
            what: `${prefix(at)}now said to only read (readOnlyHint): --read-only serves it, ` +
              `and a client may call it without asking`,
          }]
          : [{
            effect: "narrow",
            what: `${prefix(at)}no longer said to only read: --read-only withholds it`,
          }];
      },
    ),
    why: ignored("the words of the rule that decided reads"),
    unknown: rule(
      "either",
      "a wrapped server's own readOnlyHint, unread from the file alone, may say the tool only " +
        "reads: leaving a stated write to it may widen, leaving a stated read to it may narrow",
      (o, n, at) => {
        if (Boolean(o) === Boolean(n)) return [];
        const was = at.access?.old.reads ?? false;
        const now = at.access?.next.reads ?? false;
        if (n) {
          return was
            ? [{
              effect: "narrow",
              what: `${prefix(at)}read-only=#true no longer stated: the server's own ` +
                `readOnlyHint decides (--read-only withholds it unless the server says it ` +
                `only reads)`,
            }]
            : [{
              effect: "widen",
              what: `${prefix(at)}read-only=#false no longer stated: the server's own ` +
                `readOnlyHint decides, which the file alone does not show (if it says the ` +
                `tool only reads, --read-only serves it and a client may call it without ` +
                `asking); compare with --definitions F or --live`,
            }];
        }
        return now
          ? [{
            effect: "widen",
            what: `${prefix(at)}now stated to only read (read-only=#true): --read-only ` +
              `serves it whatever the server says`,
          }]
          : [{
            effect: "narrow",
            what: `${prefix(at)}now stated to write (read-only=#false): --read-only ` +
              `withholds it whatever the server says`,
          }];
      },
    ),
  },
};

/** The operation: another one widens; more sql rows widen, fewer narrow. */
export const OPERATION: Leaf<Operation> = rule(
  "either",
  "another method, path, statement, document or wrapped tool is another operation; more rows is more",
  compareOperation,
);

function compareOperation(
  o: Tool["operation"],
  n: Tool["operation"],
  at: Context,
): Found[] {
  const out: Found[] = [];
  if (o?.kind === "graphql" && n?.kind === "graphql" && o.document !== n.document) {
    out.push({
      effect: "widen",
      what: `${prefix(at)}graphql document changed (may ask for what the old one did not): ${
        oneLine(o.document)
      } -> ${oneLine(n.document)}`,
    });
  }
  if (o?.kind === "sql" && n?.kind === "sql") out.push(...compareSqlRun(o, n, at));
  // An AWS tool's scope by part (a prefix under the old one narrows); its words follow.
  if (o?.kind === "aws" && n?.kind === "aws" && o.action === n.action) {
    return [...out, ...compareWithin(o.within, n.within, at)];
  }
  const sqlRun = { onlyReads: undefined, readOnlyTransaction: undefined };
  const a = { ...o, maxRows: 0, document: "", ...sqlRun };
  const b = { ...n, maxRows: 0, document: "", ...sqlRun };
  if (!same(a, b)) {
    out.push({
      effect: "widen",
      what: `${prefix(at)}now ${operationWords(n)} (was ${operationWords(o)})`,
    });
  }
  if (o?.kind === "sql" && n?.kind === "sql" && o.maxRows !== n.maxRows) {
    out.push({
      effect: n.maxRows > o.maxRows ? "widen" : "narrow",
      what: `${prefix(at)}max-rows ${o.maxRows} -> ${n.maxRows}`,
    });
  }
  return out;
}

/**
 * How a sql statement runs: leaving the read-only transaction widens (the
 * database no longer refuses its writes); a function `only-reads` now states
 * only reads widens (it may not).
 */
function compareSqlRun(
  o: { onlyReads?: string[]; readOnlyTransaction: boolean },
  n: { onlyReads?: string[]; readOnlyTransaction: boolean },
  at: Context,
): Found[] {
  const was = o.onlyReads ?? [];
  const now = n.onlyReads ?? [];
  const transaction: Found[] = o.readOnlyTransaction === n.readOnlyTransaction
    ? []
    : n.readOnlyTransaction
    ? [{ effect: "narrow", what: `${prefix(at)}now runs in a read-only transaction` }]
    : [{
      effect: "widen",
      what: `${prefix(at)}no longer runs in a read-only transaction (the database no longer ` +
        `refuses its writes)`,
    }];
  return [
    ...transaction,
    ...now.filter((f) => !was.includes(f)).map((f): Found => ({
      effect: "widen",
      what: `${prefix(at)}only-reads "${f}": ${f}() is now taken to change nothing, on the ` +
        `guardfile's word (weir cannot prove it)`,
    })),
    ...was.filter((f) => !now.includes(f)).map((f): Found => ({
      effect: "narrow",
      what: `${prefix(at)}only-reads "${f}" removed: ${f}() is no longer taken to only read`,
    })),
  ];
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Whether two tools do the same operation (a removed and an added one are then a rename). */
export function sameOperation(a: Tool, b: Tool): boolean {
  const x = a.operation;
  const y = b.operation;
  if (!x || !y || x.kind !== y.kind) return false;
  if (x.kind === "sql" && y.kind === "sql") return x.statement === y.statement;
  if (x.kind === "mcp" && y.kind === "mcp") return x.tool === y.tool;
  if (x.kind === "aws" && y.kind === "aws") return x.action === y.action && x.scope === y.scope;
  // Every GraphQL operation of an API shares one endpoint: the document says which it is.
  if (x.kind === "graphql" && y.kind === "graphql" && x.document !== y.document) return false;
  const shape = (p: string) => p.replace(/\{[^}]*\}/g, "{}");
  return "method" in x && "method" in y && x.method === y.method &&
    shape(x.path) === shape(y.path);
}
