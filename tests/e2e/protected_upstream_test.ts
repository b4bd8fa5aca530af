/**
 * Token exchange in front of an MCP server protected as the MCP
 * authorization spec asks (issue 31, the wrap form): a bearer token on every
 * request, checked by the server itself against a real OpenID provider
 * (`npm:oidc-provider`, tests/support/oidc_exchange.ts), on the official SDK
 * (tests/support/protected_upstream.ts). The shipped CLI with default flags
 * (`weir serve FILE`, `weir serve-upstream`), the official clients of both
 * revisions, and what the MCP server itself saw:
 *
 * - with `client-credentials`, weir's own requests (the handshake, the
 *   listings, each re-verification) carry weir's own token (its `sub`
 *   weir's client), asked once and kept; each caller's `tools/call`,
 *   `resources/read` and `tasks/*` carry that caller's exchanged token; no
 *   caller's token and no token of weir's on a caller's request;
 * - under 2025-11-25, a server that binds each session to the subject that
 *   opened it: each caller gets a session of its own, none is crossed;
 * - weir's own token refreshed when it expires (a bounded wait, no timing
 *   asserted); a provider refusing weir's client the grant stops start-up at
 *   once, saying what to allow, with nothing sent to the MCP server;
 * - exchange refused and down as without `client-credentials`.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateTaskResultSchema,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { createRemoteJWKSet, jwtVerify } from "jose";
import {
  runCli,
  type Served,
  serveHttp,
  tempGuardfile,
  untilListening,
  weirCommand,
} from "../support/cli.ts";
import { freePort, tokenFor } from "../support/oidc.ts";
import {
  EXCHANGE_CLIENT,
  EXCHANGE_POST_CLIENT,
  type ExchangeProvider,
  startExchangeProvider,
} from "../support/oidc_exchange.ts";
import {
  type ProtectedUpstream,
  startProtectedUpstream,
  type TokenSeen,
} from "../support/protected_upstream.ts";
import { until } from "../support/wait.ts";

const SCOPES = "tickets:read tickets:write";
const WEIR = EXCHANGE_CLIENT.clientId;

interface Stack {
  provider: ExchangeProvider;
  upstream: ProtectedUpstream;
  resource: string;
  port: number;
  weir?: Served;
  /** Every token the MCP server verified, by jti. */
  tokens: Map<string, TokenSeen & { jti: string }>;
  /** Subjects whose (valid) tokens the MCP server refuses. */
  reject: Set<string>;
  close(): Promise<void>;
}

/** The provider and the protected MCP server (weir not started). */
async function stack(revision: "2025-11-25" | "2026-07-28"): Promise<Stack> {
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const provider = await startExchangeProvider(resource);
  provider.oidc.accounts = {
    alice: SCOPES.split(" "),
    bob: ["tickets:read"],
    carol: ["tickets:read"],
  };
  const jwks = createRemoteJWKSet(new URL(`${provider.oidc.issuer}/jwks`));
  const tokens = new Map<string, TokenSeen & { jti: string }>();
  const reject = new Set<string>();
  const upstream = await startProtectedUpstream({
    revision,
    verify: async (token) => {
      try {
        const { payload } = await jwtVerify(token, jwks, {
          issuer: provider.oidc.issuer,
          audience: provider.upstreamAudience,
        });
        if (reject.has(payload.sub!)) return `refused: ${payload.sub} may not use this server`;
        const seen = {
          sub: payload.sub!,
          ...(payload.act ? { act: payload.act as { sub: string } } : {}),
          token,
          jti: payload.jti!,
        };
        tokens.set(seen.jti, seen);
        return seen;
      } catch (error) {
        return (error as Error).message;
      }
    },
  });
  const s: Stack = {
    provider,
    upstream,
    resource,
    port,
    tokens,
    reject,
    close: async () => {
      await s.weir?.stop();
      await upstream.stop();
      await provider.close();
    },
  };
  return s;
}

/** The wrap file: `token-exchange` with `client-credentials` (and `more` in the block). */
function wrapFile(s: Stack, revision: string, options: { client?: string; more?: string } = {}) {
  return tempGuardfile(`wrap ward mcp tickets {
    mcp-server http "${s.upstream.url}" {
        token-exchange {
            audience "${s.provider.upstreamAudience}"
            client-id "${options.client ?? WEIR}"
            client-secret${
    options.client ? ` method="post"` : ""
  } { value env "WEIR_EXCHANGE_SECRET"; }
            client-credentials { scope "tickets:read"; }
        }
        ${options.more ?? ""}
    }
    proxy whoami { scope "tickets:read"; }
    ${revision === "2025-11-25" ? `proxy report { scope "tickets:read"; }` : ""}
}
`);
}

async function serve(s: Stack, file: string): Promise<Served> {
  s.weir = await serveHttp(file, {
    address: `127.0.0.1:${s.port}`,
    extra: ["--oauth-issuer", s.provider.oidc.issuer, "--oauth-resource", s.resource],
    env: { WEIR_EXCHANGE_SECRET: EXCHANGE_CLIENT.clientSecret, WEIR_LOG_LEVEL: "debug" },
  });
  return s.weir;
}

async function login(s: Stack, account: string, scope = SCOPES): Promise<string> {
  s.provider.oidc.login = account;
  return await tokenFor(s.provider.oidc, s.resource, scope);
}

/** An official client of `revision` with `token` as its bearer. */
async function clientOf(s: Stack, revision: string, token: string): Promise<ClientV1> {
  const requestInit = { headers: { authorization: `Bearer ${token}` } };
  const url = new URL(s.resource);
  if (revision === "2025-11-25") {
    const client = new ClientV1({ name: "protected-v1", version: "1.0.0" });
    await client.connect(new TransportV1(url, { requestInit }));
    return client;
  }
  const client = new ClientV2({ name: "protected-v2", version: "1.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(new TransportV2(url, { requestInit }));
  return client as unknown as ClientV1;
}

function textOf(result: { content?: unknown }): string {
  return (result.content as { text?: string }[]).map((c) => c.text ?? "").join("");
}

/** The subjects the MCP server saw per JSON-RPC method (or HTTP method for GET/DELETE). */
function subjectsBy(upstream: ProtectedUpstream): Map<string, Set<string>> {
  const by = new Map<string, Set<string>>();
  for (const r of upstream.seen) {
    const key = r.method ?? r.http;
    by.set(key, new Set([...(by.get(key) ?? []), r.sub]));
  }
  return by;
}

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`protected MCP server (${revision}): weir's own requests carry weir's own token, each caller's requests its exchanged token; no caller's token upstream`, async () => {
    const s = await stack(revision);
    const clients: ClientV1[] = [];
    try {
      const weir = await serve(s, await wrapFile(s, revision));
      const alice = await login(s, "alice");
      const bob = await login(s, "bob", "tickets:read");
      for (
        const [who, token, rev] of [
          ["alice", alice, "2025-11-25"],
          ["bob", bob, "2026-07-28"],
          ["alice", alice, "2026-07-28"],
          ["bob", bob, "2025-11-25"],
        ] as const
      ) {
        const client = await clientOf(s, rev, token);
        clients.push(client);
        const got = await client.callTool({ name: "whoami", arguments: {} });
        assert.equal(got.isError, undefined, textOf(got));
        assert.deepEqual(JSON.parse(textOf(got)), { sub: who, act: { sub: WEIR } });
        // The interface of the tool, read with the caller's own exchanged token.
        const read = await client.readResource({ uri: "ui://whoami/view" });
        assert.equal((read.contents[0] as { text: string }).text, `<p>${who}</p>`);
      }
      if (revision === "2025-11-25") {
        // A task lives on the caller's session: made, polled and read back as alice.
        const a = clients[0];
        const rpc = (method: string, params: Record<string, unknown>, schema: never) =>
          a.request({ method, params } as never, schema);
        const made = await rpc("tools/call", {
          name: "report",
          arguments: {},
          task: { ttl: 60_000 },
        }, CreateTaskResultSchema as never) as { task: { taskId: string } };
        const taskId = made.task.taskId;
        assert.ok(
          await until(async () =>
            ((await rpc("tasks/get", { taskId }, GetTaskResultSchema as never)) as {
              status: string;
            }).status === "completed"
          ),
          "the task completed",
        );
        const result = await rpc("tasks/result", { taskId }, GetTaskPayloadResultSchema as never);
        assert.deepEqual(JSON.parse(textOf(result as { content: unknown })), {
          sub: "alice",
          act: { sub: WEIR },
        });
      }
      const by = subjectsBy(s.upstream);
      // Every request was verified: weir's own with weir's token, callers' with theirs.
      assert.ok(
        ![...by.values()].some((subs) => [...subs].some((x) => x.startsWith("refused"))),
        JSON.stringify([...by]),
      );
      for (
        const own of ["initialize", "tools/list", "resources/list", "notifications/initialized"]
      ) {
        const subs = by.get(own);
        if (own === "initialize" || own === "tools/list") assert.ok(subs, `${own} was sent`);
        if (!subs) continue;
        // weir's own (and, 2025-11-25, each caller's session opening with its own token).
        assert.ok(subs.has(WEIR), `${own}: ${[...subs]}`);
        if (revision === "2026-07-28") assert.deepEqual([...subs], [WEIR], own);
      }
      assert.deepEqual(s.upstream.of("tools/list").map((r) => r.sub).filter((x) => x !== WEIR), []);
      for (const caller of ["tools/call", "resources/read"]) {
        assert.deepEqual([...by.get(caller)!].sort(), ["alice", "bob"], caller);
      }
      if (revision === "2025-11-25") {
        for (const m of ["tasks/get", "tasks/result"]) {
          assert.deepEqual([...by.get(m)!], ["alice"], m);
        }
        // One session for weir and one per caller, none crossed.
        assert.deepEqual([...s.upstream.sessions.values()].sort(), ["alice", "bob", WEIR]);
        assert.equal(s.upstream.crossed, 0);
      }
      // weir's own token: asked once with the exchange's client, kept.
      const own = s.provider.ownTokens.filter((t) => !t.error);
      assert.equal(own.length, 1);
      assert.equal(own[0].client, WEIR);
      assert.equal(own[0].params.grant_type, "client_credentials");
      assert.equal(own[0].params.audience, s.provider.upstreamAudience);
      assert.equal(own[0].params.scope, "tickets:read");
      // No caller's own token, nor any part of it, reached the MCP server or the log.
      const everything = s.upstream.everything();
      for (const token of [alice, bob]) {
        assert.ok(
          !everything.includes(token.slice(-24)),
          "a caller's token reached the MCP server",
        );
        assert.ok(!weir.stderr().includes(token.slice(-24)), "a caller's token is in weir's log");
      }
      // weir's own token is never on a caller's request, nor anywhere in the log.
      const weirTokens = [...s.tokens.values()].filter((t) => t.sub === WEIR).map((t) => t.token);
      assert.equal(new Set(weirTokens).size, 1);
      assert.ok(!weir.stderr().includes(weirTokens[0].slice(-24)), "weir's token is in its log");
      const logged = weir.stderr().split("\n").filter((l) => l.includes('"client_credentials"'));
      assert.equal(logged.length, 1, logged.join("\n"));
      assert.match(logged[0], /"outcome":"issued","client":"weir-exchange"/);
    } finally {
      for (const c of clients) await c.close().catch(() => {});
      await s.close();
    }
  });
}

Deno.test("protected MCP server: refused and down exchanges send nothing (calls and resource reads); weir's own token goes on for its listings", async () => {
  const s = await stack("2026-07-28");
  try {
    await serve(s, await wrapFile(s, "2026-07-28", { more: "max-staleness 0" }));
    const carol = await login(s, "carol", "tickets:read");
    s.provider.refuse.add("carol");
    const client = await clientOf(s, "2025-11-25", carol);
    try {
      const reached = () => s.upstream.seen.filter((r) => r.sub === "carol").length;
      const refused = await client.callTool({ name: "whoami", arguments: {} });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /^token_exchange_refused: /);
      const read = await client.readResource({ uri: "ui://whoami/view" }).catch((e: Error) => e);
      assert.ok(read instanceof Error);
      assert.match(
        read.message,
        /token_exchange_refused: the identity provider .* refused to exchange the caller's token/,
      );
      // Its kind said once.
      assert.doesNotMatch(read.message, /token_exchange_refused: token_exchange_refused/);
      s.provider.refuse.clear();
      s.provider.oidc.tokenEndpointDown = 503;
      const down = await client.callTool({ name: "whoami", arguments: {} });
      assert.match(textOf(down), /^token_exchange_unavailable: /);
      assert.equal(reached(), 0, "nothing of carol's reached the MCP server");
      // With max-staleness 0 each call lists first: weir's own kept token still did.
      assert.ok(s.upstream.of("tools/list").length >= 3);
      assert.ok(s.upstream.of("tools/list").every((r) => r.sub === WEIR));
    } finally {
      await client.close();
    }
  } finally {
    await s.close();
  }
});

Deno.test("protected MCP server (2025-11-25): a caller whose exchanged token the MCP server refuses at the opening of its own session is told that token was refused; other callers and weir's session go on", async () => {
  const s = await stack("2025-11-25");
  const clients: ClientV1[] = [];
  try {
    await serve(s, await wrapFile(s, "2025-11-25"));
    s.reject.add("carol");
    for (const rev of ["2025-11-25", "2026-07-28"]) {
      const client = await clientOf(s, rev, await login(s, "carol", "tickets:read"));
      clients.push(client);
      const refused = await client.callTool({ name: "whoami", arguments: {} });
      assert.equal(refused.isError, true);
      // Said as the exchanged token's refusal (not weir's header), once.
      assert.match(
        textOf(refused),
        /^upstream_error: calling the tool: the upstream answered 401: it refused the caller's exchanged token; check that the token exchange asks for the audience and scopes/,
      );
      assert.doesNotMatch(textOf(refused), /answered: the upstream answered/);
    }
    const bob = await clientOf(s, "2025-11-25", await login(s, "bob", "tickets:read"));
    clients.push(bob);
    const got = await bob.callTool({ name: "whoami", arguments: {} });
    assert.deepEqual(JSON.parse(textOf(got)), { sub: "bob", act: { sub: WEIR } });
    // carol's requests stopped at her own session's handshake; none went on weir's session.
    assert.deepEqual(
      s.upstream.seen.filter((r) => r.sub.includes("carol")).map((r) => r.method),
      ["initialize", "initialize"],
    );
    assert.deepEqual([...s.upstream.sessions.values()].sort(), ["bob", WEIR]);
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await s.close();
  }
});

Deno.test("protected MCP server: weir's own token is asked anew before it expires (refresh), and never reused past it", async () => {
  const s = await stack("2026-07-28");
  // weir's own token lasts 6 s: kept until a quarter of its life before it ends.
  s.provider.oidc.resourceTtl = 6;
  try {
    await serve(s, await wrapFile(s, "2026-07-28", { more: "max-staleness 0" }));
    const alice = await login(s, "alice");
    const client = await clientOf(s, "2026-07-28", alice);
    try {
      // Each call re-verifies the listing with weir's own token (a bounded wait, no timing).
      const refreshed = await until(async () => {
        const got = await client.callTool({ name: "whoami", arguments: {} });
        assert.equal(got.isError, undefined, textOf(got));
        return s.provider.ownTokens.filter((t) => !t.error).length >= 2;
      }, { timeoutMs: 30_000, stepMs: 250 });
      assert.ok(refreshed, "weir asked for its own token again");
      const weirTokens = [...s.tokens.values()].filter((t) => t.sub === WEIR);
      assert.ok(weirTokens.length >= 2, "the MCP server saw weir's new token");
      assert.ok(
        !s.upstream.seen.some((r) => r.sub.startsWith("refused")),
        "no expired token was sent",
      );
    } finally {
      await client.close();
    }
  } finally {
    await s.close();
  }
});

Deno.test("protected MCP server: a provider refusing weir's client the client credentials grant stops start-up at once, saying what to allow; nothing reaches the MCP server", async () => {
  const s = await stack("2026-07-28");
  try {
    const file = await wrapFile(s, "2026-07-28", { client: EXCHANGE_POST_CLIENT.clientId });
    const oauth = ["--oauth-issuer", s.provider.oidc.issuer, "--oauth-resource", s.resource];
    const env = { WEIR_EXCHANGE_SECRET: EXCHANGE_POST_CLIENT.clientSecret };
    const runs = [
      ["serve", file, "--http", `127.0.0.1:${s.port}`, ...oauth],
      [
        "serve-upstream",
        "--tool",
        "whoami",
        "--upstream",
        s.upstream.url,
        "--http",
        `127.0.0.1:${s.port}`,
        ...oauth,
        "--token-exchange-audience",
        s.provider.upstreamAudience,
        "--token-exchange-client-id",
        EXCHANGE_POST_CLIENT.clientId,
        "--token-exchange-secret-env",
        "WEIR_EXCHANGE_SECRET",
        "--token-exchange-secret-post",
        "--token-exchange-client-credentials",
      ],
    ];
    for (const args of runs) {
      const r = await runCli(args, { env });
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /refused weir's own token for https:\/\/tickets\.example\/api \(client credentials grant, RFC 6749 section 4\.4, as client weir-exchange-post; (unauthorized_client|invalid_request)\): allow that client the client_credentials grant/,
      );
      // At once: one attempt, not the connect timeout's retries.
      assert.doesNotMatch(r.stderr, /attempts\)/);
      assert.ok(!r.stderr.includes(EXCHANGE_POST_CLIENT.clientSecret));
    }
    assert.deepEqual(s.upstream.seen, [], "nothing reached the MCP server");
  } finally {
    await s.close();
  }
});

Deno.test("describe and lint-upstream FILE list a protected MCP server with weir's own token (client-credentials); without it, they say to add it", async () => {
  const s = await stack("2025-11-25");
  try {
    const env = { WEIR_EXCHANGE_SECRET: EXCHANGE_CLIENT.clientSecret };
    const oauth = `oauth issuer="${s.provider.oidc.issuer}" resource="${s.resource}"\n`;
    const withOwn = await tempGuardfile(
      oauth + await Deno.readTextFile(await wrapFile(s, "2025-11-25")),
    );
    const described = await runCli(["describe", withOwn], { env });
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /^whoami {2}MCP tool whoami/m);
    assert.match(
      described.stdout,
      /weir's own requests \(handshake, listings\) with its own token \(client credentials, scopes tickets:read\)/,
    );
    const linted = await runCli(["lint-upstream", withOwn], { env });
    assert.equal(linted.code, 0, linted.stderr);
    assert.match(linted.stdout, /^whoami\tpresent$/m);
    const diffed = await runCli(["diff", "--live", withOwn, withOwn], { env });
    assert.equal(diffed.code, 0, diffed.stderr);
    assert.match(diffed.stdout, /no change in what an agent can do/);
    assert.ok(s.upstream.of("tools/list").every((r) => r.sub === WEIR));
    assert.ok(s.upstream.of("tools/list").length >= 3);
    // The token endpoint is the issuer's: a file naming neither says what to add.
    const noIssuer = await wrapFile(s, "2025-11-25");
    for (const command of ["describe", "lint-upstream"]) {
      const r = await runCli([command, noIssuer], { env });
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /add token-endpoint to the token-exchange block, or an oauth node with issuer=/,
      );
      // Nothing else sends the reader to a header the loader refuses.
      assert.doesNotMatch(r.stderr, /send one with --upstream-header/);
    }
    // Without client-credentials: the 401 says to add it (not the header the loader refuses).
    const without = (await Deno.readTextFile(withOwn)).replace(/client-credentials \{[^}]*\}/, "");
    const file = await tempGuardfile(without);
    for (const command of [["describe"], ["lint-upstream"], ["diff", "--live", file]]) {
      const r = await runCli([...command, file], { env });
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /answered 401 to weir's connection, which carries no caller: .* add client-credentials to the token-exchange block/,
      );
      assert.doesNotMatch(r.stderr, /send one with --upstream-header/);
      assert.ok(!r.stderr.includes(EXCHANGE_CLIENT.clientSecret));
    }
  } finally {
    await s.close();
  }
});

Deno.test("serve-upstream --token-exchange-client-credentials: a protected MCP server is served; listing as weir, calls as each caller", async () => {
  const s = await stack("2025-11-25");
  try {
    s.weir = await (async () => {
      const { command, args } = weirCommand();
      const child = new Deno.Command(command, {
        args: [
          ...args,
          "serve-upstream",
          "--tool",
          "whoami",
          "--upstream",
          s.upstream.url,
          "--http",
          `127.0.0.1:${s.port}`,
          "--oauth-issuer",
          s.provider.oidc.issuer,
          "--oauth-resource",
          s.resource,
          "--tool-scope",
          "whoami=tickets:read",
          "--token-exchange-audience",
          s.provider.upstreamAudience,
          "--token-exchange-client-id",
          WEIR,
          "--token-exchange-secret-env",
          "WEIR_EXCHANGE_SECRET",
          "--token-exchange-client-credentials-scope",
          "tickets:read",
        ],
        env: { WEIR_EXCHANGE_SECRET: EXCHANGE_CLIENT.clientSecret },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      return await untilListening(child, "weir serve-upstream", { timeoutMs: 60_000 });
    })();
    for (const who of ["alice", "bob"]) {
      const client = await clientOf(s, "2026-07-28", await login(s, who, "tickets:read"));
      try {
        const got = await client.callTool({ name: "whoami", arguments: {} });
        assert.deepEqual(JSON.parse(textOf(got)), { sub: who, act: { sub: WEIR } });
      } finally {
        await client.close();
      }
    }
    assert.deepEqual([...s.upstream.sessions.values()].sort(), ["alice", "bob", WEIR]);
    assert.equal(s.upstream.crossed, 0);
    assert.ok(s.upstream.of("tools/list").every((r) => r.sub === WEIR));
    assert.equal(s.provider.ownTokens.filter((t) => !t.error)[0].params.scope, "tickets:read");
  } finally {
    await s.close();
  }
});
