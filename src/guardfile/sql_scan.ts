/**
 * A SQL statement split the way PostgreSQL's lexer splits it (PostgreSQL
 * documentation, "Lexical Structure"): string literals (`'...'`, `E'...'`),
 * quoted identifiers, dollar-quoted bodies and comments are skipped; words,
 * `$n` placeholders, function calls and statement ends are recorded. Pure.
 *
 * @example
 * ```ts
 * import { scanStatement } from "./sql_scan.ts";
 * const scan = scanStatement("SELECT lower(name) FROM t WHERE id = $1 -- x");
 * console.assert(scan.placeholders[0] === 1 && scan.calls[0] === "lower");
 * ```
 *
 * @module
 */

/** What the scan of a statement found outside literals and comments. */
export interface StatementScan {
  /** `$n` placeholder numbers, in order of appearance. */
  placeholders: number[];
  /** Count of `?` characters (the reference's other placeholder style). */
  questionMarks: number;
  /** Lower-cased words. */
  words: string[];
  /**
   * Names called as functions (a word followed by `(`), lower-cased; a
   * schema-qualified name keeps its `.` before it (`.lower`), and a quoted
   * one is `"` (neither is a built-in weir knows).
   */
  calls: string[];
  /** A `;` followed by more than whitespace or comments. */
  multiple: boolean;
  /** An unterminated literal, identifier or comment. */
  unterminated?: string;
}

/** Scan a statement the way PostgreSQL's lexer splits it. */
export function scanStatement(text: string): StatementScan {
  const out: StatementScan = {
    placeholders: [],
    questionMarks: 0,
    words: [],
    calls: [],
    multiple: false,
  };
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
      } else {
        i = close + 1;
        if (/^\s*\(/.test(text.slice(i))) out.calls.push('"');
      }
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
      const lower = word[0].toLowerCase();
      out.words.push(lower);
      if (/^\s*\(/.test(text.slice(i + word[0].length))) {
        out.calls.push(/\.\s*$/.test(text.slice(0, i)) ? `.${lower}` : lower);
      }
      i += word[0].length;
      continue;
    }
    i++;
  }
  return out;
}
