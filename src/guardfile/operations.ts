/**
 * Which upstream operation a served tool reaches, and the controls it
 * reaches it under, as comparable text: what the loader needs to tell two
 * names for one operation (fine when their controls agree) from a second
 * name that skips a control of the first (refused), and both from two
 * operations that merely have similar names (`src/guardfile/spellings.ts`).
 *
 * - A spec-mode grant reaches `<METHOD> <path>` (parameter names folded to
 *   `{}`: `/files/{id}` and `/files/{file_id}` are one path), a GraphQL
 *   grant that and its document, a `sql` grant its statement. Its controls:
 *   `confirm`, `pin`, `reject-empty-argument`, `scope`, its path values'
 *   rules (`restrict` included) and its input rules (query, body, `set`,
 *   `map`, `mutually-exclusive`). What only shapes the answer (`cache`,
 *   `extract` and its bounds, `reject-empty`, `fail-when`, `describe`) is not a
 *   control here: a second name with other bounds skips nothing.
 * - A `proxy` reaches the MCP server's tool it names; its controls are
 *   `confirm`, `pin`, `reject-empty-argument`, `scope` and its argument rules.
 *
 * Pure: models in, text out.
 *
 * @module
 */
import { type Controls, forTool, type Grant, type Restrict } from "./model.ts";
import type { McpWrapControls, ProxyTool } from "./mcp_wrap_model.ts";

/** The operation a grant reaches, in words for a message (`GET /files/{}`). */
export function grantOperation(grant: Grant): string {
  if (grant.sql) return `the statement ${JSON.stringify(grant.sql.statement)}`;
  const at = `${grant.method} ${grant.path.replace(/\{[^}]*\}/g, "{}")}`;
  return grant.graphql ? `${at} with the same GraphQL document` : at;
}

/** The controls a grant reaches its operation under, by kind (see the module doc). */
export function grantControls(
  grant: Grant,
  controls: Controls,
  restricts: readonly Restrict[],
): Record<string, string> {
  const restrictOf = (param: string) =>
    restricts.filter((r) => r.param === param).flatMap((r) => r.globs).sort();
  // Inputs by what is sent, not by the name the caller uses.
  const unnamed = <T extends { name: string }>(items: readonly T[]) =>
    items.map(({ name: _name, ...rest }) => rest);
  return {
    ...namedControls(grant.tool, grant.scopes, controls),
    "path values": text(grant.params.map((p) => ({ ...p, name: 0, restrict: restrictOf(p.name) }))),
    inputs: text({
      query: unnamed(grant.query),
      body: grant.body,
      bodyMap: grant.bodyMap,
      set: grant.set,
      exclusive: grant.exclusive,
      graphql: grant.graphql?.variables,
      sql: grant.sql?.params,
    }),
  };
}

/** The operation a proxy reaches: the MCP server's tool. */
export function proxyOperation(proxy: ProxyTool): string {
  return `the MCP server's "${proxy.upstream}"`;
}

/** The controls a proxy reaches its tool under, by kind (see the module doc). */
export function proxyControls(proxy: ProxyTool, controls: McpWrapControls): Record<string, string> {
  return {
    ...namedControls(proxy.name, proxy.scopes, controls),
    arguments: text(
      proxy.arguments
        .map(({ name: _name, position: _position, ...rule }) => rule)
        .toSorted((a, b) => a.upstream < b.upstream ? -1 : 1),
    ),
  };
}

/**
 * The controls both forms name a tool by (`confirm`, `pin`,
 * `reject-empty-argument`) and its `scope`, as comparable text.
 */
function namedControls(
  tool: string,
  scopes: readonly string[],
  controls: Pick<Controls | McpWrapControls, "confirm" | "pins" | "rejectEmptyArguments">,
): Record<string, string> {
  return {
    confirm: Object.hasOwn(controls.confirm, tool) ? "confirm" : "",
    pin: text(
      (forTool<{ name: string }[]>(controls.pins, tool) ?? []).toSorted((a, b) =>
        a.name < b.name ? -1 : 1
      ),
    ),
    "reject-empty-argument": text((forTool(controls.rejectEmptyArguments, tool) ?? []).toSorted()),
    scope: text(scopes.toSorted()),
  };
}

/** Comparable text of a value: `""` for nothing, else JSON (keys in written order). */
function text(value: unknown): string {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return "";
  return JSON.stringify(value);
}
