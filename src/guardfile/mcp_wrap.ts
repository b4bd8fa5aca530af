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
import { type Diagnostic, Diagnostics } from "./diagnostics.ts";
import type { KdlNode, KdlValue, SourcePosition } from "./kdl.ts";
import type {
  OAuthSetting,
  PromptTemplate,
  RateLimit,
  ServerIcon,
  StaticResource,
  ValueRules,
  ValueSource,
  Withhold,
} from "./model.ts";
import { NodeReader, onlyOnce, show, suggest } from "./nodes.ts";
import { readValue } from "./value.ts";
import { readControls, readIcons, readPrompts, readResources } from "./siblings.ts";
import { readOAuth } from "./oauth.ts";
import { MAX_TIMEOUT_MS, parseDuration } from "./duration.ts";
import { compileGlob, type GlobError } from "./glob.ts";
import { checkEnumAgainstRules, RULE_PROPERTIES } from "./rules.ts";
import { type InboundToken, readInboundTokens } from "./inbound_tokens.ts";
import { readSurface, SURFACE_NODE } from "./surface.ts";
import type { SurfaceSettings } from "./model.ts";

/** Where the MCP server is: a Streamable HTTP endpoint, or a command run as a stdio child. */
export type McpServerTarget =
  | {
    transport: "http";
    /** The MCP endpoint (`http:` or `https:`, no credentials, no fragment). */
    url: string;
    /** Headers sent with every request, values resolved per request. */
    headers: McpServerHeader[];
  }
  | {
    transport: "stdio";
    /** The program. */
    command: string;
    /** Its arguments. */
    args: string[];
  };

/**
 * `header "<Name>" "<text>"` (a fixed value) or
 * `header "<Name>" { prefix "<text>"; value <provider> "<address>" }` (a secret,
 * read at every request, never logged or echoed).
 */
export interface McpServerHeader {
  /** The header name as written. */
  name: string;
  /** Text sent before the value (`Bearer `); empty for none. */
  prefix: string;
  /** The value: fixed text, or where it is read from. */
  value: { text: string } | { source: ValueSource };
}

/** The connection settings in the `mcp-server` block; absent ones take the flags' defaults. */
export interface McpServerSettings {
  /** `connect-timeout`: how long start-up keeps retrying the first connection, in ms. */
  connectTimeoutMs?: number;
  /** `request-timeout`: bound on each request to the MCP server, in ms (0: none). */
  requestTimeoutMs?: number;
  /** `max-response-bytes`: the largest answer accepted, in bytes. */
  maxResponseBytes?: number;
  /**
   * `max-staleness`: the oldest a verified copy of the MCP server's tool
   * definitions may be when a call is forwarded, in ms (0: verify before
   * every call).
   */
  maxStalenessMs?: number;
}

/** Tool annotations a `proxy` states (MCP `ToolAnnotations` hints). */
export interface AnnotationOverrides {
  /** `read-only=`: the tool does not change its environment. */
  readOnlyHint?: boolean;
  /** `destructive=`: the tool may destroy or overwrite. */
  destructiveHint?: boolean;
  /** `idempotent=`: calling again with the same arguments changes nothing more. */
  idempotentHint?: boolean;
  /** `open-world=`: the tool reaches outside entities (the web, other systems). */
  openWorldHint?: boolean;
}

/**
 * `argument "<served name>" [upstream="<name>"] [hide=#true] [rules...]`: one
 * argument of a proxied tool, renamed, hidden or narrowed. Every rule narrows
 * what the MCP server's own schema admits; whether it does is checked against
 * that schema when it is known.
 */
export interface ArgumentRule extends ValueRules {
  /** The name callers use. */
  name: string;
  /** The MCP server's name for it (`upstream=`; default: `name`). */
  upstream: string;
  /** `hide=#true`: not served; it must then be pinned or optional. */
  hide: boolean;
  /** Numeric lower bound (inclusive). */
  minimum?: number;
  /** Numeric upper bound (inclusive). */
  maximum?: number;
  /** `restrict "<glob>"...`: the value must match one (strings; `docs/guardfile.md` globs). */
  restrict?: string[];
  /** Where the node starts. */
  position?: SourcePosition;
}

/** `proxy "<served name>" { ... }`: one tool of the MCP server, served. */
export interface ProxyTool {
  /** The name weir serves it under. */
  name: string;
  /** The MCP server's tool name (`upstream "<name>"`; default: `name`). */
  upstream: string;
  /** `title "<text>"`: replaces the tool's title. */
  title?: string;
  /** `describe "<text>"`: replaces the tool's description. */
  description?: string;
  /** `annotations read-only=#true ...`: replace these hints. */
  annotations?: AnnotationOverrides;
  /** `scope "<scope>"...`: OAuth scopes a caller's token must all carry. */
  scopes: string[];
  /** Argument rules, in file order. */
  arguments: ArgumentRule[];
  /** Where the node starts. */
  position?: SourcePosition;
}

/** `pin "<tool>" { argument "<name>" <provider> "<source>" }`: a value weir supplies. */
export interface ArgumentPin {
  /** The MCP server's argument name (a pinned argument is not served, so it has no other). */
  name: string;
  /**
   * A KDL-typed literal (`argument "limit" literal 10`), or where the text
   * comes from (read at every call; converted to the argument's JSON type).
   */
  value: { literal: string | number | boolean } | { source: ValueSource };
  /** `secret=#true`: redact the value from answers like a credential. */
  secret: boolean;
}

/** The controls beside `wrap`, by served tool name. */
export interface McpWrapControls {
  /** `confirm "<tool>" message=`: a person confirms each call first (tool -> question). */
  confirm: Record<string, string>;
  /** `cache "<tool>" ttl=`: milliseconds a successful answer is reused. */
  cache: Record<string, number>;
  /** `reject-empty "<tool>"`: an empty result is a tool error. */
  rejectEmpty: string[];
  /** `reject-empty-argument "<tool>" field=`: a present but blank argument (served name) is refused. */
  rejectEmptyArguments: Record<string, string[]>;
  /** `pin "<tool>" { argument ... }`: arguments weir supplies (and does not serve). */
  pins: Record<string, ArgumentPin[]>;
  /** `rate-limit`: one bucket for every forwarded call. */
  rateLimit?: RateLimit;
}

/** A checked guardfile that wraps an MCP server. */
export interface McpWrap {
  /** Tells this model from a spec-mode {@link import("./model.ts").Guardfile}. */
  kind: "mcp-wrap";
  /** Path it was read from (for messages). */
  file: string;
  /** Server name: the last argument of `wrap`. */
  name: string;
  /** All arguments of `wrap`. */
  wrapPath: string[];
  /** The MCP server. */
  server: McpServerTarget;
  /** Its connection settings. */
  settings: McpServerSettings;
  /** The tools served, sorted by served name. */
  proxies: ProxyTool[];
  /** `proxy-resource "<uri>"`: resources of the MCP server readable beyond those served tools reference. */
  resourceUris: string[];
  /** Withheld stubs. */
  withholds: Withhold[];
  /** `instructions` text, if any. */
  instructions?: string;
  /** The read-only info tool (`weir_info` unless renamed or `disabled`). */
  infoTool: string | null;
  /** Static resources of the file (`resource`). */
  resources: StaticResource[];
  /** Prompt templates (`prompt`). */
  prompts: PromptTemplate[];
  /** Icons (`icon`). */
  icons: ServerIcon[];
  /** The controls beside `wrap`. */
  controls: McpWrapControls;
  /** `oauth issuer= resource=`. */
  oauth?: OAuthSetting;
  /** `inbound-token`: static tokens, each limited to some tools. */
  inboundTokens: InboundToken[];
  /** `surface ...`: read-only, schema profile, token budget (`{}` when absent). */
  surface: SurfaceSettings;
  /** Where `wrap` starts. */
  position?: SourcePosition;
}

/** The outcome of reading an MCP wrap. */
export interface McpWrapResult {
  /** The model; absent when any diagnostic is an error. */
  wrap?: McpWrap;
  /** Every error and warning. */
  diagnostics: Diagnostic[];
}

/** The default name of the read-only info tool. */
const INFO_TOOL = "weir_info";
/** The MCP tool-name rule (both revisions' schema). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** RFC 6749 section 3.3 scope-token. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the MCP transport, HTTP or weir set themselves. */
const RESERVED_HEADERS = new Set([
  "accept",
  "connection",
  "content-length",
  "content-type",
  "host",
  "keep-alive",
  "last-event-id",
  "mcp-method",
  "mcp-name",
  "mcp-protocol-version",
  "mcp-session-id",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
]);
const INSTRUCTIONS_BUDGET = 500;
const CACHE_CEILING_MS = 24 * 3_600_000;

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
const SETTINGS = [
  "header",
  "connect-timeout",
  "request-timeout",
  "max-response-bytes",
  "max-staleness",
];
const PROXY_CHILDREN = ["upstream", "title", "describe", "annotations", "scope", "argument"];
const ANNOTATIONS: Record<string, keyof AnnotationOverrides> = {
  "read-only": "readOnlyHint",
  destructive: "destructiveHint",
  idempotent: "idempotentHint",
  "open-world": "openWorldHint",
};

/**
 * Whether a document wraps an MCP server: its first `wrap` node has an
 * `mcp-server` child. The loader reads such a document with
 * {@link readMcpWrap}, every other one as spec mode's HTTP API wrap.
 */
export function isMcpWrap(nodes: readonly KdlNode[]): boolean {
  const wrap = nodes.find((n) => n.name === "wrap");
  return wrap !== undefined && wrap.children.some((k) => k.name === "mcp-server");
}

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
  const prompts = readPrompts(top);
  const icons = readIcons(top);
  const controls = readWrapControls(top, proxies);
  const oauth = readOAuth(top);
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
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/.test(uri) || /[\x00-\x1f\x7f]/.test(uri)) {
      node.error(
        `proxy-resource ${show(uri)} is not an absolute URI with a scheme: write the URI the ` +
          `MCP server lists, e.g. "ui://dashboard/app"`,
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

/** `mcp-server http "<url>" { ... }` or `mcp-server stdio "<command>" "<arg>"... { ... }`. */
function readServer(
  node: NodeReader,
): { server: McpServerTarget; settings: McpServerSettings } | undefined {
  node.onlyProperties();
  if (
    !node.argCount(
      2,
      Infinity,
      `the transport and where: http "https://mcp.example.com/mcp", or stdio "<command>" ` +
        `"<arg>"...`,
    )
  ) {
    return undefined;
  }
  const transport = node.stringArg(0, "the transport (http or stdio)");
  const kids = node.onlyChildren(SETTINGS);
  const settings = readSettings(kids);
  if (transport === "http") {
    if (node.node.values.length !== 2) {
      node.error(
        `mcp-server http takes one URL; found ${node.node.values.length - 1} values: remove ` +
          `the extra ones (headers go in the block: header "Name" "value")`,
      );
      return undefined;
    }
    const raw = node.stringArg(1, "the MCP endpoint URL");
    if (raw === undefined) return undefined;
    const url = endpointUrl(raw);
    if (typeof url !== "string") {
      node.error(url.error);
      return undefined;
    }
    const headers = readHeaders(kids.filter((k) => k.name === "header"));
    if (!headers || !settings) return undefined;
    return { server: { transport: "http", url, headers }, settings };
  }
  if (transport === "stdio") {
    const words: string[] = [];
    for (let i = 1; i < node.node.values.length; i++) {
      const v = node.node.values[i];
      if (typeof v !== "string") {
        node.error(
          `argument ${i} of the command is ${show(v)}: write every word of the command as a ` +
            `quoted string`,
        );
        return undefined;
      }
      if (/\x00/.test(v)) {
        node.error(`argument ${i} of the command holds NUL: remove it`);
        return undefined;
      }
      words.push(v);
    }
    if (words[0] === "") {
      node.error(
        `the command is empty: write the program to run, e.g. stdio "npx" "-y" "<package>"`,
      );
      return undefined;
    }
    for (const header of kids.filter((k) => k.name === "header")) {
      header.error(
        `"header" applies to mcp-server http; a stdio server reads its credentials from the ` +
          `environment weir passes on: remove it`,
      );
    }
    if (!settings) return undefined;
    return {
      server: { transport: "stdio", command: words[0], args: words.slice(1) },
      settings,
    };
  }
  if (transport !== undefined) {
    node.error(
      `unknown transport "${transport}"${suggest(transport, ["http", "stdio"])}: write ` +
        `mcp-server http "<url>" or mcp-server stdio "<command>" "<arg>"...`,
    );
  }
  return undefined;
}

/** An MCP endpoint URL as weir will reach it, or why not. */
function endpointUrl(raw: string): string | { error: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: `${JSON.stringify(raw)} is not a URL: write the full http(s):// URL` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { error: `the MCP endpoint must be http:// or https://, not ${url.protocol}//` };
  }
  if (url.username || url.password) {
    return {
      error: `the MCP endpoint URL must not carry credentials: remove them and send one with ` +
        `header "Authorization" { prefix "Bearer "; value env "TOKEN" }`,
    };
  }
  if (url.hash || raw.includes("#")) {
    return { error: `the MCP endpoint URL must not carry a #fragment: remove it` };
  }
  return url.href;
}

function readHeaders(nodes: NodeReader[]): McpServerHeader[] | undefined {
  const out: McpServerHeader[] = [];
  let ok = true;
  for (const node of nodes) {
    node.onlyProperties();
    const block = node.node.children.length > 0;
    if (
      !node.argCount(
        block ? 1 : 2,
        block ? 1 : 2,
        block
          ? `the header name; the value comes from the block`
          : `a name and a value, e.g. header "X-Team" "ops", or a name and a block ` +
            `{ prefix "Bearer "; value env "TOKEN" }`,
      )
    ) {
      ok = false;
      continue;
    }
    const name = node.stringArg(0, "the header name");
    if (name === undefined) {
      ok = false;
      continue;
    }
    if (!HEADER_NAME.test(name)) {
      node.error(`"${name}" is not a valid HTTP header name (RFC 9110 token): fix the name`);
      ok = false;
      continue;
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      node.error(
        `header "${name}" is set by weir or by the MCP transport itself: remove it`,
      );
      ok = false;
      continue;
    }
    if (out.some((h) => h.name.toLowerCase() === name.toLowerCase())) {
      node.error(`header "${name}" is declared twice (header names ignore case): keep one`);
      ok = false;
      continue;
    }
    if (!block) {
      const text = node.node.values[1];
      if (typeof text !== "string") {
        node.error(`the value of header "${name}" must be a quoted string: quote it`);
        ok = false;
      } else if (/[\r\n\x00]/.test(text)) {
        node.error(`the value of header "${name}" holds a line break or NUL: remove it`);
        ok = false;
      } else out.push({ name, prefix: "", value: { text } });
      continue;
    }
    const kids = node.onlyChildren(["prefix", "value"]);
    let prefix = "";
    const prefixNode = onlyOnce(kids, "prefix");
    if (prefixNode) {
      prefixNode.onlyProperties();
      prefixNode.noChildren();
      if (prefixNode.argCount(1, 1, `the text before the value, e.g. prefix "Bearer "`)) {
        const p = prefixNode.node.values[0];
        if (typeof p !== "string" || /[\r\n\x00]/.test(p)) {
          prefixNode.error(`prefix must be a quoted string without line breaks: fix it`);
        } else prefix = p;
      }
    }
    const valueNode = onlyOnce(kids, "value");
    if (!valueNode) {
      node.error(
        `header "${name}" needs value, e.g. header "${name}" { value env "MCP_TOKEN" }`,
      );
      ok = false;
      continue;
    }
    const source = readValue(valueNode);
    if (!source) {
      ok = false;
      continue;
    }
    out.push({ name, prefix, value: { source } });
  }
  return ok ? out : undefined;
}

function readSettings(kids: NodeReader[]): McpServerSettings | undefined {
  const settings: McpServerSettings = {};
  let ok = true;
  const durations = [
    ["connect-timeout", "connectTimeoutMs"],
    ["request-timeout", "requestTimeoutMs"],
    ["max-staleness", "maxStalenessMs"],
  ] as const;
  for (const [name, slot] of durations) {
    const node = onlyOnce(kids, name);
    if (!node) continue;
    node.onlyProperties();
    node.noChildren();
    if (!node.argCount(1, 1, `a duration such as "5s", "500ms" or "1m" (or "0")`)) {
      ok = false;
      continue;
    }
    const v = node.node.values[0];
    const ms = typeof v === "string" ? parseDuration(v) : v === 0 ? 0 : null;
    if (ms === null) {
      node.error(`${name} ${show(v)} is not a duration: write it quoted, e.g. ${name} "5s"`);
      ok = false;
    } else if (ms < 0) {
      node.error(`${name} ${show(v)} is negative: write 0 or more`);
      ok = false;
    } else if (ms > MAX_TIMEOUT_MS) {
      node.error(`${name} ${show(v)} is over 555h (a longer timer would fire at once): shorten it`);
      ok = false;
    } else settings[slot] = ms;
  }
  const bytes = onlyOnce(kids, "max-response-bytes");
  if (bytes) {
    bytes.onlyProperties();
    bytes.noChildren();
    if (bytes.argCount(1, 1, `a whole number of bytes, e.g. max-response-bytes "8388608"`)) {
      const v = bytes.node.values[0];
      const n = typeof v === "string" && /^\d{1,15}$/.test(v)
        ? Number(v)
        : typeof v === "number"
        ? v
        : NaN;
      if (!Number.isInteger(n) || n < 1024) {
        bytes.error(
          `max-response-bytes ${show(v)} must be a whole number of at least 1024: e.g. ` +
            `max-response-bytes "8388608"`,
        );
        ok = false;
      } else settings.maxResponseBytes = n;
    } else ok = false;
  }
  return ok ? settings : undefined;
}

function readProxy(node: NodeReader): ProxyTool | undefined {
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
  for (const arg of kids.filter((k) => k.name === "argument")) {
    const rule = readArgument(arg);
    if (!rule) continue;
    const clash = proxy.arguments.find((a) => a.name === rule.name || a.upstream === rule.upstream);
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
    node.error(`minimum=${rule.minimum} is greater than maximum=${rule.maximum}: swap them`);
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
      } catch (error) {
        r.error(`${(error as GlobError).message}; a malformed glob would match nothing: fix it`);
      }
    }
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
    try {
      new RegExp(pattern, "u");
      rule.pattern = pattern;
      if (!pattern.startsWith("^") || !pattern.endsWith("$")) {
        node.warn(
          `pattern ${JSON.stringify(pattern)} is not anchored with ^...$, so it accepts any ` +
            `value that merely contains a match (JSON Schema patterns are unanchored): anchor it`,
        );
      }
    } catch (error) {
      node.error(
        `pattern ${JSON.stringify(pattern)} is not a valid regular expression ` +
          `(${(error as Error).message}): fix it`,
      );
    }
  }
  for (const [key, slot] of [["min-length", "minLength"], ["max-length", "maxLength"]] as const) {
    if (!(key in node.node.properties)) continue;
    const v = node.numberProp(key);
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 0) {
      node.error(`${key}=${v} must be a whole number of 0 or more`);
    } else rule[slot] = v;
  }
  if (
    rule.minLength !== undefined && rule.maxLength !== undefined && rule.minLength > rule.maxLength
  ) {
    node.error(
      `min-length=${rule.minLength} is greater than max-length=${rule.maxLength}: swap them`,
    );
  }
}

function readServerInfo(top: NodeReader[], proxies: ProxyTool[]): string | null {
  const node = onlyOnce(top, "server-info");
  let name = INFO_TOOL;
  if (node) {
    node.onlyProperties(["name"]);
    node.noChildren();
    const named = node.stringProp("name");
    if (node.node.values.length > 1) {
      node.error(`"server-info" takes at most one argument (disabled): remove the others`);
    }
    const arg = node.node.values[0];
    if (arg !== undefined) {
      if (arg !== "disabled") {
        node.error(`"server-info" argument must be the word disabled: write server-info disabled`);
      } else if (named !== undefined) node.error(`server-info disabled takes no name=: remove it`);
      return null;
    }
    name = named ?? INFO_TOOL;
    if (!TOOL_NAME.test(name)) {
      node.error(
        `server-info name=${show(name)}: a tool name is 1-128 characters of A-Z a-z 0-9 _ - .: ` +
          `rename it`,
      );
    }
  }
  const proxy = proxies.find((p) => p.name === name);
  if (proxy) {
    (node ?? top.find((n) => n.name === "wrap")!).error(
      `proxy "${name}" collides with the info tool: rename the proxy, or the info tool with ` +
        `server-info name="...", or write server-info disabled`,
    );
  }
  return name;
}

function readWithholds(top: NodeReader[], proxies: ProxyTool[], info: string | null): Withhold[] {
  const out: Withhold[] = [];
  const served = new Set(proxies.map((p) => p.name));
  if (info) served.add(info);
  for (const node of top.filter((n) => n.name === "withhold")) {
    if (Object.keys(node.node.properties).length > 0) {
      node.error(`withhold takes a block: withhold "<tool>" { reason "..." } (not properties)`);
    }
    if (!node.argCount(1, 1, "the withheld tool's name")) continue;
    const tool = node.stringArg(0, "the withheld tool name");
    const kids = node.onlyChildren(["reason", "alternative"]);
    const one = (child: string, what: string): string | undefined => {
      const n = onlyOnce(kids, child);
      if (!n) return undefined;
      n.onlyProperties();
      n.noChildren();
      return n.argCount(1, 1, what) ? n.stringArg(0, child) : undefined;
    };
    const reason = one("reason", "why the tool is withheld");
    const alternative = one("alternative", "a served tool to use instead");
    if (!kids.some((k) => k.name === "reason")) {
      node.error(`withhold needs reason "...": say why it is withheld`);
    }
    if (!tool) continue;
    if (!TOOL_NAME.test(tool)) {
      node.error(`withhold ${show(tool)}: a tool name is 1-128 characters of A-Z a-z 0-9 _ - .`);
      continue;
    }
    if (served.has(tool)) {
      node.error(`"${tool}" is withheld, but a proxy serves it: remove the proxy or the withhold`);
      continue;
    }
    if (out.some((w) => w.tool === tool)) {
      node.error(`"${tool}" is withheld twice: keep one withhold node`);
      continue;
    }
    if (alternative !== undefined && !served.has(alternative)) {
      onlyOnce(kids, "alternative")!.error(
        `alternative "${alternative}" is not a tool this guardfile serves: name a proxy`,
      );
      continue;
    }
    if (reason) out.push({ tool, reason, alternative, position: node.node.position });
  }
  return out.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
}

function readInstructions(top: NodeReader[]): string | undefined {
  const node = onlyOnce(top, "instructions");
  if (!node) return undefined;
  node.onlyProperties();
  if (node.node.values.length > 0) {
    node.error(`"instructions" takes no arguments: put text "..." lines in its block`);
  }
  const lines: string[] = [];
  for (const kid of node.onlyChildren(["text"])) {
    kid.onlyProperties();
    kid.noChildren();
    if (!kid.argCount(1, 1, "one line of text")) continue;
    const v = kid.node.values[0];
    if (typeof v !== "string") kid.error(`text must be a quoted string: quote it`);
    else lines.push(v);
  }
  const text = lines.join("\n").trim();
  if (text === "") {
    node.error(`"instructions" needs at least one non-empty text "..." line`);
    return undefined;
  }
  if (text.length > INSTRUCTIONS_BUDGET) {
    node.error(
      `instructions are ${text.length} characters, over the ${INSTRUCTIONS_BUDGET}-character ` +
        `budget: shorten them`,
    );
    return undefined;
  }
  return text;
}

/** The controls beside an MCP wrap, each naming a proxied tool by its served name. */
function readWrapControls(top: NodeReader[], proxies: ProxyTool[]): McpWrapControls {
  const byName = new Map(proxies.map((p) => [p.name, p]));
  const controls: McpWrapControls = {
    confirm: {},
    cache: {},
    rejectEmpty: [],
    rejectEmptyArguments: {},
    pins: {},
  };
  const proxyOf = (node: NodeReader, what: string): ProxyTool | undefined => {
    if (!node.argCount(1, 1, "the served tool name")) return undefined;
    const tool = node.stringArg(0, `${what} tool`);
    if (!tool) return undefined;
    const proxy = byName.get(tool);
    if (!proxy) {
      node.error(
        `"${tool}" is not a tool a proxy of this guardfile serves; ${what} applies to proxied ` +
          `tools by their served names${suggest(tool, [...byName.keys()])}`,
      );
    }
    return proxy;
  };

  for (const node of top.filter((n) => n.name === "confirm")) {
    node.onlyProperties(["message"]);
    node.noChildren();
    if (node.node.values.length === 0) {
      node.error(`confirm needs the tool it gates: confirm "<tool>" message="..."`);
      continue;
    }
    const proxy = proxyOf(node, "confirm");
    let message: string | undefined;
    if ("message" in node.node.properties) {
      const m = node.node.properties.message;
      if (typeof m !== "string" || m.trim() === "") {
        node.error(`message= must be a non-empty quoted string (or leave it out for the default)`);
        continue;
      }
      message = m.trim();
    }
    if (!proxy) continue;
    if (proxy.name in controls.confirm) {
      node.error(`confirm "${proxy.name}" is a duplicate: keep one`);
      continue;
    }
    controls.confirm[proxy.name] = message ??
      `Allow the assistant to run "${proxy.name}" with these arguments?`;
  }

  for (const node of top.filter((n) => n.name === "cache")) {
    node.onlyProperties(["ttl"]);
    node.noChildren();
    const proxy = proxyOf(node, "cache");
    const ttl = node.node.properties.ttl;
    if (ttl === undefined) {
      node.error(`cache needs a ttl, e.g. ttl="15m"`);
      continue;
    }
    const ms = typeof ttl === "string" ? parseDuration(ttl) : null;
    if (ms === null || ms <= 0) {
      node.error(
        `ttl=${show(ttl)} must be a positive duration such as "30s", "15m" or "1h" (quoted)`,
      );
      continue;
    }
    if (ms > CACHE_CEILING_MS) {
      node.error(`ttl=${show(ttl)} is over the 24h0m0s ceiling: shorten it`);
      continue;
    }
    if (!proxy) continue;
    if (proxy.name in controls.cache) {
      node.error(`cache "${proxy.name}" is a duplicate: keep one`);
      continue;
    }
    if (proxy.name in controls.confirm) {
      node.error(
        `"${proxy.name}" cannot be cached: it is confirm-gated, and a cached answer would skip ` +
          `the human gate; remove one of them`,
      );
      continue;
    }
    if (proxy.annotations?.destructiveHint === true) {
      node.error(
        `"${proxy.name}" cannot be cached: it is annotated destructive (a cached answer would ` +
          `hide that the call did not run again); remove the cache`,
      );
      continue;
    }
    controls.cache[proxy.name] = ms;
  }

  for (const node of top.filter((n) => n.name === "reject-empty")) {
    node.onlyProperties();
    node.noChildren();
    const proxy = proxyOf(node, "reject-empty");
    if (!proxy) continue;
    if (controls.rejectEmpty.includes(proxy.name)) {
      node.error(`reject-empty "${proxy.name}" is a duplicate: keep one`);
      continue;
    }
    controls.rejectEmpty.push(proxy.name);
  }

  for (const node of top.filter((n) => n.name === "reject-empty-argument")) {
    node.onlyProperties(["field"]);
    node.noChildren();
    const proxy = proxyOf(node, "reject-empty-argument");
    const field = node.stringProp("field");
    if (field === undefined) {
      if (!("field" in node.node.properties)) {
        node.error(`reject-empty-argument needs field="<argument>" (its served name)`);
      }
      continue;
    }
    if (!proxy) continue;
    const hidden = proxy.arguments.find((a) => a.hide && a.name === field);
    if (hidden) {
      node.error(`"${field}" is hidden on "${proxy.name}", so no caller sends it: remove this`);
      continue;
    }
    const renamed = proxy.arguments.find((a) => a.upstream === field && a.name !== field);
    if (renamed) {
      node.error(
        `"${field}" is served as "${renamed.name}" on "${proxy.name}": write field="${renamed.name}"`,
      );
      continue;
    }
    const list = controls.rejectEmptyArguments[proxy.name] ??= [];
    if (list.includes(field)) {
      node.error(`reject-empty-argument "${proxy.name}" field="${field}" is a duplicate`);
      continue;
    }
    list.push(field);
  }

  for (const node of top.filter((n) => n.name === "pin")) {
    if (Object.keys(node.node.properties).length > 0) {
      node.error(
        `pin takes a block of pinned arguments, not properties: pin "<tool>" { argument ... }`,
      );
    }
    const proxy = proxyOf(node, "pin");
    const kids = node.onlyChildren(["argument"]);
    if (node.node.children.length === 0) {
      node.error(`pin needs a block: pin "<tool>" { argument "<name>" literal "<value>" }`);
    }
    if (proxy && controls.pins[proxy.name]) {
      node.error(`pin "${proxy.name}" is a duplicate: put every pinned argument in one block`);
      continue;
    }
    const pins: ArgumentPin[] = [];
    for (const a of kids) {
      const pin = readPin(a, proxy);
      if (!pin) continue;
      if (pins.some((p) => p.name === pin.name)) {
        a.error(`argument "${pin.name}" is pinned twice: keep one`);
        continue;
      }
      pins.push(pin);
    }
    if (proxy && pins.length > 0) controls.pins[proxy.name] = pins;
  }

  const limits = top.filter((n) => n.name === "rate-limit");
  if (limits.length > 0) {
    // The rate-limit node is the same as spec mode's: one reader for both.
    const read = readControls(limits, []);
    if (read.rateLimit) controls.rateLimit = read.rateLimit;
  }
  return controls;
}

/** `argument "<name>" literal <value>` or `argument "<name>" env|file "<source>" [secret=#true]`. */
function readPin(node: NodeReader, proxy: ProxyTool | undefined): ArgumentPin | undefined {
  node.onlyProperties(["secret"]);
  node.noChildren();
  if (
    !node.argCount(
      3,
      3,
      `a name, a provider and a value: argument "limit" literal 10, or argument "team" env "TEAM"`,
    )
  ) {
    return undefined;
  }
  const name = node.stringArg(0, "the pinned argument's name");
  const provider = node.stringArg(1, "the provider (literal, env or file)");
  const raw: KdlValue = node.node.values[2];
  if (name === undefined || provider === undefined) return undefined;
  const secret = node.boolProp("secret") ?? false;
  let value: ArgumentPin["value"];
  if (provider === "literal") {
    if (raw === null || !["string", "number", "boolean"].includes(typeof raw)) {
      node.error(`a literal pin is a string, a number or #true/#false, not ${show(raw)}`);
      return undefined;
    }
    value = { literal: raw as string | number | boolean };
  } else if (provider === "env" || provider === "file") {
    if (typeof raw !== "string" || raw === "") {
      node.error(
        `${provider} needs a non-empty quoted ${provider === "env" ? "variable name" : "path"}`,
      );
      return undefined;
    }
    value = { source: { chain: [{ provider, address: raw }] } };
  } else {
    node.error(
      `unknown provider "${provider}"${suggest(provider, ["literal", "env", "file"])}: use ` +
        `literal, env or file`,
    );
    return undefined;
  }
  if (proxy) {
    const rule = proxy.arguments.find((a) => a.upstream === name || a.name === name);
    if (rule && !rule.hide) {
      node.error(
        `argument "${name}" of "${proxy.name}" is both pinned and served (argument "${rule.name}"): ` +
          `a pinned argument is not served; remove its argument node`,
      );
      return undefined;
    }
  }
  return { name, value, secret };
}

export type { InboundToken } from "./inbound_tokens.ts";
