/**
 * How a parsed guardfile says its mode, read without its mode's reader (the
 * loader, ./document.ts, decides the mode before it loads the reader,
 * ./readers.ts): an AWS policy's `wrap` line, an MCP server wrap's
 * `mcp-server` node.
 *
 * @module
 */
import type { KdlNode } from "./kdl.ts";

/** The AWS mode of a parsed policy: its first top-level `wrap` reads `wrap ward mcp aws ssm|s3`. */
export function awsModeOf(nodes: readonly KdlNode[]): "ssm" | "s3" | undefined {
  const wrap = nodes.find((n) => n.name === "wrap");
  if (!wrap || wrap.values.length !== 4) return undefined;
  if (!["ward", "mcp", "aws"].every((w, i) => wrap.values[i] === w)) return undefined;
  const last = wrap.values[3];
  return last === "ssm" || last === "s3" ? last : undefined;
}

/**
 * Whether a document wraps an MCP server: its first `wrap` node has an
 * `mcp-server` child. The loader reads such a document with `readMcpWrap`
 * (./mcp_wrap.ts), every other one as spec mode's HTTP API wrap.
 */
export function isMcpWrap(nodes: readonly KdlNode[]): boolean {
  const wrap = nodes.find((n) => n.name === "wrap");
  return wrap !== undefined && wrap.children.some((k) => k.name === "mcp-server");
}
