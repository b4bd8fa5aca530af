/**
 * How `weir diff` compares `restrict` globs: by their languages, exactly
 * (src/diff/glob_cover.ts), and with the `pattern`s a restrict puts in the
 * advertised input schema left to that comparison (the schema's own
 * comparison can only say a changed pattern "may admit more"). Pure.
 *
 * @module
 */
import type { Tool } from "../surface/model.ts";
import { globsPattern } from "../guardfile/glob.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { Context, Found } from "./declare.ts";
import { nodesWithin } from "./glob_cover.ts";

/**
 * `restrict`: NEW is as narrow when every value all its nodes admit is
 * admitted by each old node (the globs' languages compared exactly:
 * src/diff/glob_cover.ts), as wide the other way round.
 */
export function compareRestrict(
  o: string[][] | undefined,
  n: string[][] | undefined,
  at: Context,
): Found[] {
  const on = o ?? [];
  const nn = n ?? [];
  const asNarrow = on.every((node) => nodesWithin(nn, node));
  const asWide = nn.every((node) => nodesWithin(on, node));
  const name = at.label.replace(/^input "(.*)"$/, "$1");
  const what = `restrict ${name}: ${showGlobs(on)} -> ${showGlobs(nn)}`;
  if (!asNarrow) return [{ effect: "widen", what }];
  if (!asWide) return [{ effect: "narrow", what }];
  return [];
}

export function showGlobs(nodes: string[][]): string {
  return nodes.length === 0
    ? "none"
    : nodes.map((g) => g.map((x) => JSON.stringify(x)).join(" or ")).join(" and ");
}

/**
 * A schema without the `pattern`s its `restrict` nodes put there (a
 * property's `pattern`, or `{pattern}` items of its `allOf`): the restrict
 * rule compares the globs themselves, exactly.
 */
export function restrictOut(schema: JsonObject, restricted: Context["restricted"]): JsonObject {
  const properties = schema.properties as Record<string, JsonObject> | undefined;
  if (!restricted || !properties) return schema;
  const out: Record<string, JsonObject> = { ...properties };
  for (const [name, patterns] of Object.entries(restricted)) {
    const p = out[name];
    if (typeof p !== "object" || p === null) continue;
    const kept: JsonObject = { ...p };
    if (typeof kept.pattern === "string" && patterns.includes(kept.pattern)) delete kept.pattern;
    if (Array.isArray(kept.allOf)) {
      const rest = kept.allOf.filter((x) =>
        !(typeof x === "object" && x !== null && Object.keys(x).length === 1 &&
          patterns.includes(String((x as JsonObject).pattern)))
      );
      if (rest.length > 0) kept.allOf = rest;
      else delete kept.allOf;
    }
    out[name] = kept;
  }
  return { ...schema, properties: out };
}

/** The patterns of both tools' `restrict` nodes, by argument. */
export function restrictedPatterns(a: Tool, b: Tool): Context["restricted"] {
  const out: Record<string, string[]> = Object.create(null);
  for (const arg of [...a.arguments, ...b.arguments]) {
    for (const node of arg.restrict) {
      let pattern: string | undefined;
      try {
        pattern = globsPattern(node);
      } catch {
        continue;
      }
      if (pattern !== undefined) (out[arg.name] ??= []).push(pattern);
    }
  }
  return out;
}
