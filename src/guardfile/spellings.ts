/**
 * One operation, one tool name: tool names that differ only by letter case,
 * by separators (`_`, `-`, `.`, a space, or none at all, as in camelCase) or
 * by a verb synonym (`remove` for `delete`, `fetch` for `get`) name the same
 * operation. A `withhold "delete_ticket"` beside `can delete Ticket` (tool
 * `delete_Ticket`) or `can remove ticket` would otherwise serve the very
 * operation the file withholds, under another spelling; and two served tools
 * spelled so would let an agent reach one operation by two names.
 * {@link spellingClashes} finds every such pair; the loader makes each an
 * error naming both tools.
 *
 * Pure: names in, findings out. The verb synonym groups are
 * {@link VERB_SYNONYMS}; the folding rule is {@link foldedName}.
 *
 * @module
 */

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
 * `-`, `.` or spaces (`Delete-Ticket` and `deleteTicket` -> `deleteticket`).
 */
export function foldedName(name: string): string {
  return name.toLowerCase().replace(/[_\-. ]+/g, "");
}

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
 * import { operationKeys } from "./spellings.ts";
 * const meet = (a: string, b: string) =>
 *   operationKeys(a).some((k) => operationKeys(b).includes(k));
 * console.assert(meet("remove-Ticket", "delete_ticket"));
 * console.assert(meet("REMOVETICKET", "deleteTicket"));
 * console.assert(!meet("close_ticket", "delete_ticket"));
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
}

/** Two surface names that name one operation. */
export interface SpellingClash {
  /** The one declared later in the file (the finding is reported there). */
  later: SurfaceName;
  /** The one it repeats. */
  earlier: SurfaceName;
  /** What to tell the author: both names, how they differ, what to change. */
  message: string;
}

/**
 * Every name on one surface that names the same operation as a name before
 * it ({@link operationKeys}). Identical names are not reported here (the
 * loader refuses those in its own words).
 *
 * @param names the served tools (grants, the info tool) and the withheld stubs
 * @returns one clash per such name, against the first name of its operation, in file order
 */
export function spellingClashes(names: readonly SurfaceName[]): SpellingClash[] {
  const ordered = [...names].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  const first = new Map<string, SurfaceName>();
  const clashes: SpellingClash[] = [];
  for (const name of ordered) {
    const keys = operationKeys(name.tool);
    const earlier = keys.map((k) => first.get(k)).find((e) => e !== undefined);
    if (earlier !== undefined && earlier.tool !== name.tool) {
      clashes.push({ later: name, earlier, message: clashMessage(name, earlier) });
      continue;
    }
    for (const k of keys) if (!first.has(k)) first.set(k, name);
  }
  return clashes;
}

function clashMessage(later: SurfaceName, earlier: SurfaceName): string {
  const at = earlier.line === undefined ? "" : `, line ${earlier.line}`;
  const pair = `"${later.tool}" (${later.what}) and "${earlier.tool}" (${earlier.what}${at}) ` +
    `differ ${howTheyDiffer(later.tool, earlier.tool)}, so they name one operation`;
  const withheld = [later, earlier].find((n) => n.kind === "withheld");
  const served = [later, earlier].find((n) => n.kind === "served");
  if (withheld && served) {
    return `${pair}: "${withheld.tool}" is withheld, and serving "${served.tool}" would serve ` +
      `it anyway; remove ${served.what}, or remove the withhold if the operation is meant to ` +
      `be served`;
  }
  if (withheld) {
    return `${pair}: keep one withhold node, spelled as the upstream names the operation`;
  }
  return `${pair}: one surface may not offer one operation under two names; remove one, or ` +
    `rename a verb or resource so the names say how the operations differ`;
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
  const withheld = names.filter((n) => n.kind === "withheld");
  const findings: SpellingClash[] = [];
  for (const served of names.filter((n) => n.kind === "served")) {
    const mine = nearKeys(served.tool);
    const exact = new Set(operationKeys(served.tool));
    for (const w of withheld) {
      const theirs = nearKeys(w.tool);
      // Names the loader already refuses as one operation are not repeated here.
      if (operationKeys(w.tool).some((k) => exact.has(k))) continue;
      if (!theirs.some((k) => mine.includes(k))) continue;
      const at = w.line === undefined ? "" : `, line ${w.line}`;
      findings.push({
        later: served,
        earlier: w,
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
