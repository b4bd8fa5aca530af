/**
 * Value rules on typed inputs, and `param` nodes that type a path parameter.
 *
 * - `pattern="<regex>"`, `min-length=N`, `max-length=N` on string inputs and an
 *   `enum` child (`field "state" type="string" { enum "open" "closed" }`) on
 *   string, integer and number inputs: each becomes the JSON Schema 2020-12
 *   keyword of the same meaning (`pattern`, `minLength`, `maxLength`, `enum`),
 *   which is both advertised and enforced.
 * - `metacharacters="allow"` on a typed query input or a path parameter lifts
 *   the shell-metacharacter gate for that input only.
 * - `param "<name>" type="integer" minimum=1`, inside a grant, refines the path
 *   parameter `{name}`: its type, bounds, value rules, gate, and how it treats
 *   `/` (`slashes="refuse"|"segments"|"encoded"`).
 *
 * Grammar reference: `docs/guardfile.md`.
 *
 * @module
 */
import type { Grant, Metacharacters, PathParam, ScalarType, Slashes, ValueRules } from "./model.ts";
import { type NodeReader, onlyOnce, show } from "./nodes.ts";
import { patternProblem, shownPattern } from "./pattern.ts";

/** Properties of value rules, for `onlyProperties` lists. */
export const RULE_PROPERTIES: readonly string[] = ["pattern", "min-length", "max-length"];
/** Longest value a `slashes="segments"` parameter takes when no max-length is stated. */
export const SEGMENTS_MAX_LENGTH = 1024;
const SLASHES: readonly Slashes[] = ["refuse", "segments", "encoded"];
const GATES: readonly Metacharacters[] = ["refuse", "allow"];

/**
 * Read `pattern=`, `min-length=`, `max-length=` and an `enum` child into
 * `rules`, checking each against the input's scalar type.
 *
 * @param node the input node (its properties and children were already
 *   limited by the caller to those it allows)
 * @param type the scalar type of the value (of each item, for an array)
 * @param rules where the rules go
 */
export function readValueRules(
  node: NodeReader,
  type: ScalarType | "array" | "object",
  rules: ValueRules,
): void {
  const props = node.node.properties;
  const pattern = node.stringProp("pattern");
  if (pattern !== undefined) {
    if (type !== "string") {
      node.error(`pattern= applies to string values, not ${type}; remove it`);
    } else {
      const problem = patternProblem(pattern);
      if (problem) node.error(`pattern ${shownPattern(pattern)} ${problem}`);
      else {
        rules.pattern = pattern;
        if (!pattern.startsWith("^") || !pattern.endsWith("$")) {
          node.warn(
            `pattern ${shownPattern(pattern)} is not anchored with ^...$, so it accepts any ` +
              `value that merely contains a match (JSON Schema patterns are unanchored); write ^...$ around it`,
          );
        }
      }
    }
  }
  for (const [key, slot] of [["min-length", "minLength"], ["max-length", "maxLength"]] as const) {
    if (!(key in props)) continue;
    if (type !== "string") {
      node.error(`${key}= applies to string values, not ${type}; remove it`);
      continue;
    }
    const v = node.numberProp(key);
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 0) {
      node.error(`${key}=${v} must be a whole number of 0 or more; write one such as ${key}=10`);
    } else rules[slot] = v;
  }
  if (
    rules.minLength !== undefined && rules.maxLength !== undefined &&
    rules.minLength > rules.maxLength
  ) {
    node.error(
      `min-length=${rules.minLength} is greater than max-length=${rules.maxLength}; lower min-length or raise max-length`,
    );
  }
  const enumNode = onlyOnce(node.children(), "enum");
  if (enumNode) readEnum(enumNode, type, rules);
}

function readEnum(node: NodeReader, type: string, rules: ValueRules): void {
  node.onlyProperties();
  node.noChildren();
  if (type !== "string" && type !== "integer" && type !== "number") {
    node.error(`"enum" applies to string, integer and number values, not ${type}; remove it`);
    return;
  }
  if (!node.argCount(1, Infinity, `the allowed values, e.g. enum "open" "closed"`)) return;
  const values: (string | number)[] = [];
  for (const v of node.node.values) {
    const fits = type === "string"
      ? typeof v === "string"
      : typeof v === "number" && Number.isFinite(v) && (type === "number" || Number.isInteger(v));
    if (!fits) {
      node.error(
        `enum value ${show(v)} is not ${type === "integer" ? "an integer" : `a ${type}`}` +
          (type === "string" ? ` (quote it)` : ` (write it unquoted)`),
      );
      return;
    }
    if (values.includes(v as string | number)) {
      node.error(`enum value ${show(v)} is listed twice; keep one`);
      return;
    }
    values.push(v as string | number);
  }
  rules.enum = values;
}

/**
 * Check that every `enum` value passes the input's other rules, so the
 * schema never advertises a value it would refuse.
 */
export function checkEnumAgainstRules(
  node: NodeReader,
  rules: ValueRules & { minimum?: number; maximum?: number },
): void {
  if (!rules.enum) return;
  for (const v of rules.enum) {
    const problem = typeof v === "string"
      ? (rules.pattern !== undefined && !new RegExp(rules.pattern, "u").test(v)
        ? `does not match pattern=`
        : rules.minLength !== undefined && [...v].length < rules.minLength
        ? `is shorter than min-length=`
        : rules.maxLength !== undefined && [...v].length > rules.maxLength
        ? `is longer than max-length=`
        : "")
      : (rules.minimum !== undefined && v < rules.minimum
        ? `is below minimum=`
        : rules.maximum !== undefined && v > rules.maximum
        ? `is above maximum=`
        : "");
    if (problem) {
      node.error(
        `enum value ${show(v)} ${problem}, so it could never be sent; remove it or widen the rule`,
      );
    }
  }
}

/** `metacharacters="refuse"|"allow"` (default refuse). */
export function readGate(node: NodeReader): Metacharacters {
  if (!("metacharacters" in node.node.properties)) return "refuse";
  const v = node.stringProp("metacharacters");
  if (v === undefined) return "refuse";
  if (!GATES.includes(v as Metacharacters)) {
    node.error(
      `metacharacters=${show(v)} must be "refuse" (the default) or "allow"; write one of them`,
    );
    return "refuse";
  }
  return v as Metacharacters;
}

/** The rules of a path parameter no `param` node refines. */
export function defaultParam(name: string): PathParam {
  return { name, type: "string", untyped: true, slashes: "refuse", metacharacters: "refuse" };
}

/**
 * Read the `param` nodes of a grant into `grant.params` (which already holds
 * the template's parameters with default rules).
 */
export function readParams(params: NodeReader[], grant: Grant): void {
  const seen = new Set<string>();
  for (const node of params) {
    node.onlyProperties([
      "type",
      "minimum",
      "maximum",
      "slashes",
      "metacharacters",
      ...RULE_PROPERTIES,
    ]);
    node.onlyChildren(["enum"]);
    if (!node.argCount(1, 1, `the path parameter's name, e.g. param "id" type="integer"`)) continue;
    const name = node.stringArg(0, "the param name");
    if (!name) continue;
    const index = grant.params.findIndex((p) => p.name === name);
    if (index === -1) {
      node.error(
        `param "${name}" names no {${name}} in this grant's path; ` +
          (grant.pathParams.length > 0
            ? `name one of its parameters (${
              grant.pathParams.join(", ")
            }) or add {${name}} to the path`
            : `the path has no parameters: add {${name}} to the path or remove the param`),
      );
      continue;
    }
    if (seen.has(name)) {
      node.error(`param "${name}" is declared twice; keep one param node per parameter`);
      continue;
    }
    seen.add(name);
    const param = defaultParam(name);
    const type = node.node.properties.type ?? "string";
    if (type !== "string" && type !== "integer") {
      node.error(`type=${show(type)} is not a path parameter type; use "string" or "integer"`);
      continue;
    }
    param.type = type;
    if ("type" in node.node.properties) delete param.untyped;
    param.metacharacters = readGate(node);
    if ("slashes" in node.node.properties) {
      const v = node.stringProp("slashes");
      if (v !== undefined && !SLASHES.includes(v as Slashes)) {
        node.error(
          `slashes=${
            show(v)
          } must be "refuse" (the default), "segments" or "encoded"; use one of them`,
        );
      } else if (v !== undefined) param.slashes = v as Slashes;
    }
    if (type === "integer") {
      for (const key of ["slashes", "metacharacters"]) {
        if (key in node.node.properties) {
          node.error(
            `${key}= applies to string parameters; an integer is sent as decimal digits: remove it`,
          );
        }
      }
      param.minimum = node.numberProp("minimum");
      param.maximum = node.numberProp("maximum");
      if (
        param.minimum !== undefined && param.maximum !== undefined &&
        param.minimum > param.maximum
      ) {
        node.error(
          `minimum=${param.minimum} is greater than maximum=${param.maximum}; lower minimum or raise maximum`,
        );
      }
    } else {
      for (const key of ["minimum", "maximum"]) {
        if (key in node.node.properties) {
          node.error(
            `${key}= applies to type="integer" parameters, not string; remove it or add type="integer"`,
          );
        }
      }
    }
    readValueRules(node, type, param);
    if (param.minLength === 0) {
      node.error(`min-length=0 would allow an empty path segment; path values are never empty`);
    }
    checkEnumAgainstRules(node, param);
    if (param.slashes === "refuse" && param.enum?.some((v) => /[/\\]/.test(String(v)))) {
      node.error(`an enum value contains "/" or "\\", which this parameter refuses; add slashes=`);
    }
    grant.params[index] = param;
  }
}
