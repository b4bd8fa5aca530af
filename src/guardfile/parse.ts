/**
 * Guardfile text -> {@link Guardfile} model, or every error found. Pure: no
 * file, network or environment access, so `lint` needs no secrets and can run
 * in CI, and `serve` loads through exactly the same function.
 *
 * Grammar: `docs/guardfile.md`. Where the reference silently
 * accepts something that can surprise an operator, weir refuses it (section 8):
 * one `wrap`, one `auth`, one `base-url` (required), no unknown top-level node,
 * no properties on `can`/`path`/`restrict`, no `restrict` on a parameter no
 * path uses, no `set` beside body inputs, no path parameter sharing a name
 * with a query or body input, no `proxy` grants.
 *
 * @module
 */
import { readSurface, SURFACE_NODE } from "./surface.ts";
import { type Diagnostic, Diagnostics, type Located } from "./diagnostics.ts";
import type { KdlNode, KdlSyntaxError } from "./kdl.ts";
import type { Grant, Guardfile, Withhold } from "./model.ts";
import { NodeReader, onlyOnce, suggest } from "./nodes.ts";
import { readControls, readIcons, readPrompts, readResources } from "./siblings.ts";
import { readOAuth } from "./oauth.ts";
import { checkExchangeProfile } from "./token_exchange.ts";
import { readWrap } from "./wrap.ts";
import type { McpWrap } from "./mcp_wrap.ts";
import { readInboundTokens } from "./inbound_tokens.ts";

export { normalizeBaseUrl } from "./wrap.ts";
import { nearWithheld, sharedOperations, spellingClashes, type SurfaceName } from "./spellings.ts";
import { grantControls, grantOperation } from "./operations.ts";

/** The default name of the read-only info tool. */
export const INFO_TOOL = "weir_info";

const INSTRUCTIONS_BUDGET = 500;

/** Sibling nodes of `wrap` that weir serves. */
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
  "extract",
  "oauth",
  SURFACE_NODE,
  "inbound-token",
];
/** Reference siblings weir does not serve yet: refused by name, never ignored. */
const NOT_YET: Readonly<Record<string, string>> = {};

/** The outcome of loading: the model when there is no error, and every diagnostic. */
export interface LoadResult {
  /** The checked model; absent when any diagnostic is an error. */
  guardfile?: Guardfile;
  /**
   * The checked model of a document that wraps an MCP server (`mcp-server`
   * in its `wrap`, src/guardfile/mcp_wrap.ts), instead of `guardfile`.
   */
  mcpWrap?: McpWrap;
  /** Every error and warning found, in file order. */
  diagnostics: Diagnostic[];
  /**
   * When there are errors: the model as far as it could be read, so `weir lint`
   * can add its warnings beside the errors (all findings at once). Never served.
   */
  partial?: Guardfile;
}

/**
 * Read a guardfile.
 *
 * @param text the file's contents
 * @param file the path, used in messages only
 * @returns the model (absent when any error was found) and all diagnostics,
 *   errors and warnings, in file order
 */
/** The MCP tool-name rule (both revisions' schema): what the core will list. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Names a JavaScript object already has (`__proto__`, `constructor`,
 * `toString`, ...). A property or input with such a name can vanish or turn
 * into a prototype change on its way to the wire, so the file and the wire
 * would disagree: refused wherever a guardfile names one.
 */
const OBJECT_INTERNALS: ReadonlySet<string> = new Set([
  "__proto__",
  "prototype",
  ...Object.getOwnPropertyNames(Object.prototype),
]);

/** Nodes whose string arguments name inputs, wire keys or parameters. */
const NAMING_NODES = new Set([
  "field",
  "query",
  "param",
  "argument",
  "map",
  "restrict",
  "header",
  "body",
]);

/**
 * Refuse, on every node of the tree, names that collide with JavaScript
 * object internals (property keys, the names `field`/`query`/`param`/...
 * declare, `to=` keys, `{params}` in a path).
 */
function checkNames(node: NodeReader): void {
  // A property given twice is refused by the KDL reader (src/guardfile/kdl.ts).
  for (const key of Object.keys(node.node.properties)) {
    if (OBJECT_INTERNALS.has(key)) node.error(internalName(`property ${key}=`));
  }
  const named: string[] = [];
  if (NAMING_NODES.has(node.name)) {
    for (const v of node.node.values) if (typeof v === "string") named.push(...v.split("."));
  }
  const to = node.node.properties.to;
  if (typeof to === "string") named.push(to);
  if (node.name === "path") {
    for (const v of node.node.values) {
      if (typeof v === "string") { for (const m of v.matchAll(/\{([^}]*)\}/g)) named.push(m[1]); }
    }
  }
  for (const name of named) {
    if (OBJECT_INTERNALS.has(name)) node.error(internalName(JSON.stringify(name)));
  }
  for (const child of node.children()) checkNames(child);
}

/** A name as JSON, with every character outside printable ASCII as \\uXXXX (a soft hyphen shows). */
function escaped(name: string): string {
  return JSON.stringify(name).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function internalName(what: string): string {
  return `${what} is a name every JavaScript object already has (like __proto__ or ` +
    `constructor); weir refuses it so the file and the wire cannot disagree: rename it`;
}

/** KDL syntax errors as diagnostics (`parse KDL: ...`, at the error's position). */
export function syntaxDiagnostics(errors: KdlSyntaxError[]): Diagnostic[] {
  const diags = new Diagnostics();
  for (const e of errors) {
    diags.error({ path: "", position: e.position }, `parse KDL: ${e.message}`);
  }
  return diags.items;
}

/**
 * Read a spec-mode guardfile from its parsed KDL nodes (src/guardfile/load.ts
 * parses once and hands them here). Pure.
 * @returns the model when there is no error, and every diagnostic in file order
 */
export function readGuardfileNodes(nodes: KdlNode[], file: string): LoadResult {
  const diags = new Diagnostics();
  const guardfile = readDocument(nodes, file, diags);
  const diagnostics = sortByPosition(diags.items);
  if (!diags.failed) return { guardfile, diagnostics };
  return guardfile ? { diagnostics, partial: guardfile } : { diagnostics };
}

/** File order: by line and column; findings without a position keep their order, first. */
function sortByPosition(items: Diagnostic[]): Diagnostic[] {
  const key = (d: Diagnostic) => d.position ? d.position.line * 1e6 + d.position.column : 0;
  return items.map((d, i) => ({ d, i }))
    .sort((a, b) => key(a.d) - key(b.d) || a.i - b.i)
    .map(({ d }) => d);
}

function readDocument(nodes: KdlNode[], file: string, diags: Diagnostics): Guardfile | undefined {
  const top = nodes.map((n) => new NodeReader(n, diags));
  for (const node of top) checkNames(node);
  for (const node of top) {
    if (SIBLINGS.includes(node.name)) continue;
    if (Object.hasOwn(NOT_YET, node.name)) {
      node.error(
        `"${node.name}" (${NOT_YET[node.name]}) is not supported by weir yet; ` +
          `remove it, or serve this guardfile with the reference implementation`,
      );
    } else {
      node.error(
        `unknown top-level node "${node.name}"${
          suggest(node.name, [...SIBLINGS, ...Object.keys(NOT_YET)])
        } ` +
          `(weir refuses unknown nodes so a typo cannot silently drop a control); remove it ` +
          `or fix its name`,
      );
    }
  }
  const wraps = top.filter((n) => n.name === "wrap");
  if (wraps.length === 0) {
    // Where the wrap block would go: before the first node (or at the start of an empty file).
    diags.error(
      { path: "", position: top[0]?.node.position ?? { line: 1, column: 1 } },
      `no "wrap" block: add wrap ward mcp <name> { base-url "..."; auth ...; can <verb> <resource> { path "..." } }`,
    );
    // The nodes that do not need the grants are still read, so their errors show too.
    readServerInfo(top, [], diags);
    readInstructions(top);
    readResources(top);
    readPrompts(top);
    readIcons(top);
    readOAuth(top);
    return undefined;
  }
  for (const extra of wraps.slice(1)) {
    extra.error(
      `a second "wrap" block; a guardfile wraps exactly one upstream: move its grants into the first wrap or into another file`,
    );
  }
  const wrap = wraps[0];
  const body = readWrap(wrap);
  const infoTool = readServerInfo(top, body?.grants ?? [], diags);
  const withholds = readWithholds(top, body?.grants ?? [], infoTool);
  const instructions = readInstructions(top);
  const resources = readResources(top);
  const prompts = readPrompts(top);
  const icons = readIcons(top);
  const controls = readControls(top, body?.grants ?? []);
  checkSpellings(body?.grants ?? [], withholds, infoTool, top, diags, (grant) => ({
    operation: grantOperation(grant),
    controls: grantControls(grant, controls, body?.restricts ?? []),
  }));
  const oauth = readOAuth(top);
  if (body?.auth.scheme === "token-exchange") {
    checkExchangeProfile(body.auth.exchange, oauth, diags, "wrap > auth token-exchange");
  }
  const surface = readSurface(top);
  const inboundTokens = readInboundTokens(top, [
    ...(body?.grants ?? []).map((g) => g.tool),
    ...withholds.map((w) => w.tool),
    ...(infoTool ? [infoTool] : []),
  ]);
  if (!body) return undefined;
  return {
    file,
    ...body,
    withholds,
    instructions,
    infoTool,
    resources,
    prompts,
    icons,
    controls,
    surface,
    ...(oauth ? { oauth } : {}),
    ...(inboundTokens.length > 0 ? { inboundTokens } : {}),
  };
}

function readServerInfo(top: NodeReader[], grants: Grant[], diags: Diagnostics): string | null {
  const node = onlyOnce(top, "server-info");
  let name = INFO_TOOL;
  if (node) {
    node.onlyProperties(["name"]);
    node.noChildren();
    const named = node.stringProp("name");
    if (node.node.values.length > 1) {
      node.error(`"server-info" takes at most one argument (disabled); remove the others`);
    }
    const arg = node.node.values[0];
    if (arg !== undefined) {
      if (arg !== "disabled") {
        node.error(
          `"server-info" argument must be the word disabled; write server-info disabled, or server-info name="..."`,
        );
      } else if (named !== undefined) node.error(`server-info disabled takes no name=`);
      return null;
    }
    name = named ?? INFO_TOOL;
    if (!TOOL_NAME.test(name)) {
      node.error(
        `server-info name=${escaped(name)}: a tool name is 1-128 characters of ` +
          `A-Z a-z 0-9 _ - . (MCP tool names); rename it`,
      );
    }
  }
  const grant = grants.find((g) => g.tool === name);
  if (grant) {
    const at: Located = node?.at ??
      { path: `wrap > can ${grant.verb} ${grant.resource}`, position: grant.position };
    diags.error(
      at,
      `grant tool "${name}" collides with the info tool; rename the grant, or rename the ` +
        `info tool with server-info name="..." (or server-info disabled)`,
    );
  }
  return name;
}

function readWithholds(top: NodeReader[], grants: Grant[], infoTool: string | null): Withhold[] {
  const out: Withhold[] = [];
  const served = new Set(grants.map((g) => g.tool));
  if (infoTool) served.add(infoTool);
  for (const node of top.filter((n) => n.name === "withhold")) {
    if (Object.keys(node.node.properties).length > 0) {
      node.error(
        `withhold takes a block, not properties: write withhold "<tool>" { reason "..." }`,
      );
    }
    if (!node.argCount(1, 1, "the withheld tool's name")) continue;
    const tool = node.stringArg(0, "the withheld tool name");
    const kids = node.onlyChildren(["reason", "alternative"]);
    const reasonNode = onlyOnce(kids, "reason");
    const altNode = onlyOnce(kids, "alternative");
    const text = (n: NodeReader | undefined, what: string) => {
      if (!n) return undefined;
      n.onlyProperties();
      n.noChildren();
      return n.argCount(1, 1, what) ? n.stringArg(0, n.name) : undefined;
    };
    const reason = text(reasonNode, "why the tool is withheld");
    const alternative = text(altNode, "a served tool to use instead");
    if (!reasonNode) {
      node.error(`withhold needs reason "...": add one that says why it is withheld`);
    }
    if (!tool) continue;
    if (!TOOL_NAME.test(tool)) {
      node.error(
        `withhold names the tool ${escaped(tool)}: a tool name is 1-128 characters of ` +
          `A-Z a-z 0-9 _ - . (MCP tool names); name the tool as the grant would mint it`,
      );
      continue;
    }
    if (served.has(tool)) {
      node.error(
        `"${tool}" is withheld, but this guardfile mints it; remove the grant or the withhold`,
      );
      continue;
    }
    if (out.some((w) => w.tool === tool)) {
      node.error(`"${tool}" is withheld twice; keep one withhold node`);
      continue;
    }
    if (alternative !== undefined && !served.has(alternative)) {
      altNode!.error(
        `alternative "${alternative}" is not a tool this guardfile serves; name a served tool${
          suggest(alternative, [...served])
        }`,
      );
      continue;
    }
    if (reason) out.push({ tool, reason, alternative, position: node.node.position });
  }
  return out.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
}

/**
 * No two tools on the surface (grants, the info tool, withheld stubs) whose
 * names differ only by case, separators or a verb synonym
 * (src/guardfile/spellings.ts): above all, no withheld operation served
 * under another spelling. Each clash is an error at the later declaration.
 */
function checkSpellings(
  grants: readonly Grant[],
  withholds: readonly Withhold[],
  infoTool: string | null,
  top: NodeReader[],
  diags: Diagnostics,
  reaches: (grant: Grant) => Pick<SurfaceName, "operation" | "controls">,
): void {
  const infoNode = top.find((n) => n.name === "server-info");
  const names: (SurfaceName & { at: Located })[] = [
    ...grants.map((g) => ({
      tool: g.tool,
      kind: "served" as const,
      what: `the grant "can ${g.verb} ${g.resource}"`,
      line: g.position?.line,
      at: { path: `wrap > can ${g.verb} ${g.resource}`, position: g.position },
      ...reaches(g),
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
    names.push({
      tool: infoTool,
      kind: "served",
      what: "the info tool (server-info)",
      line: infoNode?.node.position?.line,
      at: infoNode?.at ?? { path: "" },
    });
  }
  for (const clash of spellingClashes(names)) {
    const at = (clash.later as SurfaceName & { at: Located }).at;
    if (clash.severity === "error") diags.error(at, clash.message);
    else diags.warn(at, clash.message);
  }
  for (const near of nearWithheld(names)) {
    diags.warn((near.later as SurfaceName & { at: Located }).at, near.message);
  }
  for (const shared of sharedOperations(names)) {
    diags.warn((shared.later as SurfaceName & { at: Located }).at, shared.message);
  }
}

function readInstructions(top: NodeReader[]): string | undefined {
  const node = onlyOnce(top, "instructions");
  if (!node) return undefined;
  if (node.node.values.length > 0) {
    node.error(`"instructions" takes no arguments; put text "..." lines in its block`);
  }
  if (Object.keys(node.node.properties).length > 0) {
    node.error(`"instructions" takes no properties; remove them`);
  }
  const lines: string[] = [];
  for (const kid of node.onlyChildren(["text"])) {
    kid.onlyProperties();
    kid.noChildren();
    if (kid.argCount(1, 1, "one line of text")) {
      const v = kid.node.values[0];
      if (typeof v !== "string") {
        kid.error(`text must be a quoted string: write it in double quotes`);
      } else lines.push(v);
    }
  }
  const text = lines.join("\n").trim();
  if (text === "") {
    node.error(
      `"instructions" needs at least one non-empty text "..." line; add one or remove instructions`,
    );
    return undefined;
  }
  if (text.length > INSTRUCTIONS_BUDGET) {
    node.error(
      `instructions are ${text.length} characters, over the ${INSTRUCTIONS_BUDGET}-character budget; shorten them`,
    );
    return undefined;
  }
  return text;
}
