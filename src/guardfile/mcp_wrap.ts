/**
 * The guardfile form of `serve-upstream`: a `wrap` that names an MCP server
 * (`mcp-server`) and the tools of it weir serves (`proxy`), instead of an HTTP
 * API (`base-url`, `auth`, `can`). Pure: KDL nodes in, a checked
 * {@link McpWrap} and diagnostics out; nothing is connected, read or resolved.
 *
 * ```kdl
 * confirm "add" message="Add these two numbers?"
 *
 * wrap ward mcp everything {
 *     mcp-server stdio "npx" "-y" "@modelcontextprotocol/server-everything@2026.8.31" "stdio" {
 *         max-staleness "5s"
 *     }
 *     proxy echo
 *     proxy add {
 *         upstream "get-sum"
 *         describe "Adds two numbers below 1000."
 *         argument "first" upstream="a" minimum=0 maximum=999
 *         argument "b" minimum=0 maximum=999
 *     }
 * }
 * ```
 *
 * The rules follow spec mode's (`docs/guardfile.md`; `docs/wrapping-mcp-servers.md`
 * for this form): deny by absence (a tool of the MCP server that no `proxy`
 * names is not served, nor is any resource no served tool references and no
 * `proxy-resource` names), one of each (`mcp-server`, each setting, each
 * override), no unknown node anywhere, every error at its line and column
 * with what to change. What the file alone cannot decide (that an argument
 * rule fits the MCP server's schema, that a renamed argument lands on no
 * other name) is decided when the definitions are known, by
 * `src/mcp_upstream/overrides.ts`, at start-up, on reload and by
 * `weir lint-upstream FILE`.
 *
 * @module
 */
import { type Diagnostic, Diagnostics, type Located } from "./diagnostics.ts";
import type { KdlNode } from "./kdl.ts";
import type { McpWrap, McpWrapControls, McpWrapResult, ProxyTool } from "./mcp_wrap_model.ts";
import type { Withhold } from "./model.ts";
import { NodeReader, onlyOnce, show, suggest } from "./nodes.ts";
import { readIcons, readPrompts, readResources } from "./siblings.ts";
import { uriProblem } from "./uri.ts";
import { readOAuth } from "./oauth.ts";
import { checkExchangeProfile } from "./token_exchange.ts";
import { readInboundTokens } from "./inbound_tokens.ts";
import { readSurface, SURFACE_NODE } from "./surface.ts";
import { readServer } from "./mcp_wrap_server.ts";
import {
  nearWithheld,
  operationKeys,
  sharedOperations,
  spellingClashes,
  type SurfaceName,
} from "./spellings.ts";
import { proxyControls, proxyOperation } from "./operations.ts";
import { readProxy } from "./mcp_wrap_proxy.ts";
import { isMcpWrap } from "./modes.ts";

export { isMcpWrap };
import {
  readInstructions,
  readServerInfo,
  readWithholds,
  readWrapControls,
} from "./mcp_wrap_siblings.ts";

export type * from "./mcp_wrap_model.ts";

/**
 * One operation, one name (src/guardfile/spellings.ts), on the wrapped
 * surface: a served name spelled like a withheld one (case, separators, a verb
 * synonym), or two served names for one MCP tool with different controls, are
 * an error naming both (two names for one tool with the same controls, names
 * that differ only by case or separators, near spellings of a withheld tool:
 * a warning); and a withheld tool is not served under another name by a
 * proxy whose upstream is that tool (or a spelling of it); and no served
 * name is another served tool's name on the MCP server (a swap).
 */
function checkSurfaceNames(
  diags: Diagnostics,
  proxies: readonly ProxyTool[],
  withholds: readonly Withhold[],
  infoTool: string | null,
  controls: McpWrapControls,
): void {
  type Named = SurfaceName & { at: Located };
  const names: Named[] = [
    ...proxies.map((p) => ({
      tool: p.name,
      kind: "served" as const,
      what: `proxy "${p.name}"`,
      line: p.position?.line,
      at: { path: `wrap > proxy ${p.name}`, position: p.position },
      operation: proxyOperation(p),
      controls: proxyControls(p, controls),
    })),
    ...withholds.map((w) => ({
      tool: w.tool,
      kind: "withheld" as const,
      what: `withhold "${w.tool}"`,
      line: w.position?.line,
      at: { path: `withhold ${w.tool}`, position: w.position },
    })),
  ];
  if (infoTool) {
    names.push({ tool: infoTool, kind: "served", what: "the info tool", at: { path: "" } });
  }
  for (const clash of spellingClashes(names)) {
    const at = (clash.later as Named).at;
    if (clash.severity === "error") diags.error(at, clash.message);
    else diags.warn(at, clash.message);
  }
  for (const near of nearWithheld(names)) diags.warn((near.later as Named).at, near.message);
  for (const shared of sharedOperations(names)) {
    diags.warn((shared.later as Named).at, shared.message);
  }
  // A served name that is another served tool's name on the MCP server (names swapped or
  // shifted) makes every control by name read as the other tool.
  for (const p of proxies) {
    const keys = new Set(operationKeys(p.name));
    const other = proxies.find((q) =>
      q !== p && q.upstream !== q.name && operationKeys(q.upstream).some((k) => keys.has(k))
    );
    if (!other || p.upstream === other.upstream) continue;
    diags.error(
      { path: `wrap > proxy ${p.name}`, position: p.position },
      `proxy "${p.name}" serves the MCP server's "${p.upstream}", while proxy "${other.name}" ` +
        `serves the MCP server's "${other.upstream}": a served name that is another served ` +
        `tool's name on the MCP server makes the file read as the other tool; rename "${p.name}"`,
    );
  }
  for (const w of withholds) {
    const keys = new Set(operationKeys(w.tool));
    for (const p of proxies) {
      // A proxy under the MCP server's own name is held by the spelling rule above.
      if (p.name === p.upstream || !operationKeys(p.upstream).some((k) => keys.has(k))) continue;
      diags.error(
        { path: `wrap > proxy ${p.name}`, position: p.position },
        `proxy "${p.name}" serves the MCP server's "${p.upstream}", and withhold "${w.tool}"` +
          `${p.upstream === w.tool ? "" : " (the same operation)"} withholds it: remove the ` +
          `proxy, or the withhold if the tool is meant to be served`,
      );
    }
  }
}

/** The nodes inside an MCP wrap. */
const WRAP_CHILDREN = ["mcp-server", "proxy", "proxy-resource"];
/** The nodes of an HTTP API wrap, named when found in an MCP wrap. */
const HTTP_WRAP_CHILDREN = ["base-url", "auth", "header", "restrict", "database", "can"];
/** The nodes beside an MCP wrap. */
const SIBLINGS = [
  "wrap",
  "withhold",
  "instructions",
  "server-info",
  "resource",
  "prompt",
  "icon",
  "cache",
  "reject-empty",
  "reject-empty-argument",
  "pin",
  "rate-limit",
  "confirm",
  "oauth",
  "inbound-token",
  SURFACE_NODE,
];

/**
 * Read a document that wraps an MCP server (see the module doc).
 * @param nodes the parsed KDL document
 * @param file the path, for messages only
 * @returns the model when there is no error, and every diagnostic in file order
 */
export function readMcpWrap(nodes: readonly KdlNode[], file: string): McpWrapResult {
  const diags = new Diagnostics();
  const top = nodes.map((n) => new NodeReader(n, diags));
  for (const node of top) {
    if (SIBLINGS.includes(node.name)) continue;
    if (node.name === "extract") {
      node.error(
        `"extract" reads an HTTP API's raw answer; an MCP server's tools answer with a ` +
          `CallToolResult already: remove it`,
      );
    } else {
      node.error(
        `unknown top-level node "${node.name}" beside an MCP server wrap${
          suggest(node.name, SIBLINGS)
        } (weir refuses unknown nodes so a typo cannot silently drop a control): remove it, ` +
          `or use one of ${SIBLINGS.filter((s) => s !== "wrap").join(", ")}`,
      );
    }
  }
  const wraps = top.filter((n) => n.name === "wrap");
  for (const extra of wraps.slice(1)) {
    extra.error(`a second "wrap" block; a guardfile wraps exactly one server: remove it`);
  }
  const wrap = wraps[0];
  const body = readWrapBody(wrap);
  const proxies = body.proxies;
  const infoTool = readServerInfo(top, proxies);
  const withholds = readWithholds(top, proxies, infoTool);
  const instructions = readInstructions(top);
  const resources = readResources(top);
  // serve lists a proxy-resource as the MCP server's: the file's own under that URI would clash.
  for (const node of top.filter((n) => n.name === "resource")) {
    const uri = node.node.properties.uri;
    if (typeof uri === "string" && body.resourceUris.includes(uri)) {
      node.error(
        `resource uri "${uri}" is also a proxy-resource, which serves the MCP server's resource ` +
          `under that URI: rename the file's resource, or remove the proxy-resource`,
      );
    }
  }
  const prompts = readPrompts(top);
  const icons = readIcons(top);
  const controls = readWrapControls(top, proxies);
  checkSurfaceNames(diags, proxies, withholds, infoTool, controls);
  const oauth = readOAuth(top);
  const target = body.server?.server;
  if (target?.transport === "http") {
    checkExchangeProfile(target.exchange, oauth, diags, "wrap > mcp-server > token-exchange");
  }
  const served = [
    ...proxies.map((p) => p.name),
    ...withholds.map((w) => w.tool),
    ...(infoTool ? [infoTool] : []),
  ];
  const inboundTokens = readInboundTokens(top, served);
  const surface = readSurface(top);
  const diagnostics = sortByPosition(diags.items);
  if (diags.failed || !body.server) return { diagnostics };
  const { server, ...rest } = body;
  return {
    wrap: {
      kind: "mcp-wrap",
      file,
      ...rest,
      ...server,
      withholds,
      ...(instructions !== undefined ? { instructions } : {}),
      infoTool,
      resources,
      prompts,
      icons,
      controls,
      ...(oauth ? { oauth } : {}),
      inboundTokens,
      surface,
      position: wrap.node.position,
    },
    diagnostics,
  };
}

function sortByPosition(items: Diagnostic[]): Diagnostic[] {
  const key = (d: Diagnostic) => d.position ? d.position.line * 1e6 + d.position.column : 0;
  return items.map((d, i) => ({ d, i }))
    .sort((a, b) => key(a.d) - key(b.d) || a.i - b.i)
    .map(({ d }) => d);
}

type WrapBody = Pick<McpWrap, "name" | "wrapPath" | "proxies" | "resourceUris"> & {
  /** Absent when `mcp-server` is missing or broken (after reporting). */
  server?: Pick<McpWrap, "server" | "settings">;
};

function readWrapBody(wrap: NodeReader): WrapBody {
  wrap.onlyProperties();
  const wrapPath: string[] = [];
  if (wrap.node.values.length === 0) {
    wrap.error(`"wrap" needs a name path, e.g. wrap ward mcp everything`);
  }
  wrap.node.values.forEach((_, i) => {
    const s = wrap.stringArg(i, `wrap argument ${i + 1}`);
    if (s) wrapPath.push(s);
  });
  const kids = wrap.children();
  for (const kid of kids) {
    if (WRAP_CHILDREN.includes(kid.name)) continue;
    if (HTTP_WRAP_CHILDREN.includes(kid.name)) {
      kid.error(
        `"${kid.name}" belongs to a wrap of an HTTP API; this wrap names an mcp-server, whose ` +
          `tools are served with proxy "<tool>": remove "${kid.name}"` +
          (kid.name === "header" ? ` (an MCP server's headers go in the mcp-server block)` : ""),
      );
    } else {
      kid.error(
        `unknown node "${kid.name}" in wrap${suggest(kid.name, WRAP_CHILDREN)}: remove it, or ` +
          `use mcp-server, proxy or proxy-resource`,
      );
    }
  }
  const serverNode = onlyOnce(kids, "mcp-server");
  const read = serverNode ? readServer(serverNode) : undefined;
  const proxies: ProxyTool[] = [];
  for (const node of kids.filter((k) => k.name === "proxy")) {
    const proxy = readProxy(node);
    if (!proxy) continue;
    if (proxies.some((p) => p.name === proxy.name)) {
      node.error(
        `tool "${proxy.name}" is served twice: two proxy nodes mint the same name; merge them ` +
          `or rename one`,
      );
      continue;
    }
    proxies.push(proxy);
  }
  if (!kids.some((k) => k.name === "proxy")) {
    wrap.warn(
      `grants nothing: no "proxy" node, so serve lists none of the MCP server's tools; add ` +
        `proxy "<tool>" for each tool to serve`,
    );
  }
  const resourceUris: string[] = [];
  for (const node of kids.filter((k) => k.name === "proxy-resource")) {
    node.onlyProperties();
    node.noChildren();
    if (!node.argCount(1, 1, `the resource's URI, e.g. proxy-resource "ui://dashboard/app"`)) {
      continue;
    }
    const uri = node.stringArg(0, "the resource URI");
    if (uri === undefined) continue;
    const wrong = uriProblem(uri);
    if (wrong) {
      node.error(
        `proxy-resource ${show(uri)} ${wrong} (weir lists it as a resource; write the URI the ` +
          `MCP server lists, e.g. "ui://dashboard/app")`,
      );
    } else if (resourceUris.includes(uri)) {
      node.error(`proxy-resource "${uri}" is listed twice: keep one`);
    } else resourceUris.push(uri);
  }
  if (!serverNode) {
    wrap.error(
      `missing "mcp-server": say which MCP server this wraps, e.g. mcp-server http ` +
        `"https://mcp.example.com/mcp" or mcp-server stdio "npx" "-y" "<package>"`,
    );
  }
  return {
    name: wrapPath[wrapPath.length - 1] ?? "weir",
    wrapPath,
    ...(read ? { server: read } : {}),
    proxies: proxies.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    resourceUris: resourceUris.sort(),
  };
}
