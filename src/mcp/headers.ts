/**
 * The 2026-07-28 Streamable HTTP header rules: `MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` must agree with the JSON-RPC body
 * they describe, so that a proxy routing on headers and the server acting on
 * the body cannot see two different requests. Any disagreement, absence or
 * malformed value is `-32020` HeaderMismatch (HTTP 400). The body is the truth.
 *
 * @module
 */
import type { PreparedTool } from "./catalog.ts";
import { ErrorCode, type JsonRpcRequest, McpError } from "./jsonrpc.ts";
import type { MethodRule } from "./revisions.ts";

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
const PLAIN = /^[\x20-\x7e\t]*$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decode a header value that may use the base64 sentinel `=?base64?...?=`.
 * @returns the decoded text, or `null` when the value is malformed
 */
export function decodeHeaderValue(value: string): string | null {
  const m = SENTINEL.exec(value);
  if (m) {
    try {
      return utf8.decode(Uint8Array.from(atob(m[1]), (c) => c.charCodeAt(0)));
    } catch {
      return null;
    }
  }
  return PLAIN.test(value) ? value : null;
}

/**
 * Check a modern request's headers against its body.
 *
 * @param headers the HTTP request headers
 * @param request the decoded JSON-RPC request
 * @param version the body's `_meta` protocol version
 * @param rule the method's rule (undefined for an unknown method)
 * @param tools the catalog's tools, for `Mcp-Param-*` on `tools/call`
 * @throws {McpError} `-32020` naming the header
 */
export function checkHeaders(
  headers: Headers,
  request: JsonRpcRequest,
  version: string,
  rule: MethodRule | undefined,
  tools: ReadonlyMap<string, PreparedTool> | null,
): void {
  expectEqual("MCP-Protocol-Version", headers.get("mcp-protocol-version"), version, false);
  expectEqual("Mcp-Method", headers.get("mcp-method"), request.method, false);
  const params = request.params ?? {};
  const nameParam = rule?.nameParam;
  if (nameParam && typeof params[nameParam] === "string") {
    expectEqual("Mcp-Name", headers.get("mcp-name"), params[nameParam] as string, true);
  }
  const tool = request.method === "tools/call" && typeof params.name === "string"
    ? tools?.get(params.name)
    : undefined;
  if (!tool || tool.headerParams.size === 0) return;
  for (const [key, { header: declared, path, type }] of tool.headerParams) {
    const header = `Mcp-Param-${declared}`;
    const argument = path.join(".");
    const raw = headers.get(`mcp-param-${key}`);
    const value = valueAt(params.arguments, path);
    if (value === undefined || value === null) {
      if (raw !== null) mismatch(`${header} is sent but argument "${argument}" is absent`);
      continue;
    }
    if (raw === null) mismatch(`${header} is missing for argument "${argument}"`);
    const decoded = decodeHeaderValue(raw!);
    if (decoded === null) mismatch(`${header} is not a valid header value`);
    const same = type === "integer"
      ? /^-?\d+(?:\.0+)?$/.test(decoded!) && Number(decoded) === value
      : decoded === String(value);
    if (!same) mismatch(`${header} does not match argument "${argument}"`);
  }
}

/** The argument at `path` (own properties of plain objects only), or `undefined`. */
function valueAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const name of path) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

function expectEqual(name: string, raw: string | null, body: string, sentinel: boolean): void {
  if (raw === null) mismatch(`${name} header is missing`);
  const value = sentinel ? decodeHeaderValue(raw!) : raw;
  if (value === null) mismatch(`${name} header is not a valid header value`);
  if (value !== body) mismatch(`${name} header does not match the request body`);
}

function mismatch(message: string): never {
  throw new McpError(ErrorCode.HeaderMismatch, `Header mismatch: ${message}`);
}
