/**
 * One `query` line of a spec-mode `pin "<tool>" { ... }` block: a query
 * value the server sends, absent from the tool's schema. Refused: a name
 * pinned twice, a method override key, a caller input of the grant (by name,
 * or by a key an upstream that matches names loosely would read as the
 * pinned one: `src/guardfile/name_fold.ts`).
 *
 * @module
 */
import type { Grant, QueryPin } from "./model.ts";
import { type NodeReader, show } from "./nodes.ts";
import { PROVIDERS } from "./value.ts";
import { METHOD_OVERRIDE_KEYS, pathTwinOf, pathTwinWarning, wireKeys } from "./grant.ts";
import { foldCaseAndWidth, foldName } from "./name_fold.ts";

/**
 * Read one pin line of `grant` (`pins`: those read before it in the block).
 * @returns the pin, or `undefined` after an error on the node
 */
export function readQueryPin(
  q: NodeReader,
  grant: Grant | undefined,
  pins: readonly QueryPin[],
): QueryPin | undefined {
  q.onlyProperties(["from", "secret"]);
  q.noChildren();
  if (!q.argCount(3, 3, `a name, a provider and a source: query "api_key" env "API_KEY"`)) {
    return undefined;
  }
  const name = q.stringArg(0, "the pinned query name");
  const provider = q.stringArg(1, "the provider");
  const address = q.stringArg(2, "the source");
  if (!name || !provider || !address) return undefined;
  if (!PROVIDERS.includes(provider)) {
    q.error(`unknown provider "${provider}"; use env, file or literal`);
    return undefined;
  }
  if (pins.some((p) => p.name === name)) {
    q.error(`query "${name}" is pinned twice; keep one`);
    return undefined;
  }
  if (METHOD_OVERRIDE_KEYS.includes(foldCaseAndWidth(name))) {
    q.error(
      `a pin on query "${name}" sends what many frameworks read as another HTTP method than ` +
        `the grant's (a method override): remove it; a grant that needs another method says ` +
        `so with method "..."`,
    );
    return undefined;
  }
  if (grant && grant.query.some((g) => g.name === name || g.wire === name)) {
    q.error(
      `query "${name}" is a caller input of ${grant.tool}; a pin cannot override a caller input ` +
        `(remove it from the grant's query)`,
    );
    return undefined;
  }
  // A caller's key an upstream could read as the pinned one (case, width, separators).
  const twin = grant && wireKeys(grant).find((k) => foldName(k.key) === foldName(name));
  if (twin) {
    q.error(
      `the pinned query "${name}" and ${twin.what} ("${twin.key}") differ only by letter ` +
        `case, width or separators: an upstream that matches names loosely could take the ` +
        `caller's value for the pinned one; remove that input, or rename it`,
    );
    return undefined;
  }
  const pathTwin = grant && pathTwinOf(grant, name);
  if (pathTwin) q.warn(pathTwinWarning(`the pinned query "${name}"`, pathTwin));
  const pin: QueryPin = { name, source: { chain: [{ provider, address }] } };
  if ("from" in q.node.properties) {
    const from = q.node.properties.from;
    const m = typeof from === "string" ? /^query:(.+)$/.exec(from) : null;
    if (from === "") {
      // An empty from= means no extraction, as in the reference.
    } else if (!m) {
      q.error(
        `from=${show(from)} must be "query:<parameter>"; write it so, e.g. from="query:key"`,
      );
      return undefined;
    } else {
      pin.fromQuery = m[1];
    }
  }
  if ("secret" in q.node.properties) {
    const secret = q.node.properties.secret;
    if (typeof secret !== "boolean") {
      q.error(`secret=${show(secret)} must be #true or #false; write secret=#true or drop it`);
      return undefined;
    }
    pin.secret = secret;
  }
  return pin;
}
