/**
 * Tool names for scaffolded grants: `can <verb> <resource>` from the
 * operation's `operationId` (`issues/list-for-repo` -> `list issues-for-repo`,
 * `findPetsByStatus` -> `find pets-by-status`), else from its method and path.
 * The verb is the operationId's first word; when the verb table
 * (`docs/guardfile.md`, "Grants") maps it to another method, or not at all,
 * the grant states `method` so the method is exactly the document's.
 *
 * @module
 */
import type { HttpMethod } from "../guardfile/model.ts";
import { methodForVerb } from "../guardfile/verbs.ts";

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

/** Lower-case words of an identifier: `findPetsByStatus` -> find, pets, by, status. */
export function words(text: string): string[] {
  return text
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
    const last = segments[segments.length - 1];
    verb = last[0];
    rest = [...segments.slice(0, -1).flat(), ...last.slice(1)];
    if (rest.length === 0) rest = pathWords(path);
  } else {
    verb = method === "GET" && !/\}\/?$/.test(path) ? "list" : DEFAULT_VERB[method];
    rest = pathWords(path);
  }
  if (/^[0-9]/.test(verb)) {
    rest = [verb, ...rest];
    verb = DEFAULT_VERB[method];
  }
  if (rest.length === 0) rest = ["root"];
  const base = rest.join("-").slice(0, 100).replace(/-+$/, "");
  let resource = base;
  for (let n = 2; taken.has(`${verb}_${resource}`) || `${verb}_${resource}` === "weir_info"; n++) {
    resource = `${base}-${n}`;
  }
  const tool = `${verb}_${resource}`;
  taken.add(tool);
  const mapped = methodForVerb(verb);
  return { verb, resource, tool, statesMethod: mapped.inferred || mapped.method !== method };
}
