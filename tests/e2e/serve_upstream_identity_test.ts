/**
 * serve-upstream's command-line form of the caller's identity (issue 31 items
 * 1 and 3), through the shipped CLI against a real OpenID provider and an
 * official SDK MCP server:
 *
 * - `--tool-scope TOOL=SCOPE` gives the command-line form per-tool scopes:
 *   `tools/list` shows a caller only the tools its token's scopes allow, and
 *   `tools/call` (both revisions) and `/api` refuse the others (403) without
 *   reaching the MCP server: list = call, per caller;
 * - `--token-exchange-*`: each call carries a token exchanged from its
 *   caller's (client secret as form fields here), asking for the tool's
 *   scopes; the MCP server sees the caller's `sub` and never a caller's token,
 *   and its handshake and listing carry no caller's token either.
 */
import assert from "node:assert/strict";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { callApi } from "../support/cli.ts";
import { tokenFor } from "../support/oidc.ts";
import { EXCHANGE_POST_CLIENT, startExchangeProvider } from "../support/oidc_exchange.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { startWrapper } from "../support/upstream_cli.ts";

/** weir's canonical URI (the audience of callers' tokens; it need not be where weir listens). */
const RESOURCE = "http://127.0.0.1:1/mcp";
const TOOLS = [
  { name: "search", description: "Search.", inputSchema: { type: "object" } },
  { name: "create_issue", description: "Create an issue.", inputSchema: { type: "object" } },
];

/** tools/list, then tools/call of `name`, over one revision with a bearer token. */
async function mcp(
  url: string,
  token: string,
  revision: "2025-11-25" | "2026-07-28",
  name: string,
): Promise<{ tools: string[]; call: Record<string, unknown> }> {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
    "mcp-protocol-version": revision,
  };
  const post = async (body: Record<string, unknown>, extra: Record<string, string> = {}) => {
    const response = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: { ...headers, ...extra },
      body: JSON.stringify({ jsonrpc: "2.0", ...body }),
    });
    const text = await response.text();
    if (response.status === 403) return { status: 403 };
    const json = text.startsWith("{") ? JSON.parse(text) : JSON.parse(/data: (.*)/.exec(text)![1]);
    return { status: response.status, ...json };
  };
  if (revision === "2025-11-25") {
    const init = await fetch(`${url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      }),
    });
    await init.body?.cancel();
    const session = init.headers.get("mcp-session-id");
    if (session) headers["mcp-session-id"] = session;
  }
  const modern = (method: string, extra: Record<string, string> = {}) =>
    revision === "2026-07-28" ? { "mcp-method": method, ...extra } : {};
  const list = await post(
    { id: 1, method: "tools/list", params: revision === "2026-07-28" ? { _meta: meta } : {} },
    modern("tools/list"),
  );
  const call = await post({
    id: 2,
    method: "tools/call",
    params: { name, arguments: {}, ...(revision === "2026-07-28" ? { _meta: meta } : {}) },
  }, modern("tools/call", { "mcp-name": name }));
  return { tools: (list.result.tools as { name: string }[]).map((t) => t.name).sort(), call };
}

Deno.test("serve-upstream --tool-scope and --token-exchange-*: list = call per caller, each call with its caller's exchanged token", async () => {
  const provider = await startExchangeProvider(RESOURCE);
  provider.oidc.accounts = { alice: ["tickets:read", "tickets:write"], bob: ["tickets:read"] };
  const jwks = createRemoteJWKSet(new URL(`${provider.oidc.issuer}/jwks`));
  const inner = await startSdkUpstream({
    revision: "2026-07-28",
    framing: "json",
    tools: TOOLS,
    onCall: async ({ name, headers }) => {
      const token = /^Bearer (.+)$/.exec(headers.get("authorization") ?? "")?.[1] ?? "";
      const { payload } = await jwtVerify(token, jwks, { audience: provider.upstreamAudience });
      return { content: [{ type: "text", text: `${name}:${payload.sub}:${payload.scope ?? ""}` }] };
    },
  });
  const weir = await startWrapper([
    "--upstream",
    inner.url,
    "--tool",
    "search",
    "--tool",
    "create_issue",
    "--oauth-issuer",
    provider.oidc.issuer,
    "--oauth-resource",
    RESOURCE,
    "--tool-scope",
    "create_issue=tickets:write",
    "--token-exchange-audience",
    provider.upstreamAudience,
    "--token-exchange-client-id",
    EXCHANGE_POST_CLIENT.clientId,
    "--token-exchange-secret-env",
    "WEIR_TEST_EXCHANGE_SECRET",
    "--token-exchange-secret-post",
  ], { env: { WEIR_TEST_EXCHANGE_SECRET: EXCHANGE_POST_CLIENT.clientSecret } });
  try {
    provider.oidc.login = "alice";
    const alice = await tokenFor(provider.oidc, RESOURCE, "tickets:read tickets:write");
    provider.oidc.login = "bob";
    const bob = await tokenFor(provider.oidc, RESOURCE, "tickets:read");
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      const a = await mcp(weir.url, alice, revision, "create_issue");
      assert.deepEqual(a.tools, ["create_issue", "search"], revision);
      const text = (a.call.result as { content: { text: string }[] }).content[0].text;
      assert.equal(text, "create_issue:alice:tickets:write", revision);
      const b = await mcp(weir.url, bob, revision, "create_issue");
      assert.deepEqual(b.tools, ["search"], `${revision}: bob is not shown create_issue`);
      assert.equal(b.call.status, 403, `${revision}: nor may he call it`);
      const search = await mcp(weir.url, bob, revision, "search");
      assert.equal(
        (search.call.result as { content: { text: string }[] }).content[0].text,
        "search:bob:",
      );
    }
    const api = await callApi(weir.url, "create_issue", {}, {
      headers: { authorization: `Bearer ${bob}` },
    });
    assert.equal(api.status, 403);
    // The MCP server ran alice's create_issue and bob's search, once per revision: nothing else.
    const ran = inner.calls().map((c) => JSON.parse(c).params.name);
    assert.deepEqual(ran, ["create_issue", "search", "create_issue", "search"]);
    // Two exchanges: alice for tickets:write, bob with no scope; then kept.
    assert.deepEqual(
      provider.exchanges.map((e) => [e.subject, e.params.scope ?? "", e.authMethod]),
      [["alice", "tickets:write", "client_secret_post"], ["bob", "", "client_secret_post"]],
    );
    const everything = inner.headers.map((h) => [...h].join("\n")).join("\n") +
      inner.bodies.join("");
    for (const token of [alice, bob]) assert.ok(!everything.includes(token.slice(-24)));
  } finally {
    await weir.stop();
    await inner.stop();
    await provider.close();
  }
});
