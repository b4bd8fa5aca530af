/**
 * Tool names for scaffolded grants: `can <verb> <resource>`, styled like the
 * examples in `guardfiles/` (a verb, then a singular noun phrase joined by
 * `-`: `get issue`, `get realtime-visitors`).
 *
 * From the operation's `operationId`: the verb is its first word when that is
 * a verb (`findPetsByStatus` -> `find pets-by-status`); GitHub-style ids
 * `tag/verb-rest` put the tag first, in the singular (`issues/list-for-repo`
 * -> `list issue-for-repo`, `issues/get` -> `get issue`); a tag that is itself
 * the verb leads (`search/issues-and-pull-requests` -> `search
 * issues-and-pull-requests`); a word repeated next to itself is said once
 * (`actions/get-actions-cache-usage` -> `get action-cache-usage`). When no
 * word is a verb, the verb is the method's (`get`, `create`, `set`, `edit`,
 * `delete`) and every word is the resource. Without an operationId the name
 * comes from the method and path. When the verb table (`docs/guardfile.md`,
 * "Grants") maps the verb to another method, or not at all, the grant states
 * `method` so the method is exactly the document's.
 *
 * @module
 */
import type { HttpMethod } from "../guardfile/model.ts";
import { methodForVerb, VERB_METHODS } from "../guardfile/verbs.ts";
import { foldedName } from "../guardfile/spellings.ts";

/**
 * Words taken as verbs besides the verb table's: the actions API documents
 * name (each still needs `method` unless the table maps it).
 */
const VERBS = new Set([
  ...Object.keys(VERB_METHODS),
  ...("accept apply approve assign attach block cancel check clear compare convert copy count decline " +
    "delete deprovision detach disable dismiss download enable export fetch find follow fork " +
    "generate grant import install invite link lock login logout map mark merge move patch place " +
    "post preview provision publish put read redeliver register reject rename render replace " +
    "reprioritize request rerequest rerun reset resolve restore resume retry review revoke rotate " +
    "run send share sort star start stop submit subscribe suspend sync test toggle transfer " +
    "trigger unassign unblock unfollow uninstall unlink unlock unpin unpublish unregister " +
    "unstack unstar unsubscribe unsuspend unwatch update upload upsert validate verify watch")
    .split(" "),
]);

/** `re`, `un`, `pre`: a prefix written as a word of its own (`re-run` -> `rerun`). */
const PREFIXES = new Set(["re", "un", "pre"]);

/**
 * The folded names (src/guardfile/spellings.ts) of the names taken, and of
 * the info tool: a new name must meet none of them, or the loader would warn
 * that two operations have names differing only by case or separators. A
 * verb synonym is free: two operations (`delete_issue-label` on a label,
 * `remove_issue-label` on an issue's label) reach different paths, which the
 * loader tells apart.
 */
function keysOf(taken: Set<string>): { size: number; keys: Set<string> } {
  let cached = KEYS.get(taken);
  if (!cached || cached.size !== taken.size) {
    const keys = new Set([foldedName("weir_info")]);
    for (const t of taken) keys.add(foldedName(t));
    cached = { size: taken.size, keys };
    KEYS.set(taken, cached);
  }
  return cached;
}
const KEYS = new WeakMap<Set<string>, { size: number; keys: Set<string> }>();

/** A plural noun in the singular, by English spelling rules (`repos` -> `repo`, `registries` -> `registry`). */
export function singular(word: string): string {
  if (word.length <= 3) return word;
  if (/ies$/.test(word)) return word.slice(0, -3) + "y";
  if (/(?:ss|sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (/(?:ss|us|is)$/.test(word) || !word.endsWith("s")) return word;
  return word.slice(0, -1);
}

/** The verb used when the operationId gives none, by method. */
const DEFAULT_VERB: Record<HttpMethod, string> = {
  GET: "get",
  HEAD: "get",
  POST: "create",
  PUT: "set",
  PATCH: "edit",
  DELETE: "delete",
};

/** A grant's name parts. */
export interface GrantName {
  verb: string;
  resource: string;
  /** `<verb>_<resource>`, unique in the file. */
  tool: string;
  /** The verb table does not give the document's method: write `method "<M>"`. */
  statesMethod: boolean;
}

/** Lower-case words of an identifier: `findPetsByStatus` -> find, pets, by, status; `getAPIs` -> get, apis. */
export function words(text: string): string[] {
  return text
    .replace(/([A-Z]{2,})s(?![a-z])/g, (_, a: string) => ` ${a.toLowerCase()}s `) // getAPIs
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

/** Static words of a path: `/repos/{owner}/{repo}/issues` -> repos, issues. */
function pathWords(path: string): string[] {
  return path.split("/").filter((s) => s !== "" && !s.includes("{")).flatMap(words);
}

/**
 * Name a grant; `taken` holds the tool names already used (and is updated).
 * @param method the document's method
 * @param path the document's path
 * @param operationId the operation's id, if any
 */
export function nameGrant(
  method: HttpMethod,
  path: string,
  operationId: string | undefined,
  taken: Set<string>,
): GrantName {
  let verb: string;
  let rest: string[];
  const segments = (operationId ?? "").split("/").map(words).filter((w) => w.length > 0);
  if (segments.length > 0) {
    // Tags first, each in the singular; then the last segment.
    const tags = segments.slice(0, -1).map((t) => [...t.slice(0, -1), singular(t[t.length - 1])]);
    const last = [...segments[segments.length - 1]];
    if (last.length > 1 && PREFIXES.has(last[0]) && VERBS.has(last[0] + last[1])) {
      last.splice(0, 2, last[0] + last[1]);
    }
    const tagVerb = tags.findIndex((t) => t.length === 1 && VERBS.has(t[0]));
    if (VERBS.has(last[0])) {
      verb = last[0];
      rest = [...tags.flat(), ...last.slice(1)];
    } else if (tagVerb >= 0) {
      verb = tags[tagVerb][0];
      rest = [...tags.filter((_, i) => i !== tagVerb).flat(), ...last];
    } else {
      verb = DEFAULT_VERB[method];
      rest = [...tags.flat(), ...last];
    }
    if (rest.length === 0) rest = pathWords(path);
  } else {
    verb = method === "GET" && !/\}\/?$/.test(path) ? "list" : DEFAULT_VERB[method];
    rest = pathWords(path);
  }
  if (/^[0-9]/.test(verb)) {
    rest = [verb, ...rest];
    verb = DEFAULT_VERB[method];
  }
  // A word said twice in a row is said once (`action-actions-cache` -> `action-cache`).
  rest = rest.filter((w, i) => i === 0 || singular(w) !== singular(rest[i - 1]));
  if (rest.length === 0) rest = ["root"];
  const base = rest.join("-").slice(0, 100).replace(/-+$/, "");
  const known = keysOf(taken);
  const clashes = (tool: string) => known.keys.has(foldedName(tool));
  let resource = base;
  for (let n = 2; clashes(`${verb}_${resource}`); n++) resource = `${base}-${n}`;
  const tool = `${verb}_${resource}`;
  taken.add(tool);
  known.keys.add(foldedName(tool));
  known.size = taken.size;
  const mapped = methodForVerb(verb);
  return { verb, resource, tool, statesMethod: mapped.inferred || mapped.method !== method };
}
