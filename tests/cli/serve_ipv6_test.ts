/**
 * `weir serve --http [::1]:0`: the "serving" line names a URL a client can
 * use (an IPv6 literal in brackets, RFC 3986 section 3.2.2), and it answers.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";

Deno.test("serve on an IPv6 loopback address logs a usable URL", async () => {
  const file = await tempGuardfile(
    `wrap ward mcp six {\n  base-url "http://127.0.0.1:9"\n  auth none\n  can get a { path "/a" }\n}\n`,
  );
  const server = await serveHttp(file, { address: "[::1]:0" });
  try {
    assert.match(server.url, /^http:\/\/\[::1\]:\d+$/);
    assert.match(server.stderr(), /"addr":"\[::1\]:\d+"/);
    const r = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(r.status, 200);
    assert.deepEqual((await r.json()).result.tools.map((t: { name: string }) => t.name), [
      "get_a",
      "weir_info",
    ]);
  } finally {
    await server.stop();
    await Deno.remove(file);
  }
});
