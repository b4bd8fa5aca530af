/**
 * The baseline of the guarded-proxy benchmark: a raw `Deno.serve` MCP handler
 * that does what a guarded `get_thing` call must do at the very least and
 * nothing else: parse the JSON-RPC body, `fetch` the upstream record, parse
 * it, and wrap it as a `CallToolResult` (text and `structuredContent`). No
 * Origin, Host, header, schema, policy or size checks; no logging.
 * Usage: `deno run --allow-net bench/servers/raw_proxy.ts <port> <upstream-port>`.
 *
 * @module
 */
import { announce, portArg } from "../catalog.ts";

const upstream = `http://127.0.0.1:${Number(Deno.args[1])}`;
const HEADERS = { "content-type": "application/json" };

Deno.serve({ hostname: "127.0.0.1", port: portArg(), onListen: announce }, async (request) => {
  const message = await request.json();
  const id = String(message.params?.arguments?.id ?? "");
  const answer = await fetch(`${upstream}/things/${encodeURIComponent(id)}`);
  const record = await answer.json();
  const result = {
    content: [{ type: "text", text: JSON.stringify(record) }],
    structuredContent: record,
    resultType: "complete",
  };
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }), {
    headers: HEADERS,
  });
});
