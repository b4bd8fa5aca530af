/**
 * Every failure an upstream MCP connection throws has the secrets its
 * requests carried taken out (src/mcp_upstream/connection.ts): the header
 * secrets (`ConnectionOptions.secrets`) and weir's own token (`ownToken`,
 * token exchange with client credentials), raw or as base64, whether the
 * server quotes them at the handshake, in a listing or in a redirect.
 */
import assert from "node:assert/strict";
import { operatorMessage, UpstreamConnection } from "../../src/mcp_upstream/connection.ts";
import { NOTHING_SENT } from "../../src/outbound/once.ts";
import { Redactor } from "../../src/guard/secrets.ts";

const HEADER = "hdr-secret-5c1e9a7b3d";
const OWN = "own-token-8f2d6b0e4a9c";

/** A raw MCP server: `how` says what the handshake or the listing answers. */
function server(how: { initialize?: "error" | "redirect"; list?: "error" }) {
  const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const msg = JSON.parse(await req.text());
    if (msg.id === undefined) return new Response(null, { status: 202 });
    const said = `${req.headers.get("authorization")} ${req.headers.get("x-key")}`;
    const quoted = `${said} ${btoa(said)}`;
    const answer = (body: Record<string, unknown>) =>
      Response.json({ jsonrpc: "2.0", id: msg.id, ...body });
    if (msg.method === "initialize") {
      if (how.initialize === "redirect") {
        return new Response(null, {
          status: 307,
          headers: { location: `/x/${encodeURIComponent(said)}/${btoa(said)}` },
        });
      }
      if (how.initialize === "error") return answer({ error: { code: -32000, message: quoted } });
      return answer({
        result: {
          protocolVersion: msg.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "s", version: "1" },
        },
      });
    }
    if (msg.method === "tools/list" && how.list === "error") {
      return answer({ error: { code: -32000, message: quoted } });
    }
    return answer({ result: { tools: [] } });
  });
  return { url: new URL(`http://127.0.0.1:${s.addr.port}/mcp`), stop: () => s.shutdown() };
}

function open(url: URL) {
  return UpstreamConnection.open({
    target: { kind: "http", url },
    headers: () => ({ "x-key": HEADER }),
    // As the wrap builds it (src/wrap/host.ts connectionSecrets).
    secrets: (own) => {
      const redactor = new Redactor();
      for (const secret of [HEADER, ...own]) redactor.add(secret);
      return redactor;
    },
    ownToken: { token: () => Promise.resolve(OWN), refused: () => {} },
    requestTimeoutMs: 5000,
    maxResponseBytes: 1 << 20,
    connectTimeoutMs: 0,
  });
}

function assertClean(text: string): void {
  for (const secret of [HEADER, OWN]) {
    assert.ok(!text.includes(secret), text);
    assert.ok(!text.includes(btoa(`Bearer ${OWN} ${HEADER}`).slice(0, 24)), text);
  }
  assert.match(text, /\[redacted\]/, text);
}

Deno.test("a handshake error quoting the header secret and weir's own token is said without them", async () => {
  for (const initialize of ["error", "redirect"] as const) {
    const up = server({ initialize });
    try {
      const error = await open(up.url).then((c) => c.close(), (e: Error) => e);
      assert.ok(error instanceof Error, `${initialize}: it connected`);
      assertClean(error.message);
    } finally {
      await up.stop();
    }
  }
});

Deno.test("a listing error quoting them is thrown without them; a redirect's target is worded without them", async () => {
  const up = server({ list: "error" });
  try {
    const connection = await open(up.url);
    try {
      const error = await connection.listTools().then(() => undefined, (e: Error) => e);
      assert.ok(error instanceof Error, "the listing succeeded");
      assertClean(operatorMessage(error, NOTHING_SENT));
    } finally {
      await connection.close();
    }
  } finally {
    await up.stop();
  }
});
