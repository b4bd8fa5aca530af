/**
 * The chooser of `weir scaffold` in a terminal: the document's operations
 * grouped by tag, reads first, none selected; arrow keys move, space selects
 * (on a group: its visible operations), `/` filters, enter asks where to write
 * and writes, `q` or Ctrl-C leaves without writing. Operations a guardfile
 * cannot express are shown with the reason and cannot be selected. The
 * "Write to:" prompt starts empty with the default name as a hint (enter takes
 * it; typing replaces it); a file that exists is replaced only after `y`, or
 * another name is typed, the selections kept.
 *
 * The state and its drawing are pure ({@linkcode chooserRows},
 * {@linkcode press}, {@linkcode draw}); {@linkcode choose} is the terminal
 * glue (raw mode, the alternate screen, ANSI escapes of ECMA-48).
 *
 * @module
 */
import { httpAccess } from "../guardfile/reads.ts";
import type { OpenApiDocument } from "./document.ts";
import { deriveGrant } from "./derive.ts";
import {
  buildScaffold,
  nameOperations,
  type ScaffoldOptions,
  scaffoldSummary,
  SelectionError,
  serverName,
} from "./scaffold.ts";
import { exists, writeFileAtomically } from "./write.ts";
import { chooseAuth } from "./upstream.ts";
import { printable } from "../guardfile/diagnostics.ts";

/** One line of the list: a group heading or an operation. */
export type Row =
  | { kind: "group"; label: string; group: number }
  | {
    kind: "op";
    group: number;
    /** `METHOD /path`: what the scaffold selects. */
    key: string;
    method: string;
    path: string;
    tool: string;
    summary: string;
    /** It reads (src/guardfile/reads.ts: a GET or HEAD with no request body): listed first. */
    reads: boolean;
    /** Lower-case text the filter searches. */
    haystack: string;
    /** Why it cannot be expressed; absent when it can. */
    reason?: string;
  };

/** The chooser's state. */
export interface ChooserState {
  rows: Row[];
  selected: Set<string>;
  /** Index into the visible rows. */
  cursor: number;
  /** First visible row drawn. */
  top: number;
  filter: string;
  mode: "list" | "filter" | "output";
  /** The output path being typed (empty: {@link ChooserState.defaultOutput}). */
  output: string;
  /** The name written when none is typed, shown as a hint. */
  defaultOutput: string;
  /** A path that exists: `y` replaces it, anything else types another name. */
  existing?: string;
  /** The path the person agreed to replace. */
  replace?: string;
  /** One line of feedback. */
  message: string;
  /** Set when the person confirmed (`write`) or left (`quit`). */
  done?: "write" | "quit";
}

/** The rows of a document: groups by first tag in document order, reads first in each. */
export function chooserRows(doc: OpenApiDocument, server: string): Row[] {
  const named = nameOperations(doc);
  const auth = chooseAuth(doc, doc.operations, server);
  const groups = new Map<string, Row[]>();
  for (const { op, name } of named) {
    const d = deriveGrant(op, name, auth);
    const list = groups.get(op.tag) ?? [];
    list.push({
      kind: "op",
      group: 0,
      key: d.key,
      method: op.method,
      path: op.path,
      tool: name.tool,
      summary: op.summary ?? "",
      reads: httpAccess({ method: op.method, sendsBody: op.requestBody !== undefined }).reads,
      haystack: `${op.method} ${op.path} ${name.tool} ${op.operationId ?? ""} ${
        op.summary ?? ""
      } ${op.tag}`
        .toLowerCase(),
      ...(d.grant ? {} : { reason: d.reason }),
    });
    groups.set(op.tag, list);
  }
  const rows: Row[] = [];
  let g = 0;
  const reads = (r: Row) => (r.kind === "op" && r.reads ? 0 : 1);
  for (const [tag, list] of groups) {
    rows.push({ kind: "group", label: tag === "" ? "(no tag)" : tag, group: g });
    for (const r of [...list].sort((a, b) => reads(a) - reads(b))) rows.push({ ...r, group: g });
    g++;
  }
  return rows;
}

/** The rows the filter lets through (a group shows when one of its operations does). */
export function visibleRows(state: ChooserState): Row[] {
  const needle = state.filter.toLowerCase();
  if (needle === "") return state.rows;
  const shown = state.rows.filter((r) => r.kind === "op" && r.haystack.includes(needle));
  const groups = new Set(shown.map((r) => r.group));
  return state.rows.filter((r) => r.kind === "group" ? groups.has(r.group) : shown.includes(r));
}

/** The path enter writes: what was typed, else the default. */
export function outputPath(state: ChooserState): string {
  return state.output.trim() === "" ? state.defaultOutput : state.output;
}

/**
 * The screen size to draw for: a terminal that reports 0 columns or rows (a pty
 * with no window size yet, some `docker exec -t` sessions) is drawn as 80x24,
 * not as empty lines.
 */
export function screenSize(
  measured: { columns: number; rows: number } | undefined,
): { columns: number; rows: number } {
  return {
    columns: measured && measured.columns > 0 ? measured.columns : 80,
    rows: measured && measured.rows > 0 ? measured.rows : 24,
  };
}

/** A fresh state: nothing selected; `output` is the default name the prompt offers. */
export function initialState(rows: Row[], output: string): ChooserState {
  return {
    rows,
    selected: new Set(),
    cursor: rows.findIndex((r) => r.kind === "op"),
    top: 0,
    filter: "",
    mode: "list",
    output: "",
    defaultOutput: output,
    message: "Nothing is selected until you select it.",
  };
}

/**
 * Apply one key. Keys: `up`, `down`, `pageup`, `pagedown`, `home`, `end`,
 * `space`, `enter`, `escape`, `backspace`, `ctrl-c`, `ctrl-u`, or one printable character.
 * @param page rows per page (for page up and down)
 */
export function press(state: ChooserState, key: string, page = 10): ChooserState {
  const s: ChooserState = { ...state, selected: new Set(state.selected), message: "" };
  if (key === "ctrl-c") return { ...s, done: "quit" };
  if (s.mode === "output") {
    const existing = s.existing;
    s.existing = undefined;
    if (key === "escape") return { ...s, mode: "list", message: "Not written. Keep choosing." };
    if (existing !== undefined && (key === "y" || key === "Y")) {
      return { ...s, replace: existing, done: "write" };
    }
    if (key === "enter") {
      if (outputPath(s).trim() === "") return { ...s, message: "Type a file name to write to." };
      return { ...s, done: "write" };
    }
    if (key === "backspace") return { ...s, output: [...s.output].slice(0, -1).join("") };
    if (key === "ctrl-u") return { ...s, output: "" };
    if ([...key].length === 1 && key >= " ") {
      // After "exists", typing starts another name.
      return { ...s, output: (existing !== undefined ? "" : s.output) + key };
    }
    return s;
  }
  if (s.mode === "filter") {
    if (key === "escape") return settle({ ...s, mode: "list", filter: "" }, page);
    if (key === "enter") return settle({ ...s, mode: "list" }, page);
    if (key === "backspace") {
      return settle({ ...s, filter: [...s.filter].slice(0, -1).join("") }, page);
    }
    if (key === "ctrl-u") return settle({ ...s, filter: "" }, page);
    if ([...key].length === 1 && key >= " ") {
      const next = { ...s, filter: s.filter + key };
      const first = visibleRows(next).findIndex((r) => r.kind === "op");
      return settle({ ...next, cursor: Math.max(0, first) }, page);
    }
    return s;
  }
  const rows = visibleRows(s);
  const move = (to: number) =>
    settle({ ...s, cursor: Math.max(0, Math.min(rows.length - 1, to)) }, page);
  switch (key) {
    case "up":
    case "k":
      return move(s.cursor - 1);
    case "down":
    case "j":
      return move(s.cursor + 1);
    case "pageup":
      return move(s.cursor - page);
    case "pagedown":
      return move(s.cursor + page);
    case "home":
      return move(0);
    case "end":
      return move(rows.length - 1);
    case "/":
      return { ...s, mode: "filter", message: "Type to filter; enter keeps it, escape clears it." };
    case "q":
      return { ...s, done: "quit" };
    case "enter":
      return {
        ...s,
        mode: "output",
        message: s.selected.size === 0
          ? "Nothing selected: the file will grant nothing. Enter writes, escape goes back."
          : `${s.selected.size} selected. Enter writes, escape goes back.`,
      };
    case "space": {
      const row = rows[s.cursor];
      if (!row) return s;
      if (row.kind === "op") {
        if (row.reason) return { ...s, message: `Cannot be granted: ${row.reason}` };
        if (s.selected.has(row.key)) s.selected.delete(row.key);
        else s.selected.add(row.key);
        return s;
      }
      const ops = rows.filter((r): r is Extract<Row, { kind: "op" }> =>
        r.kind === "op" && r.group === row.group && !r.reason
      );
      const all = ops.every((r) => s.selected.has(r.key));
      for (const r of ops) all ? s.selected.delete(r.key) : s.selected.add(r.key);
      return { ...s, message: `${all ? "Deselected" : "Selected"} ${ops.length} in ${row.label}.` };
    }
    default:
      return s;
  }
}

/** Keep the cursor on a visible row and in the drawn window. */
function settle(s: ChooserState, page: number): ChooserState {
  const rows = visibleRows(s);
  const cursor = Math.max(0, Math.min(rows.length - 1, s.cursor));
  let top = s.top;
  if (cursor < top) top = cursor;
  if (cursor >= top + page) top = cursor - page + 1;
  top = Math.max(0, Math.min(top, Math.max(0, rows.length - page)));
  return { ...s, cursor, top };
}

/**
 * Draw the screen as lines of at most `cols` characters: a title, the rows,
 * the key help and the message. The cursor row starts with `>` (and is in
 * reverse video when `color`).
 */
export function draw(
  state: ChooserState,
  title: string,
  rowsOnScreen: number,
  cols: number,
  color: boolean,
): string[] {
  const rows = visibleRows(state);
  const fit = (text: string) => [...shown(text)].slice(0, cols).join("");
  const lines = [
    fit(title),
    fit(
      `${state.selected.size} selected` +
        (state.filter || state.mode === "filter"
          ? `   filter: ${state.filter}${state.mode === "filter" ? "_" : ""}`
          : ""),
    ),
    "",
  ];
  const methodWidth = 7;
  const pathWidth = Math.min(
    48,
    Math.max(10, ...rows.map((r) => (r.kind === "op" ? r.path.length : 0))),
  );
  for (let i = state.top; i < Math.min(rows.length, state.top + rowsOnScreen); i++) {
    const r = rows[i];
    const mark = i === state.cursor ? ">" : " ";
    let text: string;
    if (r.kind === "group") {
      text = `${mark} ${r.label}`;
    } else {
      const box = r.reason ? "[-]" : state.selected.has(r.key) ? "[x]" : "[ ]";
      const tail = r.reason ? `not expressible: ${r.reason}` : `${r.tool}  ${r.summary}`;
      text = `${mark}   ${box} ${r.method.padEnd(methodWidth)}${r.path.padEnd(pathWidth)}  ${tail}`;
    }
    text = fit(text);
    if (color && i === state.cursor) text = `\x1b[7m${text}\x1b[0m`;
    else if (color && r.kind === "op" && r.reason) text = `\x1b[2m${text}\x1b[0m`;
    else if (color && r.kind === "group") text = `\x1b[1m${text}\x1b[0m`;
    lines.push(text);
  }
  if (rows.length === 0) lines.push("  (no operation matches the filter)");
  while (lines.length < rowsOnScreen + 3) lines.push("");
  lines.push(
    fit(
      state.mode === "output"
        ? state.output === "" && state.defaultOutput !== ""
          ? `Write to: _   (enter: ${state.defaultOutput}; or type another name)`
          : `Write to: ${state.output}_`
        : state.mode === "filter"
        ? "filter: type text   enter keep   escape clear"
        : "up/down move   space select   / filter   enter write   q quit",
    ),
    fit(state.message),
  );
  return lines;
}

/**
 * Text from the document as the terminal shows it: control characters (an
 * escape sequence could move the cursor, retitle the window or write the
 * clipboard) escaped as `\uXXXX`, and bidirectional overrides, which could
 * show a reviewer text in another order than it is, likewise.
 */
function shown(text: string): string {
  return printable(text).replace(
    /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Key names from terminal input bytes (xterm sequences). */
export function keysOf(bytes: Uint8Array): string[] {
  const text = new TextDecoder().decode(bytes);
  const keys: string[] = [];
  const table: [string, string][] = [
    ["\x1b[A", "up"],
    ["\x1bOA", "up"],
    ["\x1b[B", "down"],
    ["\x1bOB", "down"],
    ["\x1b[5~", "pageup"],
    ["\x1b[6~", "pagedown"],
    ["\x1b[H", "home"],
    ["\x1b[1~", "home"],
    ["\x1b[F", "end"],
    ["\x1b[4~", "end"],
  ];
  for (let i = 0; i < text.length;) {
    const seq = table.find(([s]) => text.startsWith(s, i));
    if (seq) {
      keys.push(seq[1]);
      i += seq[0].length;
      continue;
    }
    const c = text[i];
    if (c === "\x1b") {
      // A lone escape, or an unknown sequence: skip its CSI body.
      const m = /^\x1b\[[0-9;]*[A-Za-z~]/.exec(text.slice(i));
      if (m) i += m[0].length;
      else {
        keys.push("escape");
        i++;
      }
      continue;
    }
    keys.push(
      c === "\r" || c === "\n"
        ? "enter"
        : c === " "
        ? "space"
        : c === "\x7f" || c === "\b"
        ? "backspace"
        : c === "\x03"
        ? "ctrl-c"
        : c === "\x15"
        ? "ctrl-u"
        : c,
    );
    i++;
  }
  return keys;
}

/**
 * Run the chooser on the terminal and write the file the person confirms.
 * @param options the scaffold options (no selection: that is what is chosen here)
 * @param out where to write: a default path, and whether it may replace a file
 * @returns the exit code: 0 written, 1 left without writing (or not written)
 */
export async function choose(
  doc: OpenApiDocument,
  options: Omit<ScaffoldOptions, "select" | "selectReads">,
  out: { output?: string; force: boolean },
): Promise<number> {
  const server = options.server ?? serverName(doc, options.source);
  const rows = chooserRows(doc, server);
  let state = initialState(rows, out.output ?? `${server}.mcp.kdl`);
  const title = `weir scaffold: ${doc.title || options.source} ` +
    `(${
      rows.filter((r) => r.kind === "op").length
    } operations). Nothing is granted until you select it.`;
  const encoder = new TextEncoder();
  const write = (text: string) => Deno.stdout.writeSync(encoder.encode(text));
  const size = () => {
    try {
      return screenSize(Deno.consoleSize());
    } catch {
      return screenSize(undefined);
    }
  };
  const paint = () => {
    const { columns, rows: height } = size();
    const page = Math.max(3, height - 6);
    state = settle(state, page);
    const lines = draw(state, title, page, columns, true);
    write("\x1b[H" + lines.map((l) => `${l}\x1b[K`).join("\r\n") + "\x1b[J");
  };
  Deno.stdin.setRaw(true);
  write("\x1b[?1049h\x1b[?25l\x1b[2J");
  let result = 1;
  let finished = "";
  try {
    paint();
    const buf = new Uint8Array(256);
    while (!state.done) {
      const n = await Deno.stdin.read(buf);
      if (n === null) {
        state = { ...state, done: "quit" };
        break;
      }
      const page = Math.max(3, size().rows - 6);
      for (const key of keysOf(buf.subarray(0, n))) {
        state = press(state, key, page);
        if (state.done === "write") {
          const problem = await writeChosen(state);
          if (problem) state = { ...state, ...problem, done: undefined };
        }
        if (state.done) break;
      }
      if (!state.done) paint();
    }
  } finally {
    write("\x1b[?25h\x1b[?1049l");
    Deno.stdin.setRaw(false);
  }
  if (state.done === "write") {
    result = 0;
    console.error(finished);
  } else {
    console.error("weir: left the chooser; nothing written");
  }
  return result;

  /** Write the file; what went wrong, as the state's message (and a path that exists). */
  async function writeChosen(
    s: ChooserState,
  ): Promise<{ message: string; existing?: string } | undefined> {
    let scaffold;
    try {
      scaffold = buildScaffold(doc, { ...options, server, select: [...s.selected] });
    } catch (error) {
      if (error instanceof SelectionError) {
        return { message: `${error.message} (escape to go back)` };
      }
      throw error;
    }
    const path = outputPath(s);
    const force = out.force || s.replace === path;
    if (!force && (await exists(path))) {
      return {
        message: `${printable(path)} exists: y replaces it, or type another name ` +
          `(escape goes back; your selections are kept)`,
        existing: path,
      };
    }
    const problem = await writeFileAtomically(path, scaffold.text, force);
    if (problem) return { message: `${problem} (escape to go back, or type another name)` };
    finished = scaffoldSummary(scaffold, path);
    return undefined;
  }
}
