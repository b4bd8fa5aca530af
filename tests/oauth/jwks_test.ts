/**
 * The JWKS behind weir's token check (`src/oauth/access_tokens.ts`),
 * against a small local issuer whose keys a test can rotate: discovery finds
 * the JWKS from the metadata, the key set is fetched once and cached, a token
 * signed by a new key (an unknown `kid`) makes weir fetch it again, and a
 * stream of tokens with unknown `kid`s costs at most one fetch per cooldown.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { createTokenVerifier, discoverIssuer, TokenError } from "../../src/oauth/access_tokens.ts";

async function key(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  return { kid, privateKey, public: { ...(await exportJWK(publicKey)), kid, alg: "ES256" } as JWK };
}

Deno.test("JWKS: cached, fetched again for an unknown kid, at most once per cooldown", async () => {
  const keys: JWK[] = [];
  let jwksFetches = 0;
  const fetchedAt: number[] = [];
  const where: { issuer: string } = { issuer: "" };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request): Response => {
      const issuer = where.issuer;
      const path = new URL(request.url).pathname;
      if (path === "/.well-known/oauth-authorization-server") {
        return Response.json({ issuer, jwks_uri: `${issuer}/jwks` });
      }
      if (path === "/jwks") {
        jwksFetches++;
        fetchedAt.push(performance.now());
        return Response.json({ keys });
      }
      return new Response("no", { status: 404 });
    },
  );
  const issuer = where.issuer = `http://127.0.0.1:${server.addr.port}`;
  const COOLDOWN = 2000;
  const resource = "https://mcp.example.com/mcp";
  try {
    const a = await key("a");
    keys.push(a.public);
    const metadata = await discoverIssuer(issuer);
    assert.equal(metadata.jwks_uri, `${issuer}/jwks`);
    const verify = createTokenVerifier({ metadata, resource, jwksCooldownMs: COOLDOWN });
    const sign = (k: Awaited<ReturnType<typeof key>>, sub: string) =>
      new SignJWT({ scope: "s" })
        .setProtectedHeader({ alg: "ES256", kid: k.kid })
        .setIssuer(issuer).setAudience(resource).setSubject(sub).setExpirationTime("5m")
        .sign(k.privateKey);

    assert.equal((await verify(await sign(a, "one"))).subject, "one");
    assert.equal((await verify(await sign(a, "two"))).subject, "two");
    assert.equal(jwksFetches, 1, "the key set is cached");

    // The issuer rotates: a new key appears. Within the cooldown an unknown kid is refused
    // without another fetch; after it, the token makes weir fetch the set again.
    const b = await key("b");
    keys.push(b.public);
    const fresh = await sign(b, "three");
    // Only while the cooldown still runs (always, unless the machine stalled for seconds since
    // the first fetch; then the strict checks below cover it).
    if (performance.now() - fetchedAt[0] < COOLDOWN / 2) {
      await assert.rejects(verify(fresh), TokenError);
      assert.equal(jwksFetches, 1, "no fetch within the cooldown");
    }
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN + 200));
    assert.equal((await verify(fresh)).subject, "three");
    assert.equal(jwksFetches, 2, "fetched again for the unknown kid");

    // A stream of unknown kids (a forger's) costs at most one fetch per cooldown.
    const stranger = await key("nobody");
    for (let i = 0; i < 20; i++) {
      await assert.rejects(verify(await sign(stranger, "x")), TokenError);
    }
    // However long the loop took, no two fetches came closer than the cooldown (a lower bound
    // on their spacing: load only spreads them out). 10 ms for timer and clock granularity.
    const gaps = fetchedAt.slice(1).map((t, i) => t - fetchedAt[i]);
    assert.ok(gaps.every((g) => g >= COOLDOWN - 10), `fetches closer than the cooldown: ${gaps}`);
  } finally {
    await server.shutdown();
  }
});

Deno.test("JWKS, discovery and introspection follow no redirect, and the JWKS is read under a cap", async () => {
  const elsewhere: string[] = [];
  const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    elsewhere.push(new URL(req.url).pathname);
    return Response.json({ keys: [] });
  });
  const otherOrigin = `http://127.0.0.1:${other.addr.port}`;
  let jwks: "redirect" | "huge" = "redirect";
  const where = { issuer: "" };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/introspect") {
      // Quotes what weir sent: the caller's token and weir's client credential.
      const token = new URLSearchParams(await request.text()).get("token");
      const basic = (request.headers.get("authorization") ?? "").replace(/^Basic /, "");
      return new Response(null, {
        status: 307,
        headers: { location: `${otherOrigin}${path}/${token}/${basic}?sig=OAUTH-SECRET-SIG` },
      });
    }
    if (path === "/.well-known/oauth-authorization-server") {
      return Response.json({
        issuer: where.issuer,
        jwks_uri: `${where.issuer}/jwks`,
        introspection_endpoint: `${where.issuer}/introspect`,
      });
    }
    if (path === "/jwks" && jwks === "huge") {
      return Response.json({ keys: [], pad: "x".repeat(1024 * 1024) });
    }
    return new Response(null, {
      status: 307,
      headers: { location: `${otherOrigin}${path}?sig=OAUTH-SECRET-SIG` },
    });
  });
  const issuer = where.issuer = `http://127.0.0.1:${server.addr.port}`;
  const resource = "https://mcp.example.com/mcp";
  try {
    const metadata = await discoverIssuer(issuer);
    const a = await key("a");
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "a" })
      .setIssuer(issuer).setAudience(resource).setSubject("s").setExpirationTime("5m")
      .sign(a.privateKey);
    const jwtOnly = createTokenVerifier({ metadata: { ...metadata }, resource });
    await assert.rejects(
      jwtOnly(token),
      (e: Error) =>
        e instanceof TokenError &&
        // The operator's words: the target, its query values redacted.
        /the JWKS answered 307 redirecting to http:\/\/127\.0\.0\.1:\d+\/jwks\?sig=\[redacted\]; weir follows no/
          .test(e.message) &&
        !e.message.includes("OAUTH-SECRET-SIG"),
    );
    jwks = "huge";
    const again = createTokenVerifier({ metadata: { ...metadata }, resource });
    await assert.rejects(
      again(token),
      (e: Error) => e instanceof TokenError && /the JWKS is over 262144 bytes/.test(e.message),
    );
    const introspecting = createTokenVerifier({
      metadata,
      resource,
      introspection: { clientId: "weir", clientSecret: "weir-client-secret" },
    });
    await assert.rejects(
      introspecting("opaque-token-value"),
      (e: Error) =>
        /introspection answered 307 redirecting to http:\/\/127\.0\.0\.1:\d+\/introspect\/\[redacted\]\/\[redacted\]\?sig=\[redacted\]; weir follows no redirect/
          .test(e.message) && !e.message.includes("opaque-token-value"),
    );
    // A discovery URL that redirects is named, not followed.
    const moved = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () =>
        new Response(null, {
          status: 308,
          headers: { location: `http://u:p@${otherOrigin.slice(7)}/meta?t=OAUTH-SECRET-T#f` },
        }),
    );
    await assert.rejects(
      discoverIssuer(`http://127.0.0.1:${moved.addr.port}`),
      /answered 308 redirecting to http:\/\/127\.0\.0\.1:\d+\/meta\?t=\[redacted\]; weir follows no redirect/,
    );
    await moved.shutdown();
    assert.deepEqual(elsewhere, []);
  } finally {
    await server.shutdown();
    await other.shutdown();
  }
});
