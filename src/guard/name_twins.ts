/**
 * A control-pipeline check on what the call alone decides (stage a): a key
 * of the arguments about to leave weir that is not a declared argument of
 * the upstream's, yet folds onto one (letter case, fullwidth and other
 * compatibility forms, format characters, separators: `foldName`,
 * src/guardfile/name_fold.ts), is refused. An upstream that reads names
 * loosely (Go's `encoding/json` into a struct matches field names without
 * regard to case, and a later key wins) would take `Repo` or `ｒepo` for a
 * pinned, restricted, enum'd or hidden `repo`, past every rule weir holds on
 * `repo`; and a caller sending a twin is mistaken at best.
 *
 * @module
 */
import { WeirError } from "../errors/kinds.ts";
import { nameTwin } from "../guardfile/name_fold.ts";

/**
 * Refuse the call when a key of `args` (as the upstream will receive them)
 * is a twin (see the module doc): a key `declared` does not hold that folds
 * onto one it holds, or any key that folds onto one of `constrained` and is
 * not it (an upstream declaring both `repo` and `Repo` still gets no `Repo`
 * beside a pinned or restricted `repo`).
 * @param tool the served tool's name, for the message
 * @param declared the upstream's argument names: its schema's properties
 * @param constrained the names a rule holds: pinned, hidden, restricted, with a value rule
 *   (weir's or the upstream schema's: {@link constrainedArguments})
 * @throws {WeirError} `policy_denied` (audit rule `name_twin`) naming the key and the argument
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseNameTwins } from "./name_twins.ts";
 * refuseNameTwins("search", { repo: "a", q: "x" }, ["repo", "q"]); // passes
 * assert.throws(
 *   () => refuseNameTwins("search", { Repo: "evil" }, ["repo"]),
 *   (e) => (e as Error).message.startsWith("policy_denied"),
 * );
 * ```
 */
export function refuseNameTwins(
  tool: string,
  args: Record<string, unknown>,
  declared: Iterable<string>,
  constrained: Iterable<string> = [],
): void {
  const refusal = nameTwinRefusal(tool, args, declared, constrained);
  if (refusal) throw refusal;
}

/** {@link refuseNameTwins}'s refusal, returned instead of thrown; `undefined` when there is no twin. */
export function nameTwinRefusal(
  tool: string,
  args: Record<string, unknown>,
  declared: Iterable<string>,
  constrained: Iterable<string> = [],
): WeirError<"policy_denied"> | undefined {
  const known = new Set(declared);
  const keys = Object.keys(args);
  const twin = nameTwin(keys, constrained) ??
    nameTwin(keys.filter((k) => !known.has(k)), known);
  if (!twin) return undefined;
  return new WeirError(
    "policy_denied",
    `argument ${JSON.stringify(twin.key)} of "${tool}" is not ${JSON.stringify(twin.of)}, ` +
      `but differs from it only by letter case, width or separators, and an upstream that ` +
      `matches names loosely would read it as ${JSON.stringify(twin.of)}, past its rules: ` +
      `send ${JSON.stringify(twin.of)} as spelled, or leave it out`,
    { rule: "name_twin" },
  );
}

/** The argument names an MCP tool's `inputSchema` declares (its top-level `properties`). */
export function declaredArguments(inputSchema: unknown): string[] {
  const properties = (inputSchema as { properties?: unknown } | null)?.properties;
  return typeof properties === "object" && properties !== null && !Array.isArray(properties)
    ? Object.keys(properties)
    : [];
}

/** Keywords by which a JSON Schema holds a value to a rule. */
const VALUE_RULES = [
  "enum",
  "const",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
];

/** The argument names an MCP tool's `inputSchema` holds to a value rule (`enum`, `pattern`...). */
export function constrainedArguments(inputSchema: unknown): string[] {
  const properties = (inputSchema as { properties?: unknown } | null)?.properties;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return [];
  return Object.entries(properties as Record<string, unknown>)
    .filter(([, schema]) =>
      typeof schema === "object" && schema !== null &&
      VALUE_RULES.some((k) => Object.hasOwn(schema, k))
    )
    .map(([name]) => name);
}
