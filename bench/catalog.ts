/**
 * The catalog every benchmark server serves: 50 tools, one of them `echo`
 * (`{message: string, minLength 1}`, required, nothing else admitted), and the
 * exact request bytes and headers the load tool sends.
 *
 * @module
 */

/** A JSON value (structurally the same as weir's `JsonValue`, declared here so no server imports another's types). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One tool as listed by `tools/list`. */
export interface BenchTool {
  name: string;
  title: string;
  description: string;
  inputSchema: {
    type: "object";
    properties: { [name: string]: { [keyword: string]: Json } };
    required: string[];
    additionalProperties: false;
  };
}

/** The schema `echo` advertises and enforces. */
export const ECHO_SCHEMA: BenchTool["inputSchema"] = {
  type: "object",
  properties: { message: { type: "string", minLength: 1, description: "Text to send back" } },
  required: ["message"],
  additionalProperties: false,
};

function filler(i: number): BenchTool {
  const n = String(i).padStart(2, "0");
  return {
    name: `tool_${n}`,
    title: `Tool ${n}`,
    description: `Looks up record ${n} of the inventory and returns its current state.`,
    inputSchema: {
      type: "object",
      properties: {
        id: { type: "string", minLength: 1, description: "Record id" },
        limit: { type: "integer", minimum: 1, maximum: 100, description: "Rows to return" },
        verbose: { type: "boolean", description: "Include every field" },
        tags: { type: "array", items: { type: "string" }, description: "Filter by tags" },
      },
      required: ["id"],
      additionalProperties: false,
    },
  };
}

/** 50 tools, sorted by name (as weir lists them). */
export const TOOLS: BenchTool[] = [
  {
    name: "echo",
    title: "Echo",
    description: "Returns the message it is given.",
    inputSchema: ECHO_SCHEMA,
  },
  ...Array.from({ length: 49 }, (_, i) => filler(i + 1)),
].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** serverInfo of every benchmark server. */
export const SERVER_INFO = { name: "bench", version: "1.0.0" };

/** What `echo` answers. */
export function echoResult(message: string): { content: { type: "text"; text: string }[] } {
  return { content: [{ type: "text", text: message }] };
}

/** The 2026-07-28 per-request `_meta` every request carries. */
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** One workload: the exact body and headers of every request. */
export interface Workload {
  name: "tools/list" | "tools/call";
  body: string;
  headers: Record<string, string>;
}

const COMMON_HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2026-07-28",
};

/** A 2026-07-28 `tools/call` of `tool` with `args` (JSON-RPC id 2), as a workload. */
export function callWorkload(tool: string, args: { [key: string]: Json }): Workload {
  return {
    name: "tools/call",
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: tool, arguments: args, _meta: META },
    }),
    headers: { ...COMMON_HEADERS, "Mcp-Method": "tools/call", "Mcp-Name": tool },
  };
}

/** The two workloads, in the order they run: `tools/list`, then a `tools/call` of `echo`. */
export const WORKLOADS: Workload[] = [
  {
    name: "tools/list",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } }),
    headers: { ...COMMON_HEADERS, "Mcp-Method": "tools/list" },
  },
  callWorkload("echo", { message: "hello, bench" }),
];

/** Print the bound port on stdout as the benchmark runner expects: `listening <port>`. */
export function announce(addr: { port: number }): void {
  console.log(`listening ${addr.port}`);
}

/** The port a server script was told to bind (its first argument). */
export function portArg(): number {
  const port = Number(Deno.args[0]);
  if (!Number.isInteger(port) || port <= 0) throw new Error("usage: <server>.ts <port>");
  return port;
}
