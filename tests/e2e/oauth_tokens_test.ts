/**
 * What weir, serving as an OAuth resource server through the real CLI, makes
 * of tokens: RFC 9728 metadata at both well-known paths; 401 with a Bearer
 * challenge for a missing, expired, not-yet-valid, wrong-issuer,
 * wrong-audience, `alg: none`, HS256-signed, foreign-key or tampered token;
 * a real token from the OpenID provider and a well-formed one signed with its
 * key pass (so each refusal is the claim under test). Nothing refused reaches
 * the upstream, and no token reaches the log.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, importJWK, type JWTPayload, SignJWT } from "jose";
import { runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { freePort, INTROSPECTION_CLIENT, startOidc, tokenFor } from "../support/oidc.ts";
import { decodeBase64Url, encodeBase64Url } from "../support/base64url.ts";

const FIXTURE = "tests/fixtures/oauth_tickets.mcp.kdl";

async function stack(options: { introspection?: boolean } = {}) {
  const upstream = await startRecorder();
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const oidc = await startOidc(resource);
  const extra = ["--oauth-issuer", oidc.issuer, "--oauth-resource", resource];
  const env: Record<string, string> = {
    TICKETS_BASE_URL: upstream.url,
    TICKETS_KEY: "upstream-key-123456",
  };
  if (options.introspection) {
    extra.push(
      "--oauth-introspection-client-id",
      INTROSPECTION_CLIENT.clientId,
      "--oauth-introspection-secret-env",
      "WEIR_INTROSPECTION_SECRET",
    );
    env.WEIR_INTROSPECTION_SECRET = INTROSPECTION_CLIENT.clientSecret;
  }
  const weir = await serveHttp(FIXTURE, { address: `127.0.0.1:${port}`, extra, env }).catch(
    async (error) => {
      await oidc.close();
      await upstream.close();
      throw error;
    },
  );
  return {
    upstream,
    oidc,
    weir,
    resource,
    close: async () => {
      await weir.stop();
      await oidc.close();
      await upstream.close();
    },
  };
}

/** `tools/call list_ticket` (which would reach the upstream) under `authorization`. */
function callList(mcp: string, authorization?: string, url = mcp): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
  };
  if (authorization !== undefined) headers.authorization = authorization;
  return fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "list_ticket", arguments: { board: "ops" } },
    }),
  });
}

function challenge(response: Response): Record<string, string> {
  const header = response.headers.get("www-authenticate");
  assert.ok(header?.startsWith("Bearer "), `a Bearer challenge, got ${header}`);
  return Object.fromEntries([...header!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

Deno.test("metadata, then every bad token is a 401 that reaches nothing upstream", async () => {
  const s = await stack();
  const now = Math.floor(Date.now() / 1000);
  const key = await importJWK(s.oidc.signingKey, "ES256");
  const sign = (claims: JWTPayload, header: Record<string, unknown> = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid: s.oidc.signingKey.kid, typ: "at+jwt", ...header })
      .sign(key);
  const good: JWTPayload = {
    iss: s.oidc.issuer,
    aud: s.resource,
    sub: "mallory",
    client_id: "weir-test-client",
    scope: "tickets:read tickets:write",
    iat: now,
    exp: now + 300,
  };
  const tokens: string[] = [];
  try {
    // RFC 9728 metadata, at the path-suffixed form and at the root.
    const origin = new URL(s.resource).origin;
    for (
      const path of [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
      ]
    ) {
      const response = await fetch(origin + path);
      assert.equal(response.status, 200, path);
      assert.deepEqual(await response.json(), {
        resource: s.resource,
        authorization_servers: [s.oidc.issuer],
        bearer_methods_supported: ["header"],
        scopes_supported: ["tickets:read", "tickets:write"],
      });
    }

    // No token: 401, pointing at the metadata, naming the scopes, no error code.
    const none = await callList(s.resource);
    assert.equal(none.status, 401);
    await none.body?.cancel();
    assert.deepEqual(challenge(none), {
      scope: "tickets:read tickets:write",
      resource_metadata: `${origin}/.well-known/oauth-protected-resource/mcp`,
    });

    // The baselines pass: a real token from the provider, and one signed with its key.
    const real = await tokenFor(s.oidc, s.resource, "tickets:read");
    const forged = await sign(good);
    const withinSkew = await sign({ ...good, exp: now - 5 });
    tokens.push(real, forged, withinSkew);
    for (const token of [real, forged, withinSkew]) {
      const ok = await callList(s.resource, `Bearer ${token}`);
      assert.equal(ok.status, 200, await ok.text());
    }
    const reached = s.upstream.requests.length;
    assert.equal(reached, 3);

    const [h, p, sig] = real.split(".");
    const claims = JSON.parse(new TextDecoder().decode(decodeBase64Url(p)));
    const other = await generateKeyPair("ES256", { extractable: true });
    const publicJwk = await exportJWK(other.publicKey);
    const hmacKey = new TextEncoder().encode(JSON.stringify(publicJwk));
    const flipped = sig.slice(0, -2) + (sig.at(-2) === "A" ? "B" : "A") + sig.at(-1);
    const bad: [string, string][] = [
      ["expired beyond the skew", await sign({ ...good, exp: now - 120 })],
      ["not valid yet", await sign({ ...good, nbf: now + 300 })],
      ["wrong issuer", await sign({ ...good, iss: "http://127.0.0.1:1" })],
      ["wrong audience", await sign({ ...good, aud: `${origin}/other` })],
      ["audience of another server", await sign({ ...good, aud: "https://api.example.com" })],
      ["no exp", await sign({ ...good, exp: undefined })],
      ["another kind of JWT (a logout token)", await sign(good, { typ: "logout+jwt" })],
      [
        "alg none",
        `${encodeBase64Url(JSON.stringify({ alg: "none", typ: "JWT" }))}.${
          encodeBase64Url(JSON.stringify(good))
        }.`,
      ],
      [
        "HS256 keyed with a public key",
        await new SignJWT(good).setProtectedHeader({ alg: "HS256", kid: s.oidc.signingKey.kid })
          .sign(hmacKey),
      ],
      [
        "signed by a foreign key under the provider's kid",
        await new SignJWT(good).setProtectedHeader({ alg: "ES256", kid: s.oidc.signingKey.kid })
          .sign(other.privateKey),
      ],
      [
        "tampered payload (more scope)",
        `${h}.${encodeBase64Url(JSON.stringify({ ...claims, scope: "tickets:write" }))}.${sig}`,
      ],
      ["tampered signature", `${h}.${p}.${flipped}`],
      ["opaque garbage without introspection", "not-a-jwt-at-all"],
    ];
    for (const [name, token] of bad) {
      tokens.push(token);
      const response = await callList(s.resource, `Bearer ${token}`);
      assert.equal(response.status, 401, `${name}: ${response.status}`);
      await response.body?.cancel();
      const params = challenge(response);
      assert.equal(params.error, "invalid_token", name);
      assert.equal(params.resource_metadata, `${origin}/.well-known/oauth-protected-resource/mcp`);
    }
    // Not a Bearer credential at all, or a token in the query string (never read).
    const basic = await callList(s.resource, "Basic d2VpcjpzZWNyZXQ=");
    assert.equal(basic.status, 401);
    await basic.body?.cancel();
    // RFC 6750 section 3.1: another scheme carries no bearer token: no error code.
    assert.equal(challenge(basic).error, undefined);
    const query = await callList(s.resource, undefined, `${s.resource}?access_token=${forged}`);
    assert.equal(query.status, 401);
    await query.body?.cancel();
    assert.equal(s.upstream.requests.length, reached, "no refused request reached the upstream");
    for (const r of s.upstream.requests) assert.equal(r.headers.get("authorization"), null);
  } finally {
    await s.close();
  }
  const log = s.weir.stderr();
  // Each refusal was for the reason under test, in order.
  const reasons = log.split("\n").filter((l) => l.includes('"rule":"auth"'))
    .map((l) => JSON.parse(l).reason as string);
  assert.deepEqual(reasons, [
    "no bearer token",
    'JWT refused: ERR_JWT_EXPIRED: "exp" claim timestamp check failed',
    'JWT refused: ERR_JWT_CLAIM_VALIDATION_FAILED: "nbf" claim timestamp check failed',
    'JWT refused: ERR_JWT_CLAIM_VALIDATION_FAILED: unexpected "iss" claim value',
    'JWT refused: ERR_JWT_CLAIM_VALIDATION_FAILED: unexpected "aud" claim value',
    'JWT refused: ERR_JWT_CLAIM_VALIDATION_FAILED: unexpected "aud" claim value',
    'JWT refused: ERR_JWT_CLAIM_VALIDATION_FAILED: missing required "exp" claim',
    'JWT refused: typ "logout+jwt" is not an access token',
    'JWT refused: ERR_JOSE_ALG_NOT_ALLOWED: "alg" (Algorithm) Header Parameter value not allowed',
    'JWT refused: ERR_JOSE_ALG_NOT_ALLOWED: "alg" (Algorithm) Header Parameter value not allowed',
    "JWT refused: ERR_JWS_SIGNATURE_VERIFICATION_FAILED: signature verification failed",
    "JWT refused: ERR_JWS_SIGNATURE_VERIFICATION_FAILED: signature verification failed",
    "JWT refused: ERR_JWS_SIGNATURE_VERIFICATION_FAILED: signature verification failed",
    "not a JWT, and no introspection is configured for opaque tokens",
    "not a Bearer credential",
    "no bearer token",
  ]);
  assert.match(
    log,
    /"event":"tool_call","decision":"allow","tool":"list_ticket".*"subject":"mallory"/,
  );
  for (const token of tokens) {
    assert.ok(!log.includes(token.split(".").at(-1)!.slice(0, 40) || token), "no token in the log");
  }
});

Deno.test("opaque tokens are checked by RFC 7662 introspection when configured", async () => {
  const s = await stack({ introspection: true });
  try {
    s.oidc.format = "opaque";
    const token = await tokenFor(s.oidc, s.resource, "tickets:read");
    assert.ok(!token.includes("."), "the provider issued an opaque token");
    const ok = await callList(s.resource, `Bearer ${token}`);
    assert.equal(ok.status, 200, await ok.text());
    const introspections = () => s.oidc.hits.get("/token/introspection") ?? 0;
    assert.equal(introspections(), 1);
    const again = await callList(s.resource, `Bearer ${token}`);
    assert.equal(again.status, 200, await again.text());
    assert.equal(introspections(), 1, "an active answer is reused for a short while");
    // Scopes come from the introspection answer: tickets:read only.
    const write = await fetch(new URL("/api/create_ticket", s.resource), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ board: "ops", title: "x" }),
    });
    assert.equal(write.status, 403);
    await write.body?.cancel();
    assert.equal(challenge(write).scope, "tickets:write");
    const unknown = await callList(s.resource, `Bearer ${token}x`);
    assert.equal(unknown.status, 401);
    await unknown.body?.cancel();
    assert.equal(s.upstream.requests.length, 2);
    assert.equal(introspections(), 2, "an unknown token is asked about, not taken from the cache");
    assert.ok(!s.weir.stderr().includes(token));
  } finally {
    await s.close();
  }
});

Deno.test("a reload swaps the scopes with the surface: list, calls and metadata follow", async () => {
  const upstream = await startRecorder();
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const oidc = await startOidc(resource);
  const original = await Deno.readTextFile(FIXTURE);
  const file = await tempGuardfile(original);
  const admin = "admin-token-for-reload-0123";
  const weir = await serveHttp(file, {
    address: `127.0.0.1:${port}`,
    extra: [
      "--oauth-issuer",
      oidc.issuer,
      "--oauth-resource",
      resource,
      "--admin-token-env",
      "WEIR_ADMIN",
    ],
    env: { TICKETS_BASE_URL: upstream.url, TICKETS_KEY: "upstream-key-123456", WEIR_ADMIN: admin },
  });
  try {
    const token = await tokenFor(oidc, resource, "tickets:read");
    const list = async () => {
      const response = await fetch(resource, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      const body = await response.json();
      return (body.result.tools as { name: string }[]).map((t) => t.name).sort();
    };
    const supported = async () =>
      (await (await fetch(new URL("/.well-known/oauth-protected-resource/mcp", resource))).json())
        .scopes_supported;
    assert.ok(!(await list()).includes("create_ticket"));
    // The file now lets tickets:read create tickets, and adds an admin scope to close.
    await Deno.writeTextFile(
      file,
      original.replace(
        `body "title"\n        scope "tickets:write"`,
        `body "title"\n        scope "tickets:read"`,
      ).replace(
        `set status="closed"\n        scope "tickets:write"`,
        `set status="closed"\n        scope "tickets:admin"`,
      ),
    );
    const reload = await fetch(new URL("/admin/reload", resource), {
      method: "POST",
      headers: { authorization: `Bearer ${admin}` },
    });
    assert.equal(reload.status, 200, await reload.text());
    assert.ok((await list()).includes("create_ticket"));
    assert.deepEqual(await supported(), ["tickets:admin", "tickets:read"]);
    const create = await fetch(new URL("/api/create_ticket", resource), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ board: "ops", title: "x" }),
    });
    assert.equal(create.status, 200, await create.text());
    const close = await fetch(new URL("/api/close_ticket", resource), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ board: "ops", id: "1" }),
    });
    assert.equal(close.status, 403);
    await close.body?.cancel();
    assert.equal(challenge(close).scope, "tickets:admin");
  } finally {
    await weir.stop();
    await oidc.close();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("the guardfile's oauth node serves OAuth without flags; a static token beside it is refused", async () => {
  const upstream = await startRecorder();
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const oidc = await startOidc(resource);
  const file = await tempGuardfile(
    `oauth issuer="${oidc.issuer}" resource="${resource}"\n` + await Deno.readTextFile(FIXTURE),
  );
  const env = {
    TICKETS_BASE_URL: upstream.url,
    TICKETS_KEY: "upstream-key-123456",
    STATIC: "a-static-inbound-token-0123456789",
  };
  try {
    const both = await runCli(
      ["serve", file, "--http", `127.0.0.1:${port}`, "--inbound-token-env", "STATIC"],
      { env },
    );
    assert.equal(both.code, 2, both.stderr);
    assert.ok(
      both.stderr.includes(`${file}:1:1: the guardfile asks for OAuth, which cannot be combined`),
      both.stderr,
    );
    const described = await runCli(["describe", file]);
    assert.match(described.stdout, new RegExp(`oauth tokens from ${oidc.issuer} for ${resource}`));

    const weir = await serveHttp(file, { address: `127.0.0.1:${port}`, env });
    try {
      const none = await callList(resource);
      assert.equal(none.status, 401);
      await none.body?.cancel();
      assert.equal(
        challenge(none).resource_metadata,
        `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`,
      );
      const token = await tokenFor(oidc, resource, "tickets:read");
      const ok = await callList(resource, `Bearer ${token}`);
      assert.equal(ok.status, 200, await ok.text());
      assert.equal(upstream.requests.length, 1);
    } finally {
      await weir.stop();
    }
  } finally {
    await oidc.close();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("a browser-based client (--allow-origin) can read the challenge and the metadata", async () => {
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const oidc = await startOidc(resource);
  const origin = "http://app.example";
  const weir = await serveHttp(FIXTURE, {
    address: `127.0.0.1:${port}`,
    extra: ["--oauth-issuer", oidc.issuer, "--oauth-resource", resource, "--allow-origin", origin],
    env: { TICKETS_BASE_URL: "http://127.0.0.1:9", TICKETS_KEY: "upstream-key-123456" },
  });
  try {
    const preflight = await fetch(resource, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    await preflight.body?.cancel();
    assert.equal(preflight.status, 204);
    assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /authorization/);
    const denied = await fetch(resource, {
      method: "POST",
      headers: { origin, "content-type": "application/json" },
      body: "{}",
    });
    await denied.body?.cancel();
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get("access-control-allow-origin"), origin);
    assert.match(denied.headers.get("access-control-expose-headers") ?? "", /WWW-Authenticate/i);
    assert.ok(challenge(denied).resource_metadata);
    const metadata = await fetch(
      `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`,
      { headers: { origin } },
    );
    await metadata.body?.cancel();
    assert.equal(metadata.headers.get("access-control-allow-origin"), "*");
  } finally {
    await weir.stop();
    await oidc.close();
  }
});
