/**
 * The caller's identity reaches the upstream (issue 31), end to end: a real
 * OpenID provider (`npm:oidc-provider`, tests/support/oidc_exchange.ts) doing
 * RFC 8693 token exchange through a custom grant type, the shipped CLI with
 * default flags (`weir serve FILE --http ... --oauth-issuer ... --oauth-resource
 * ...`), the official clients of both revisions (SDK v1 for 2025-11-25, v2
 * pinned to 2026-07-28) and the HTTP tool API, in spec mode
 * (`auth token-exchange`) and the wrap form (`token-exchange` in
 * `mcp-server http`, the wrapped server an official SDK server of either
 * revision). The upstream checks every token it gets against the provider's
 * keys and answers with its claims, so each assertion is about what the
 * upstream itself saw:
 *
 * - two callers, two upstream tokens, each with its caller's `sub` and
 *   `act.sub` = weir's client; each caller's token exchanged once and then
 *   reused (the provider counts the exchanges); no byte of a caller's own
 *   token ever reaches the upstream (handshake and listing included);
 * - exchange refused: the call fails `token_exchange_refused` (403 on /api),
 *   nothing is sent, the audit line names the subject and no secret;
 * - exchange down (503 from the token endpoint, then nothing listening): a
 *   caller without a kept token is refused `token_exchange_unavailable` (503),
 *   nothing is sent; a caller whose token is kept goes on until it expires;
 * - expiry and refresh: with a short lifetime, a caller's later call gets a
 *   newly exchanged token (a bounded wait, no timing asserted);
 * - the span of each call carries the caller's subject (`enduser.id`).
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { createRemoteJWKSet, decodeJwt, jwtVerify } from "jose";
import { callApi, runCli, type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { type Recorder, startRecorder } from "../support/upstream.ts";
import { freePort, tokenFor } from "../support/oidc.ts";
import {
  EXCHANGE_CLIENT,
  EXCHANGE_JWT_CLIENT,
  type ExchangeProvider,
  startExchangeProvider,
} from "../support/oidc_exchange.ts";
import { type SdkUpstream, startSdkUpstream } from "../support/sdk_upstream.ts";
import { until } from "../support/wait.ts";
import { confirmingClientV1, confirmingClientV2 } from "../support/elicit.ts";

const SCOPES = "tickets:read tickets:write";

/** What the upstream saw of a token: its claims, checked against the provider's keys. */
interface Seen {
  sub: string;
  act?: { sub: string };
  aud: string;
  jti: string;
  token: string;
}

/** Check a bearer token as the upstream would (the provider's JWKS, its audience). */
function checker(provider: ExchangeProvider) {
  const jwks = createRemoteJWKSet(new URL(`${provider.oidc.issuer.replace(/\/$/, "")}/jwks`));
  return async (authorization: string | null): Promise<Seen | string> => {
    const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
    if (!token) return "no bearer token";
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: provider.oidc.issuer,
        audience: provider.upstreamAudience,
      });
      return {
        sub: payload.sub!,
        act: payload.act as { sub: string } | undefined,
        aud: String(payload.aud),
        jti: payload.jti!,
        token,
      };
    } catch (error) {
      return `refused: ${(error as Error).message}`;
    }
  };
}

interface Stack {
  provider: ExchangeProvider;
  weir: Served;
  resource: string;
  /** Every token the upstream was sent, with what it saw. */
  seen: Seen[];
  /** How many requests reached the upstream (tool calls, for the wrap form). */
  reached(): number;
  /** Every header value the upstream received, to search for leaked tokens. */
  everything(): string;
  close(): Promise<void>;
}

/** Spec mode: a tickets API that answers with the claims of the token it got. */
async function specStack(
  options: { ttl?: number; env?: Record<string, string>; controls?: string } = {},
): Promise<Stack> {
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const provider = await startExchangeProvider(resource);
  provider.ttl = options.ttl ?? 300;
  provider.oidc.accounts = {
    alice: SCOPES.split(" "),
    bob: ["tickets:read"],
    carol: ["tickets:read"],
  };
  const check = checker(provider);
  const seen: Seen[] = [];
  let upstream: Recorder | undefined;
  try {
    upstream = await startRecorder(async (req) => {
      const saw = await check(req.headers.get("authorization"));
      if (typeof saw === "string") return Response.json({ error: saw }, { status: 401 });
      seen.push(saw);
      return Response.json({ sub: saw.sub, act: saw.act ?? null, aud: saw.aud, path: req.path });
    });
    const file = await tempGuardfile(`wrap ward mcp tickets {
    base-url { value env "TICKETS_BASE_URL"; }
    auth token-exchange {
        audience "${provider.upstreamAudience}"
        client-id "${EXCHANGE_CLIENT.clientId}"
        client-secret { value env "WEIR_EXCHANGE_SECRET"; }
    }
    can get ticket { path "/tickets/{id}"; scope "tickets:read"; }
    can create ticket { path "/tickets"; body "title"; scope "tickets:write"; }
}
${options.controls ?? ""}
`);
    const weir = await serveHttp(file, {
      address: `127.0.0.1:${port}`,
      extra: ["--oauth-issuer", provider.oidc.issuer, "--oauth-resource", resource],
      env: {
        TICKETS_BASE_URL: upstream.url,
        WEIR_EXCHANGE_SECRET: EXCHANGE_CLIENT.clientSecret,
        WEIR_LOG_LEVEL: "debug",
        ...options.env,
      },
    });
    const up = upstream;
    return {
      provider,
      weir,
      resource,
      seen,
      reached: () => up.requests.length,
      everything: () =>
        up.requests.map((r) => [...r.headers].join("\n") + r.path + r.query + r.body).join("\n"),
      close: async () => {
        await weir.stop();
        await up.close();
        await provider.close();
      },
    };
  } catch (error) {
    await upstream?.close();
    await provider.close();
    throw error;
  }
}

/** The wrap form: an SDK MCP server whose `whoami` answers with the token's claims. */
async function wrapStack(
  revision: "2025-11-25" | "2026-07-28",
  refuse?: (headers: Headers, body: string) => Response | undefined,
  controls = "",
): Promise<Stack> {
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const provider = await startExchangeProvider(resource);
  provider.oidc.accounts = {
    alice: SCOPES.split(" "),
    bob: ["tickets:read"],
    carol: ["tickets:read"],
  };
  const check = checker(provider);
  const seen: Seen[] = [];
  let inner: SdkUpstream | undefined;
  try {
    inner = await startSdkUpstream({
      revision,
      framing: "json",
      tools: [
        { name: "whoami", description: "Who the upstream sees.", inputSchema: { type: "object" } },
      ],
      ...(refuse ? { refuse } : {}),
      onCall: async ({ headers }) => {
        const saw = await check(headers.get("authorization"));
        if (typeof saw === "string") {
          return { content: [{ type: "text", text: saw }], isError: true };
        }
        seen.push(saw);
        return {
          content: [{ type: "text", text: JSON.stringify({ sub: saw.sub, act: saw.act }) }],
        };
      },
    });
    const keyFile = await Deno.makeTempFile({ suffix: ".pem" });
    await Deno.writeTextFile(keyFile, provider.privateKeyPem);
    const file = await tempGuardfile(`wrap ward mcp tickets {
    mcp-server http "${inner.url}" {
        token-exchange {
            audience "${provider.upstreamAudience}"
            client-id "${EXCHANGE_JWT_CLIENT}"
            private-key-jwt alg="ES256" kid="weir-1" { value file "${keyFile}"; }
        }
    }
    proxy whoami { scope "tickets:read"; }
}
${controls}
`);
    const weir = await serveHttp(file, {
      address: `127.0.0.1:${port}`,
      extra: ["--oauth-issuer", provider.oidc.issuer, "--oauth-resource", resource],
      env: { WEIR_LOG_LEVEL: "debug" },
    });
    const up = inner;
    return {
      provider,
      weir,
      resource,
      seen,
      reached: () => up.calls().length,
      everything: () => up.headers.map((h) => [...h].join("\n")).join("\n") + up.bodies.join("\n"),
      close: async () => {
        await weir.stop();
        await up.stop();
        await provider.close();
        await Deno.remove(keyFile);
      },
    };
  } catch (error) {
    await inner?.stop();
    await provider.close();
    throw error;
  }
}

/** A caller's access token for weir, from the provider (authorization code + PKCE). */
async function login(stack: Stack, account: string, scope = SCOPES): Promise<string> {
  stack.provider.oidc.login = account;
  return await tokenFor(stack.provider.oidc, stack.resource, scope);
}

type Call = (
  tool: string,
  args: Record<string, unknown>,
) => Promise<{ text: string; isError: boolean }>;

/** An official client of `revision` sending `token` as its bearer. */
async function clientOf(
  stack: Stack,
  revision: "2025-11-25" | "2026-07-28",
  token: string,
): Promise<{ call: Call; close(): Promise<void> }> {
  const requestInit = { headers: { authorization: `Bearer ${token}` } };
  const url = new URL(stack.resource);
  const client = revision === "2025-11-25"
    ? new ClientV1({ name: "exchange-v1", version: "1.0.0" })
    : new ClientV2({ name: "exchange-v2", version: "1.0.0" }, {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    });
  if (client instanceof ClientV1) await client.connect(new TransportV1(url, { requestInit }));
  else await client.connect(new TransportV2(url, { requestInit }));
  return {
    call: async (name, args) => {
      const result = await (client as ClientV1).callTool({ name, arguments: args });
      const content = result.content as { type: string; text?: string }[];
      return { text: content.map((c) => c.text ?? "").join(""), isError: result.isError === true };
    },
    close: () => client.close(),
  };
}

/** The log's lines of `event` matching `keep`, once there are `count` of them (bounded wait). */
async function logged(
  stack: Stack,
  event: string,
  keep: (e: Record<string, unknown>) => boolean,
  count: number,
): Promise<Record<string, unknown>[]> {
  await until(() => eventsNow(stack, event).filter(keep).length >= count);
  return eventsNow(stack, event).filter(keep);
}

/** The weir log's JSON lines of one event, as collected so far. */
function eventsNow(stack: Stack, event: string): Record<string, unknown>[] {
  return stack.weir.stderr().split("\n").filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.event === event);
}

function assertNoCallerToken(stack: Stack, tokens: string[]): void {
  const everything = stack.everything();
  for (const token of tokens) {
    assert.ok(!everything.includes(token), "a caller's own token reached the upstream");
    assert.ok(
      !everything.includes(token.slice(-24)),
      "part of a caller's token reached the upstream",
    );
    const log = stack.weir.stderr();
    assert.ok(!log.includes(token.slice(-24)), "a caller's token is in weir's log");
  }
  for (const seen of stack.seen) {
    assert.ok(!tokens.includes(seen.token), "the upstream was sent a caller's own token");
  }
}

function exchangesOf(stack: Stack, subject: string): number {
  return stack.provider.exchanges.filter((e) => e.subject === subject && !e.error).length;
}

Deno.test("spec mode: two callers over both revisions and /api; each its own exchanged token (sub, act), exchanged once, never the caller's token upstream", async () => {
  const stack = await specStack();
  const closers: (() => Promise<void>)[] = [];
  try {
    const alice = await login(stack, "alice");
    const bob = await login(stack, "bob", "tickets:read");
    const a1 = await clientOf(stack, "2025-11-25", alice);
    const b2 = await clientOf(stack, "2026-07-28", bob);
    const a2 = await clientOf(stack, "2026-07-28", alice);
    const b1 = await clientOf(stack, "2025-11-25", bob);
    closers.push(a1.close, b2.close, a2.close, b1.close);
    for (const [who, client] of [["alice", a1], ["bob", b2], ["alice", a2], ["bob", b1]] as const) {
      const got = await client.call("get_ticket", { id: "T-1" });
      assert.equal(got.isError, false, got.text);
      const answer = JSON.parse(got.text).result;
      assert.equal(answer.sub, who, "the upstream saw the caller as sub");
      assert.deepEqual(answer.act, { sub: EXCHANGE_CLIENT.clientId }, "and weir as the actor");
      assert.equal(answer.aud, stack.provider.upstreamAudience);
    }
    // The tool API takes the same path, with the same kept token.
    const api = await callApi(stack.weir.url, "get_ticket", { id: "T-2" }, {
      headers: { authorization: `Bearer ${bob}` },
    });
    assert.equal(api.status, 200, JSON.stringify(api.body));
    // Only alice holds tickets:write: bob is refused before any exchange (403, scope).
    const write = await b1.call("create_ticket", { title: "x" }).catch((e) => e);
    assert.ok(write instanceof Error || write.isError, "bob cannot create");
    const created = await a1.call("create_ticket", { title: "printer on fire" });
    assert.equal(created.isError, false, created.text);

    const subs = stack.seen.map((s) => s.sub);
    assert.deepEqual(subs, ["alice", "bob", "alice", "bob", "bob", "alice"]);
    // One token per caller and scope set: alice's get_ticket token twice, bob's three times.
    const tokensOf = (sub: string) =>
      new Set(stack.seen.filter((s) => s.sub === sub).map((s) => s.jti));
    assert.equal(tokensOf("bob").size, 1, "bob's exchanged token was reused");
    assert.equal(
      tokensOf("alice").size,
      2,
      "alice: one token for tickets:read, one for tickets:write",
    );
    assert.equal(exchangesOf(stack, "bob"), 1);
    assert.equal(exchangesOf(stack, "alice"), 2);
    const asked = stack.provider.exchanges.map((e) => e.params.scope).sort();
    assert.deepEqual(
      asked,
      ["tickets:read", "tickets:read", "tickets:write"],
      "the grant's scopes",
    );
    assert.ok(stack.provider.exchanges.every((e) => e.authMethod === "client_secret_basic"));
    assertNoCallerToken(stack, [alice, bob]);
    // Audit lines and exchange lines name the subject, never a token.
    const calls = await logged(stack, "tool_call", (e) => e.tool === "get_ticket", 5);
    assert.deepEqual(calls.map((e) => e.subject), ["alice", "bob", "alice", "bob", "bob"]);
    const outcomes = (await logged(stack, "token_exchange", () => true, 6))
      .map((e) => `${e.subject}:${e.outcome}`);
    assert.deepEqual(outcomes, [
      "alice:exchanged",
      "bob:exchanged",
      "alice:reused",
      "bob:reused",
      "bob:reused",
      "alice:exchanged",
    ]);
  } finally {
    for (const close of closers) await close().catch(() => {});
    await stack.close();
  }
});

Deno.test("spec mode: exchange refused (403) and exchange down (503): nothing sent, audited with the subject; a kept token goes on", async () => {
  const stack = await specStack();
  try {
    const alice = await login(stack, "alice");
    const bob = await login(stack, "bob", "tickets:read");
    const carol = await login(stack, "carol", "tickets:read");
    // alice's token is exchanged and kept before anything goes wrong.
    const first = await callApi(stack.weir.url, "get_ticket", { id: "1" }, {
      headers: { authorization: `Bearer ${alice}` },
    });
    assert.equal(first.status, 200);

    // Refused: the provider will not exchange bob's token.
    stack.provider.refuse.add("bob");
    const before = stack.reached();
    const b = await clientOf(stack, "2026-07-28", bob);
    const refused = await b.call("get_ticket", { id: "1" });
    await b.close();
    assert.equal(refused.isError, true);
    assert.match(refused.text, /^token_exchange_refused: /);
    assert.match(refused.text, /invalid_grant/);
    assert.match(refused.text, /nothing was sent upstream/);
    const api = await callApi(stack.weir.url, "get_ticket", { id: "1" }, {
      headers: { authorization: `Bearer ${bob}` },
    });
    assert.equal(api.status, 403);
    assert.equal(stack.reached(), before, "nothing reached the upstream");
    for (const text of [refused.text, JSON.stringify(api.body)]) {
      assert.ok(!text.includes(EXCHANGE_CLIENT.clientSecret), "no secret in the refusal");
      assert.ok(!text.includes(bob.slice(-24)), "no token in the refusal");
    }
    const refusals = await logged(stack, "refused", (e) => e.rule === "token_exchange", 2);
    assert.deepEqual(refusals.map((e) => [e.subject, e.status]), [["bob", 403], ["bob", 403]]);

    // Down: the token endpoint answers 503, then nothing listens there.
    stack.provider.oidc.tokenEndpointDown = 503;
    const c = await callApi(stack.weir.url, "get_ticket", { id: "1" }, {
      headers: { authorization: `Bearer ${carol}` },
    });
    assert.equal(c.status, 503);
    assert.match(JSON.stringify(c.body), /token_exchange_unavailable/);
    // alice's kept token still serves her (until it expires).
    const kept = await callApi(stack.weir.url, "get_ticket", { id: "2" }, {
      headers: { authorization: `Bearer ${alice}` },
    });
    assert.equal(kept.status, 200);
    await stack.provider.oidc.close();
    const c2 = await clientOf(stack, "2025-11-25", carol).catch((e) => e);
    // The provider is gone: weir still checks carol's token against its cached keys.
    assert.ok(!(c2 instanceof Error), String(c2));
    const down = await c2.call("get_ticket", { id: "1" });
    await c2.close();
    assert.equal(down.isError, true);
    assert.match(
      down.text,
      /^token_exchange_unavailable: .*could not be reached \(connection refused/,
    );
    assert.equal(
      stack.seen.filter((s) => s.sub === "carol").length,
      0,
      "carol's calls sent nothing",
    );
    const unavailable = await logged(stack, "refused", (e) => e.status === 503, 2);
    assert.deepEqual(unavailable.map((e) => [e.rule, e.subject]), [
      ["token_exchange", "carol"],
      ["token_exchange", "carol"],
    ]);
    assertNoCallerToken(stack, [alice, bob, carol]);
  } finally {
    await stack.close();
  }
});

for (const mode of ["spec mode", "wrap form"] as const) {
  Deno.test(`${mode}: a refused exchange spends no rate-limit slot and asks no person (the caller's identity is settled first)`, async () => {
    // One call an hour for everyone, and a person confirms each call of the gated tool.
    const gatedTool = mode === "spec mode" ? "create_ticket" : "whoami";
    const controls = `rate-limit "1/1h"\nconfirm "${gatedTool}" message="Go ahead?"`;
    const stack = mode === "spec mode"
      ? await specStack({ controls })
      : await wrapStack("2026-07-28", undefined, controls);
    try {
      // bob may call every tool, and the provider refuses to exchange his token.
      (stack.provider.oidc.accounts as Record<string, string[]>).bob = SCOPES.split(" ");
      stack.provider.refuse.add("bob");
      const bob = await login(stack, "bob", SCOPES);
      const alice = await login(stack, "alice");
      const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
      const args = mode === "spec mode" ? { title: "t" } : {};
      for (let i = 0; i < 3; i++) {
        const refused = await callApi(stack.weir.url, gatedTool, args, as(bob));
        assert.equal(refused.status, 403, JSON.stringify(refused.body));
        assert.match(JSON.stringify(refused.body), /token_exchange_refused/);
      }
      // Clients that would say yes to any question: none is asked, under either revision.
      const requestInit = { headers: { authorization: `Bearer ${bob}` } };
      const url = new URL(stack.resource);
      const v1 = confirmingClientV1("bob-v1", "accept");
      await v1.client.connect(new TransportV1(url, { requestInit }));
      const v2 = confirmingClientV2("bob-v2", "accept");
      await v2.client.connect(new TransportV2(url, { requestInit }));
      for (const client of [v1.client, v2.client] as ClientV1[]) {
        const result = await client.callTool({ name: gatedTool, arguments: args });
        const text = (result.content as { text?: string }[]).map((c) => c.text ?? "").join("");
        assert.equal(result.isError, true);
        assert.match(text, /^token_exchange_refused: /, text);
      }
      await v1.client.close();
      await v2.client.close();
      assert.deepEqual([...v1.answer.asked, ...v2.answer.asked], [], "no person was asked");
      assert.equal(stack.reached(), 0, "nothing reached the upstream");
      // The hour's one slot is still there: bob's refused calls did not spend it.
      const tool = mode === "spec mode" ? "get_ticket" : "whoami";
      const c = confirmingClientV2("alice-v2", "accept");
      await c.client.connect(
        new TransportV2(url, { requestInit: { headers: { authorization: `Bearer ${alice}` } } }),
      );
      const served = await c.client.callTool({
        name: tool,
        arguments: mode === "spec mode" ? { id: "1" } : {},
      });
      await c.client.close();
      assert.equal(served.isError, undefined, JSON.stringify(served));
      assert.equal(stack.seen.length, 1);
      const refusals = await logged(stack, "refused", (e) => e.subject === "bob", 5);
      assert.deepEqual([...new Set(refusals.map((e) => e.rule))], ["token_exchange"]);
    } finally {
      await stack.close();
    }
  });
}

Deno.test("spec mode: an exchanged token that expires is exchanged again (refresh); spans carry the subject", async () => {
  const spans: unknown[] = [];
  const receiver = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      if (new URL(req.url).pathname === "/v1/traces") spans.push(await req.json());
      else await req.body?.cancel();
      return Response.json({});
    },
  );
  // Kept until a quarter of its life before it ends (1.5 s here): room for a call on a busy
  // machine to reach the upstream before the token it carries ends.
  const stack = await specStack({
    ttl: 6,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}`,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
  });
  try {
    const alice = await login(stack, "alice");
    const client = await clientOf(stack, "2026-07-28", alice);
    try {
      const first = await client.call("get_ticket", { id: "1" });
      assert.equal(first.isError, false, first.text);
      // Call until the upstream sees another token for alice (bounded; no time is asserted).
      const renewed = await until(async () => {
        const again = await client.call("get_ticket", { id: "1" });
        assert.equal(again.isError, false, again.text);
        return new Set(stack.seen.map((s) => s.jti)).size > 1;
      }, { stepMs: 200 });
      assert.ok(renewed, "a later call carried a newly exchanged token");
    } finally {
      await client.close();
    }
    assert.ok(exchangesOf(stack, "alice") >= 2);
    const last = stack.seen.at(-1)!;
    assert.equal(last.sub, "alice");
    assert.ok(decodeJwt(last.token).exp! > decodeJwt(stack.seen[0].token).exp!);
  } finally {
    await stack.close();
  }
  await until(() => JSON.stringify(spans).includes("enduser.id"));
  await receiver.shutdown();
  const text = JSON.stringify(spans);
  assert.match(text, /"key":"enduser\.id","value":\{"stringValue":"alice"\}/);
});

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`wrap form (${revision} MCP server): token-exchange with private_key_jwt; two callers, each its own token; refused and down send nothing`, async () => {
    const stack = await wrapStack(revision);
    const closers: (() => Promise<void>)[] = [];
    try {
      const alice = await login(stack, "alice");
      const bob = await login(stack, "bob", "tickets:read");
      const a = await clientOf(stack, "2025-11-25", alice);
      const b = await clientOf(stack, "2026-07-28", bob);
      closers.push(a.close, b.close);
      for (const [who, client] of [["alice", a], ["bob", b], ["alice", a], ["bob", b]] as const) {
        const got = await client.call("whoami", {});
        assert.equal(got.isError, false, got.text);
        assert.deepEqual(JSON.parse(got.text), { sub: who, act: { sub: EXCHANGE_JWT_CLIENT } });
      }
      const api = await callApi(stack.weir.url, "whoami", {}, {
        headers: { authorization: `Bearer ${alice}` },
      });
      assert.equal(api.status, 200, JSON.stringify(api.body));
      assert.equal(exchangesOf(stack, "alice"), 1);
      assert.equal(exchangesOf(stack, "bob"), 1);
      assert.ok(stack.provider.exchanges.every((e) => e.authMethod === "private_key_jwt"));
      assert.deepEqual(stack.provider.exchanges.map((e) => e.params.scope), [
        "tickets:read",
        "tickets:read",
      ]);
      const reached = stack.reached();
      stack.provider.refuse.add("carol");
      const carol = await login(stack, "carol", "tickets:read");
      const c = await clientOf(stack, revision, carol);
      closers.push(c.close);
      const refused = await c.call("whoami", {});
      assert.equal(refused.isError, true);
      assert.match(refused.text, /^token_exchange_refused: /);
      stack.provider.oidc.tokenEndpointDown = 502;
      stack.provider.refuse.clear();
      const down = await c.call("whoami", {});
      assert.equal(down.isError, true);
      assert.match(down.text, /^token_exchange_unavailable: /);
      assert.equal(stack.reached(), reached, "neither call reached the MCP server");
      assertNoCallerToken(stack, [alice, bob, carol]);
      const audit = await logged(stack, "refused", (e) => e.rule === "token_exchange", 2);
      assert.deepEqual(audit.map((e) => [e.subject, e.status]), [["carol", 403], ["carol", 503]]);
    } finally {
      for (const close of closers) await close().catch(() => {});
      await stack.close();
    }
  });
}

Deno.test("wrap form: an MCP server that refuses the exchanged token (401, 403) is named as such, on the short path and the SDK's, never quoting its body", async () => {
  const BODY = "no entry for token-in-body-7f3a";
  const stack = await wrapStack("2026-07-28", (headers, body) => {
    if (!body.includes('"tools/call"')) return undefined;
    const token = /^Bearer (.+)$/.exec(headers.get("authorization") ?? "")?.[1];
    const sub = token ? decodeJwt(token).sub : undefined;
    return sub === "alice"
      ? new Response(BODY, { status: 401 })
      : sub === "bob"
      ? new Response(BODY, { status: 403 })
      : undefined;
  });
  try {
    for (const [who, status] of [["alice", 401], ["bob", 403]] as const) {
      const token = await login(stack, who, "tickets:read");
      const client = new ClientV1({ name: "refused", version: "1.0.0" });
      await client.connect(
        new TransportV1(new URL(stack.resource), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        // Without progress: weir's short path; with it: the official client's.
        for (const progress of [false, true]) {
          const result = await client.callTool(
            { name: "whoami", arguments: {} },
            undefined,
            progress ? { onprogress: () => {} } : undefined,
          );
          const text = (result.content as { text: string }[]).map((c) => c.text).join("");
          assert.equal(result.isError, true, text);
          assert.match(
            text,
            status === 401
              ? /the upstream answered 401: it refused the caller's exchanged token; check that the token exchange asks for the audience and scopes/
              : /the upstream answered 403: it refused this caller access/,
            `${who}, progress ${progress}`,
          );
          assert.doesNotMatch(text, /token-in-body|no entry/);
        }
      } finally {
        await client.close();
      }
    }
  } finally {
    await stack.close();
  }
});

Deno.test("the caller's exchanged token in an argument is refused at (b): nothing sent, never quoted (spec mode and the wrap form)", async () => {
  for (const form of ["spec", "wrap"] as const) {
    const stack = form === "spec" ? await specStack() : await wrapStack("2026-07-28");
    try {
      const alice = await login(stack, "alice");
      const client = await clientOf(stack, "2026-07-28", alice);
      try {
        const tool = form === "spec" ? "get_ticket" : "whoami";
        const ok = await client.call(tool, form === "spec" ? { id: "T-1" } : {});
        assert.equal(ok.isError, false, ok.text);
        const token = stack.seen[0].token;
        const reached = stack.reached();
        for (
          const args of form === "spec" ? [{ id: token }] : [{ note: token }, { n: btoa(token) }]
        ) {
          const refused = await client.call(tool, args);
          assert.equal(refused.isError, true, `${form}: ${refused.text}`);
          assert.match(refused.text, /^policy_denied: argument "(id|note|n)" of .* holds a secret/);
          assert.ok(!refused.text.includes(token.slice(-24)), "the refusal quotes the token");
        }
        assert.equal(stack.reached(), reached, `${form}: nothing reached the upstream`);
        const audit = await logged(stack, "refused", (e) => e.rule === "secret_argument", 1);
        assert.equal(audit[0].subject, "alice");
        assert.ok(!stack.weir.stderr().includes(token.slice(-24)), "the log holds the token");
      } finally {
        await client.close();
      }
    } finally {
      await stack.close();
    }
  }
});

Deno.test("wrap form and serve-upstream without client-credentials: an MCP server that wants a token on every request stops start-up saying why and to add it, without sending to a fix weir refuses", async () => {
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const provider = await startExchangeProvider(resource);
  // A protected MCP server as the MCP authorization spec asks: a bearer token on every request.
  const inner = await startSdkUpstream({
    revision: "2026-07-28",
    framing: "json",
    tools: [{ name: "whoami", description: "Who.", inputSchema: { type: "object" } }],
    refuse: (headers) =>
      headers.get("authorization") ? undefined : new Response(null, {
        status: 401,
        headers: { "www-authenticate": `Bearer resource_metadata="${inner.url}"` },
      }),
    onCall: () => ({ content: [{ type: "text", text: "hi" }] }),
  });
  try {
    const file = await tempGuardfile(`wrap ward mcp tickets {
    mcp-server http "${inner.url}" {
        token-exchange {
            audience "${provider.upstreamAudience}"
            client-id "${EXCHANGE_CLIENT.clientId}"
            client-secret { value env "WEIR_EXCHANGE_SECRET"; }
        }
    }
    proxy whoami
}
`);
    const oauth = ["--oauth-issuer", provider.oidc.issuer, "--oauth-resource", resource];
    const env = { WEIR_EXCHANGE_SECRET: EXCHANGE_CLIENT.clientSecret };
    const runs = [
      ["serve", file, "--http", `127.0.0.1:${port}`, ...oauth],
      [
        "serve-upstream",
        "--tool",
        "whoami",
        "--upstream",
        inner.url,
        "--http",
        `127.0.0.1:${port}`,
        ...oauth,
        "--token-exchange-audience",
        provider.upstreamAudience,
        "--token-exchange-client-id",
        EXCHANGE_CLIENT.clientId,
        "--token-exchange-secret-env",
        "WEIR_EXCHANGE_SECRET",
      ],
    ];
    for (const args of runs) {
      const r = await runCli(args, { env });
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /answered 401 to weir's connection, which carries no caller: with token-exchange, weir connects and lists the tools before any call.*add client-credentials to the token-exchange block/,
      );
      // Before: 'send one with ... header "Authorization"', which the loader refuses beside token-exchange.
      assert.doesNotMatch(r.stderr, /send one with/);
      assert.ok(!r.stderr.includes(EXCHANGE_CLIENT.clientSecret));
    }
  } finally {
    await inner.stop();
    await provider.close();
  }
});
