/**
 * What a guardfile that wraps an MCP server serves, decided from a given set
 * of the server's tool definitions (a saved `tools/list` result, the
 * definitions a fingerprints file recorded, or what the server lists now)
 * without the server: the definitions are listed by a stand-in on 127.0.0.1
 * (src/verify/standin.ts) and the file is built against it as `weir serve
 * FILE` builds it (`buildWrapSurface`: the same decisions, overrides, rules
 * and scan). `weir diff --definitions F` and `--live` read the served
 * surface this way. Who may call and the rate limit do not change what is
 * decided, so the build leaves them out (it then reads no secret).
 *
 * @module
 */
import type { McpWrap } from "../guardfile/mcp_wrap_model.ts";
import type { ToolSpec } from "../mcp/types.ts";
import type { Logger } from "../mcp/server.ts";
import type { WrapDecision } from "../surface/wrap.ts";
import { startMcpStandIn } from "../verify/standin.ts";
import { buildWrapSurface, forListing } from "../wrap/surface.ts";
import { wrapDecisions } from "../wrap/describe.ts";

/**
 * The host's decision per served tool of `wrap`, with `definitions` as the
 * MCP server's list.
 * @throws {Error} when the file's rules contradict the definitions (as serve would refuse to start)
 */
export async function decisionsFrom(
  wrap: McpWrap,
  definitions: readonly ToolSpec[],
): Promise<WrapDecision[]> {
  const standIn = startMcpStandIn([...definitions]);
  const built: McpWrap = {
    ...forListing(wrap),
    server: { transport: "http", url: standIn.url, headers: [] },
  };
  const quiet: Logger = () => {};
  try {
    const surface = await buildWrapSurface(built, { log: quiet });
    try {
      return wrapDecisions(surface.host);
    } finally {
      await surface.connection.close();
    }
  } finally {
    await standIn.stop();
  }
}
