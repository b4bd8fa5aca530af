/**
 * `weir diff`: what an agent can do under NEW that it could not under OLD, and
 * the reverse, per tool. Compares two surface models (src/surface/model.ts:
 * the value `weir describe` prints and the guard serves), field by field,
 * with each field's declared rule (src/diff/declarations.ts), so diff,
 * describe and serve cannot disagree about what is reachable and a field
 * cannot be compared by no rule.
 *
 * Tools are paired by name; a removed and an added tool that do the same
 * operation (the same method and path template, SQL statement, GraphQL
 * document or wrapped tool) are a rename, compared as one tool, so a
 * widening cannot hide in a rename. Widening changes come first. Pure.
 *
 * @module
 */
import type { Surface } from "../surface/model.ts";
import { compareFields, compareItem, type Effect } from "./declare.ts";
import { SURFACE_DECLARATIONS } from "./declarations.ts";
import { TOOLS as tools } from "./tool_declarations.ts";

export type { Effect };

/** One change. */
export interface Change {
  /** The tool (its NEW name when renamed), or `""` for the server as a whole. */
  tool: string;
  effect: Effect;
  /** What changed, in words. */
  what: string;
}

const ORDER: Record<Effect, number> = { widen: 0, narrow: 1, change: 2 };

/**
 * Compare two surfaces.
 * @returns every change, widening ones first, then by tool name
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseGuardfile } from "../guardfile/load.ts";
 * import { surfaceOfGuardfile } from "../surface/spec.ts";
 * import { diffSurfaces } from "./surface_diff.ts";
 * const file = (max: number) =>
 *   surfaceOfGuardfile(parseGuardfile(
 *     `wrap ward mcp t {\n  base-url "https://api.example"\n  auth none\n` +
 *       `  can list item { path "/items"; query { field "n" type="integer" maximum=${max}; } }\n}`,
 *     "t.mcp.kdl",
 *   ).guardfile!);
 * const [change] = diffSurfaces(file(10), file(100));
 * assert.equal(change.effect, "widen");
 * assert.equal(change.tool, "list_item");
 * ```
 */
export function diffSurfaces(old: Surface, next: Surface): Change[] {
  const { tools: _o, ...oldServer } = old;
  const { tools: _n, ...newServer } = next;
  const context = { label: "", schemasKnown: true };
  const { tools: _t, ...server } = SURFACE_DECLARATIONS;
  const out: Change[] = compareFields(server, oldServer, newServer, context).map((c) => ({
    tool: "",
    ...c,
  }));
  // Each tool's changes name it: compare the lists one item at a time.
  const before = new Map(old.tools.map((t) => [t.name, t]));
  const after = new Map(next.tools.map((t) => [t.name, t]));
  const gone = [...before.values()].filter((t) => !after.has(t.name));
  const come = [...after.values()].filter((t) => !before.has(t.name));
  for (const p of tools.pair?.(gone, come) ?? []) {
    gone.splice(gone.indexOf(p.old), 1);
    come.splice(come.indexOf(p.next), 1);
    before.delete(p.old.name);
    before.set(p.next.name, p.old);
    out.push(...p.found.map((c) => ({ tool: p.next.name, ...c })));
  }
  for (const t of come) out.push(...tools.added(t, context).map((c) => ({ tool: t.name, ...c })));
  for (const t of gone) out.push(...tools.removed(t, context).map((c) => ({ tool: t.name, ...c })));
  for (const [name, n] of after) {
    const o = before.get(name);
    if (!o) continue;
    out.push(...compareItem(tools, o, n, context).map((c) => ({ tool: name, ...c })));
  }
  return out.sort((a, b) =>
    ORDER[a.effect] - ORDER[b.effect] || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)
  );
}

/** The changes as text for people: widening first, each marked. */
export function diffText(changes: Change[], oldName: string, newName: string): string {
  if (changes.length === 0) {
    return `weir diff ${oldName} -> ${newName}: no change in what an agent can do`;
  }
  const mark: Record<Effect, string> = {
    widen: "+ WIDENS ",
    narrow: "- narrows",
    change: "~ changes",
  };
  const lines = [`weir diff ${oldName} -> ${newName}`];
  for (const c of changes) lines.push(`${mark[c.effect]}  ${c.tool || "(server)"}: ${c.what}`);
  const count = (e: Effect) => changes.filter((c) => c.effect === e).length;
  lines.push(
    `${count("widen")} widening, ${count("narrow")} narrowing, ${count("change")} other change(s)`,
  );
  return lines.join("\n");
}
