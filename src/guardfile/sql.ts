/**
 * `sql { statement "..."; param "<n>" type=... [required=#true]; max-rows "N" }`
 * inside a grant, and `database pgx { value ... }` inside `wrap`
 * (`docs/guardfile.md`, "sql"; PostgreSQL only).
 *
 * Checked here, with no database: the statement is one statement; its
 * placeholders are exactly `$1..$N` for N declared params (values are sent
 * as bind parameters, never written into the text); a reading grant (a GET
 * verb) holds a reading statement (`SELECT`, `WITH` without a data-modifying
 * part, `VALUES`, `TABLE`); `max-rows` is a quoted whole number in 1..10000.
 * The scan skips string literals (`'...'`, `E'...'`), quoted identifiers,
 * dollar-quoted bodies and comments, as PostgreSQL's lexer does
 * (PostgreSQL documentation, "Lexical Structure").
 *
 * @module
 */
import type { ScalarType, SqlParam, SqlSpec } from "./model.ts";
import { type NodeReader, onlyOnce, show } from "./nodes.ts";

/** Drivers `database` may name: the reference's `pgx`, or plainly `postgres`. */
export const SQL_DRIVERS: readonly string[] = ["pgx", "postgres"];
/** Rows a reading grant returns when `max-rows` is not stated. */
export const DEFAULT_MAX_ROWS = 200;
/** The largest `max-rows`. */
export const MAX_ROWS_CEILING = 10_000;

const PARAM_TYPES: readonly ScalarType[] = ["string", "integer", "number", "boolean"];
const READ_STARTS = ["select", "with", "values", "table"];
const WRITE_WORDS = ["insert", "update", "delete", "merge"];

/** What the scan of a statement found outside literals and comments. */
export interface StatementScan {
  /** `$n` placeholder numbers, in order of appearance. */
  placeholders: number[];
  /** Count of `?` characters (the reference's other placeholder style). */
  questionMarks: number;
  /** Lower-cased words. */
  words: string[];
  /** A `;` followed by more than whitespace or comments. */
  multiple: boolean;
  /** An unterminated literal, identifier or comment. */
  unterminated?: string;
}

/** Scan a statement the way PostgreSQL's lexer splits it. */
export function scanStatement(text: string): StatementScan {
  const out: StatementScan = { placeholders: [], questionMarks: 0, words: [], multiple: false };
  let i = 0;
  let ended = false; // a `;` was seen
  const n = text.length;
  while (i < n) {
    const c = text[i];
    const rest = text.slice(i);
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (rest.startsWith("--")) {
      const nl = text.indexOf("\n", i);
      i = nl === -1 ? n : nl + 1;
      continue;
    }
    if (rest.startsWith("/*")) {
      let depth = 0;
      let j = i;
      while (j < n) {
        if (text.startsWith("/*", j)) {
          depth++;
          j += 2;
        } else if (text.startsWith("*/", j)) {
          depth--;
          j += 2;
          if (depth === 0) break;
        } else j++;
      }
      if (depth !== 0) out.unterminated = "a /* comment";
      i = j;
      continue;
    }
    if (ended) {
      out.multiple = true;
      ended = false;
    }
    if (c === ";") {
      ended = true;
      i++;
      continue;
    }
    if (c === "'" || ((c === "E" || c === "e") && text[i + 1] === "'")) {
      const escapes = c !== "'";
      let j = escapes ? i + 2 : i + 1;
      let closed = false;
      while (j < n) {
        if (escapes && text[j] === "\\") {
          j += 2;
          continue;
        }
        if (text[j] === "'") {
          if (text[j + 1] === "'") {
            j += 2;
            continue;
          }
          closed = true;
          j++;
          break;
        }
        j++;
      }
      if (!closed) out.unterminated = "a string literal";
      i = j;
      continue;
    }
    if (c === '"') {
      const close = text.indexOf('"', i + 1);
      if (close === -1) {
        out.unterminated = "a quoted identifier";
        i = n;
      } else i = close + 1;
      continue;
    }
    if (c === "$") {
      const num = /^\$(\d+)/.exec(rest);
      if (num) {
        out.placeholders.push(Number(num[1]));
        i += num[0].length;
        continue;
      }
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(rest);
      if (tag) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        if (close === -1) {
          out.unterminated = `a ${tag[0]} quoted body`;
          i = n;
        } else i = close + tag[0].length;
        continue;
      }
      i++;
      continue;
    }
    if (c === "?") {
      out.questionMarks++;
      i++;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(rest);
    if (word) {
      out.words.push(word[0].toLowerCase());
      i += word[0].length;
      continue;
    }
    i++;
  }
  return out;
}

/**
 * Why a statement is not a reading one, or null when it reads.
 * The read-only transaction it runs in is the enforcement; this catches the
 * mistake at lint time.
 */
export function writingReason(scan: StatementScan): string | null {
  const first = scan.words[0];
  if (!first || !READ_STARTS.includes(first)) {
    return `it starts with ${first ? `"${first.toUpperCase()}"` : "nothing"}`;
  }
  if (first === "with") {
    const hit = scan.words.find((w) => WRITE_WORDS.includes(w));
    if (hit) return `its WITH holds a data-modifying "${hit.toUpperCase()}"`;
  }
  return null;
}

/**
 * Read a grant's `sql` block.
 * @param reads the grant's verb is a reading one (GET)
 */
export function readSql(node: NodeReader, reads: boolean): SqlSpec | undefined {
  node.onlyProperties();
  if (node.node.values.length > 0) {
    node.error(`"sql" takes a block, not arguments; write sql { statement "..."; }`);
  }
  const kids = node.onlyChildren(["statement", "param", "max-rows"]);
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
  if (reads) {
    const why = writingReason(scan);
    if (why) {
      statementNode.error(
        `a reading grant (its verb maps to GET) runs in a read-only transaction, but this ` +
          `statement writes: ${why}; use a writing verb (create, edit, set, delete, ...) for it`,
      );
      ok = false;
    }
  }
  return ok ? { statement, params, maxRows, reads } : undefined;
}
