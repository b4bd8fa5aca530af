/**
 * The OAuth resource server's caller identity (src/oauth/resource_server.ts):
 * a token's subject becomes `auth.caller` (`oauth:<sub>`), which signed state
 * is bound to, so a confirmation asked of one subject is not redeemed by
 * another, and a cursor issued to one is refused for the other.
 */
import assert from "node:assert/strict";
import { createOAuthResourceServer } from "../../src/oauth/resource_server.ts";
import { createHttpHandler } from "../../src/transport/http.ts";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import { guardedServer } from "../../src/modes/serve.ts";
import { startRecorder } from "../support/upstream.ts";
import { MODERN_META, modernHeaders, post } from "../support/mcp.ts";
import { notRun } from "../support/modern_http.ts";

const TOKENS: Record<string, string> = { "alice-at": "alice", "bob-at": "bob" };

Deno.test("createOAuthResourceServer(): the subject is the caller signed state is bound to", async () => {
  const upstream = await startRecorder(() => Response.json({ deleted: true }));
  try {
    const rs = createOAuthResourceServer({
      resource: "http://127.0.0.1/mcp",
      issuer: "http://127.0.0.1:1",
      verify: (token) =>
        TOKENS[token]
          ? Promise.resolve({ subject: TOKENS[token], scopes: [], via: "jwt" as const })
          : Promise.reject(new Error("unknown")),
      toolScopes: new Map(),
      log: () => {},
    });
    const verdict = await rs.authorize(
      new Request("http://127.0.0.1/mcp", { headers: { authorization: "Bearer alice-at" } }),
    );
    assert.equal(typeof verdict === "object" && verdict.allow && verdict.auth !== undefined, true);
    assert.equal((verdict as { auth: { caller: string } }).auth.caller, "oauth:alice");

    const loaded = parseGuardfile(
      `confirm "delete_ticket" message="Sure?"
wrap ward mcp t {
    base-url "${upstream.url}"
    auth none
    can delete ticket { path "/tickets/{id}" }
}
`,
      "t.mcp.kdl",
    );
    const server = guardedServer(loaded.guardfile!, { log: () => {} });
    const handler = createHttpHandler(server, {
      authorize: rs.authorize,
      authorizeBody: rs.authorizeBody,
      allowedOrigins: [],
    });
    const call = async (token: string, extra: Record<string, unknown> = {}) => {
      const reply = await post(handler, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "delete_ticket",
          arguments: { id: "1" },
          ...extra,
          _meta: {
            ...MODERN_META,
            "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
          },
        },
      }, modernHeaders("tools/call", "delete_ticket", { authorization: `Bearer ${token}` }));
      return JSON.parse(reply.text) as {
        result?: Record<string, unknown>;
        error?: { code: number; message: string };
      };
    };
    const asked = (await call("alice-at")).result!;
    const retry = {
      requestState: asked.requestState,
      inputResponses: { "weir/confirm": { action: "accept" } },
    };
    assert.ok(notRun(await call("bob-at", retry)), "bob's retry does not run");
    assert.equal(upstream.requests.length, 0, "bob cannot redeem alice's confirmation");
    assert.equal((await call("alice-at", retry)).result?.resultType, "complete");
    assert.equal(upstream.requests.length, 1);
  } finally {
    await upstream.close();
  }
});
