/**
 * Identity-provider profiles (issue 31), each against a real OpenID provider
 * (`npm:oidc-provider`, tests/support/oidc_exchange.ts) set up to issue that
 * provider's token shapes and to exchange tokens its way, through the shipped
 * CLI: `weir serve FILE --http ...` with the file's `oauth ... profile=
 * audience=` and `auth token-exchange`. Per profile:
 *
 * - a caller's token in the provider's shape passes (its issuer path, its
 *   `aud`, its scopes where that provider puts them: Entra's `scp` string and
 *   `roles`, Okta's `scp` list, Auth0's `permissions`, Keycloak's realm and
 *   client roles) and the write tool it is allowed is listed and callable;
 * - a caller holding only the read scope is refused the write tool (403);
 * - the exchange is asked the provider's way (the provider refuses RFC 8707
 *   `resource` where the real one does, wants Entra's on-behalf-of grant, and
 *   Auth0's custom subject token type) and the upstream sees the caller's `sub`;
 * - the same file under profile `generic` refuses the provider's tokens (so the
 *   profile is what lets them in), and Entra's v1 tokens (another issuer, the
 *   `api://` audience) pass as well as v2 tokens (the GUID audience), while a
 *   token for another API does not.
 */
import assert from "node:assert/strict";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { callApi, type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { freePort, tokenFor } from "../support/oidc.ts";
import {
  AUTH0_SUBJECT_TYPE,
  EXCHANGE_CLIENT,
  EXCHANGE_POST_CLIENT,
  type ExchangeProvider,
  JWT_BEARER,
  type ProfileShape,
  startExchangeProvider,
  TOKEN_EXCHANGE,
} from "../support/oidc_exchange.ts";

const PROFILES: Exclude<ProfileShape, "generic">[] = ["entra", "okta", "auth0", "keycloak"];

/** The guardfile for a profile: the provider's audience, and its way of exchanging. */
function fileFor(
  provider: ExchangeProvider,
  profile: string,
  resource: string,
  upstream: string,
  audience: boolean,
) {
  const post = profile === "auth0";
  const client = post ? EXCHANGE_POST_CLIENT : EXCHANGE_CLIENT;
  const aud = audience ? ` audience="${provider.weirAudience}"` : "";
  return `oauth issuer="${provider.oidc.issuer}" resource="${resource}" profile="${profile}"${aud}
wrap ward mcp tickets {
    base-url "${upstream}"
    auth token-exchange {
        audience "${provider.upstreamAudience}"
        ${profile === "auth0" ? `subject-token-type "${AUTH0_SUBJECT_TYPE}"` : ""}
        client-id "${client.clientId}"
        client-secret${post ? ` method="post"` : ""} { value env "WEIR_EXCHANGE_SECRET"; }
    }
    can get ticket { path "/tickets/{id}"; scope "tickets:read"; }
    can create ticket { path "/tickets"; body "title"; scope "tickets:write"; }
}
`;
}

interface Run {
  provider: ExchangeProvider;
  weir: Served;
  resource: string;
  subs: string[];
  close(): Promise<void>;
}

async function start(
  profile: Exclude<ProfileShape, "generic">,
  serveAs: ProfileShape = profile,
  audience = true,
): Promise<Run> {
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const provider = await startExchangeProvider(resource, profile);
  provider.oidc.accounts = { alice: ["tickets:read", "tickets:write"], bob: ["tickets:read"] };
  const jwks = createRemoteJWKSet(new URL(`${provider.oidc.issuer.replace(/\/$/, "")}/jwks`));
  const subs: string[] = [];
  const upstream = await startRecorder(async (req) => {
    const token = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
    try {
      const { payload } = await jwtVerify(token, jwks);
      subs.push(payload.sub!);
      return Response.json({ sub: payload.sub, aud: payload.aud });
    } catch (error) {
      return Response.json({ error: String(error) }, { status: 401 });
    }
  });
  const client = profile === "auth0" ? EXCHANGE_POST_CLIENT : EXCHANGE_CLIENT;
  try {
    const file = await tempGuardfile(fileFor(provider, serveAs, resource, upstream.url, audience));
    const weir = await serveHttp(file, {
      address: `127.0.0.1:${port}`,
      env: { WEIR_EXCHANGE_SECRET: client.clientSecret },
    });
    return {
      provider,
      weir,
      resource,
      subs,
      close: async () => {
        await weir.stop();
        await upstream.close();
        await provider.close();
      },
    };
  } catch (error) {
    await upstream.close();
    await provider.close();
    throw error;
  }
}

async function tokenOf(run: Run, account: string, scope: string): Promise<string> {
  run.provider.oidc.login = account;
  return await tokenFor(run.provider.oidc, run.resource, scope);
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** tools/list over 2026-07-28 with a bearer token: the names listed. */
async function listed(run: Run, token: string): Promise<string[]> {
  const response = await fetch(run.resource, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return (body.result.tools as { name: string }[]).map((t) => t.name).sort();
}

for (const profile of PROFILES) {
  Deno.test(`profile ${profile}: the provider's tokens pass, its scope claims decide, the exchange is asked its way`, async () => {
    const run = await start(profile);
    try {
      const alice = await tokenOf(run, "alice", "tickets:read tickets:write");
      const bob = await tokenOf(run, "bob", "tickets:read");
      assert.deepEqual(await listed(run, alice), ["create_ticket", "get_ticket", "weir_info"]);
      assert.deepEqual(await listed(run, bob), ["get_ticket", "weir_info"]);
      const read = await callApi(run.weir.url, "get_ticket", { id: "1" }, bearer(bob));
      assert.equal(read.status, 200, JSON.stringify(read.body));
      const wrote = await callApi(run.weir.url, "create_ticket", { title: "t" }, bearer(alice));
      assert.equal(wrote.status, 200, JSON.stringify(wrote.body));
      const denied = await callApi(run.weir.url, "create_ticket", { title: "t" }, bearer(bob));
      assert.equal(denied.status, 403);
      assert.deepEqual(run.subs, ["bob", "alice"], "the upstream saw each caller");
      const asked = run.provider.exchanges.filter((e) => !e.error);
      assert.equal(asked.length, 2);
      for (const e of asked) {
        assert.equal(e.params.resource, undefined, "no RFC 8707 resource");
        if (profile === "entra") {
          assert.equal(e.grant, JWT_BEARER);
          assert.equal(e.params.requested_token_use, "on_behalf_of");
          assert.match(e.params.scope, new RegExp(`^${run.provider.upstreamAudience}/tickets:`));
        } else {
          assert.equal(e.grant, TOKEN_EXCHANGE);
          assert.equal(e.params.audience, run.provider.upstreamAudience);
        }
        if (profile === "auth0") {
          assert.equal(e.params.subject_token_type, AUTH0_SUBJECT_TYPE);
          assert.equal(e.authMethod, "client_secret_post");
        }
      }
    } finally {
      await run.close();
    }
  });
}

Deno.test("profile generic on the same providers: without audience= no token passes; with it, Entra's GUID audience and scopes in roles, permissions or client roles are not seen", async () => {
  // Entra's v2 token names weir's API by its GUID, which only profile entra pairs with
  // api://<GUID>; the others put alice's write scope where only their profile looks (roles,
  // permissions, client roles), except Okta, whose scp list generic reads too.
  const expected: Record<string, number> = { entra: 401, okta: 200, auth0: 403, keycloak: 403 };
  for (const profile of PROFILES) {
    const bare = await start(profile, "generic", false);
    try {
      const alice = await tokenOf(bare, "alice", "tickets:read tickets:write");
      const read = await callApi(bare.weir.url, "get_ticket", { id: "1" }, bearer(alice));
      assert.equal(read.status, 401, `${profile}: its aud is not the resource`);
    } finally {
      await bare.close();
    }
    const run = await start(profile, "generic");
    try {
      const alice = await tokenOf(run, "alice", "tickets:read tickets:write");
      const write = await callApi(run.weir.url, "create_ticket", { title: "t" }, bearer(alice));
      assert.equal(write.status, expected[profile], `${profile}: ${JSON.stringify(write.body)}`);
      assert.deepEqual(run.subs, write.status === 200 ? ["alice"] : [], profile);
    } finally {
      await run.close();
    }
  }
});

Deno.test("profile entra: v1 tokens (sts.windows.net issuer, api:// audience) and v2 tokens (GUID audience) both pass; scopes are asked under the API's URI", async () => {
  const run = await start("entra");
  try {
    run.provider.entraVersion = "1.0";
    const v1 = await tokenOf(run, "alice", "tickets:read tickets:write");
    run.provider.entraVersion = "2.0";
    const v2 = await tokenOf(run, "alice", "tickets:read tickets:write");
    for (const token of [v1, v2]) {
      const answer = await callApi(run.weir.url, "create_ticket", { title: "t" }, bearer(token));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
    }
    // Without a token: the challenge and the metadata ask for scopes under weir's app URI.
    const none = await fetch(`${run.weir.url}/api/create_ticket`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    await none.body?.cancel();
    assert.equal(none.status, 401);
    assert.match(
      none.headers.get("www-authenticate") ?? "",
      new RegExp(`scope="${run.provider.weirAudience}/tickets:write"`),
    );
    const metadata = await (await fetch(`${run.weir.url}/.well-known/oauth-protected-resource/mcp`))
      .json();
    assert.deepEqual(metadata.scopes_supported, [
      `${run.provider.weirAudience}/tickets:read`,
      `${run.provider.weirAudience}/tickets:write`,
    ]);
  } finally {
    await run.close();
  }
});
