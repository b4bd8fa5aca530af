/**
 * Per-tool overrides and argument rules on a wrapped MCP server's tool, as
 * one pure transformation and its exact inverse:
 *
 * - {@link overrideTool} takes the tool's definition as the MCP server lists
 *   it and the operator's {@link ToolOverride} (served name, title,
 *   description, annotations; arguments renamed, hidden or narrowed; pinned
 *   arguments) and returns the definition weir serves, or every way the
 *   override contradicts the MCP server's schema, each naming both sides.
 *   The served `inputSchema` is the MCP server's with the rules applied, so
 *   the schema the core advertises is the schema it enforces; a rule can only
 *   narrow (an `enum` value the MCP server would refuse, a bound outside its
 *   own, a string rule on a number, a rename onto a name it already uses are
 *   refused).
 * - {@link toUpstreamArguments} turns a call's arguments (validated against
 *   the served schema) back into the MCP server's: each renamed key restored,
 *   the pinned values added, every other key and value passed as the caller
 *   spelled it (`spelledArguments`), then held to the MCP server's own schema.
 *
 * Renaming and hiding are applied to the arguments of a plain `properties`
 * schema only: a root that combines subschemas (`allOf`, `if`, `$ref`,
 * `dependentRequired`, `patternProperties`, ...) may name an argument in a
 * place weir would not rewrite, so a rename or a hide there is refused rather
 * than half applied. Narrowing works on any argument the root `properties`
 * declare.
 *
 * No guardfile knowledge: the override is plain data (`src/modes` hands over
 * what `src/guardfile/mcp_wrap.ts` read). No I/O.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolAnnotations, ToolSpec } from "../mcp/types.ts";
import { compileSchema, type ValidateFn } from "../mcp/schema.ts";

/** One argument's rule (see `docs/wrapping-mcp-servers.md`). */
export interface ArgumentOverride {
  /** The served name. */
  name: string;
  /** The MCP server's name. */
  upstream: string;
  /** Not served (it must then be pinned or optional). */
  hide: boolean;
  /** Numeric lower bound (inclusive). */
  minimum?: number;
  /** Numeric upper bound (inclusive). */
  maximum?: number;
  /** ECMA-262 regular expression (unanchored, as JSON Schema reads it). */
  pattern?: string;
  /** Shortest string, in code points. */
  minLength?: number;
  /** Longest string, in code points. */
  maxLength?: number;
  /** The only values allowed. */
  enum?: (string | number)[];
  /**
   * Globs a string must match one of, with their anchored regular expression
   * (absent when no `pattern` states them exactly: the host's check of every
   * form holds them alone then).
   */
  restrict?: { globs: string[]; pattern?: string };
}

/** What the operator changes about one tool. */
export interface ToolOverride {
  /** The served tool name. */
  name: string;
  /** The MCP server's tool name. */
  upstream: string;
  /** Replaces the title. */
  title?: string;
  /** Replaces the description. */
  description?: string;
  /** Replace these annotation hints. */
  annotations?: Partial<
    Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">
  >;
  /** Argument rules. */
  arguments: readonly ArgumentOverride[];
  /** The MCP server's names of the arguments weir supplies (not served). */
  pinned: readonly string[];
}

/** How a served call becomes the MCP server's call. */
export interface CallTranslation {
  /** The MCP server's tool name. */
  upstream: string;
  /** Served key -> the MCP server's key, for the renamed arguments only. */
  renames: ReadonlyMap<string, string>;
  /** Keys a caller may not send: hidden, pinned, and the old names of renamed arguments. */
  forbidden: ReadonlySet<string>;
  /**
   * Each forbidden key -> why a caller may not send it, as the refusal says
   * it: set by the server (pinned or hidden by the operator), or served under
   * another name. The served schema does not name these keys.
   */
  held: ReadonlyMap<string, string>;
  /** The MCP server's own input schema, which every forwarded call must satisfy. */
  validate: ValidateFn;
  /**
   * Served key -> its `restrict` globs: a value must also pass the host's
   * check of every form it decodes to (src/guard/restricted_value.ts), which
   * a schema `pattern` cannot say.
   */
  restricted: ReadonlyMap<string, readonly string[]>;
}

/** The outcome of {@link overrideTool}. */
export type Overridden =
  | { ok: true; served: ToolSpec; translation: CallTranslation }
  | { ok: false; problems: string[] };

/**
 * Why a caller may not send a pinned argument, as a refusal says it after
 * `argument "<name>"` (the guardfile's `pin` and serve-upstream's `--pin` alike).
 */
export const PINNED_HELD =
  "is set by the server, not by the caller (the operator pinned its value): leave it out";

/** Root keywords that may name an argument outside `properties`/`required`. */
export const COMBINING: readonly string[] = [
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "if",
  "then",
  "else",
  "dependentRequired",
  "dependentSchemas",
  "dependencies",
  "patternProperties",
  "propertyNames",
  "unevaluatedProperties",
  "$ref",
  "$dynamicRef",
  "$recursiveRef",
];

type Schema = JsonObject;

/**
 * Apply an override to a tool's definition (see the module doc).
 * @param definition the tool as the MCP server lists it
 * @param override what the operator changes
 * @returns the served definition and the call translation, or the problems
 *   (each names the override's side and the MCP server's)
 */
export function overrideTool(definition: ToolSpec, override: ToolOverride): Overridden {
  const problems: string[] = [];
  const tool = `"${override.name}"` +
    (override.upstream === override.name ? "" : ` (the MCP server's "${override.upstream}")`);
  const root: Schema = isObject(definition.inputSchema)
    ? definition.inputSchema
    : { type: "object" };
  const properties: Record<string, unknown> = isObject(root.properties) ? root.properties : {};
  const declared = Object.keys(properties);
  const required = Array.isArray(root.required)
    ? root.required.filter((r): r is string => typeof r === "string")
    : [];
  const combining = COMBINING.filter((k) => Object.hasOwn(root, k));
  const declaredList = declared.length > 0 ? declared.join(", ") : "none";
  const has = (name: string) => Object.hasOwn(properties, name);

  const renames = new Map<string, string>();
  const forbidden = new Set<string>();
  const held = new Map<string, string>();
  const replaced = new Map<string, unknown>();
  const removed = new Set<string>();
  const renamedTo = new Map<string, string>();
  const restricted = new Map<string, readonly string[]>();

  for (const rule of override.arguments) {
    const arg = `argument "${rule.name}"` +
      (rule.upstream === rule.name ? "" : ` (upstream="${rule.upstream}")`);
    if (!has(rule.upstream)) {
      problems.push(
        `tool ${tool}: ${arg}: the MCP server's tool declares no argument "${rule.upstream}" ` +
          `in its inputSchema properties (it declares: ${declaredList})`,
      );
      continue;
    }
    if ((rule.hide || rule.name !== rule.upstream) && combining.length > 0) {
      problems.push(
        `tool ${tool}: ${arg}: the MCP server's inputSchema uses ${
          combining.join(", ")
        } at its root, which may name "${rule.upstream}" where weir would not rewrite it; ` +
          `weir renames and hides arguments of a plain properties schema only: narrow it instead`,
      );
      continue;
    }
    if (rule.name !== rule.upstream) {
      if (has(rule.name)) {
        problems.push(
          `tool ${tool}: ${arg}: "${rule.name}" is already an argument of the MCP server's tool, ` +
            `so the rename would make two arguments one name: choose another name`,
        );
        continue;
      }
      renames.set(rule.name, rule.upstream);
      renamedTo.set(rule.upstream, rule.name);
      forbidden.add(rule.upstream);
      held.set(rule.upstream, `is served as "${rule.name}": send it as "${rule.name}"`);
    }
    if (rule.hide) {
      if (required.includes(rule.upstream) && !override.pinned.includes(rule.upstream)) {
        problems.push(
          `tool ${tool}: ${arg} is hidden, but the MCP server's tool requires "${rule.upstream}": ` +
            `pin it (pin "${override.name}" { argument "${rule.upstream}" literal ... }) or serve it`,
        );
        continue;
      }
      removed.add(rule.upstream);
      forbidden.add(rule.upstream);
      held.set(
        rule.upstream,
        `is set by the server, not by the caller (the operator hid it: the tool runs without ` +
          `it): leave it out`,
      );
      continue;
    }
    const narrowed = narrow(properties[rule.upstream], rule, root, `tool ${tool}: ${arg}`);
    if (typeof narrowed === "string") problems.push(narrowed);
    else if (narrowed !== undefined) replaced.set(rule.upstream, narrowed);
    if (rule.restrict) restricted.set(rule.name, rule.restrict.globs);
  }
  for (const pinned of override.pinned) {
    if (!has(pinned)) {
      problems.push(
        `tool ${tool}: pinned argument "${pinned}": the MCP server's tool declares no such ` +
          `argument in its inputSchema properties (it declares: ${declaredList})`,
      );
      continue;
    }
    if (combining.length > 0) {
      problems.push(
        `tool ${tool}: pinned argument "${pinned}": the MCP server's inputSchema uses ${
          combining.join(", ")
        } at its root, which may name "${pinned}" where weir would not rewrite it; weir pins ` +
          `arguments of a plain properties schema only`,
      );
      continue;
    }
    removed.add(pinned);
    forbidden.add(pinned);
    held.set(pinned, PINNED_HELD);
  }
  if (problems.length > 0) return { ok: false, problems };

  // The served properties: in the MCP server's order, renamed in place.
  const servedProperties: Record<string, unknown> = {};
  for (const key of declared) {
    if (removed.has(key)) continue;
    define(servedProperties, renamedTo.get(key) ?? key, replaced.get(key) ?? properties[key]);
  }
  const servedRoot: Schema = { ...root };
  if (isObject(root.properties) || declared.length > 0) {
    servedRoot.properties = servedProperties as JsonObject;
  }
  if (Array.isArray(root.required)) {
    servedRoot.required = required.filter((r) => !removed.has(r)).map((r) => renamedTo.get(r) ?? r);
  }
  // A name that is no longer served is not named either (no propertyNames):
  // sent as an extra argument, it is refused by the host, saying why
  // (toUpstreamArguments; the core asks `held` when the schema is closed).
  const served: ToolSpec = { ...definition, name: override.name, inputSchema: servedRoot };
  if (override.title !== undefined) {
    served.title = override.title;
    if (served.annotations?.title !== undefined) {
      served.annotations = { ...served.annotations, title: override.title };
    }
  }
  if (override.description !== undefined) served.description = override.description;
  if (override.annotations && Object.keys(override.annotations).length > 0) {
    served.annotations = { ...(definition.annotations ?? {}), ...override.annotations };
  }
  return {
    ok: true,
    served,
    translation: {
      upstream: override.upstream,
      renames,
      forbidden,
      held,
      validate: compileSchema(root),
      restricted,
    },
  };
}

/** The schema of one argument with `rule` applied, or the problem. */
function narrow(
  property: unknown,
  rule: ArgumentOverride,
  root: Schema,
  where: string,
): unknown | string {
  const numeric = rule.minimum !== undefined || rule.maximum !== undefined;
  const textual = rule.pattern !== undefined || rule.minLength !== undefined ||
    rule.maxLength !== undefined || rule.restrict !== undefined;
  if (!numeric && !textual && rule.enum === undefined) return undefined;
  if (property === false) {
    return `${where}: the MCP server's schema admits no value for it (false); remove the rule`;
  }
  const p: Schema = isObject(property) ? property : {};
  const types = typesOf(p, root);
  const says = (what: string) => `the MCP server's schema says ${what}`;
  if (numeric && types && !types.has("number") && !types.has("integer")) {
    return `${where}: minimum=/maximum= apply to numbers, and ${
      says(`type ${[...types].join(" or ")}`)
    }: remove them`;
  }
  if (textual && types && !types.has("string")) {
    return `${where}: pattern=, min-length=, max-length= and restrict apply to strings, and ${
      says(`type ${[...types].join(" or ")}`)
    }: remove them`;
  }
  const own = (key: string): number | undefined =>
    typeof p[key] === "number" ? p[key] as number : undefined;
  const lower = own("minimum") ?? own("exclusiveMinimum");
  const upper = own("maximum") ?? own("exclusiveMaximum");
  if (rule.minimum !== undefined) {
    if (lower !== undefined && rule.minimum < lower) {
      return `${where}: minimum=${rule.minimum} is below ${
        says(`minimum ${lower}`)
      }; a rule can only narrow: raise it to ${lower} or more`;
    }
    if (upper !== undefined && rule.minimum > upper) {
      return `${where}: minimum=${rule.minimum} is above ${
        says(`maximum ${upper}`)
      }, so no value could be sent: lower it`;
    }
  }
  if (rule.maximum !== undefined) {
    if (upper !== undefined && rule.maximum > upper) {
      return `${where}: maximum=${rule.maximum} is above ${
        says(`maximum ${upper}`)
      }; a rule can only narrow: lower it to ${upper} or less`;
    }
    if (lower !== undefined && rule.maximum < lower) {
      return `${where}: maximum=${rule.maximum} is below ${
        says(`minimum ${lower}`)
      }, so no value could be sent: raise it`;
    }
  }
  const minLength = own("minLength");
  const maxLength = own("maxLength");
  if (rule.minLength !== undefined) {
    if (minLength !== undefined && rule.minLength < minLength) {
      return `${where}: min-length=${rule.minLength} is below ${
        says(`minLength ${minLength}`)
      }; a rule can only narrow: raise it`;
    }
    if (maxLength !== undefined && rule.minLength > maxLength) {
      return `${where}: min-length=${rule.minLength} is above ${
        says(`maxLength ${maxLength}`)
      }, so no value could be sent: lower it`;
    }
  }
  if (rule.maxLength !== undefined && maxLength !== undefined && rule.maxLength > maxLength) {
    return `${where}: max-length=${rule.maxLength} is above ${
      says(`maxLength ${maxLength}`)
    }; a rule can only narrow: lower it`;
  }
  if (rule.enum) {
    const check = compileSchema({
      ...contextOf(root),
      type: "object",
      properties: { [rule.upstream]: property as JsonObject },
    });
    for (const value of rule.enum) {
      const problems = check({ [rule.upstream]: value });
      if (problems.length > 0) {
        return `${where}: enum value ${JSON.stringify(value)} is refused by the MCP server's ` +
          `schema (${problems[0]}), so it could never be sent: drop it`;
      }
    }
  }
  // Our keywords: set directly where the MCP server's schema has none of that
  // name; beside one it has (or a $ref, whose siblings draft-07 ignores) they
  // go in allOf, so both hold.
  const ours: Schema = {};
  if (rule.minimum !== undefined) ours.minimum = rule.minimum;
  if (rule.maximum !== undefined) ours.maximum = rule.maximum;
  if (rule.minLength !== undefined) ours.minLength = rule.minLength;
  if (rule.maxLength !== undefined) ours.maxLength = rule.maxLength;
  if (rule.enum !== undefined) ours.enum = rule.enum;
  const patterns = [rule.pattern, rule.restrict?.pattern].filter((x): x is string =>
    x !== undefined
  );
  // An argument narrowed by a bound or a string rule takes that type, also when
  // the MCP server's admits others (["string", "array"], ["number", "string"],
  // ["string", "null"]): JSON Schema's bounds and patterns pass values of
  // other types, so an array, a numeric string or a null (which an MCP server
  // may read as "no limit" or "the root") would carry what the rule refuses.
  // Every value must match the rule.
  const keep = (wanted: string[], fallback: string) => {
    const kept = types ? [...types].filter((t) => wanted.includes(t)) : [fallback];
    if (!types || kept.length < types.size) ours.type = kept.length === 1 ? kept[0] : kept;
  };
  if (numeric) keep(["number", "integer"], "number");
  else if (textual) keep(["string"], "string");
  if (isObject(property) && hasRef(p)) {
    const extra: Schema[] = patterns.map((pattern) => ({ pattern }));
    return { allOf: [property as JsonObject, ours, ...extra] };
  }
  const out: Schema = { ...p };
  const allOf: Schema[] = Array.isArray(p.allOf) ? [...p.allOf as Schema[]] : [];
  for (const [key, value] of Object.entries(ours)) {
    // A bound or enum of the MCP server's is replaced by ours, which was
    // checked to be inside it; a type only narrows the MCP server's.
    out[key] = value as JsonObject;
  }
  for (const pattern of patterns) {
    if (out.pattern === undefined) out.pattern = pattern;
    else allOf.push({ pattern });
  }
  if (allOf.length > 0) out.allOf = allOf;
  // An exclusive bound of the MCP server's stays: ours may equal it.
  return out;
}

/** The `$defs`/`definitions` (and `$schema`) a subschema's `$ref`s resolve against. */
function contextOf(root: Schema): Schema {
  const out: Schema = {};
  for (const key of ["$schema", "$defs", "definitions", "$id"]) {
    if (Object.hasOwn(root, key)) out[key] = root[key];
  }
  return out;
}

function hasRef(p: Schema): boolean {
  return Object.hasOwn(p, "$ref") || Object.hasOwn(p, "$dynamicRef") ||
    Object.hasOwn(p, "$recursiveRef");
}

/**
 * The JSON types a subschema admits, following a local `$ref` (`#/...`), or
 * `undefined` when it does not say (any type).
 */
function typesOf(p: Schema, root: Schema, depth = 0): Set<string> | undefined {
  if (depth > 8) return undefined;
  if (typeof p.type === "string") return new Set([p.type]);
  if (Array.isArray(p.type)) {
    return new Set(p.type.filter((t): t is string => typeof t === "string"));
  }
  if (typeof p.$ref === "string" && p.$ref.startsWith("#/")) {
    const target = resolvePointer(root, p.$ref.slice(1));
    if (isObject(target)) return typesOf(target, root, depth + 1);
  }
  if (Array.isArray(p.enum)) {
    return new Set(
      p.enum.map((v) => v === null ? "null" : Number.isInteger(v) ? "integer" : typeof v),
    );
  }
  return undefined;
}

function resolvePointer(root: unknown, pointer: string): unknown {
  let at: unknown = root;
  for (const raw of pointer.split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObject(at) && !Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function isObject(v: unknown): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/** The arguments to send, or why a call cannot be translated (nothing is sent then). */
export type Translated =
  | { ok: true; arguments: JsonObject }
  | { ok: false; message: string };

/**
 * A served call's arguments as the MCP server's (see the module doc).
 * @param args the arguments as the core validated them against the served schema
 * @param spelled the same arguments with numbers as the caller spelled them
 *   (`spelledArguments(args)`), when any differ
 * @param translation from {@link overrideTool}
 * @param pins the MCP server's argument name -> the value weir supplies
 * @returns the arguments to forward, or why not
 */
export function toUpstreamArguments(
  args: Record<string, unknown>,
  spelled: Record<string, unknown> | undefined,
  translation: CallTranslation,
  pins: ReadonlyMap<string, unknown>,
): Translated {
  const source = spelled ?? args;
  const sent: Record<string, unknown> = {};
  const checked: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    if (translation.forbidden.has(key)) {
      return {
        ok: false,
        message: `argument "${key}" ${
          translation.held.get(key) ?? "is not served by this tool: leave it out"
        }`,
      };
    }
    const target = translation.renames.get(key) ?? key;
    define(sent, target, source[key]);
    define(checked, target, args[key]);
  }
  for (const [name, value] of pins) {
    define(sent, name, value);
    define(checked, name, value);
  }
  const problems = translation.validate(checked);
  if (problems.length > 0) {
    return {
      ok: false,
      message: `the arguments as the MCP server would receive them do not match its own schema ` +
        `(${problems.slice(0, 3).join("; ")}); nothing was sent`,
    };
  }
  return { ok: true, arguments: sent as JsonObject };
}
