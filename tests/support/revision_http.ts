/**
 * Raw JSON-RPC requests to `${url}/mcp` under either protocol revision, as a
 * stateless client sends them: 2026-07-28 with `MCP-Method`, `MCP-Name` (the
 * tool's name, or a resource's URI) and `_meta`; 2025-11-25 with its
 * `MCP-Protocol-Version` alone. The answer is parsed, not checked against a
 * schema: for end-to-end tests of what weir refuses and says, over both
 * revisions.
 */
import { MODERN_META } from "./mcp.ts";

/** A protocol revision weir serves. */
export type RevisionName = "2025-11-25" | "2026-07-28";

/** A JSON-RPC answer: a result or an error. */
export interface RpcAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

let nextId = 1;

/**
 * POST one request; the parsed answer.
 * @param headers more request headers (e.g. `authorization`), sent last
 */
export async function rpcAs<A = RpcAnswer>(
  url: string,
  revision: RevisionName,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<A> {
  const modern = revision === "2026-07-28";
  const name = typeof params.name === "string" ? params.name : params.uri;
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": revision,
      ...(modern ? { "mcp-method": method } : {}),
      ...(modern && typeof name === "string" ? { "mcp-name": name } : {}),
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: { ...params, ...(modern ? { _meta: { ...MODERN_META } } : {}) },
    }),
    signal: AbortSignal.timeout(30_000),
  });
  return JSON.parse(await res.text());
}

/** One `tools/call` of `name` with `args`; the parsed answer. */
export function callToolAs<A = RpcAnswer>(
  url: string,
  revision: RevisionName,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<A> {
  return rpcAs<A>(url, revision, "tools/call", { name, arguments: args }, headers);
}

/**
 * One `tools/call` whose arguments are JSON text sent as written (a number's
 * digits, a duplicate key), under `revision`; the answer's text.
 */
export async function callToolText(
  url: string,
  revision: RevisionName,
  name: string,
  argumentsText: string,
): Promise<string> {
  const modern = revision === "2026-07-28";
  const meta = modern ? `,"_meta":${JSON.stringify(MODERN_META)}` : "";
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": revision,
      ...(modern ? { "mcp-method": "tools/call", "mcp-name": name } : {}),
    },
    body: `{"jsonrpc":"2.0","id":${nextId++},"method":"tools/call","params":{"name":` +
      `${JSON.stringify(name)},"arguments":${argumentsText}${meta}}}`,
    signal: AbortSignal.timeout(30_000),
  });
  return await res.text();
}
