/**
 * The token exchange client (src/oauth/token_exchange.ts) against token
 * endpoints on 127.0.0.1 that answer as the test says: the request each
 * profile makes (RFC 8693 fields, Entra's on-behalf-of fields), weir's client
 * authentication (HTTP Basic with form-encoded parts, form fields, a
 * `private_key_jwt` assertion checked with the public key), and how every
 * kind of answer is classed (refused: this caller's token; unavailable: no
 * exchange could be made), with no secret or token in any message.
 */
import assert from "node:assert/strict";
import {
  decodeProtectedHeader,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  jwtVerify,
  SignJWT,
} from "jose";
import fc from "../support/property.ts";
import { freePort } from "../support/port.ts";
import {
  type ClientAuthentication,
  createTokenExchanger,
  importAssertionKey,
  TokenExchangeError,
} from "../../src/oauth/token_exchange.ts";
import { profileOf } from "../../src/oauth/profiles.ts";

const SUBJECT = "caller-token-0123456789abcdefghijklmnopqrstuvwxyz";
const SECRET = "s3cret value:with%odd&chars";
const ISSUED = "issued-token-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345";

interface Seen {
  headers: Headers;
  form: URLSearchParams;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** A TCP listener that accepts and never answers (closing it closes every connection). */
function silent() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) conns.push(conn);
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/token`,
    close: () => {
      listener.close();
      for (const c of conns) c.close();
      return Promise.resolve();
    },
  };
}

/** A token endpoint answering with `answer`; records each request. */
function endpoint(answer: (seen: Seen) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const entry = {
      headers: req.headers,
      form: new URLSearchParams(await req.text()),
      signal: req.signal,
    };
    seen.push(entry);
    return await answer(entry);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/oauth2/token`,
    seen,
    close: () => server.shutdown(),
  };
}

const basic: ClientAuthentication = {
  method: "client_secret_basic",
  clientId: "weir client",
  secret: () => Promise.resolve(SECRET),
};

const ok = (extra: Record<string, unknown> = {}) =>
  Response.json({
    access_token: ISSUED,
    token_type: "Bearer",
    issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
    expires_in: 120,
    ...extra,
  });

Deno.test("generic: an RFC 8693 request with resource, audience and scopes; HTTP Basic with form-encoded parts; the expiry from expires_in", async () => {
  const ep = endpoint(() => ok({ scope: "a b" }));
  try {
    const exchange = createTokenExchanger({
      tokenEndpoint: ep.url,
      profile: profileOf("generic"),
      client: basic,
      now: () => 1_000_000,
    });
    const token = await exchange(SUBJECT, {
      audience: "https://api.example.com",
      resource: "https://api.example.com/v2",
      scopes: ["a", "b"],
    });
    assert.deepEqual(token, { accessToken: ISSUED, expiresAt: 1_000_000 + 120_000, scope: "a b" });
    const [req] = ep.seen;
    assert.deepEqual(Object.fromEntries(req.form), {
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      subject_token: SUBJECT,
      subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
      requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
      resource: "https://api.example.com/v2",
      audience: "https://api.example.com",
      scope: "a b",
    });
    // RFC 6749 section 2.3.1: each part form-urlencoded, then Basic.
    const decoded = atob(req.headers.get("authorization")!.replace(/^Basic /, ""));
    const [id, secret] = decoded.split(":").map((p) => new URLSearchParams(`x=${p}`).get("x"));
    assert.deepEqual([id, secret], ["weir client", SECRET]);
    assert.equal(req.headers.get("content-type"), "application/x-www-form-urlencoded");
  } finally {
    await ep.close();
  }
});

Deno.test("okta, auth0, keycloak: no resource; entra: the on-behalf-of grant with scopes under the API's URI", async () => {
  const ep = endpoint(() => ok());
  try {
    for (const name of ["okta", "auth0", "keycloak"] as const) {
      const exchange = createTokenExchanger({
        tokenEndpoint: ep.url,
        profile: profileOf(name),
        client: basic,
      });
      await exchange(SUBJECT, {
        audience: "api://up",
        resource: "https://ignored.example",
        scopes: ["r"],
        subjectTokenType: "https://weir.example/t",
      });
      const form = ep.seen.at(-1)!.form;
      assert.equal(form.get("resource"), null, name);
      assert.equal(form.get("audience"), "api://up", name);
      assert.equal(form.get("subject_token_type"), "https://weir.example/t", name);
    }
    const entra = createTokenExchanger({
      tokenEndpoint: ep.url,
      profile: profileOf("entra"),
      client: basic,
    });
    await entra(SUBJECT, {
      audience: "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d",
      scopes: ["tickets.read"],
    });
    await entra(SUBJECT, { audience: "api://up", scopes: [] });
    const [one, two] = ep.seen.slice(-2).map((s) => Object.fromEntries(s.form));
    assert.deepEqual(one, {
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: SUBJECT,
      requested_token_use: "on_behalf_of",
      scope: "api://5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d/tickets.read",
    });
    assert.equal(two.scope, "api://up/.default");
  } finally {
    await ep.close();
  }
});

Deno.test("client_secret_post sends form fields and no Authorization", async () => {
  const ep = endpoint(() => ok());
  try {
    const exchange = createTokenExchanger({
      tokenEndpoint: ep.url,
      profile: profileOf("generic"),
      client: { ...basic, method: "client_secret_post" },
    });
    await exchange(SUBJECT, { audience: "a", scopes: [] });
    const [req] = ep.seen;
    assert.equal(req.headers.get("authorization"), null);
    assert.equal(req.form.get("client_id"), "weir client");
    assert.equal(req.form.get("client_secret"), SECRET);
  } finally {
    await ep.close();
  }
});

Deno.test("private_key_jwt: an RFC 7523 assertion (iss = sub = client, aud = the endpoint, a fresh jti, 60 s) from PKCS#8 or a JWK", async () => {
  const ep = endpoint(() => ok());
  try {
    for (const alg of ["ES256", "RS256", "EdDSA"] as const) {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      const texts = [
        await exportPKCS8(privateKey),
        JSON.stringify({ ...(await exportJWK(privateKey)), alg }),
      ];
      for (const text of texts) {
        const exchange = createTokenExchanger({
          tokenEndpoint: ep.url,
          profile: profileOf("generic"),
          client: {
            method: "private_key_jwt",
            clientId: "weir",
            key: () => Promise.resolve(text),
            alg,
            kid: "k1",
            x5t: "hOBcHZi846VCHSJbFAs26Go9VTQ",
          },
        });
        await exchange(SUBJECT, { audience: "a", scopes: [] });
        await exchange(SUBJECT, { audience: "a", scopes: [] });
        const [a, b] = ep.seen.slice(-2).map((s) => s.form);
        assert.equal(
          a.get("client_assertion_type"),
          "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        );
        const assertion = a.get("client_assertion")!;
        const { payload } = await jwtVerify(assertion, publicKey, {
          issuer: "weir",
          subject: "weir",
          audience: ep.url,
        });
        assert.equal(payload.exp! - payload.iat!, 60);
        assert.notEqual(
          payload.jti,
          (await jwtVerify(b.get("client_assertion")!, publicKey)).payload.jti,
        );
        const header = decodeProtectedHeader(assertion);
        assert.deepEqual([header.alg, header.kid, header.x5t], [
          alg,
          "k1",
          "hOBcHZi846VCHSJbFAs26Go9VTQ",
        ]);
        assert.equal(ep.seen.at(-1)!.headers.get("authorization"), null);
      }
    }
  } finally {
    await ep.close();
  }
});

Deno.test("a private key weir cannot sign with is refused naming the fix, never quoting the key", async () => {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const pem = await exportPKCS8(privateKey);
  const cases: [string, string | undefined, RegExp][] = [
    [
      pem.replace(/PRIVATE KEY/g, "EC PRIVATE KEY"),
      undefined,
      /PKCS#1\/SEC1 PEM; convert it to PKCS#8/,
    ],
    ["not a key", undefined, /neither PKCS#8 PEM/],
    [
      JSON.stringify({ kty: "EC", crv: "P-256", x: "a", y: "b" }),
      "ES256",
      /without its private part/,
    ],
    [pem, "HS256", /cannot sign with HS256/],
    [pem, "RS256", /does not fit RS256/],
  ];
  for (const [text, alg, expected] of cases) {
    const error = await importAssertionKey(text, alg).catch((e) => e);
    assert.ok(
      error instanceof TokenExchangeError && error.outcome === "unavailable",
      String(error),
    );
    assert.match(error.message, expected);
    assert.ok(!error.message.includes(pem.split("\n")[1]), "no key material in the message");
  }
});

/** [status, body, outcome, what the message says] */
const ANSWERS: [number, unknown, "refused" | "unavailable", RegExp][] = [
  [
    400,
    { error: "invalid_grant", error_description: `bad ${SUBJECT}` },
    "refused",
    /\(invalid_grant\)/,
  ],
  [400, { error: "invalid_scope" }, "refused", /invalid_scope/],
  [400, { error: "invalid_target" }, "refused", /invalid_target/],
  [403, { error: "access_denied" }, "refused", /access_denied/],
  [400, { error: "consent_required" }, "refused", /consent_required/],
  [401, { error: "invalid_client" }, "unavailable", /refused weir's own client \(invalid_client\)/],
  [400, { error: "unauthorized_client" }, "unavailable", /own client/],
  [
    400,
    { error: "unsupported_grant_type" },
    "unavailable",
    /does not offer this grant \(unsupported_grant_type\); enable token exchange there/,
  ],
  [401, "", "unavailable", /refused weir's own client; check/],
  [500, { error: "server_error" }, "unavailable", /HTTP 500 \(server_error\)/],
  [503, "", "unavailable", /HTTP 503/],
  [400, { error: "invalid_grant\r\nX-Evil: 1" }, "unavailable", /HTTP 400/],
  [200, "not json", "unavailable", /not a JSON object/],
  [200, {}, "unavailable", /no access_token/],
  [200, { access_token: ISSUED, token_type: "DPoP" }, "unavailable", /token_type DPoP, not Bearer/],
  [200, { access_token: ISSUED }, "unavailable", /not Bearer/],
  [200, { access_token: SUBJECT, token_type: "Bearer" }, "unavailable", /caller's own token/],
  [200, { access_token: "short", token_type: "Bearer" }, "unavailable", /not a bearer token value/],
  [200, { access_token: "two words here ok", token_type: "Bearer" }, "unavailable", /not a bearer/],
  [
    200,
    { access_token: `${ISSUED}\r\nX-Evil: 1`, token_type: "Bearer" },
    "unavailable",
    /not a bearer/,
  ],
  [
    200,
    {
      access_token: ISSUED,
      token_type: "Bearer",
      issued_token_type: "urn:ietf:params:oauth:token-type:refresh_token",
    },
    "unavailable",
    /is not an access token/,
  ],
];

Deno.test("every kind of answer is classed refused or unavailable, naming the error code and no secret or token", async () => {
  let next = 0;
  const ep = endpoint(() => {
    const [status, body] = ANSWERS[next++];
    return typeof body === "string"
      ? new Response(body, { status })
      : Response.json(body, { status });
  });
  try {
    const exchange = createTokenExchanger({
      tokenEndpoint: ep.url,
      profile: profileOf("generic"),
      client: basic,
    });
    for (const [status, body, outcome, says] of ANSWERS) {
      const error = await exchange(SUBJECT, { audience: "https://api", scopes: [] }).catch((e) =>
        e
      );
      const what = `${status} ${JSON.stringify(body)}`;
      assert.ok(error instanceof TokenExchangeError, `${what}: ${error}`);
      assert.equal(error.outcome, outcome, what);
      assert.match(error.message, says, what);
      assert.match(error.message, /nothing was sent upstream|weir follows no redirect/, what);
      for (const secret of [SUBJECT, SECRET, ISSUED]) {
        assert.ok(!error.message.includes(secret), `${what}: a secret in the message`);
        assert.ok(
          !(error.description ?? "").includes(secret.slice(8)),
          `${what}: in the description`,
        );
      }
    }
  } finally {
    await ep.close();
  }
});

Deno.test("a redirect is not followed; an answer over 256 KiB is not read on; nothing listening, no answer in time and the caller's cancel", async () => {
  let followed = 0;
  const target = endpoint(() => {
    followed++;
    return ok();
  });
  const redirect = endpoint(() =>
    new Response(null, { status: 307, headers: { location: target.url } })
  );
  const echoing = endpoint(() =>
    new Response(null, {
      status: 307,
      headers: { location: `/t/${SUBJECT}/${encodeURIComponent(SECRET)}/${btoa(SUBJECT)}` },
    })
  );
  const huge = endpoint(() => ok({ padding: "x".repeat(300 * 1024) }));
  const never = silent();
  try {
    const via = async (url: string, timeoutMs = 5000): Promise<TokenExchangeError> => {
      const exchange = createTokenExchanger({
        tokenEndpoint: url,
        profile: profileOf("generic"),
        client: basic,
        timeoutMs,
      });
      const error = await exchange(SUBJECT, { audience: "a", scopes: [] }).then(
        () => undefined,
        (e) => e,
      );
      assert.ok(error instanceof TokenExchangeError, `${url}: ${error}`);
      return error;
    };
    const redirected = await via(redirect.url);
    assert.match(redirected.message, /answered 307 redirecting to http:\/\/127\.0\.0\.1/);
    assert.equal(followed, 0);
    // A target quoting what weir sent (the caller's token, weir's client secret) is logged without it.
    const echoed = await via(echoing.url);
    assert.match(
      echoed.message,
      /redirecting to http:\/\/127\.0\.0\.1:\d+\/t\/\[redacted\]\/\[redacted\]\/\[redacted\];/,
    );
    for (const secret of [SUBJECT, SECRET, encodeURIComponent(SECRET), btoa(SUBJECT)]) {
      assert.ok(!echoed.message.includes(secret), echoed.message);
    }
    assert.match((await via(huge.url)).message, /without a usable token \(not a JSON object\)/);
    const closed = await via(`http://127.0.0.1:${freePort()}/token`);
    assert.match(closed.message, /could not be reached \(connection refused/);
    assert.equal(closed.outcome, "unavailable");
    const slow = await via(never.url, 200);
    assert.match(slow.message, /could not be reached \(no answer within 200 ms\)/);
    const controller = new AbortController();
    const pending = createTokenExchanger({
      tokenEndpoint: never.url,
      profile: profileOf("generic"),
      client: basic,
    })(
      SUBJECT,
      { audience: "a", scopes: [] },
      controller.signal,
    );
    controller.abort(new Error("the caller left"));
    await assert.rejects(pending, /the caller left/);
  } finally {
    for (const ep of [target, redirect, echoing, huge, never]) await ep.close();
  }
});

Deno.test("the expiry: the earlier of expires_in (a number or numeric string) and a JWT's exp, else unknown", async () => {
  const { privateKey } = await generateKeyPair("ES256");
  const jwtUntil = (exp: number) =>
    new SignJWT({}).setProtectedHeader({ alg: "ES256" }).setExpirationTime(exp).sign(privateKey);
  const jwt = await jwtUntil(2_000_000);
  // exp counts whole seconds from a rounded-down issue time: it can end before expires_in says
  // (the refresh test saw an upstream refuse a kept token weir thought had 0.5 s left).
  const early = await jwtUntil(2);
  const answers = [
    { access_token: ISSUED, token_type: "bearer", expires_in: "30" },
    { access_token: jwt, token_type: "Bearer" },
    { access_token: ISSUED, token_type: "Bearer", expires_in: -5 },
    { access_token: early, token_type: "Bearer", expires_in: 3 },
    { access_token: jwt, token_type: "Bearer", expires_in: 3 },
  ];
  let next = 0;
  const ep = endpoint(() => Response.json(answers[next++]));
  try {
    const exchange = createTokenExchanger({
      tokenEndpoint: ep.url,
      profile: profileOf("generic"),
      client: basic,
      now: () => 1_000,
    });
    const got = [];
    for (let i = 0; i < answers.length; i++) {
      got.push((await exchange(SUBJECT, { audience: "a", scopes: [] })).expiresAt);
    }
    assert.deepEqual(got, [31_000, 2_000_000_000, undefined, 2_000, 4_000]);
  } finally {
    await ep.close();
  }
});

Deno.test("property: whatever the provider's error and description, no message carries the caller's token or weir's secret", async () => {
  let answer: { status: number; body: Record<string, unknown> } = { status: 400, body: {} };
  const ep = endpoint(() => Response.json(answer.body, { status: answer.status }));
  try {
    const exchange = createTokenExchanger({
      tokenEndpoint: ep.url,
      profile: profileOf("generic"),
      client: basic,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(400, 401, 403, 500, 502),
        fc.string({ maxLength: 30 }),
        fc.array(fc.constantFrom(SUBJECT, SECRET, "x", " ", "\n", ".", "eyJ"), { maxLength: 6 }),
        async (status, error, parts) => {
          answer = { status, body: { error, error_description: parts.join("") } };
          const thrown = await exchange(SUBJECT, { audience: "a", scopes: [] }).catch((e) => e);
          assert.ok(thrown instanceof TokenExchangeError);
          for (const secret of [SUBJECT, SECRET]) {
            assert.ok(!thrown.message.includes(secret));
            assert.ok(!(thrown.description ?? "").includes(secret));
          }
          assert.ok(!/[\r\n]/.test(thrown.message), "one line");
        },
      ),
      { numRuns: 60 },
    );
  } finally {
    await ep.close();
  }
});
