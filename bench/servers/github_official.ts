/**
 * The official GitHub MCP server's tool definitions, offline: the reference
 * server the MCP project published on npm as `@modelcontextprotocol/server-github`
 * (2025.4.8, the last release before it was archived and GitHub's own Go
 * server took over; the Go server ships no npm package), started on stdio
 * exactly as its `mcp-server-github` bin does. `bench/context.ts` lists its
 * tools and counts them beside weir's. It needs no token to list tools.
 *
 * @module
 */
import "@modelcontextprotocol/server-github/dist/index.js";
