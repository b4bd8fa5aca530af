/**
 * The nodes beside a wrap of an MCP server, by served tool name: `server-info`,
 * `withhold`, `instructions`, and the controls (`confirm`, `cache`,
 * `reject-empty`, `reject-empty-argument`, `pin`, `rate-limit`). Pure.
 *
 * @module
 */
import type { KdlValue } from "./kdl.ts";
import { forTool, type Withhold } from "./model.ts";
import type { ArgumentPin, McpWrapControls, ProxyTool } from "./mcp_wrap_model.ts";
import { type NodeReader, onlyOnce, show, suggest } from "./nodes.ts";
import { readControls } from "./siblings.ts";
import { parseDuration } from "./duration.ts";
import { protoKey, TOOL_NAME } from "./mcp_wrap_proxy.ts";
import { foldName } from "./name_fold.ts";

/** The default name of the read-only info tool. */
const INFO_TOOL = "weir_info";
const INSTRUCTIONS_BUDGET = 500;
const CACHE_CEILING_MS = 24 * 3_600_000;

export function readServerInfo(top: NodeReader[], proxies: ProxyTool[]): string | null {
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

export function readWithholds(
  top: NodeReader[],
  proxies: ProxyTool[],
  info: string | null,
): Withhold[] {
  const out: Withhold[] = [];
  const served = new Set(proxies.map((p) => p.name));
  if (info) served.add(info);
  for (const node of top.filter((n) => n.name === "withhold")) {
    if (Object.keys(node.node.properties).length > 0) {
      node.error(
        `withhold takes no properties: remove them and use a block, withhold "<tool>" { reason "..." }`,
      );
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
      node.error(
        `withhold ${show(tool)}: a tool name is 1-128 characters of A-Z a-z 0-9 _ - .: rename it`,
      );
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

export function readInstructions(top: NodeReader[]): string | undefined {
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
    node.error(`"instructions" is empty: add at least one non-empty text "..." line`);
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
export function readWrapControls(top: NodeReader[], proxies: ProxyTool[]): McpWrapControls {
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
        `"${tool}" is not a tool a proxy of this guardfile serves${
          suggest(tool, [...byName.keys()])
        }: name a proxied tool by its served name (${[...byName.keys()].join(", ") || "none"})`,
      );
    }
    return proxy;
  };

  const confirmNodes = new Map<string, NodeReader>();
  for (const node of top.filter((n) => n.name === "confirm")) {
    node.onlyProperties(["message"]);
    node.noChildren();
    if (node.node.values.length === 0) {
      node.error(
        `confirm names no tool: name the tool it gates, e.g. confirm "<tool>" message="..."`,
      );
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
    if (Object.hasOwn(controls.confirm, proxy.name)) {
      node.error(`confirm "${proxy.name}" is a duplicate: keep one`);
      continue;
    }
    controls.confirm[proxy.name] = message ??
      `Allow the assistant to run "${proxy.name}" with these arguments?`;
    confirmNodes.set(proxy.name, node);
  }
  // A gate on the MCP server's tool holds under every name it is served by.
  for (const [name, node] of confirmNodes) {
    const gated = byName.get(name)!;
    const open = proxies.find((p) =>
      p.upstream === gated.upstream && !(Object.hasOwn(controls.confirm, p.name))
    );
    if (open) {
      node.error(
        `confirm "${name}" gates the MCP server's "${gated.upstream}", but proxy "${open.name}" ` +
          `serves the same tool without asking anyone: add confirm "${open.name}", or remove ` +
          `that proxy`,
      );
    }
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
    if (Object.hasOwn(controls.cache, proxy.name)) {
      node.error(`cache "${proxy.name}" is a duplicate: keep one`);
      continue;
    }
    if (Object.hasOwn(controls.confirm, proxy.name)) {
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
        node.error(
          `reject-empty-argument names no argument: add field="<argument>" (its served name)`,
        );
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
    const list = forTool(controls.rejectEmptyArguments, proxy.name) ??
      (controls.rejectEmptyArguments[proxy.name] = []);
    if (list.includes(field)) {
      node.error(`reject-empty-argument "${proxy.name}" field="${field}" is a duplicate: keep one`);
      continue;
    }
    list.push(field);
  }

  for (const node of top.filter((n) => n.name === "pin")) {
    if (Object.keys(node.node.properties).length > 0) {
      node.error(
        `pin takes no properties: remove them and put the pinned arguments in a block, ` +
          `pin "<tool>" { argument ... }`,
      );
    }
    const proxy = proxyOf(node, "pin");
    const kids = node.onlyChildren(["argument"]);
    if (node.node.children.length === 0) {
      node.error(
        `pin has no block: add one, e.g. pin "<tool>" { argument "<name>" literal "<value>" }`,
      );
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
  if (name === "__proto__") {
    node.error(protoKey("a pinned argument"));
    return undefined;
  }
  const secret = node.boolProp("secret") ?? false;
  let value: ArgumentPin["value"];
  if (provider === "literal") {
    if (raw === null || !["string", "number", "boolean"].includes(typeof raw)) {
      node.error(`a literal pin is ${show(raw)}: write a string, a number or #true/#false`);
      return undefined;
    }
    value = { literal: raw as string | number | boolean };
  } else if (provider === "env" || provider === "file") {
    if (typeof raw !== "string" || raw === "") {
      node.error(
        `${provider} names nothing: write a non-empty quoted ${
          provider === "env" ? "variable name" : "path"
        }`,
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
    // A served argument an MCP server that matches names loosely would read as the pinned one.
    const twin = rule
      ? undefined
      : proxy.arguments.find((a) => !a.hide && foldName(a.upstream) === foldName(name));
    if (twin) {
      node.error(
        `the pinned argument "${name}" of "${proxy.name}" and the served argument ` +
          `"${twin.name}" (the MCP server's "${twin.upstream}") differ only by letter case, ` +
          `width or separators: a server that matches names loosely could take the caller's ` +
          `value for the pinned one; remove that argument node`,
      );
      return undefined;
    }
  }
  return { name, value, secret };
}
