/**
 * A raw MCP upstream over HTTP (no SDK), answering exactly the text a test
 * writes, and a raw JSON-RPC POST to weir's `/mcp` that returns the answer's
 * text as it came.
 */

/**
 * Serve `answer` on 127.0.0.1: each POST's JSON-RPC message gets `answer`'s
 * text as a JSON body (or as a one-event stream with `sse`), or 202 where it
 * returns null (a notification); anything but POST gets 405.
 */
export function rawHttpUpstream<M>(
  answer: (msg: M) => string | null,
  options: { sse?: boolean } = {},
): { url: string; stop: () => Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const text = answer(await req.json());
    if (text === null) return new Response(null, { status: 202 });
    return options.sse
      ? new Response(`event: message\ndata: ${text}\n\n`, {
        headers: { "content-type": "text/event-stream" },
      })
      : new Response(text, { headers: { "content-type": "application/json" } });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/mcp`, stop: () => server.shutdown() };
}

/**
 * POST one JSON-RPC `message` (an object, or JSON text sent as it is) to
 * `<url>/mcp` as a 2025-11-25 client (within 30 s, with any `headers` added)
 * and return the answer's text.
 */
export async function postMcp(
  url: string,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers,
    },
    body: typeof message === "string" ? message : JSON.stringify(message),
    signal: AbortSignal.timeout(30_000),
  });
  return await response.text();
}
