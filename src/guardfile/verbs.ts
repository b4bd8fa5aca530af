/**
 * Verb -> HTTP method, the reference's table (umbra `MethodForVerb`), as data.
 *
 * @module
 */
import type { HttpMethod } from "./model.ts";

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
 * The method a verb maps to.
 * @returns the method and whether it was inferred (no table entry: POST, and lint warns)
 */
export function methodForVerb(verb: string): { method: HttpMethod; inferred: boolean } {
  const exact = VERB_METHODS[verb];
  if (exact) return { method: exact, inferred: false };
  for (const [prefix, method] of VERB_PREFIXES) {
    if (verb.startsWith(prefix)) return { method, inferred: false };
  }
  return { method: "POST", inferred: true };
}
