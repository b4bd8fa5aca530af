/**
 * The loader on the caller's identity settings (issue 31): spec mode's
 * `auth token-exchange { ... }`, the `token-exchange` block of `mcp-server
 * http`, and the `oauth` node's `profile=` and `audience=`. A well-formed
 * block becomes the model the modes act on; each mistake is an error at the
 * node concerned (line:column) that says what to write instead, all at once.
 */
import assert from "node:assert/strict";
import { loadGuardfileText } from "../../src/guardfile/load.ts";

const EXCHANGE = `auth token-exchange {
        audience "api://tickets"
        scope "tickets:read" "tickets:write"
        token-endpoint "https://id.example.com/oauth2/token"
        client-id "weir"
        client-secret method="post" { value env "WEIR_SECRET"; }
    }`;

function spec(auth: string, oauth = ""): string {
  return `${oauth}
wrap ward mcp tickets {
    base-url "https://api.example.com"
    ${auth}
    can get ticket { path "/tickets/{id}"; scope "tickets:read"; }
}
`;
}

function wrapped(block: string, oauth = ""): string {
  return `${oauth}
wrap ward mcp tools {
    mcp-server http "https://tools.example.com/mcp" {
        ${block}
    }
    proxy search { scope "tools:read"; }
}
`;
}

function errors(text: string): string[] {
  return loadGuardfileText(text, "x.mcp.kdl").diagnostics
    .filter((d) => d.severity === "error")
    .map((d) => `${d.position?.line}:${d.position?.column} ${d.path}: ${d.message}`);
}

Deno.test("auth token-exchange: the model the guard acts on", () => {
  const loaded = loadGuardfileText(spec(EXCHANGE), "x.mcp.kdl");
  assert.deepEqual(errors(spec(EXCHANGE)), []);
  const auth = loaded.guardfile!.auth;
  assert.equal(auth.scheme, "token-exchange");
  if (auth.scheme !== "token-exchange") return;
  assert.deepEqual({ ...auth.exchange, position: undefined }, {
    audience: "api://tickets",
    scopes: ["tickets:read", "tickets:write"],
    tokenEndpoint: "https://id.example.com/oauth2/token",
    clientId: "weir",
    client: {
      method: "client_secret_post",
      secret: { chain: [{ provider: "env", address: "WEIR_SECRET" }] },
    },
    position: undefined,
  });
  assert.deepEqual(auth.exchange.position, { line: 4, column: 5 });
});

Deno.test("mcp-server http's token-exchange with private-key-jwt; oauth profile= and audience=", () => {
  const text = wrapped(
    `token-exchange {
            audience "api://5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
            client-id "0b1c2d3e"
            private-key-jwt alg="RS256" kid="k1" x5t="hOBcHZi846VCHSJbFAs26Go9VTQ" { value file "/run/k.pem"; }
        }`,
    `oauth issuer="https://login.microsoftonline.com/7f0d3e9a-4c55-4c36-9a8b-2b9d8f1c0a11/v2.0" resource="https://mcp.example.com/mcp" profile="entra" audience="api://0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"`,
  );
  assert.deepEqual(errors(text), []);
  const wrap = loadGuardfileText(text, "x.mcp.kdl").mcpWrap!;
  assert.equal(wrap.oauth?.profile, "entra");
  assert.equal(wrap.oauth?.audience, "api://0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0");
  assert.equal(wrap.server.transport, "http");
  if (wrap.server.transport !== "http") return;
  assert.deepEqual(wrap.server.exchange?.client, {
    method: "private_key_jwt",
    key: { chain: [{ provider: "file", address: "/run/k.pem" }] },
    alg: "RS256",
    kid: "k1",
    x5t: "hOBcHZi846VCHSJbFAs26Go9VTQ",
  });
});

Deno.test("mcp-server http's token-exchange with client-credentials: weir's own token's scopes in the model", () => {
  for (
    const [own, scopes] of [
      [`client-credentials { scope "mcp:connect" "mcp:list"; }`, ["mcp:connect", "mcp:list"]],
      [`client-credentials`, []],
    ] as const
  ) {
    const text = wrapped(`token-exchange {
            audience "https://tools.example.com"; client-id "w"; client-secret { value env "S"; }
            ${own}
        }`);
    assert.deepEqual(errors(text), []);
    const server = loadGuardfileText(text, "x.mcp.kdl").mcpWrap!.server;
    assert.ok(server.transport === "http");
    assert.deepEqual(server.exchange?.clientCredentials?.scopes, scopes);
    assert.deepEqual(server.exchange?.clientCredentials?.position, { line: 6, column: 13 });
  }
});

/** [name, text, expected errors (each must match one, at that line:column)] */
const CASES: [string, string, RegExp[]][] = [
  ["an empty block", spec("auth token-exchange"), [/^4:5 .*token exchange needs a block/]],
  [
    "no client-id, no audience, no client authentication",
    spec(`auth token-exchange { scope "a"; }`),
    [/needs weir's client authentication/, /needs client-id/, /needs audience/],
  ],
  [
    "both client-secret and private-key-jwt",
    spec(`auth token-exchange {
        audience "a"; client-id "w"
        client-secret { value env "S"; }
        private-key-jwt { value file "/k"; }
    }`),
    [/^7:9 .*two ways .*: keep one/],
  ],
  [
    "a literal secret or key",
    spec(
      `auth token-exchange { audience "a"; client-id "w"; client-secret { value literal "hunter2-hunter2"; }; }`,
    ),
    [/secret in review: read it from env or file/],
  ],
  [
    "client-secret method= neither basic nor post",
    spec(
      `auth token-exchange { audience "a"; client-id "w"; client-secret method="jwt" { value env "S"; }; }`,
    ),
    [/method="jwt": write method="basic" .* or method="post"/],
  ],
  [
    "private-key-jwt alg= symmetric, x5t= not a thumbprint",
    spec(
      `auth token-exchange { audience "a"; client-id "w"; private-key-jwt alg="HS256" x5t="!" { value env "K"; }; }`,
    ),
    [/alg="HS256": use an asymmetric algorithm/, /x5t="!": the certificate's SHA-1 thumbprint/],
  ],
  [
    "a token endpoint over http beyond loopback, a resource with a fragment",
    spec(`auth token-exchange {
        resource "https://api.example.com/#x"; client-id "w"
        token-endpoint "http://id.example.com/token"
        client-secret { value env "S"; }
    }`),
    [/resource .* no #fragment/, /token-endpoint .* must be https/],
  ],
  [
    "a scope that is no OAuth scope, and one twice",
    spec(
      `auth token-exchange { audience "a"; client-id "w"; scope "a b" "c" "c"; client-secret { value env "S"; }; }`,
    ),
    [/scope "a b" is not an OAuth scope/, /scope "c" is listed twice/],
  ],
  [
    "an unknown child",
    spec(`auth token-exchange { audience "a"; client-id "w"; client-secrets { value env "S"; }; }`),
    [/client-secrets/],
  ],
  [
    "profile okta without an audience target; profile auth0 without subject-token-type",
    spec(
      `auth token-exchange { resource "https://api.example.com"; client-id "w"; client-secret { value env "S"; }; }`,
      `oauth issuer="https://example.okta.com/oauth2/default" resource="https://m.example.com/mcp" profile="okta" audience="api://default"`,
    ),
    [/^4:5 .*profile okta exchanges for an audience, not a resource URI/],
  ],
  [
    "profile auth0 without subject-token-type",
    spec(
      `auth token-exchange { audience "https://api"; client-id "w"; client-secret { value env "S"; }; }`,
      `oauth issuer="https://t.auth0.com/" resource="https://m.example.com/mcp" profile="auth0" audience="https://m/"`,
    ),
    [/profile auth0: custom token exchange needs subject-token-type/],
  ],
  [
    "an unknown profile",
    `oauth issuer="https://id.example.com" resource="https://m.example.com/mcp" profile="azure"
oauth issuer="https://login.microsoftonline.com/common/v2.0" resource="https://m.example.com/mcp" profile="entra" audience="api://x"
wrap ward mcp t { base-url "t.example"; auth none; can get t { path "/t"; }; }`,
    [
      /profile="azure" is not a profile weir knows; use one of generic, entra/,
      /appears more than once/,
    ],
  ],
  [
    "entra's multi-tenant issuer",
    spec(
      "auth none",
      `oauth issuer="https://login.microsoftonline.com/organizations/v2.0" resource="https://m.example.com/mcp" profile="entra" audience="api://x"`,
    ),
    [/^1:1 .*profile entra needs one tenant's issuer, not "organizations"/],
  ],
  [
    "token-exchange beside a header Authorization",
    wrapped(`header "Authorization" "Bearer fixed-token-123"
        token-exchange { audience "a"; client-id "w"; client-secret { value env "S"; }; }`),
    [/token-exchange sends each caller's exchanged token as Authorization; remove header "Authorization"/],
  ],
  [
    "token-exchange in mcp-server stdio",
    `wrap ward mcp tools {
    mcp-server stdio "tool" {
        token-exchange { audience "a"; client-id "w"; client-secret { value env "S"; }; }
    }
    proxy search
}
`,
    [/"token-exchange" applies to mcp-server http/],
  ],
  [
    "client-credentials in spec mode's auth token-exchange",
    spec(`auth token-exchange {
        audience "a"; client-id "w"; client-secret { value env "S"; }
        client-credentials
    }`),
    [/^6:9 .*client-credentials gets weir a token of its own .* remove client-credentials/],
  ],
  [
    "client-credentials with an argument, an unknown child, a scope twice",
    wrapped(`token-exchange {
            audience "a"; client-id "w"; client-secret { value env "S"; }
            client-credentials "mcp" { scope "a" "a"; audience "b"; }
        }`),
    [
      /^6:13 .*no arguments \(its scope goes in the block\)/,
      /scope "a" is listed twice/,
      /audience/,
    ],
  ],
  [
    "client-credentials scopes under profile entra; none under profile okta (at client-credentials)",
    wrapped(
      `token-exchange {
            audience "api://5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"; client-id "w"; client-secret { value env "S"; }
            client-credentials { scope "tools.read"; }
        }`,
      `oauth issuer="https://login.microsoftonline.com/7f0d3e9a-4c55-4c36-9a8b-2b9d8f1c0a11/v2.0" resource="https://mcp.example.com/mcp" profile="entra" audience="api://0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"`,
    ),
    [/^6:13 .*profile entra: an application's own token .* remove the scopes under client-credentials/],
  ],
  [
    "no client-credentials scope under profile okta",
    wrapped(
      `token-exchange {
            audience "api://tools"; client-id "w"; client-secret { value env "S"; }
            client-credentials
        }`,
      `oauth issuer="https://example.okta.com/oauth2/default" resource="https://m.example.com/mcp" profile="okta" audience="api://default"`,
    ),
    [/^6:13 .*profile okta: Okta's client credentials grant needs at least one custom scope/],
  ],
];

for (const [name, text, expected] of CASES) {
  Deno.test(`lint refuses ${name}, at the node, saying what to write`, () => {
    const found = errors(text);
    for (const want of expected) {
      assert.ok(found.some((e) => want.test(e)), `expected ${want}, got:\n${found.join("\n")}`);
    }
  });
}

Deno.test("each profile's own requirements at the oauth node", () => {
  const node = (rest: string) =>
    errors(`oauth resource="https://m.example.com/mcp" ${rest}
wrap ward mcp t { base-url "t.example"; auth none; can get t { path "/t"; }; }`);
  assert.match(
    node(`issuer="https://sso.example.com/auth" profile="keycloak" audience="c"`).join(),
    /profile keycloak needs the realm's issuer/,
  );
  assert.match(
    node(`issuer="https://example.okta.com/oauth2/default" profile="okta"`).join(),
    /profile okta needs audience: the authorization server's audience/,
  );
  assert.match(
    node(`issuer="https://t.auth0.com" profile="auth0" audience="https://m/"`).join(),
    /Auth0's issuer ends with "\/" \(write https:\/\/t\.auth0\.com\/\)/,
  );
  assert.deepEqual(
    node(
      `issuer="https://sts.windows.net/7f0d3e9a-4c55-4c36-9a8b-2b9d8f1c0a11/" profile="entra" audience="api://x"`,
    ),
    [],
  );
  assert.deepEqual(node(`issuer="https://id.example.com" profile="generic"`), []);
});

Deno.test("a reload that only moves the token-exchange block (client-credentials too) is no change; a new scope is", async () => {
  const { exchangeReloadProblem } = await import("../../src/modes/serve.ts");
  const exchange = (text: string) => {
    const server = loadGuardfileText(text, "x.mcp.kdl").mcpWrap!.server;
    return server.transport === "http" ? server.exchange : undefined;
  };
  const block = (scope: string) =>
    `token-exchange {
            audience "https://tools.example.com"; client-id "w"; client-secret { value env "S"; }
            client-credentials { scope "${scope}"; }
        }`;
  const started = exchange(wrapped(block("mcp:connect")));
  const moved = exchange(`// a comment line\n${wrapped(block("mcp:connect"))}`);
  assert.notDeepEqual(started?.clientCredentials?.position, moved?.clientCredentials?.position);
  assert.equal(exchangeReloadProblem("x.mcp.kdl", started, moved), undefined);
  assert.match(
    exchangeReloadProblem("x.mcp.kdl", started, exchange(wrapped(block("mcp:all"))))!,
    /the token exchange changed, and weir sets it up only when it starts: restart weir/,
  );
});
