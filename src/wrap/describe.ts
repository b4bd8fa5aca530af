/**
 * `weir describe` of a guardfile that wraps an MCP server: what is served
 * now (the host's decisions, the file's overrides, pins and controls), in
 * the shape every mode's description has (src/modes/describe.ts), so text,
 * JSON, the OpenAPI export of /api and `GET /admin/describe` read it alike.
 *
 * @module
 */
import type { ToolSpec } from "../mcp/types.ts";
import type { McpWrap, ProxyTool } from "../guardfile/mcp_wrap.ts";
import { uiResourceOf } from "../mcp_upstream/apps.ts";
import { stubWords } from "../mcp_upstream/decision.ts";
import type { UpstreamHost } from "./host.ts";
import type { DescribedInput, DescribedTool, Surface as Described } from "../modes/describe.ts";

/** What the MCP server is, in words (no secret: a URL's origin and path, or the command). */
export function describeServer(wrap: McpWrap): string {
  const s = wrap.server;
  if (s.transport === "http") {
    const url = new URL(s.url);
    return `MCP server ${url.origin}${url.pathname} (Streamable HTTP)`;
  }
  return `MCP server "${[s.command, ...s.args].join(" ")}" (stdio)`;
}

/** The surface as `weir describe` prints it (text, JSON, OpenAPI): what is served now. */
export function describeWrap(wrap: McpWrap, host: UpstreamHost): Described {
  const tools: DescribedTool[] = [];
  for (const state of host.served()) {
    const name = state.entry.name;
    const proxy = wrap.proxies.find((p) => p.name === name)!;
    if (state.kind === "stubbed") {
      tools.push({ name, kind: "withheld", reason: stubWords(state.stub) });
      continue;
    }
    const spec = state.spec;
    const tool: DescribedTool = {
      name,
      kind: "proxy",
      upstreamTool: proxy.upstream,
      description: spec.description,
      inputs: schemaInputs(spec, proxy),
      inputSchema: spec.inputSchema,
      scopes: proxy.scopes,
      destructive: spec.annotations?.readOnlyHint !== true &&
        spec.annotations?.destructiveHint !== false,
      reads: spec.annotations?.readOnlyHint === true,
    };
    if (spec.outputSchema) tool.outputSchema = spec.outputSchema;
    if (state.scan?.accepted.length) {
      tool.acceptedFindings = state.scan.accepted.map((f) => {
        const reason = proxy.accept.find((a) => a.id === f.id)?.reason;
        return { id: f.id, pointer: f.pointer, ...(reason !== undefined ? { reason } : {}) };
      });
    }
    const ui = uiResourceOf(spec);
    if (ui) tool.interface = ui;
    const pins = wrap.controls.pins[name];
    if (pins) {
      tool.pinnedArguments = pins.map((p) => ({
        argument: p.name,
        from: "literal" in p.value
          ? "a literal"
          : p.value.source.chain.map((c) => `${c.provider} ${c.address}`).join(", else "),
      }));
    }
    if (wrap.controls.cache[name] !== undefined) tool.cacheTtlMs = wrap.controls.cache[name];
    if (wrap.controls.rejectEmpty.includes(name)) tool.rejectEmpty = true;
    if (wrap.controls.rejectEmptyArguments[name]) {
      tool.rejectBlank = [...wrap.controls.rejectEmptyArguments[name]];
    }
    if (Object.hasOwn(wrap.controls.confirm, name)) tool.confirm = wrap.controls.confirm[name];
    tools.push(tool);
  }
  for (const w of wrap.withholds) {
    tools.push({ name: w.tool, kind: "withheld", reason: w.reason, alternative: w.alternative });
  }
  if (wrap.infoTool) {
    tools.push({
      name: wrap.infoTool,
      kind: "info",
      description: "read-only: lists what this server serves; reaches nothing upstream",
    });
  }
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const limit = wrap.controls.rateLimit;
  const headers = wrap.server.transport === "http" ? wrap.server.headers : [];
  return {
    server: wrap.name,
    file: wrap.file,
    upstream: describeServer(wrap),
    auth: wrap.server.transport === "stdio"
      ? "none sent by weir (a stdio MCP server reads its own credentials from the environment)"
      : headers.length === 0
      ? "none"
      : headers.map((h) =>
        `header ${h.name} ${
          "text" in h.value
            ? "(fixed)"
            : `from ${
              h.value.source.chain.map((c) =>
                c.provider === "literal" ? "a literal" : `${c.provider} ${c.address}`
              ).join(", else ")
            }`
        }`
      ).join("; "),
    ...(limit
      ? {
        rateLimit: {
          count: limit.count,
          windowMs: limit.windowMs,
          ...(limit.store
            ? {
              store: `shared in redis (URL from ${
                limit.store.url.provider === "env" ? `env ${limit.store.url.address}` : "a literal"
              }, bucket ${limit.store.bucket ?? wrap.name})`,
            }
            : {}),
        },
      }
      : {}),
    ...(wrap.oauth ? { oauth: { issuer: wrap.oauth.issuer, resource: wrap.oauth.resource } } : {}),
    tools,
  };
}

/** The served arguments of a proxied tool, flattened for reading. */
function schemaInputs(spec: ToolSpec, proxy: ProxyTool): DescribedInput[] {
  const schema = spec.inputSchema ?? {};
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, p]) => {
    const rule = proxy.arguments.find((a) => a.name === name);
    const constraints: string[] = [];
    if (typeof p !== "object" || p === null) {
      return { name, in: "argument", type: "any", required: required.has(name), constraints };
    }
    if (p.minimum !== undefined || p.maximum !== undefined) {
      constraints.push(`${p.minimum ?? "-inf"}..${p.maximum ?? "inf"}`);
    }
    if (p.minLength !== undefined || p.maxLength !== undefined) {
      constraints.push(`length ${p.minLength ?? 0}..${p.maxLength ?? "inf"}`);
    }
    if (typeof p.pattern === "string") constraints.push(`pattern ${p.pattern}`);
    for (const extra of (Array.isArray(p.allOf) ? p.allOf : []) as Record<string, unknown>[]) {
      if (typeof extra?.pattern === "string") constraints.push(`pattern ${extra.pattern}`);
    }
    if (Array.isArray(p.enum)) {
      constraints.push(`one of ${p.enum.map((v) => JSON.stringify(v)).join(", ")}`);
    }
    if (rule?.restrict) {
      constraints.push(`matches ${rule.restrict.map((g) => JSON.stringify(g)).join(" ")}`);
    }
    const type = Array.isArray(p.type)
      ? p.type.join("|")
      : typeof p.type === "string"
      ? p.type
      : "any";
    return {
      name,
      in: "argument",
      type,
      required: required.has(name),
      constraints,
      ...(rule && rule.upstream !== rule.name ? { sentAs: rule.upstream } : {}),
    };
  });
}
