/**
 * weir as an OAuth 2.1 resource server (MCP authorization spec), end to end:
 * a real OpenID provider (`npm:oidc-provider`) on 127.0.0.1, the real CLI
 * (`weir serve FILE --http 127.0.0.1:PORT --oauth-issuer URL --oauth-resource
 * URL`), the official SDK clients v1 and v2 going from weir's 401 through
 * discovery and authorization code + PKCE to a token, then listing and calling
 * tools; a token without `tickets:write` sees no write tool and gets 403
 * naming the scope; bad tokens get 401; the recording upstream never sees an
 * inbound token.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError as UnauthorizedV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedV2,
} from "@modelcontextprotocol/client";
import { type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { type Recorder, startRecorder } from "../support/upstream.ts";
import {
  authorizeLikeABrowser,
  CLIENT_ID,
  freePort,
  type Oidc,
  REDIRECT_URI,
  startOidc,
} from "../support/oidc.ts";
import { MODERN_META, modernHeaders } from "../support/mcp.ts";

const FIXTURE = "tests/fixtures/oauth_tickets.mcp.kdl";
const READ_TOOLS = ["get_ticket", "list_ticket"];
const WRITE_TOOLS = ["close_ticket", "create_ticket"];
/** Tools without a scope: any valid token sees them. */
const UNSCOPED = ["delete_ticket", "weir_info"];

interface Stack {
  oidc: Oidc;
  weir: Served;
  upstream: Recorder;
  resource: string;
  mcp: string;
  close(): Promise<void>;
}

/**
 * The guardfile form of serve-upstream in front of the same tools: a guardfile
 * that wraps an MCP server (the spec-mode server of {@link FIXTURE}, without
 * OAuth, on loopback) and serves its four grants by name, with the same
 * scopes and withhold. The OAuth tests below run against both surfaces.
 */
function wrappedFixture(url: string): string {
  return `withhold "delete_ticket" {
    reason "Tickets are archived, never deleted, on this surface."
    alternative "close_ticket"
}
wrap ward mcp tickets {
    mcp-server http "${url}/mcp"
    proxy list_ticket { scope "tickets:read"; }
    proxy get_ticket { scope "tickets:read"; }
    proxy create_ticket { scope "tickets:write"; }
    proxy close_ticket { scope "tickets:write"; }
}
`;
}

async function startStack(
  surface: "spec" | "wrapped",
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<Stack> {
  const upstream = await startRecorder();
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const oidc = await startOidc(resource);
  const fileEnv = { TICKETS_BASE_URL: upstream.url, TICKETS_KEY: "upstream-key-123456", ...env };
  let inner: Served | undefined;
  let weir: Served;
  try {
    let file = FIXTURE;
    if (surface === "wrapped") {
      inner = await serveHttp(FIXTURE, { env: fileEnv });
      file = await tempGuardfile(wrappedFixture(inner.url));
    }
    weir = await serveHttp(file, {
      address: `127.0.0.1:${port}`,
      extra: ["--oauth-issuer", oidc.issuer, "--oauth-resource", resource, ...extra],
      env: fileEnv,
    });
  } catch (error) {
    await inner?.stop();
    await oidc.close();
    await upstream.close();
    throw error;
  }
  return {
    oidc,
    weir,
    upstream,
    resource,
    mcp: resource,
    close: async () => {
      await weir.stop();
      await inner?.stop();
      await oidc.close();
      await upstream.close();
    },
  };
}

/**
 * An OAuth client provider for the SDKs: pre-registered public client; its
 * "browser" is {@link authorizeLikeABrowser}, run as soon as the SDK wants to
 * redirect. Each authorization URL it was sent to is kept.
 */
class TestProvider {
  #tokens?: { access_token: string; token_type: string };
  #verifier = "";
  code?: string;
  callback?: URLSearchParams;
  readonly authorizations: URL[] = [];
  /** When set, refuse to authorize again (a user who closes the window). */
  refuseNext = false;

  get redirectUrl(): string {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: "weir OAuth test",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return { client_id: CLIENT_ID };
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: { access_token: string; token_type: string }) {
    this.#tokens = tokens;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizations.push(url);
    if (this.refuseNext) throw new Error("the user declined to authorize more");
    const { code, callback } = await authorizeLikeABrowser(url);
    this.code = code;
    this.callback = callback;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  get accessToken(): string {
    return this.#tokens!.access_token;
  }
}

/** Connect an official client through the whole authorization dance. */
async function connectV1(mcp: string, provider: TestProvider): Promise<ClientV1> {
  const first = new TransportV1(new URL(mcp), { authProvider: provider });
  const client = new ClientV1({ name: "oauth-v1", version: "1.0.0" });
  await assert.rejects(client.connect(first), UnauthorizedV1);
  assert.ok(provider.code, "the SDK sent the user to the authorization server");
  await first.finishAuth(provider.code);
  const again = new ClientV1({ name: "oauth-v1", version: "1.0.0" });
  await again.connect(new TransportV1(new URL(mcp), { authProvider: provider }));
  return again;
}

async function connectV2(mcp: string, provider: TestProvider): Promise<ClientV2> {
  const options = { authProvider: provider as never, protocolVersion: "2026-07-28" };
  const first = new TransportV2(new URL(mcp), options);
  const client = new ClientV2({ name: "oauth-v2", version: "1.0.0" });
  await assert.rejects(client.connect(first), UnauthorizedV2);
  assert.ok(provider.code, "the SDK sent the user to the authorization server");
  // RFC 9207: v2 checks the callback's iss against the issuer it discovered.
  assert.equal(provider.callback!.get("iss"), new URL(provider.authorizations[0]).origin);
  await first.finishAuth(provider.callback!);
  const again = new ClientV2({ name: "oauth-v2", version: "1.0.0" });
  await again.connect(new TransportV2(new URL(mcp), options));
  return again;
}

function assertNoInboundToken(upstream: Recorder, tokens: string[]): void {
  for (const request of upstream.requests) {
    const seen = [...request.headers].map(([k, v]) => `${k}: ${v}`).join("\n") + request.path +
      request.query + request.body;
    for (const token of tokens) {
      assert.ok(!seen.includes(token), "an inbound token reached the upstream");
      assert.ok(!seen.includes(token.slice(-20)), "part of an inbound token reached the upstream");
    }
    assert.equal(request.headers.get("authorization"), null);
  }
}

function challengeParams(header: string | null): Record<string, string> {
  assert.ok(header, "a WWW-Authenticate header");
  assert.match(header, /^Bearer /);
  return Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

function names(list: { tools: { name: string }[] }): string[] {
  return list.tools.map((t) => t.name).sort();
}

for (const surface of ["spec", "wrapped"] as const) {
  Deno.test(`SDK v1: 401, discovery, code + PKCE, token; scopes decide what is listed and callable (${surface})`, async () => {
    const stack = await startStack(surface);
    const closers: (() => Promise<void>)[] = [];
    try {
      // The writer: both scopes.
      const writer = new TestProvider();
      const client = await connectV1(stack.mcp, writer);
      closers.push(() => client.close());
      const auth = writer.authorizations[0];
      assert.equal(auth.searchParams.get("resource"), stack.resource, "RFC 8707 resource sent");
      assert.equal(auth.searchParams.get("code_challenge_method"), "S256");
      assert.equal(auth.searchParams.get("scope"), "tickets:read tickets:write");
      assert.deepEqual(
        names(await client.listTools()),
        [...WRITE_TOOLS, ...UNSCOPED, ...READ_TOOLS].sort(),
      );
      const listed = await client.callTool({ name: "list_ticket", arguments: { board: "ops" } });
      assert.equal(listed.isError, undefined, JSON.stringify(listed));
      const created = await client.callTool({
        name: "create_ticket",
        arguments: { board: "ops", title: "printer on fire" },
      });
      assert.equal(created.isError, undefined, JSON.stringify(created));
      assert.deepEqual(stack.upstream.requests.map((r) => `${r.method} ${r.path}`), [
        "GET /boards/ops/tickets",
        "POST /boards/ops/tickets",
      ]);

      // The reader: the authorization server grants tickets:read only.
      stack.oidc.login = "reader";
      const reader = new TestProvider();
      const readerClient = await connectV1(stack.mcp, reader);
      closers.push(() => readerClient.close());
      assert.deepEqual(names(await readerClient.listTools()), [...UNSCOPED, ...READ_TOOLS].sort());
      // The info tool names no more than the reader's list: no write tool.
      const info = await readerClient.callTool({ name: "weir_info", arguments: {} });
      const infoTools = (info.structuredContent as { tools: string[] }).tools;
      assert.deepEqual(infoTools, [...UNSCOPED, ...READ_TOOLS].sort(), JSON.stringify(info));
      const before = stack.upstream.requests.length;
      // Calling a write tool anyway: 403 insufficient_scope; the SDK tries to
      // step up (asking for exactly tickets:write) and the user declines.
      reader.refuseNext = true;
      await assert.rejects(
        readerClient.callTool({ name: "create_ticket", arguments: { board: "ops", title: "x" } }),
      );
      assert.equal(reader.authorizations.length, 2);
      assert.equal(reader.authorizations[1].searchParams.get("scope"), "tickets:write");
      // The same call on the wire: 403 naming the scope, and nothing ran.
      const raw = await fetch(stack.mcp, {
        method: "POST",
        headers: {
          authorization: `Bearer ${reader.accessToken}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/call",
          params: { name: "create_ticket", arguments: { board: "ops", title: "x" } },
        }),
      });
      assert.equal(raw.status, 403);
      const params = challengeParams(raw.headers.get("www-authenticate"));
      assert.equal(params.error, "insufficient_scope");
      assert.equal(params.scope, "tickets:write");
      assert.equal(
        params.resource_metadata,
        `${new URL(stack.resource).origin}/.well-known/oauth-protected-resource/mcp`,
      );
      const refusal = await raw.json();
      assert.match(
        refusal.error.message,
        /insufficient_scope: create_ticket needs scope tickets:write/,
      );
      assert.equal(refusal.id, 9, "the body was read: the refusal carries the request's id");
      assert.deepEqual(refusal.error.data, { rule: "auth", status: 403 });
      assert.equal(raw.headers.get("cache-control"), "no-store");
      // The tool API follows the same rules.
      const api = (tool: string, body: unknown) =>
        fetch(new URL(`/api/${tool}`, stack.mcp), {
          method: "POST",
          headers: {
            authorization: `Bearer ${reader.accessToken}`,
            "content-type": "application/json",
          },
          body: JSON.stringify(body),
        });
      const apiWrite = await api("create_ticket", { board: "ops", title: "x" });
      assert.equal(apiWrite.status, 403);
      const apiRefusal = await apiWrite.json();
      assert.equal(apiRefusal.isError, true);
      assert.equal(apiRefusal.error.code, "auth");
      assert.equal(
        challengeParams(apiWrite.headers.get("www-authenticate")).scope,
        "tickets:write",
      );
      assert.equal(stack.upstream.requests.length, before, "no write reached the upstream");
      const apiRead = await api("get_ticket", { board: "ops", id: "7" });
      assert.equal(apiRead.status, 200, await apiRead.text());
      // An answer to a caller with an identity may depend on it: no HTTP cache may share it.
      assert.equal(apiRead.headers.get("cache-control"), "no-store");
      const legacyList = await fetch(stack.mcp, {
        method: "POST",
        headers: {
          authorization: `Bearer ${reader.accessToken}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/list" }),
      });
      assert.equal(legacyList.status, 200);
      assert.deepEqual(
        names((await legacyList.json()).result),
        [...UNSCOPED, ...READ_TOOLS].sort(),
      );
      assert.equal(legacyList.headers.get("cache-control"), "no-store");
      assertNoInboundToken(stack.upstream, [writer.accessToken, reader.accessToken]);
    } finally {
      for (const close of closers) await close().catch(() => {});
      await stack.close();
    }
    const log = stack.weir.stderr();
    assert.match(
      log,
      /"event":"tool_call","decision":"allow","tool":"create_ticket".*"subject":"writer"/,
    );
    assert.match(
      log,
      /"event":"refused","decision":"refuse","rule":"auth","status":403,"subject":"reader","tool":"create_ticket","reason":"insufficient_scope: lacks tickets:write"/,
    );
    assert.ok(!/eyJ[\w-]+\.[\w-]+\./.test(log), "no token in the log");
  });

  Deno.test(`SDK v2 on 2026-07-28: the same dance; a narrowed tools/list is private (${surface})`, async () => {
    const stack = await startStack(surface);
    const closers: (() => Promise<void>)[] = [];
    try {
      const writer = new TestProvider();
      const client = await connectV2(stack.mcp, writer);
      closers.push(() => client.close());
      assert.equal(writer.authorizations[0].searchParams.get("resource"), stack.resource);
      assert.deepEqual(
        names(await client.listTools()),
        [...WRITE_TOOLS, ...UNSCOPED, ...READ_TOOLS].sort(),
      );
      const closed = await client.callTool({
        name: "close_ticket",
        arguments: { board: "ops", id: "3" },
      });
      assert.equal(closed.isError, undefined, JSON.stringify(closed));

      stack.oidc.login = "reader";
      const reader = new TestProvider();
      const readerClient = await connectV2(stack.mcp, reader);
      closers.push(() => readerClient.close());
      assert.deepEqual(names(await readerClient.listTools()), [...UNSCOPED, ...READ_TOOLS].sort());
      const got = await readerClient.callTool({
        name: "get_ticket",
        arguments: { board: "ops", id: "3" },
      });
      assert.equal(got.isError, undefined, JSON.stringify(got));

      const list = await fetch(stack.mcp, {
        method: "POST",
        headers: modernHeaders("tools/list", undefined, {
          authorization: `Bearer ${reader.accessToken}`,
        }),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: { _meta: MODERN_META },
        }),
      });
      const answer = await list.json();
      const result = answer.result;
      assert.ok(result, JSON.stringify(answer));
      assert.equal(result.cacheScope, "private");
      assert.equal(list.headers.get("cache-control"), "no-store", "and so say the HTTP headers");
      assert.deepEqual(names(result), [...UNSCOPED, ...READ_TOOLS].sort());
      assert.deepEqual(stack.upstream.requests.map((r) => `${r.method} ${r.path}`), [
        "PATCH /boards/ops/tickets/3",
        "GET /boards/ops/tickets/3",
      ]);
      assertNoInboundToken(stack.upstream, [writer.accessToken, reader.accessToken]);
    } finally {
      for (const close of closers) await close().catch(() => {});
      await stack.close();
    }
  });
}
