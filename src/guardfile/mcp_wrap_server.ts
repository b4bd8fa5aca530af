/**
 * `mcp-server` of a guardfile that wraps an MCP server: the transport and
 * where (`http "<url>"`, `stdio "<command>" "<arg>"...`), the MCP server's
 * headers (a fixed value, or a secret from a value source read per request)
 * and the connection settings. Pure.
 *
 * @module
 */
import type { McpServerHeader, McpServerSettings, McpServerTarget } from "./mcp_wrap_model.ts";
import { type NodeReader, onlyOnce, show, suggest } from "./nodes.ts";
import { readValue } from "./value.ts";
import { MAX_TIMEOUT_MS, parseDuration } from "./duration.ts";
import { readTokenExchange } from "./token_exchange.ts";
import { headerKey } from "./header_inputs.ts";

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * Headers the MCP transport, HTTP or weir set themselves. The same list as
 * `--upstream-header` refuses (src/mcp_upstream/headers.ts; held equal by
 * tests/mcp_upstream/headers_test.ts).
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
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
const SETTINGS = [
  "header",
  "token-exchange",
  "connect-timeout",
  "request-timeout",
  "max-response-bytes",
  "max-staleness",
];

/** `mcp-server http "<url>" { ... }` or `mcp-server stdio "<command>" "<arg>"... { ... }`. */
export function readServer(
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
    const exchangeNode = onlyOnce(kids, "token-exchange");
    const exchange = exchangeNode && readTokenExchange(exchangeNode, { connection: true });
    if (exchangeNode) {
      exchangeNode.onlyProperties();
      exchangeNode.argCount(0, 0, "no arguments (the settings go in the block)");
      const clash = headers?.find((h) => h.name.toLowerCase() === "authorization");
      if (clash) {
        exchangeNode.error(
          `token-exchange sends each caller's exchanged token as Authorization; remove ` +
            `header "${clash.name}" (an MCP server that wants a token on weir's own requests ` +
            `too gets weir's own from the identity provider: add client-credentials to the ` +
            `token-exchange block)`,
        );
        return undefined;
      }
    }
    if (!headers || !settings || (exchangeNode && !exchange)) return undefined;
    return {
      server: { transport: "http", url, headers, ...(exchange ? { exchange } : {}) },
      settings,
    };
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
    for (const header of kids.filter((k) => k.name === "header" || k.name === "token-exchange")) {
      header.error(
        `"${header.name}" applies to mcp-server http; a stdio server reads its credentials from the ` +
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
    return {
      error: `the MCP endpoint must be http:// or https://, not ${url.protocol}//: write an ` +
        `http(s) URL`,
    };
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
    if (RESERVED_HEADERS.has(headerKey(name))) {
      node.error(
        `header "${name}" is set by weir or by the MCP transport itself: remove it`,
      );
      ok = false;
      continue;
    }
    if (out.some((h) => headerKey(h.name) === headerKey(name))) {
      node.error(
        `header "${name}" is declared twice (names ignore case, and servers read "_" as "-"): ` +
          `keep one`,
      );
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
