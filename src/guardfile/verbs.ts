/**
 * Verb -> HTTP method, the reference's table (umbra `MethodForVerb`), as data.
 *
 * @module
 */
import type { HttpMethod } from "./model.ts";
import { foldCaseAndWidth } from "./name_fold.ts";

/** Verbs with a fixed method. */
export const VERB_METHODS: Readonly<Record<string, HttpMethod>> = {
  get: "GET",
  view: "GET",
  list: "GET",
  search: "GET",
  create: "POST",
  add: "POST",
  comment: "POST",
  pin: "POST",
  edit: "PATCH",
  close: "PATCH",
  reopen: "PATCH",
  archive: "PATCH",
  unarchive: "PATCH",
  set: "PUT",
  delete: "DELETE",
  remove: "DELETE",
};

/** Verb prefixes with a fixed method, checked after the exact table. */
export const VERB_PREFIXES: readonly (readonly [string, HttpMethod])[] = [
  ["list-", "GET"],
  ["create-on-", "POST"],
];

/** Methods `method "<M>"` may state. */
export const HTTP_METHODS: readonly HttpMethod[] = [
  "GET",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "HEAD",
];

/**
 * Words a reader takes for a read when they name an operation (a verb, or a
 * segment of a tool name): `read_file`, `can show report`, `list-`. The one
 * list (`src/guardfile/reads.ts` re-exports it): a verb that is one of them
 * and not in {@link VERB_METHODS} sends GET, and a compound verb that starts
 * with one (`get-open`) must state its method.
 */
export const READ_WORDS: readonly string[] = [
  "browse",
  "count",
  "describe",
  "display",
  "download",
  "enumerate",
  "fetch",
  "find",
  "get",
  "info",
  "inspect",
  "list",
  "lookup",
  "ls",
  "preview",
  "query",
  "read",
  "retrieve",
  "search",
  "show",
  "stat",
  "stats",
  "status",
  "view",
];

/**
 * The method a verb maps to, its letter case folded (`Get` and `DELETE` are
 * `get` and `delete`): the table, then the prefixes, then a word of
 * {@link READ_WORDS} (GET: a verb a reader takes for a read never sends a
 * write by default); anything else falls through to POST.
 * @returns the method; whether it was inferred (no table entry: POST, and lint warns);
 *   `readWord` when a word of {@link READ_WORDS} decided it
 * @example
 * ```ts
 * import { methodForVerb } from "./verbs.ts";
 * methodForVerb("read"); // { method: "GET", inferred: false, readWord: true }
 * methodForVerb("Delete"); // { method: "DELETE", inferred: false }
 * methodForVerb("approve"); // { method: "POST", inferred: true }
 * ```
 */
export function methodForVerb(
  verb: string,
): { method: HttpMethod; inferred: boolean; readWord?: true } {
  const folded = foldCaseAndWidth(verb);
  const exact = Object.hasOwn(VERB_METHODS, folded) ? VERB_METHODS[folded] : undefined;
  if (exact) return { method: exact, inferred: false };
  for (const [prefix, method] of VERB_PREFIXES) {
    if (folded.startsWith(prefix)) return { method, inferred: false };
  }
  if (READ_WORDS.includes(folded)) return { method: "GET", inferred: false, readWord: true };
  return { method: "POST", inferred: true };
}

const ASCII = /^[\x00-\x7f]*$/;
/** Where a compound verb's words meet: a separator, or a lower-case letter then an upper-case one. */
const WORD_BREAK = /[-_.]|(?<=\p{Ll})(?=\p{Lu})/u;
const ASCII_WORD_BREAK = /[-_.]|(?<=[a-z])(?=[A-Z])/;

/**
 * The read word a compound verb outside the table starts with (`get-open`,
 * `find_by_tag`, `getOpen`: `get`, `find`, `get`), which a reader takes for a
 * read though it would fall through to POST; `undefined` for any other verb.
 */
export function readLikePrefix(verb: string): string | undefined {
  if (!methodForVerb(verb).inferred) return undefined;
  // An ASCII verb is its own NFKC form, and its lower- and upper-case letters are
  // a-z and A-Z: the plain pattern splits it as the Unicode one does, without
  // compiling the \p{..} tables at every start (~2.5 M instructions).
  const parts = ASCII.test(verb)
    ? verb.split(ASCII_WORD_BREAK)
    : verb.normalize("NFKC").split(WORD_BREAK);
  if (parts.length < 2) return undefined;
  const first = foldCaseAndWidth(parts[0]);
  return READ_WORDS.includes(first) ? first : undefined;
}
