/**
 * The baseline of the guarded-proxy benchmark: a raw `Deno.serve` MCP handler
 * that does what a guarded `get_thing` call must do at the very least and
 * nothing else: parse the JSON-RPC body, `fetch` the upstream record, parse
 * it, and wrap it as a `CallToolResult` (text and `structuredContent`). No
 * Origin, Host, header, schema, policy or size checks; no logging.
 *
 * With `--same-bytes` it answers byte for byte what `weir serve` answers
 * (the record in weir's coverage envelope, and the `serverInfo` every
 * 2026-07-28 result SHOULD carry): an informative second baseline that
 * separates the cost of weir's checks from the cost of a larger answer
 * (`Deno.serve` sends head and body in one write only when both fit in 512
 * bytes). The goals stay measured against the plain form.
 *
 * Usage: `deno run --allow-net bench/servers/raw_proxy.ts <port> <upstream-port> [--same-bytes]`.
 *
 * @module
 */
import { announce, portArg } from "../catalog.ts";

const upstream = `http://127.0.0.1:${Number(Deno.args[1])}`;
const SAME_BYTES = Deno.args.includes("--same-bytes");
const HEADERS = { "content-type": "application/json" };
const SERVER_INFO = { "io.modelcontextprotocol/serverInfo": { name: "things", version: "0.1.0" } };

/** The record in weir's coverage envelope: its JSON length and each top-level array's length. */
function envelope(text: string, record: Record<string, unknown>): unknown {
  const items: Record<string, number> = {};
  for (const [key, value] of Object.entries(record)) {
    if (Array.isArray(value)) items[key] = value.length;
  }
  return {
    coverage: { truncated: false, bytes: text.length, over_budget: false, items },
    result: record,
  };
}

Deno.serve({ hostname: "127.0.0.1", port: portArg(), onListen: announce }, async (request) => {
  const message = await request.json();
  const id = String(message.params?.arguments?.id ?? "");
  const answer = await fetch(`${upstream}/things/${encodeURIComponent(id)}`);
  let structured;
  if (SAME_BYTES) {
    const text = await answer.text();
    structured = envelope(text, JSON.parse(text));
  } else {
    structured = await answer.json();
  }
  const result = {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
    resultType: "complete",
    ...(SAME_BYTES ? { _meta: SERVER_INFO } : {}),
  };
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }), {
    headers: HEADERS,
  });
});
