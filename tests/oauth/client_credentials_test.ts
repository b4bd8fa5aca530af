/**
 * weir's own token for its connection to a protected MCP server
 * (src/oauth/client_credentials.ts): the client credentials request each
 * profile makes (RFC 6749 section 4.4), one token kept and shared until a
 * margin before it expires and never handed out past that, a token the MCP
 * server refused dropped, and each refusal said with what to change, with
 * weir's client secret in no message or log line. A token endpoint faked as
 * a `fetch` and a clock the test moves (no timing).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { clientCredentialsToken } from "../../src/oauth/client_credentials.ts";
import { tokenEndpoint, TokenEndpointError } from "../../src/oauth/token_request.ts";
import { profileOf } from "../../src/oauth/profiles.ts";
import type { ProfileName } from "../../src/guardfile/idp_profiles.ts";

const SECRET = "weir-client-secret-0123456789";
const AUDIENCE = "https://mcp.example.com";
const ENTRA_APP = "api://5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d";

interface Fake {
  /** Each request's form fields. */
  forms: URLSearchParams[];
  /** Each request's Authorization header. */
  auth: (string | null)[];
  logged: Record<string, unknown>[];
  clock: { now: number };
  own: ReturnType<typeof clientCredentialsToken>;
}

/** weir's own token against a fake endpoint answering `answer(n)` to the n-th request (from 1). */
function fake(
  answer: (n: number) => Response | Promise<Response>,
  options: { profile?: ProfileName; scopes?: string[]; audience?: string } = {},
): Fake {
  const forms: URLSearchParams[] = [];
  const auth: (string | null)[] = [];
  const logged: Record<string, unknown>[] = [];
  const clock = { now: 1_800_000_000_000 };
  const post = tokenEndpoint({
    tokenEndpoint: "https://id.example.com/oauth2/token",
    client: {
      method: "client_secret_basic",
      clientId: "weir",
      secret: () => Promise.resolve(SECRET),
    },
    now: () => clock.now,
    fetch: async (_url, init) => {
      forms.push(new URLSearchParams(String(init?.body)));
      auth.push(new Headers(init?.headers).get("authorization"));
      return await answer(forms.length);
    },
  });
  const own = clientCredentialsToken({
    post,
    profile: profileOf(options.profile ?? "generic"),
    target: { audience: options.audience ?? AUDIENCE, scopes: options.scopes ?? [] },
    clientId: "weir",
    log: (line) => logged.push(line),
    now: () => clock.now,
  });
  return { forms, auth, logged, clock, own };
}

const issued = (n: number, expiresIn?: number) =>
  Response.json({
    access_token: `own-token-${n}-abcdefghijklmnop`,
    token_type: "Bearer",
    ...(expiresIn === undefined ? {} : { expires_in: expiresIn }),
  });

Deno.test("client credentials: each profile's request, as weir's client (RFC 6749 section 4.4)", async () => {
  const cases: [ProfileName, string[], string | undefined, [string, string][]][] = [
    ["generic", ["mcp:connect"], AUDIENCE, [["audience", AUDIENCE], ["scope", "mcp:connect"]]],
    ["okta", ["mcp:connect"], "api://tools", [["scope", "mcp:connect"]]],
    ["auth0", [], "https://tools.example/api", [["audience", "https://tools.example/api"]]],
    ["keycloak", ["mcp"], "tools", [["scope", "mcp"]]],
    ["entra", [], ENTRA_APP, [["scope", `${ENTRA_APP}/.default`]]],
    // Entra's GUID form names the same application.
    ["entra", [], ENTRA_APP.slice(6), [["scope", `${ENTRA_APP}/.default`]]],
  ];
  for (const [profile, scopes, audience, fields] of cases) {
    const f = fake((n) => issued(n, 300), { profile, scopes, ...(audience ? { audience } : {}) });
    await f.own.token();
    assert.deepEqual(
      [...f.forms[0]].filter(([k]) => k !== "grant_type"),
      fields,
      profile,
    );
    assert.equal(f.forms[0].get("grant_type"), "client_credentials");
    assert.equal(f.auth[0], `Basic ${btoa(`weir:${SECRET}`)}`);
  }
});

Deno.test("client credentials: one token kept and shared, asked anew a margin before it expires, dropped when the MCP server refuses it", async () => {
  const f = fake((n) => issued(n, 300));
  // Concurrent requests share one token request.
  const first = await Promise.all([f.own.token(), f.own.token(), f.own.token()]);
  assert.deepEqual(new Set(first), new Set(["own-token-1-abcdefghijklmnop"]));
  assert.equal(f.forms.length, 1);
  f.clock.now += 269_000; // 31 s before expiry: still kept
  assert.equal(await f.own.token(), "own-token-1-abcdefghijklmnop");
  f.clock.now += 2_000; // 29 s before expiry: inside the 30 s margin
  assert.equal(await f.own.token(), "own-token-2-abcdefghijklmnop");
  // The MCP server refused it (401): not used again.
  f.own.refused("own-token-2-abcdefghijklmnop");
  assert.equal(await f.own.token(), "own-token-3-abcdefghijklmnop");
  // Refusing a token no longer kept drops nothing.
  f.own.refused("own-token-1-abcdefghijklmnop");
  assert.equal(await f.own.token(), "own-token-3-abcdefghijklmnop");
  assert.equal(f.forms.length, 3);
  assert.deepEqual(
    f.logged.map((l) => [l.event, l.outcome, l.client, l.audience]),
    Array(3).fill(["client_credentials", "issued", "weir", AUDIENCE]),
  );
  assert.ok(!JSON.stringify(f.logged).includes("own-token"), "a token byte in the log");
});

Deno.test("client credentials (property): a token is never handed out at or past its expiry", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 100_000 }),
      fc.array(fc.integer({ min: 0, max: 200_000_000 }), { minLength: 1, maxLength: 8 }),
      async (expiresIn, steps) => {
        const ends = new Map<string, number>();
        const f = fake((n) => {
          ends.set(`own-token-${n}-abcdefghijklmnop`, f.clock.now + expiresIn * 1000);
          return issued(n, expiresIn);
        });
        for (const step of steps) {
          f.clock.now += step;
          const token = await f.own.token();
          assert.ok(f.clock.now < ends.get(token)!, `${token} handed out at or past its expiry`);
        }
      },
    ),
  );
});

Deno.test("client credentials: a token whose expiry is not said is reused for 60 s only", async () => {
  const f = fake((n) => issued(n));
  assert.equal(await f.own.token(), "own-token-1-abcdefghijklmnop");
  f.clock.now += 59_999;
  assert.equal(await f.own.token(), "own-token-1-abcdefghijklmnop");
  f.clock.now += 1;
  assert.equal(await f.own.token(), "own-token-2-abcdefghijklmnop");
});

Deno.test("client credentials: each refusal says what to change; the provider down is unavailable; no secret in any message or log line", async () => {
  const oauth = (status: number, error: string) =>
    Response.json({ error, error_description: `nope for ${SECRET}` }, { status });
  const cases: [() => Response, "refused" | "unavailable", RegExp][] = [
    [
      () => oauth(401, "invalid_client"),
      "refused",
      /refused weir's own token for https:\/\/mcp\.example\.com \(client credentials grant, RFC 6749 section 4\.4, as client weir; invalid_client\): check the client ID and its secret or key/,
    ],
    [() => new Response(null, { status: 401 }), "refused", /HTTP 401\): check the client ID/],
    [
      () => oauth(400, "invalid_scope"),
      "refused",
      /invalid_scope\): ask for scopes that client may have/,
    ],
    [
      () => oauth(400, "unauthorized_client"),
      "refused",
      /unauthorized_client\): allow that client the client_credentials grant/,
    ],
    [
      () => oauth(503, "temporarily_unavailable"),
      "unavailable",
      /answered HTTP 503 \(temporarily_unavailable\); weir asked for its own token/,
    ],
    [
      () =>
        new Response(null, { status: 302, headers: { location: "https://elsewhere.example/" } }),
      "unavailable",
      /answered 302 redirecting to https:\/\/elsewhere\.example\/; weir follows no redirect/,
    ],
    [
      () => Response.json({ access_token: "short", token_type: "Bearer" }),
      "unavailable",
      /without a usable token \(the access_token is not a bearer token value\)/,
    ],
  ];
  for (const [answer, outcome, words] of cases) {
    const f = fake(answer);
    const error = await f.own.token().then(() => undefined, (e) => e);
    assert.ok(error instanceof TokenEndpointError, String(error));
    assert.equal(error.outcome, outcome, error.message);
    assert.match(error.message, words);
    assert.match(error.message, /sent nothing to the MCP server|nothing was sent upstream/);
    const said = error.message + JSON.stringify(f.logged);
    assert.ok(!said.includes(SECRET), `the secret in: ${said}`);
    // Nothing kept: the next request asks again.
    await f.own.token().catch(() => {});
    assert.equal(f.forms.length, 2);
  }
});

Deno.test("client credentials: a waiter that gives up is rejected with its reason; the request goes on for the others", async () => {
  let release!: () => void;
  const f = fake(async (n) => {
    await new Promise<void>((r) => release = r);
    return issued(n, 300);
  });
  const stop = new AbortController();
  const gaveUp = f.own.token(stop.signal);
  const other = f.own.token();
  stop.abort(new Error("caller went away"));
  await assert.rejects(gaveUp, /caller went away/);
  release();
  assert.equal(await other, "own-token-1-abcdefghijklmnop");
  assert.equal(f.forms.length, 1);
});
