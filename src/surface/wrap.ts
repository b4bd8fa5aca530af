/**
 * The surface model of a guardfile that wraps an MCP server:
 * {@link surfaceOfWrap}. What is served depends on the file and on the
 * server's own tool definitions; the caller hands in what the host decided
 * for each served tool (the definition as listed, with the file's rules
 * applied, or the stub's reason), from a live listing or a fingerprints file
 * that recorded the definitions. Without them the model holds what the file
 * alone says (each tool's argument rules, pins and controls; no input
 * schema), which is what `weir diff` compares when the server is held
 * fixed. Pure.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolSpec } from "../mcp/types.ts";
import type { ArgumentRule, McpWrap, ProxyTool } from "../guardfile/mcp_wrap_model.ts";
import { forTool } from "../guardfile/model.ts";
import { mcpToolAccess } from "../guardfile/reads.ts";
import { Concealed } from "./concealed.ts";
import type { Argument, ArgumentRules, Surface, Tool, ToolControls, Upstream } from "./model.ts";
import {
  callersOf,
  emptyTool,
  exchangeCredential,
  infoSurface,
  rateLimitOf,
  rulesOf,
  settingsOf,
  sortByName,
  sourceSteps,
  textsOf,
  withheldSurface,
} from "./spec.ts";

/** What the host decided for one served tool: its listed definition, or a stub's reason. */
export type WrapDecision =
  | {
    name: string;
    spec: ToolSpec;
    uiResource?: string;
    /** Findings of the definition scan found and accepted, with where they are. */
    accepted?: { id: string; pointer: string }[];
  }
  | { name: string; stub: string };

/**
 * What an agent can do with a guardfile that wraps an MCP server.
 * @param decisions the host's decision per served tool (absent: the file alone)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadGuardfileText } from "../guardfile/load.ts";
 * import { surfaceOfWrap } from "./wrap.ts";
 * const { mcpWrap } = loadGuardfileText(
 *   `wrap ward mcp e {\n  mcp-server stdio "e"\n  proxy "echo" { argument "message" max-length=10; }\n}`,
 *   "e.mcp.kdl",
 * );
 * const tool = surfaceOfWrap(mcpWrap!).tools.find((t) => t.name === "echo")!;
 * assert.equal(tool.arguments[0].rules.maxLength, 10);
 * ```
 */
export function surfaceOfWrap(wrap: McpWrap, decisions?: WrapDecision[]): Surface {
  const tools: Tool[] = [];
  for (const proxy of wrap.proxies) {
    const decided = decisions?.find((d) => d.name === proxy.name);
    if (decisions && !decided) continue;
    if (decided && "stub" in decided) {
      tools.push(withheldSurface(proxy.name, decided.stub));
      continue;
    }
    tools.push(proxySurface(wrap, proxy, decided));
  }
  for (const w of wrap.withholds) tools.push(withheldSurface(w.tool, w.reason, w.alternative));
  if (wrap.infoTool) tools.push(infoSurface(wrap.infoTool));
  sortByName(tools);
  const headers = wrap.server.transport === "http" ? wrap.server.headers : [];
  const surface: Surface = {
    form: "mcp-wrap",
    server: wrap.name,
    file: wrap.file,
    upstream: upstreamOf(wrap),
    credentials: [
      ...headers.flatMap((h) =>
        "source" in h.value
          ? [{
            scheme: "mcp-header",
            sentAs: `header ${h.name}`,
            prefix: h.prefix,
            value: { from: sourceSteps(h.value.source) },
          }]
          : []
      ),
      ...(wrap.server.transport === "http" && wrap.server.exchange
        ? [exchangeCredential(wrap.server.exchange)]
        : []),
    ],
    headers: headers.flatMap((h) =>
      "text" in h.value
        ? [{ name: h.name.toLowerCase(), text: new Concealed(h.prefix + h.value.text) }]
        : []
    ),
    callers: callersOf(wrap.inboundTokens, wrap.oauth),
    connection: { ...wrap.settings },
    settings: settingsOf(wrap.surface),
    texts: textsOf(wrap),
    readableResources: [...wrap.resourceUris].sort(),
    tools,
  };
  const limit = rateLimitOf(wrap.controls.rateLimit, wrap.name);
  if (limit) surface.rateLimit = limit;
  return surface;
}

/** What the MCP server is: a URL's origin and path (never its query), or the command. */
function upstreamOf(wrap: McpWrap): Upstream {
  const s = wrap.server;
  if (s.transport === "stdio") return { kind: "mcp-stdio", command: s.command, args: [...s.args] };
  const url = new URL(s.url);
  return { kind: "mcp-http", endpoint: `${url.origin}${url.pathname}`, url: new Concealed(s.url) };
}

function proxySurface(
  wrap: McpWrap,
  proxy: ProxyTool,
  decided: Extract<WrapDecision, { spec: ToolSpec }> | undefined,
): Tool {
  const tool = emptyTool(proxy.name, "proxy");
  const spec = decided?.spec;
  tool.access = mcpToolAccess({
    stated: proxy.annotations?.readOnlyHint,
    upstream: spec?.annotations?.readOnlyHint,
  });
  if (!decided && proxy.annotations?.readOnlyHint === undefined) {
    // The file alone: the server's own hint decides, and it was not read.
    tool.access = {
      reads: false,
      why: "the server's own readOnlyHint decides (not read: the server is held fixed)",
      unknown: true,
    };
  }
  tool.operation = { kind: "mcp", tool: proxy.upstream };
  const hints = { ...spec?.annotations, ...proxy.annotations };
  // MCP's defaults: a tool that does not say it only reads may destroy.
  tool.destructive = !tool.access.reads && hints.destructiveHint !== false;
  if (!decided && !tool.access.reads && proxy.annotations?.destructiveHint === undefined) {
    tool.destructiveUnknown = true;
  }
  const said: NonNullable<Tool["hints"]> = {};
  if (hints.idempotentHint !== undefined) said.idempotent = hints.idempotentHint;
  if (hints.openWorldHint !== undefined) said.openWorld = hints.openWorldHint;
  if (Object.keys(said).length > 0) tool.hints = said;
  const title = proxy.title ?? spec?.title;
  if (title !== undefined) tool.title = title;
  const description = proxy.description ?? spec?.description;
  if (description !== undefined) tool.description = description;
  if (spec?.inputSchema) tool.inputSchema = spec.inputSchema;
  if (spec?.outputSchema) tool.outputSchema = spec.outputSchema;
  if (decided?.uiResource) tool.interface = decided.uiResource;
  tool.arguments = spec ? specArguments(spec, proxy) : ruleArguments(proxy.arguments);
  for (const rule of proxy.arguments.filter((a) => a.hide)) {
    tool.arguments.push({ ...ruleArgument(rule), served: false });
  }
  tool.scopes = [...proxy.scopes];
  // Live: the findings found and accepted; from the file alone: every acceptance it states.
  const found = decided?.accepted ?? proxy.accept.map((a) => ({ id: a.id }));
  tool.acceptedFindings = found.map((f) => {
    const reason = proxy.accept.find((a) => a.id === f.id)?.reason;
    return { ...f, ...(reason !== undefined ? { reason } : {}) };
  });
  tool.pins = (forTool(wrap.controls.pins, proxy.name) ?? []).map((p) => ({
    name: p.name,
    in: "argument",
    value: "literal" in p.value
      ? { from: [{ provider: "literal", literal: new Concealed(JSON.stringify(p.value.literal)) }] }
      : { from: sourceSteps(p.value.source) },
    secret: p.secret,
  }));
  const controls = wrap.controls;
  const c: ToolControls = {
    rejectEmpty: controls.rejectEmpty.includes(proxy.name),
    rejectBlank: [...(forTool(controls.rejectEmptyArguments, proxy.name) ?? [])].sort(),
    rawResponse: false,
  };
  if (Object.hasOwn(controls.confirm, proxy.name)) c.confirm = controls.confirm[proxy.name];
  const ttl = forTool(controls.cache, proxy.name);
  if (ttl !== undefined) c.cacheTtlMs = ttl;
  tool.controls = c;
  return tool;
}

function ruleArguments(rules: ArgumentRule[]): Argument[] {
  return rules.filter((r) => !r.hide).map(ruleArgument);
}

function ruleArgument(rule: ArgumentRule): Argument {
  return {
    name: rule.name,
    in: "argument",
    sentAs: rule.upstream,
    type: "any",
    required: false,
    rules: rulesOf(rule),
    restrict: rule.restrict ? [[...rule.restrict]] : [],
    served: true,
  };
}

/** The served arguments of a listed definition, each with the file's rule for it. */
function specArguments(spec: ToolSpec, proxy: ProxyTool): Argument[] {
  const schema = spec.inputSchema ?? {};
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, p]) => {
    const rule = proxy.arguments.find((a) => a.name === name);
    const property = (typeof p === "object" && p !== null ? p : {}) as JsonObject;
    return {
      name,
      in: "argument",
      sentAs: rule?.upstream ?? name,
      type: schemaType(property),
      required: required.has(name),
      rules: schemaRules(property),
      restrict: rule?.restrict ? [[...rule.restrict]] : [],
      served: true,
    };
  });
}

/**
 * An argument's type as its schema states it: `"string"`, a list of types
 * joined by `|` (`"string|null"`), or `"any"` when the schema names none.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { schemaType } from "./wrap.ts";
 * assert.equal(schemaType({ type: ["string", "null"] }), "string|null");
 * assert.equal(schemaType({}), "any");
 * ```
 */
export function schemaType(property: JsonObject): string {
  const type = property.type;
  if (typeof type === "string") return type;
  return Array.isArray(type) && type.length > 0 ? type.join("|") : "any";
}

/** An argument's value rules, read from its schema (patterns under `allOf` too). */
export function schemaRules(property: JsonObject): ArgumentRules {
  const out: ArgumentRules = {};
  for (const key of ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"]) {
    const v = property[key];
    if (typeof v === "number") (out as Record<string, number>)[key] = v;
  }
  const patterns = [
    property.pattern,
    ...(Array.isArray(property.allOf) ? property.allOf : []).map((x) =>
      typeof x === "object" && x !== null && !Array.isArray(x)
        ? (x as JsonObject).pattern
        : undefined
    ),
  ].filter((x): x is string => typeof x === "string");
  if (patterns.length > 0) out.pattern = patterns.join(" and ");
  if (Array.isArray(property.enum)) out.enum = property.enum as ArgumentRules["enum"];
  return out;
}
