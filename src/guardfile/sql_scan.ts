/**
 * A SQL statement split the way PostgreSQL's lexer splits it (PostgreSQL
 * documentation, "Lexical Structure"; src/backend/parser/scan.l): string
 * literals (`'...'`, `E'...'`), quoted identifiers, dollar-quoted bodies and
 * comments (a `--` comment ends at a line feed or a carriage return; block
 * comments nest) are skipped; words,
 * `$n` placeholders, function calls and statement ends are recorded. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scanStatement } from "./sql_scan.ts";
 * const scan = scanStatement("SELECT lower(name) FROM t WHERE id = $1 -- x");
 * assert.equal(scan.placeholders[0], 1);
 * assert.equal(scan.calls[0], "lower");
 * ```
 *
 * @module
 */

import { NOT_CALLS } from "./sql_functions.ts";

/** What the scan of a statement found outside literals and comments. */
export interface StatementScan {
  /** `$n` placeholder numbers, in order of appearance. */
  placeholders: number[];
  /** Count of `?` characters (the reference's other placeholder style). */
  questionMarks: number;
  /** Words, their ASCII letters lower-cased (as PostgreSQL folds an unquoted name). */
  words: string[];
  /**
   * Names called as functions: a name whose next token, past whitespace and
   * comments, is `(`, unless it is an unquoted keyword standing where its
   * clause does (`IN (`, `count(*) FILTER (`; src/guardfile/sql_functions.ts
   * `NOT_CALLS`). An unquoted name has its ASCII letters lower-cased; a
   * quoted one is its text exactly (`"Lower"` is `Lower`); one written with
   * Unicode escapes (`U&"..."`) is `U&`. A schema-qualified name keeps its
   * `.` before it (`.lower`).
   */
  calls: string[];
  /** The names of {@link calls} written quoted (`"coalesce"(x)` calls a function, not the syntax). */
  quotedCalls: string[];
  /** A `;` followed by more than whitespace or comments. */
  multiple: boolean;
  /** An unterminated literal, identifier or comment. */
  unterminated?: string;
}

/** A token the call detection reads: a name (unquoted or quoted), or one character. */
type Token = { name: string; quoted?: true } | { char: string };

/**
 * Keywords PostgreSQL also takes as a function's name when written before `(`
 * (`SELECT filter(1)` calls `filter`), and where their clause stands instead:
 * `FILTER (` and `OVER (` follow a call's `)`; `JOIN (` follows a `)` or a
 * join type. Anywhere else the word calls a function.
 */
const CLAUSE_AFTER: Record<string, (before: Token | undefined) => boolean> = {
  filter: (before) => isChar(before, ")"),
  over: (before) => isChar(before, ")"),
  join: (before) =>
    isChar(before, ")") ||
    (before !== undefined && "name" in before && !before.quoted &&
      JOIN_TYPES.has(before.name)),
};
/** Words that stand before `JOIN`. */
const JOIN_TYPES = new Set(["inner", "left", "right", "full", "outer", "cross", "natural"]);

/** Whether a token is the character `c`. */
function isChar(t: Token | undefined, c: string): boolean {
  return t !== undefined && "char" in t && t.char === c;
}

/**
 * Whether a name before `(` calls a function: a quoted name always does
 * (`"any"(x)` calls `any`); an unquoted keyword of {@link NOT_CALLS} does not;
 * `filter`, `over` and `join` do unless they stand where their clause does.
 */
function calls(t: { name: string; quoted?: true }, before: Token | undefined): boolean {
  if (t.quoted) return true;
  const clause = CLAUSE_AFTER[t.name];
  if (clause) return !clause(before);
  return !NOT_CALLS.has(t.name);
}

/** PostgreSQL's whitespace (scan.l `space`); any other character is part of a token. */
const SPACE = /[ \t\n\r\f\v]/;

/**
 * PostgreSQL's identifier characters: ASCII letters, `_` and every character
 * past ASCII (its lexer takes each byte from 0x80 as a letter), then digits
 * and `$` (PostgreSQL documentation, "Identifiers and Key Words").
 */
const IDENTIFIER = /[A-Za-z_\u0080-\uFFFF][A-Za-z0-9_$\u0080-\uFFFF]*/y;
/** `$n`. */
const PLACEHOLDER = /\$(\d+)/y;
/** A dollar quote's tag: an identifier without `$`, any character past ASCII included. */
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uFFFF][A-Za-z0-9_\u0080-\uFFFF]*)?\$/y;
/**
 * What continues a string literal after its closing quote (scan.l
 * `quotecontinue`): spaces and `--` comments, a line break, spaces, line
 * breaks and `--` comments ended by a line break, then a quote. Each part
 * matches one way only (no nested repetition): linear on any text.
 */
const QUOTE_CONTINUE = /[ \t\f\v]*(?:--[^\n\r]*)?[\n\r](?:[ \t\n\r\f\v]|--[^\n\r]*[\n\r])*'/y;
/**
 * A number, as one token (`1e5(` calls nothing): digits, a fraction, an
 * exponent with digits, and no letter past them. PostgreSQL up to 14 splits
 * `1E'...'` into `1` and an `E'...'` string (scan.l `realfail1` throws the `E`
 * back), and `1upper(x)` into `1` and a call; 15 refuses both ("trailing
 * junk"). Taking letters into the number hid `1E'\'' , dblink_exec(...) -- '`.
 */
const NUMBER = /[0-9][0-9_]*(?:\.(?!\.)[0-9_]*)?(?:[eE][+-]?[0-9]+)?/y;

/** The match of a sticky expression at `at`, or null. */
function matchAt(re: RegExp, text: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(text);
}

/** ASCII letters lower-cased only: PostgreSQL folds no other letter of an unquoted name. */
function foldAscii(name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Scan a statement the way PostgreSQL's lexer splits it. */
export function scanStatement(text: string): StatementScan {
  const out: StatementScan = {
    placeholders: [],
    questionMarks: 0,
    words: [],
    calls: [],
    quotedCalls: [],
    multiple: false,
  };
  const tokens: Token[] = [];
  let i = 0;
  let ended = false; // a `;` was seen
  const n = text.length;
  while (i < n) {
    const c = text[i];
    const rest = text.slice(i, i + 2);
    // Not \s: PostgreSQL takes U+00A0 (and every character past ASCII) as part
    // of a name, so "SELECT \u00a0lower(1)" calls a function named "\u00a0lower".
    if (SPACE.test(c)) {
      i++;
      continue;
    }
    if (rest === "--") {
      // A line comment ends at a line feed or a carriage return (scan.l: newline
      // [\n\r]): read to \n only, "-- x\r, dblink_exec(...)" hid a call PostgreSQL runs.
      let j = i + 2;
      while (j < n && text[j] !== "\n" && text[j] !== "\r") j++;
      i = j;
      continue;
    }
    if (rest === "/*") {
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
      tokens.push({ char: c });
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
          // A quote, whitespace holding a line break, a quote: the literal goes
          // on, in the same mode (scan.l quotecontinue): E'x'\n'\'' is one E''
          // string, whose \' a standard string would have ended.
          const more = matchAt(QUOTE_CONTINUE, text, j + 1);
          if (more) {
            j = j + 1 + more[0].length;
            continue;
          }
          closed = true;
          j++;
          break;
        }
        j++;
      }
      if (!closed) out.unterminated = "a string literal";
      tokens.push({ char: "'" });
      i = j;
      continue;
    }
    const unicode = (c === "U" || c === "u") && text[i + 1] === "&" && text[i + 2] === '"';
    if (c === '"' || unicode) {
      const open = unicode ? i + 2 : i;
      let j = open + 1;
      let name = "";
      let closed = false;
      while (j < n) {
        if (text[j] === '"') {
          if (text[j + 1] === '"') {
            name += '"';
            j += 2;
            continue;
          }
          closed = true;
          j++;
          break;
        }
        name += text[j++];
      }
      if (!closed) out.unterminated = "a quoted identifier";
      tokens.push({ name: unicode ? "U&" : name, quoted: true });
      i = j;
      continue;
    }
    if (c === "$") {
      const num = matchAt(PLACEHOLDER, text, i);
      if (num) {
        out.placeholders.push(Number(num[1]));
        tokens.push({ char: "$" });
        i += num[0].length;
        continue;
      }
      const tag = matchAt(DOLLAR_TAG, text, i);
      if (tag) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        if (close === -1) {
          out.unterminated = `a ${tag[0]} quoted body`;
          i = n;
        } else i = close + tag[0].length;
        tokens.push({ char: "'" });
        continue;
      }
      tokens.push({ char: c });
      i++;
      continue;
    }
    if (c === "?") {
      out.questionMarks++;
      tokens.push({ char: c });
      i++;
      continue;
    }
    const word = matchAt(IDENTIFIER, text, i);
    if (word) {
      const folded = foldAscii(word[0]);
      out.words.push(folded);
      tokens.push({ name: folded });
      i += word[0].length;
      continue;
    }
    const number = matchAt(NUMBER, text, i);
    tokens.push({ char: number ? "0" : c });
    i += number ? number[0].length : 1;
  }
  // A call is a name whose next token is "(", wherever comments and space put it.
  tokens.forEach((t, k) => {
    const next = tokens[k + 1];
    if (!("name" in t) || !next || !("char" in next) || next.char !== "(") return;
    const before = tokens[k - 1];
    const qualified = isChar(before, ".");
    if (!qualified && !calls(t, before)) return;
    out.calls.push(qualified ? `.${t.name}` : t.name);
    if (t.quoted && !qualified) out.quotedCalls.push(t.name);
  });
  return out;
}
