/**
 * `proxy "<served name>" { ... }` of a guardfile that wraps an MCP server: the
 * MCP server's tool it serves, its title, description, annotations and OAuth
 * scopes, and its `argument` rules (rename, hide, narrow). What the file
 * alone can check is checked here; that a rule fits the MCP server's schema
 * is checked against the definition (src/mcp_upstream/overrides.ts). Pure.
 *
 * @module
 */
import type { AnnotationOverrides, ArgumentRule, ProxyTool } from "./mcp_wrap_model.ts";
import { type NodeReader, onlyOnce, show } from "./nodes.ts";
import { compileGlob, type GlobError, globsPattern, globWarnings } from "./glob.ts";
import { patternProblem, shownPattern } from "./pattern.ts";
import { checkEnumAgainstRules, RULE_PROPERTIES } from "./rules.ts";

import { foldName } from "./name_fold.ts";

/** The MCP tool-name rule (both revisions' schema). */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** RFC 6749 section 3.3 scope-token. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const PROXY_CHILDREN = [
  "upstream",
  "title",
  "describe",
  "annotations",
  "scope",
  "argument",
  "accept-finding",
];
/**
 * The shape of a finding id of the definition scan (src/mcp_upstream/scan.ts,
 * `Finding.id`): the rule, a colon, 16 hex digits.
 */
export const FINDING_ID_SHAPE = /^[a-z]+(-[a-z]+)*:[0-9a-f]{16}$/;
const ANNOTATIONS: Record<string, keyof AnnotationOverrides> = {
  "read-only": "readOnlyHint",
  destructive: "destructiveHint",
  idempotent: "idempotentHint",
  "open-world": "openWorldHint",
};

export function readProxy(node: NodeReader): ProxyTool | undefined {
  if (Object.keys(node.node.properties).length > 0) {
    node.error(
      `proxy takes no properties: put its overrides in a block, e.g. proxy add { upstream ` +
        `"get-sum"; describe "..." }`,
    );
  }
  if (!node.argCount(1, 1, `the tool name weir serves, e.g. proxy echo`)) return undefined;
  const name = node.stringArg(0, "the served tool name");
  if (name === undefined) return undefined;
  if (!TOOL_NAME.test(name)) {
    node.error(
      `proxy ${show(name)}: a tool name is 1-128 characters of A-Z a-z 0-9 _ - . (MCP tool ` +
        `names): rename it, and name the MCP server's tool with upstream "<name>"`,
    );
    return undefined;
  }
  const proxy: ProxyTool = {
    name,
    upstream: name,
    scopes: [],
    arguments: [],
    accept: [],
    position: node.node.position,
  };
  const kids = node.onlyChildren(PROXY_CHILDREN);
  const text = (child: string, what: string): string | undefined => {
    const n = onlyOnce(kids, child);
    if (!n) return undefined;
    n.onlyProperties();
    n.noChildren();
    if (!n.argCount(1, 1, what)) return undefined;
    const v = n.stringArg(0, child);
    if (v !== undefined && v.trim() === "") {
      n.error(`${child} is blank: write the text, or remove the node`);
      return undefined;
    }
    return v;
  };
  const upstream = text("upstream", `the MCP server's tool name, e.g. upstream "get-sum"`);
  if (upstream !== undefined) {
    if (!TOOL_NAME.test(upstream)) {
      onlyOnce(kids, "upstream")!.error(
        `upstream ${
          show(upstream)
        } is not an MCP tool name (1-128 characters of A-Z a-z 0-9 _ - .): ` +
          `write the name the MCP server lists`,
      );
    } else proxy.upstream = upstream;
  }
  const title = text("title", `the tool's title, e.g. title "Add two numbers"`);
  if (title !== undefined) proxy.title = title;
  const description = text("describe", `the tool's description`);
  if (description !== undefined) proxy.description = description;
  const annotations = onlyOnce(kids, "annotations");
  if (annotations) {
    annotations.onlyProperties(Object.keys(ANNOTATIONS));
    annotations.noChildren();
    if (annotations.node.values.length > 0) {
      annotations.error(
        `annotations takes properties, not arguments: e.g. annotations read-only=#true ` +
          `destructive=#false`,
      );
    }
    const out: AnnotationOverrides = {};
    for (const [key, slot] of Object.entries(ANNOTATIONS)) {
      const v = annotations.boolProp(key);
      if (v !== undefined) out[slot] = v;
    }
    if (Object.keys(annotations.node.properties).length === 0) {
      annotations.error(
        `annotations states nothing: add read-only=, destructive=, idempotent= or open-world=, ` +
          `or remove it`,
      );
    }
    proxy.annotations = out;
  }
  for (const scope of kids.filter((k) => k.name === "scope")) {
    scope.onlyProperties();
    scope.noChildren();
    if (!scope.argCount(1, Infinity, `one or more scopes, e.g. scope "tickets:write"`)) continue;
    for (let i = 0; i < scope.node.values.length; i++) {
      const value = scope.stringArg(i, "a scope");
      if (value === undefined) continue;
      if (!SCOPE_TOKEN.test(value)) {
        scope.error(
          `scope ${JSON.stringify(value)} is not an OAuth scope (RFC 6749 section 3.3: printable ` +
            `ASCII without spaces, '"' or '\\'): write each scope as its own string`,
        );
      } else if (proxy.scopes.includes(value)) {
        scope.error(`scope ${JSON.stringify(value)} is listed twice for this tool: keep one`);
      } else proxy.scopes.push(value);
    }
  }
  for (const node of kids.filter((k) => k.name === "accept-finding")) {
    node.onlyProperties(["reason"]);
    node.noChildren();
    if (
      !node.argCount(
        1,
        1,
        `the finding's id as lint-upstream prints it, e.g. accept-finding ` +
          `"address:0123456789abcdef" reason="our docs link"`,
      )
    ) continue;
    const id = node.stringArg(0, "a finding id");
    if (id === undefined) continue;
    if (!FINDING_ID_SHAPE.test(id)) {
      node.error(
        `accept-finding ${show(id)} is not a finding id (the rule, a colon and 16 hex digits, ` +
          `e.g. "address:0123456789abcdef"): copy it from weir lint-upstream's output`,
      );
    } else if (proxy.accept.some((a) => a.id === id)) {
      node.error(`accept-finding ${show(id)} is listed twice for this tool: keep one`);
    } else {
      const reason = node.stringProp("reason");
      proxy.accept.push({ id, ...(reason !== undefined ? { reason } : {}) });
    }
  }
  for (const arg of kids.filter((k) => k.name === "argument")) {
    const rule = readArgument(arg);
    if (!rule) continue;
    const clash = proxy.arguments.find((a) => a.name === rule.name || a.upstream === rule.upstream);
    const twin = clash
      ? undefined
      : proxy.arguments.find((a) => foldName(a.upstream) === foldName(rule.upstream));
    if (twin) {
      arg.error(
        `the MCP server's arguments "${twin.upstream}" (argument "${twin.name}") and ` +
          `"${rule.upstream}" (argument "${rule.name}") differ only by letter case, width or ` +
          `separators: a server that matches names loosely reads them as one, past the rules ` +
          `of either; keep one argument node`,
      );
      continue;
    }
    if (clash) {
      arg.error(
        clash.name === rule.name
          ? `argument "${rule.name}" has two rules: merge them into one argument node`
          : `two argument nodes name the MCP server's argument "${rule.upstream}" ` +
            `("${clash.name}" and "${rule.name}"): merge them`,
      );
      continue;
    }
    proxy.arguments.push(rule);
  }
  return proxy;
}

/**
 * `argument "<name>" [upstream=] [hide=] [minimum=] [maximum=] [pattern=]
 * [min-length=] [max-length=] { enum ...; restrict "<glob>"... }`.
 */
function readArgument(node: NodeReader): ArgumentRule | undefined {
  node.onlyProperties(["upstream", "hide", "minimum", "maximum", ...RULE_PROPERTIES]);
  const kids = node.onlyChildren(["enum", "restrict"]);
  if (!node.argCount(1, 1, `the argument's served name, e.g. argument "repo"`)) return undefined;
  const name = node.stringArg(0, "the argument name");
  if (name === undefined) return undefined;
  const upstream = node.stringProp("upstream");
  for (const key of [name, upstream]) {
    if (key === "__proto__") node.error(protoKey("argument"));
  }
  if (upstream !== undefined && upstream === name) {
    node.error(`upstream="${upstream}" is the argument's own name: remove upstream=`);
  }
  const rule: ArgumentRule = {
    name,
    upstream: upstream ?? name,
    hide: node.boolProp("hide") ?? false,
    position: node.node.position,
  };
  if (rule.hide && upstream !== undefined) {
    node.error(
      `argument "${name}" is hidden, so it is served under no name: remove upstream= and name ` +
        `it "${upstream}"`,
    );
  }
  rule.minimum = node.numberProp("minimum");
  rule.maximum = node.numberProp("maximum");
  if (rule.minimum === undefined) delete rule.minimum;
  if (rule.maximum === undefined) delete rule.maximum;
  if (rule.minimum !== undefined && rule.maximum !== undefined && rule.minimum > rule.maximum) {
    node.error(
      `minimum=${rule.minimum} is greater than maximum=${rule.maximum}: lower minimum= or raise ` +
        `maximum=`,
    );
  }
  // The type is the MCP server's: read the string rules as for a string, the
  // enum as any scalar; both are checked against the real type later.
  const hasStringRule = RULE_PROPERTIES.some((k) => k in node.node.properties);
  readStringRules(node, rule);
  const enumNode = onlyOnce(kids, "enum");
  if (enumNode) {
    enumNode.onlyProperties();
    enumNode.noChildren();
    if (enumNode.argCount(1, Infinity, `the allowed values, e.g. enum "open" "closed"`)) {
      const values: (string | number)[] = [];
      for (const v of enumNode.node.values) {
        if (typeof v !== "string" && (typeof v !== "number" || !Number.isFinite(v))) {
          enumNode.error(
            `enum value ${show(v)} is neither a string nor a number: write strings quoted, ` +
              `numbers unquoted`,
          );
        } else if (values.includes(v)) {
          enumNode.error(`enum value ${show(v)} is listed twice: keep one`);
        } else values.push(v);
      }
      if (values.length === enumNode.node.values.length) rule.enum = values;
    }
  }
  const restricts = kids.filter((k) => k.name === "restrict");
  for (const r of restricts) {
    r.onlyProperties();
    r.noChildren();
    if (!r.argCount(1, Infinity, `one or more globs, e.g. restrict "team-*" "ops"`)) continue;
    for (let i = 0; i < r.node.values.length; i++) {
      const glob = r.stringArg(i, `glob ${i + 1}`);
      if (glob === undefined) continue;
      try {
        compileGlob(glob);
        // Several restrict nodes on one argument would have to AND; one node ORs its globs.
        (rule.restrict ??= []).push(glob);
        for (const warning of globWarnings(glob)) r.warn(warning);
      } catch (error) {
        r.error(`${(error as GlobError).message}; a malformed glob would match nothing: fix it`);
      }
    }
  }
  const joined = rule.restrict && globsPattern(rule.restrict);
  const combined = joined && patternProblem(joined, Infinity);
  if (combined) {
    restricts[0].error(
      `the globs of argument "${name}" together make one regular expression (the served ` +
        `schema's pattern) that ${combined}`,
    );
  }
  if (restricts.length > 1) {
    restricts[1].error(
      `argument "${name}" has two restrict nodes: put every allowed glob in one restrict node`,
    );
  }
  const bounded = rule.minimum !== undefined || rule.maximum !== undefined;
  if (bounded && (hasStringRule || rule.restrict)) {
    node.error(
      `argument "${name}" mixes number bounds (minimum=/maximum=) with string rules; an ` +
        `argument has one type: keep the rules of its type`,
    );
  }
  checkEnumAgainstRules(node, {
    ...rule,
    enum: rule.enum?.filter((v) => typeof v === "string" || !hasStringRule),
  });
  if (rule.enum && rule.restrict) {
    for (const v of rule.enum) {
      if (typeof v === "string" && !rule.restrict.some((g) => compileGlob(g)(v))) {
        node.error(
          `enum value ${show(v)} matches no restrict glob, so it could never be sent: drop it`,
        );
      }
    }
  }
  if (rule.hide && (bounded || hasStringRule || rule.enum || rule.restrict)) {
    node.error(
      `argument "${name}" is hidden, so no caller sends it and its rules would check nothing: ` +
        `remove hide=#true or the rules`,
    );
  }
  if (
    !rule.hide && upstream === undefined && !bounded && !hasStringRule && !rule.enum &&
    !rule.restrict
  ) {
    node.error(
      `argument "${name}" changes nothing: add upstream= (rename), hide=#true, or a rule ` +
        `(enum, pattern=, minimum=, maximum=, min-length=, max-length=, restrict), or remove it`,
    );
  }
  return rule;
}

/**
 * `pattern=`, `min-length=`, `max-length=` of an argument rule (the argument's
 * type is the MCP server's: that they apply to a string is checked when the
 * schema is known).
 */
function readStringRules(node: NodeReader, rule: ArgumentRule): void {
  const pattern = node.stringProp("pattern");
  if (pattern !== undefined) {
    const problem = patternProblem(pattern);
    if (problem) node.error(`pattern ${shownPattern(pattern)} ${problem}`);
    else {
      rule.pattern = pattern;
      if (!pattern.startsWith("^") || !pattern.endsWith("$")) {
        node.warn(
          `pattern ${shownPattern(pattern)} is not anchored with ^...$, so it accepts any ` +
            `value that merely contains a match (JSON Schema patterns are unanchored): add ^ and $`,
        );
      }
    }
  }
  for (const [key, slot] of [["min-length", "minLength"], ["max-length", "maxLength"]] as const) {
    if (!(key in node.node.properties)) continue;
    const v = node.numberProp(key);
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 0) {
      node.error(`${key}=${v} is not a whole number of 0 or more: write one, e.g. ${key}=10`);
    } else rule[slot] = v;
  }
  if (
    rule.minLength !== undefined && rule.maxLength !== undefined && rule.minLength > rule.maxLength
  ) {
    node.error(
      `min-length=${rule.minLength} is greater than max-length=${rule.maxLength}: lower ` +
        `min-length= or raise max-length=`,
    );
  }
}

/**
 * Why an argument named `__proto__` cannot be wrapped: the MCP clients read
 * a tool's definition into plain objects, where that key sets the object's
 * prototype instead of naming an argument, so the argument is never seen
 * and a rule or pin on it could never apply (serve would refuse to start).
 */
export function protoKey(what: string): string {
  return `${what} "__proto__": the MCP clients read an argument of that name as no argument ` +
    `at all (a JavaScript object's prototype), so this rule could never apply: remove it`;
}
