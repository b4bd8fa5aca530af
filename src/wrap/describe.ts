/**
 * `weir describe` of a guardfile that wraps an MCP server: what is served
 * now (the host's decisions, the file's overrides, pins and controls) as the
 * surface model (src/surface/wrap.ts), so text, JSON, the OpenAPI export of
 * /api, `GET /admin/describe` and `weir diff` read it alike.
 *
 * @module
 */
import type { McpWrap } from "../guardfile/mcp_wrap.ts";
import { uiResourceOf } from "../mcp_upstream/apps.ts";
import { stubWords } from "../mcp_upstream/decision.ts";
import type { Surface } from "../surface/model.ts";
import { surfaceOfWrap, type WrapDecision } from "../surface/wrap.ts";
import type { UpstreamHost } from "./host.ts";

/** What the MCP server is, in words (no secret: a URL's origin and path, or the command). */
export function describeServer(wrap: McpWrap): string {
  const s = wrap.server;
  if (s.transport === "http") {
    const url = new URL(s.url);
    return `MCP server ${url.origin}${url.pathname} (Streamable HTTP)`;
  }
  return `MCP server "${[s.command, ...s.args].join(" ")}" (stdio)`;
}

/** The host's decision per served tool, as the surface model takes them. */
export function wrapDecisions(host: UpstreamHost): WrapDecision[] {
  return host.served().map((state): WrapDecision => {
    const name = state.entry.name;
    if (state.kind === "stubbed") return { name, stub: stubWords(state.stub) };
    const decision: WrapDecision = { name, spec: state.spec };
    const ui = uiResourceOf(state.spec);
    if (ui) decision.uiResource = ui;
    if (state.scan?.accepted.length) {
      decision.accepted = state.scan.accepted.map((f) => ({ id: f.id, pointer: f.pointer }));
    }
    return decision;
  });
}

/** The surface as `weir describe` prints it (text, JSON, OpenAPI): what is served now. */
export function describeWrap(wrap: McpWrap, host: UpstreamHost): Surface {
  return surfaceOfWrap(wrap, wrapDecisions(host));
}
