/**
 * One operation, one tool name: tool names that differ only by letter case,
 * by separators (`_`, `-`, `.`, a space, or none at all, as in camelCase) or
 * by a verb synonym (`remove` for `delete`, `fetch` for `get`) may name the
 * same operation ({@link operationKeys}). {@link spellingClashes} finds such
 * pairs and says how much each matters:
 *
 * - an error where a spelling would serve a withheld operation
 *   (`withhold "delete_ticket"` beside `can delete Ticket` or
 *   `can remove ticket`: the very operation the file withholds, served);
 * - an error where two served names reach the same upstream operation (the
 *   same method and path, the same MCP tool) with different controls (one
 *   with `confirm`, one without; another `restrict`, pin, scope or input
 *   rule): an agent skips a control by calling the other name;
 * - a warning where two served names reach one operation with the same
 *   controls (two names, no harm), where two names differ only by case or
 *   separators but reach different operations (easy to confuse), or where
 *   two withholds spell one name;
 * - nothing for verb synonyms that reach different operations: `get_file`
 *   (its metadata) and `read_file` (its content) are two operations, and many
 *   APIs name them so.
 *
 * Pure: names in, findings out. The verb synonym groups are
 * {@link VERB_SYNONYMS}; the folding rule is {@link foldedName}.
 *
 * @module
 */
import { foldName } from "./name_fold.ts";

/**
 * Verbs that name one operation, each group led by its usual word. Only the
 * start of a name (its verb, as `can <verb> <resource>` mints
 * `<verb>_<resource>`) is read through this table.
 */
export const VERB_SYNONYMS: readonly (readonly string[])[] = [
  ["delete", "remove", "destroy", "erase", "drop", "purge", "del", "rm", "unlink", "trash", "wipe"],
  ["get", "view", "read", "fetch", "show", "retrieve", "describe", "display", "lookup"],
  ["list", "ls", "enumerate", "browse"],
  ["search", "find", "query"],
  ["create", "add", "new", "insert", "make"],
  ["update", "edit", "modify", "change", "patch", "alter", "set"],
  ["run", "exec", "execute", "invoke", "trigger"],
];

/** Each synonym -> its group's lead word. */
const LEAD: ReadonlyMap<string, string> = new Map(
  VERB_SYNONYMS.flatMap((group) => group.map((verb) => [verb, group[0]] as const)),
);

/** The synonyms longest first, so `deleteticket` reads as `delete`, not `del`. */
const BY_LENGTH: readonly string[] = [...LEAD.keys()].sort((a, b) => b.length - a.length);

/**
 * The name with case and separators folded away: lower-cased, without `_`,
 * `-`, `.` or spaces (`Delete-Ticket` and `deleteTicket` -> `deleteticket`);
 * the one fold of `name_fold.ts`, which also reads a fullwidth letter as its
 * ASCII one.
 */
export const foldedName: (name: string) => string = foldName;

/** The longest verb synonym a folded name starts with, if any. */
function verbOf(folded: string): string | undefined {
  return BY_LENGTH.find((verb) => folded.startsWith(verb));
}

/**
 * The keys of the operation a tool name names: its {@link foldedName}, and,
 * when that starts with a verb of {@link VERB_SYNONYMS} (the longest one),
 * the same with the verb replaced by its group's lead. Two names name one
 * operation when their keys meet. The verb is read off the folded name, so
 * the rule is blind to case and separators by construction (`REMOVETICKET`,
 * `remove-Ticket` and `delete_ticket` all meet).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { operationKeys } from "./spellings.ts";
 * const meet = (a: string, b: string) =>
 *   operationKeys(a).some((k) => operationKeys(b).includes(k));
 * assert.ok(meet("remove-Ticket", "delete_ticket"));
 * assert.ok(meet("REMOVETICKET", "deleteTicket"));
 * assert.ok(!meet("close_ticket", "delete_ticket"));
 * ```
 */
export function operationKeys(name: string): string[] {
  const folded = foldedName(name);
  const verb = verbOf(folded);
  if (verb === undefined) return [folded];
  // The NUL keeps a verb key from ever equalling a folded name.
  return [folded, `${LEAD.get(verb)}\u0000${folded.slice(verb.length)}`];
}

/** How two names that name one operation differ, in words for a message. */
export function howTheyDiffer(a: string, b: string): string {
  if (a.toLowerCase() === b.toLowerCase()) return "only by letter case";
  const fa = foldedName(a);
  const fb = foldedName(b);
  if (fa === fb) return "only by letter case or separators";
  const va = verbOf(fa)!;
  const vb = verbOf(fb)!;
  const alsoSpelled = a.slice(va.length) !== b.slice(vb.length)
    ? ", letter case or separators"
    : "";
  return `only by a verb synonym ("${va}" and "${vb}")${alsoSpelled}`;
}

/** A tool on the surface a guardfile serves (or withholds), with where it is declared. */
export interface SurfaceName {
  /** The tool name. */
  tool: string;
  /** `withheld` for a `withhold` stub, `served` for a grant or the info tool. */
  kind: "served" | "withheld";
  /** What declared it, for messages: `can delete ticket`, `withhold "delete_ticket"`. */
  what: string;
  /** 1-based line of the declaration, when known. */
  line?: number;
  /**
   * The upstream operation a served name reaches, in words for a message
   * (`GET /files/{}`, `the MCP server's "search"`); absent for the info tool.
   * Two served names with equal operations reach one operation.
   */
  operation?: string;
  /**
   * Its controls, each kind as comparable text (`confirm`, `restrict`,
   * `pin`...): two names reaching one operation must agree on every kind.
   */
  controls?: Readonly<Record<string, string>>;
}

/** Two surface names that may name one operation. */
export interface SpellingClash {
  /** The one declared later in the file (the finding is reported there). */
  later: SurfaceName;
  /** The one it repeats. */
  earlier: SurfaceName;
  /** `error`: the file is refused; `warning`: said, and served. */
  severity: "error" | "warning";
  /** What to tell the author: both names, how they differ, what to change. */
  message: string;
}

/**
 * Every name on one surface that may name the same operation as a name
 * before it ({@link operationKeys}), with its severity (see the module doc):
 * at most one finding per name, the most severe. Identical names are not
 * reported here (the loader refuses those in its own words).
 *
 * @param names the served tools (grants, the info tool) and the withheld stubs
 * @returns the findings, in file order
 * @example
 * ```ts
 * import { spellingClashes } from "./spellings.ts";
 * const get = { tool: "get_file", kind: "served", what: "can get file", operation: "GET /files/{}" } as const;
 * const read = { tool: "read_file", kind: "served", what: "can read file", operation: "GET /files/{}/content" } as const;
 * spellingClashes([get, read]); // []: two operations
 * spellingClashes([get, { ...read, operation: "GET /files/{}", controls: { confirm: "yes" } }])[0].severity; // "error"
 * ```
 */
export function spellingClashes(names: readonly SurfaceName[]): SpellingClash[] {
  const ordered = [...names].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  const byKey = new Map<string, SurfaceName[]>();
  const clashes: SpellingClash[] = [];
  for (const name of ordered) {
    const keys = operationKeys(name.tool);
    const earlier = new Set(keys.flatMap((k) => byKey.get(k) ?? []));
    let worst: SpellingClash | undefined;
    for (const e of earlier) {
      if (e.tool === name.tool) continue;
      const found = clashOf(name, e);
      if (found && (!worst || (worst.severity === "warning" && found.severity === "error"))) {
        worst = found;
      }
    }
    if (worst) clashes.push(worst);
    for (const k of keys) byKey.set(k, [...(byKey.get(k) ?? []), name]);
  }
  return clashes;
}

/** The kinds of control two names reaching one operation disagree on. */
function differingControls(a: SurfaceName, b: SurfaceName): string[] {
  const kinds = new Set([...Object.keys(a.controls ?? {}), ...Object.keys(b.controls ?? {})]);
  return [...kinds].filter((k) => (a.controls?.[k] ?? "") !== (b.controls?.[k] ?? "")).sort();
}

/** What a pair of meeting names amounts to (see the module doc), or `undefined`: nothing. */
function clashOf(later: SurfaceName, earlier: SurfaceName): SpellingClash | undefined {
  const at = earlier.line === undefined ? "" : `, line ${earlier.line}`;
  const how = howTheyDiffer(later.tool, earlier.tool);
  const pair = `"${later.tool}" (${later.what}) and "${earlier.tool}" (${earlier.what}${at}) ` +
    `differ ${how}`;
  const finding = (severity: "error" | "warning", message: string): SpellingClash => ({
    later,
    earlier,
    severity,
    message,
  });
  const withheld = [later, earlier].find((n) => n.kind === "withheld");
  const served = [later, earlier].find((n) => n.kind === "served");
  if (withheld && served) {
    return finding(
      "error",
      `${pair}, so they name one operation: "${withheld.tool}" is withheld, and serving ` +
        `"${served.tool}" would serve it anyway; remove ${served.what}, or remove the withhold ` +
        `if the operation is meant to be served`,
    );
  }
  if (withheld) {
    return finding(
      "warning",
      `${pair}, so they name one operation: keep one withhold node, spelled as the upstream ` +
        `names the operation`,
    );
  }
  if (later.operation !== undefined && later.operation === earlier.operation) {
    const differ = differingControls(later, earlier);
    if (differ.length > 0) {
      return finding(
        "error",
        `${pair}, and both reach ${later.operation} with different controls (${
          differ.join(", ")
        }): an agent skips a control by calling the other name; give both the same ` +
          `controls, or remove one`,
      );
    }
    return finding(
      "warning",
      `${pair}, and both reach ${later.operation}: one operation under two names; remove one ` +
        `unless both names are wanted`,
    );
  }
  if (foldedName(later.tool) === foldedName(earlier.tool)) {
    return finding(
      "warning",
      `${pair}, but reach different operations: names an agent can mistake for each other; ` +
        `rename one so the names say how the operations differ`,
    );
  }
  return undefined;
}

/** Control kinds that guard an operation (not the shape of its inputs), for {@link sharedOperations}. */
const GUARDING = ["confirm", "pin", "reject-empty-argument", "scope", "path values"];

/**
 * Served names of unlike spellings (which {@link spellingClashes} does not
 * pair) that reach one operation, where one lacks a guarding control the
 * other has (`confirm`, `pin`, `reject-empty-argument`, `scope`, path value
 * rules): a warning naming both, since an agent can skip the control by
 * calling the other tool. Two views of one operation with other inputs
 * (`list_open-issues`, `list_closed-issues`) are not reported.
 *
 * @returns one finding per such name, against the first it differs from, in file order
 */
export function sharedOperations(names: readonly SurfaceName[]): SpellingClash[] {
  const ordered = [...names].filter((n) => n.kind === "served" && n.operation !== undefined)
    .sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  const findings: SpellingClash[] = [];
  for (const [i, later] of ordered.entries()) {
    const keys = new Set(operationKeys(later.tool));
    const earlier = ordered.slice(0, i).find((e) =>
      e.operation === later.operation && !operationKeys(e.tool).some((k) => keys.has(k)) &&
      differingControls(later, e).some((k) => GUARDING.includes(k))
    );
    if (!earlier) continue;
    const differ = differingControls(later, earlier).filter((k) => GUARDING.includes(k));
    const at = earlier.line === undefined ? "" : `, line ${earlier.line}`;
    findings.push({
      later,
      earlier,
      severity: "warning",
      message: `"${later.tool}" (${later.what}) and "${earlier.tool}" (${earlier.what}${at}) ` +
        `both reach ${later.operation}, with different ${differ.join(", ")}: an agent can skip ` +
        `what one requires by calling the other; give both the same, unless the difference is ` +
        `meant`,
    });
  }
  return findings;
}

/**
 * The name's words: split at separators (`_`, `-`, `.`, spaces) and at
 * camelCase humps (`deleteTicket` -> `delete`, `Ticket`), lower-cased.
 */
function wordsOf(name: string): string[] {
  return name.split(/[_\-. ]+|(?<=[a-z0-9])(?=[A-Z])/).filter(Boolean).map((w) => w.toLowerCase());
}

/**
 * Keys of the operations a name might also name, beyond {@link operationKeys}:
 * with its verb written last (`ticket_delete`, `tickets.remove`: a resource-first
 * naming), and with its last word made singular (`delete_tickets`: the same
 * operation on several). Only for warnings: a plural or a reversed name is often
 * a different operation.
 */
function nearKeys(name: string): string[] {
  const keys = new Set(operationKeys(name));
  const words = wordsOf(name);
  const last = words.at(-1);
  if (words.length > 1 && last !== undefined) {
    // The verb written last, as resource-first names do: read it first.
    const rest = words.slice(0, -1).join("");
    keys.add(`${last}${rest}`);
    if (LEAD.has(last)) keys.add(`${LEAD.get(last)}\u0000${rest}`);
  }
  for (const key of [...keys]) {
    for (const ending of ["es", "s"]) {
      if (key.endsWith(ending) && key.length > ending.length + 2) {
        keys.add(key.slice(0, -ending.length));
      }
    }
  }
  return [...keys];
}

/**
 * Every served name that may reach a withheld operation under a spelling the
 * loader does not refuse ({@link spellingClashes} refuses case, separators and
 * verb synonyms): a plural (`delete_tickets` beside `withhold "delete_ticket"`)
 * or the verb written last (`ticket_delete`). Such a pair is often two
 * operations, so it is a warning naming both, for the author to decide.
 *
 * @returns one finding per served name, against the withhold it may reach
 */
export function nearWithheld(names: readonly SurfaceName[]): SpellingClash[] {
  // Each withheld name's keys once, not once per served name.
  const withheld = names.filter((n) => n.kind === "withheld").map((w) => ({
    w,
    keys: operationKeys(w.tool),
    near: nearKeys(w.tool),
  }));
  const findings: SpellingClash[] = [];
  for (const served of names.filter((n) => n.kind === "served")) {
    if (withheld.length === 0) break;
    const mine = new Set(nearKeys(served.tool));
    const exact = new Set(operationKeys(served.tool));
    for (const { w, keys, near } of withheld) {
      // Names the loader already refuses as one operation are not repeated here.
      if (keys.some((k) => exact.has(k))) continue;
      if (!near.some((k) => mine.has(k))) continue;
      const at = w.line === undefined ? "" : `, line ${w.line}`;
      findings.push({
        later: served,
        earlier: w,
        severity: "warning",
        message: `"${served.tool}" (${served.what}) and "${w.tool}" (${w.what}${at}) differ ` +
          `only by a plural or by word order, so they may name one operation: "${w.tool}" is ` +
          `withheld; if "${served.tool}" reaches it, remove ${served.what}, or add ` +
          `withhold "${served.tool}" too`,
      });
      break;
    }
  }
  return findings;
}
