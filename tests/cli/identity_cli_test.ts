/**
 * The caller's identity settings refuse what cannot work before anything is
 * served (issue 31), through the shipped CLI: each is a usage error (exit 2)
 * naming the setting, where it was written and what to do; none prints a
 * secret. `describe` shows the exchange and the profile.
 */
import assert from "node:assert/strict";
import { exportPKCS8, generateKeyPair } from "jose";
import { runCli, tempGuardfile } from "../support/cli.ts";
import { freePort } from "../support/oidc.ts";

const ISSUER = "https://id.example.com";
const RESOURCE = "https://mcp.example.com/mcp";
const SECRET = "exchange-secret-value-0123456789";
const OAUTH = ["--oauth-issuer", ISSUER, "--oauth-resource", RESOURCE];

function spec(auth: string, oauth = ""): string {
  return `${oauth}
wrap ward mcp tickets {
    base-url "https://api.example.com"
    ${auth}
    can get ticket { path "/tickets/{id}"; scope "tickets:read"; }
}
`;
}

const EXCHANGE = (client: string) =>
  `auth token-exchange { audience "https://api.example.com"; client-id "weir"; ${client} }`;

Deno.test("serve refuses a token exchange it cannot make: exit 2, naming file:line:col and the fix", async () => {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const pkcs1 = (await exportPKCS8(privateKey)).replace(/PRIVATE KEY/g, "EC PRIVATE KEY");
  const keyFile = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(keyFile, pkcs1);
  const cases: [string, string, string[], Record<string, string>, RegExp][] = [
    [
      "no OAuth to take callers' tokens from",
      spec(EXCHANGE(`client-secret { value env "WEIR_X_SECRET"; }`)),
      ["--http", "127.0.0.1:0"],
      { WEIR_X_SECRET: SECRET },
      /x\.mcp\.kdl:4:5: token exchange sends each caller's identity upstream .* serve over --http with --oauth-issuer and --oauth-resource/,
    ],
    [
      "the secret's variable unset",
      spec(EXCHANGE(`client-secret { value env "WEIR_X_UNSET"; }`)),
      ["--http", "127.0.0.1:0", ...OAUTH],
      {},
      /x\.mcp\.kdl:4:5: the client secret of the token exchange is not available: set environment variable WEIR_X_UNSET/,
    ],
    [
      "a key weir cannot sign with",
      spec(EXCHANGE(`private-key-jwt alg="ES256" { value file "${keyFile}"; }`)),
      ["--http", "127.0.0.1:0", ...OAUTH],
      {},
      /private key for private_key_jwt is PKCS#1\/SEC1 PEM; convert it to PKCS#8: openssl pkcs8/,
    ],
    [
      "a target the flags' profile cannot ask for",
      spec(
        `auth token-exchange { resource "https://api.example.com"; client-id "w"; client-secret { value env "WEIR_X_SECRET"; }; }`,
      ),
      [
        "--http",
        "127.0.0.1:0",
        "--oauth-issuer",
        "https://example.okta.com/oauth2/default",
        "--oauth-resource",
        RESOURCE,
        "--oauth-profile",
        "okta",
        "--oauth-audience",
        "api://default",
      ],
      { WEIR_X_SECRET: SECRET },
      /profile okta exchanges for an audience, not a resource URI/,
    ],
    [
      "over stdio",
      spec(EXCHANGE(`client-secret { value env "WEIR_X_SECRET"; }`)),
      ["--stdio"],
      { WEIR_X_SECRET: SECRET },
      /token exchange sends each caller's identity upstream/,
    ],
  ];
  try {
    for (const [name, text, flags, env, expected] of cases) {
      const dir = await Deno.makeTempDir();
      const file = `${dir}/x.mcp.kdl`;
      await Deno.writeTextFile(file, text);
      const r = await runCli(["serve", file, ...flags], { env });
      assert.equal(r.code, 2, `${name}: ${r.stderr}`);
      assert.match(r.stderr, expected, name);
      assert.match(r.stderr, /run "weir help serve"/, name);
      assert.ok(!r.stderr.includes(SECRET), `${name}: the secret was printed`);
      await Deno.remove(dir, { recursive: true });
    }
  } finally {
    await Deno.remove(keyFile);
  }
});

Deno.test("the OAuth profile flags: a name weir knows, an audience the profile needs, an issuer of the right shape", async () => {
  const file = await tempGuardfile(spec("auth none"));
  const cases: [string[], RegExp][] = [
    [
      [...OAUTH, "--oauth-profile", "azure"],
      /--oauth-profile must be one of generic, entra, okta, auth0, keycloak, not azure/,
    ],
    [[...OAUTH, "--oauth-profile", "okta"], /profile okta needs audience/],
    [["--oauth-profile", "entra"], /--oauth-profile needs --oauth-issuer and --oauth-resource/],
    [["--oauth-audience", "x"], /--oauth-audience needs --oauth-issuer/],
    [
      [
        "--oauth-issuer",
        "https://login.microsoftonline.com/common/v2.0",
        "--oauth-resource",
        RESOURCE,
        "--oauth-profile",
        "entra",
        "--oauth-audience",
        "api://x",
      ],
      /profile entra needs one tenant's issuer, not "common"/,
    ],
    [
      [...OAUTH, "--oauth-profile", "keycloak", "--oauth-audience", "c"],
      /profile keycloak needs the realm's issuer/,
    ],
  ];
  for (const [flags, expected] of cases) {
    const r = await runCli(["serve", file, "--http", "127.0.0.1:0", ...flags]);
    assert.equal(r.code, 2, `${flags.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, expected);
  }
});

Deno.test("serve-upstream's --tool-scope and --token-exchange-*: every half-given or impossible setting is a usage error", async () => {
  const base = ["serve-upstream", "--tool", "search", "--tool", "create", "--http", "127.0.0.1:0"];
  const http = ["--upstream", "http://127.0.0.1:9/mcp"];
  const exchange = [
    "--token-exchange-audience",
    "https://api",
    "--token-exchange-client-id",
    "weir",
    "--token-exchange-secret-env",
    "WEIR_X_SECRET",
  ];
  const cases: [string[], RegExp][] = [
    [
      [...http, "--tool-scope", "create=w"],
      /--tool-scope needs --oauth-issuer and --oauth-resource/,
    ],
    [[...http, ...OAUTH, "--tool-scope", "create"], /--tool-scope "create": write TOOL=SCOPE/],
    [
      [...http, ...OAUTH, "--tool-scope", "delete=w"],
      /--tool-scope names delete, which is not on the allowlist/,
    ],
    [
      [...http, ...OAUTH, "--tool-scope", "create=a", "--tool-scope", "create=b"],
      /names create twice/,
    ],
    [[...http, ...OAUTH, "--tool-scope", 'create=a"b'], /is not an OAuth scope/],
    [
      [...http, ...exchange],
      /token exchange sends each caller's identity upstream .* --oauth-issuer/,
    ],
    [
      [...http, ...OAUTH, "--token-exchange-audience", "https://api"],
      /needs --token-exchange-client-id/,
    ],
    [
      [
        ...http,
        ...OAUTH,
        "--token-exchange-client-id",
        "w",
        "--token-exchange-secret-env",
        "WEIR_X_SECRET",
      ],
      /needs --token-exchange-audience/,
    ],
    [
      [...http, ...OAUTH, ...exchange, "--token-exchange-secret-file", "/x"],
      /exactly one of --token-exchange-secret-env/,
    ],
    [
      [...http, ...OAUTH, ...exchange, "--token-exchange-key-alg", "ES256"],
      /-key-alg and -key-id go with --token-exchange-key-file/,
    ],
    [["--", "true", ...OAUTH, ...exchange], /applies to --upstream URL, not to a stdio command/],
    [
      [...http, ...OAUTH, ...exchange.slice(0, 4), "--token-exchange-secret-env", "WEIR_X_UNSET"],
      /WEIR_X_UNSET/,
    ],
    [
      [...http, ...OAUTH, "--token-exchange-client-credentials"],
      /--token-exchange-client-credentials needs --token-exchange-client-id/,
    ],
    [
      [...http, ...OAUTH, ...exchange, "--token-exchange-client-credentials-scope", 'a"b'],
      /--token-exchange-\*scope "a\\"b" is not an OAuth scope/,
    ],
    [
      [
        ...http,
        ...OAUTH,
        "--oauth-profile",
        "okta",
        "--oauth-audience",
        "api://default",
        ...exchange,
        "--token-exchange-client-credentials",
      ],
      /profile okta: Okta's client credentials grant needs at least one custom scope .*--token-exchange-client-credentials-scope/,
    ],
  ];
  for (const [flags, expected] of cases) {
    // A stdio upstream's command goes last, after "--".
    const dash = flags.indexOf("--");
    const args = dash < 0
      ? [...base, ...flags]
      : [...base, ...flags.slice(dash + 2), "--", flags[dash + 1]];
    const r = await runCli(args, { env: { WEIR_X_SECRET: SECRET } });
    assert.equal(r.code, 2, `${flags.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, expected, flags.join(" "));
    assert.match(r.stderr, /run "weir help serve-upstream"/);
    assert.ok(!r.stderr.includes(SECRET));
  }
});

Deno.test("describe shows the token exchange (the secret's source, never a value) and the profile", async () => {
  const file = await tempGuardfile(spec(
    EXCHANGE(`client-secret method="post" { value env "WEIR_X_SECRET"; }`),
    `oauth issuer="https://example.okta.com/oauth2/default" resource="${RESOURCE}" profile="okta" audience="api://default"`,
  ));
  const text = await runCli(["describe", file], { env: { WEIR_X_SECRET: SECRET } });
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /auth Authorization: Bearer exchanged per caller \(RFC 8693\) for audience https:\/\/api\.example\.com, scopes of each tool, client weir \(client_secret_post secret from env WEIR_X_SECRET\)/,
  );
  assert.match(text.stdout, /oauth tokens from .* \(profile okta, audience api:\/\/default\)/);
  const json = await runCli(["describe", "--format", "json", file]);
  const surface = JSON.parse(json.stdout);
  assert.deepEqual(surface.callers.oauth, {
    issuer: "https://example.okta.com/oauth2/default",
    resource: RESOURCE,
    profile: "okta",
    audience: "api://default",
  });
  assert.deepEqual(surface.credentials, [{
    scheme: "token-exchange",
    sentAs: "Authorization: Bearer",
    prefix: "",
    value: { from: [{ provider: "env", address: "WEIR_X_SECRET" }] },
    exchange: {
      audience: "https://api.example.com",
      clientId: "weir",
      method: "client_secret_post",
    },
  }]);
  assert.ok(!json.stdout.includes(SECRET) && !text.stdout.includes(SECRET));
});

Deno.test("diff: another exchange target, a credential swapped for token exchange, another profile or audience: each a widening, named", async () => {
  const okta =
    `oauth issuer="https://example.okta.com/oauth2/default" resource="${RESOURCE}" profile="okta" audience="api://default"`;
  const before = await tempGuardfile(spec(`auth bearer { value env "API_TOKEN"; }`, okta));
  const after = await tempGuardfile(spec(EXCHANGE(`client-secret { value env "S"; }`), okta));
  const other = await tempGuardfile(spec(
    EXCHANGE(`client-secret { value env "S"; }`),
    okta.replace("api://default", "api://other"),
  ));
  const one = await runCli(["diff", before, after]);
  assert.match(
    one.stdout,
    /WIDENS .*auth Authorization: Bearer from env API_TOKEN -> Authorization: Bearer exchanged per caller \(RFC 8693\) for audience https:\/\/api\.example\.com/,
  );
  const two = await runCli(["diff", after, other]);
  assert.match(
    two.stdout,
    /WIDENS .*oauth .*\(profile okta, audience api:\/\/default\) -> .*\(profile okta, audience api:\/\/other\)/,
  );
});

Deno.test("an OAuth issuer whose metadata cannot be read stops every serving command with a message, never a stack trace", async () => {
  // Nothing listens there (an issuer that is down), and a name that does not resolve.
  const down = `http://127.0.0.1:${freePort()}`;
  const files = {
    spec: await tempGuardfile(spec(EXCHANGE(`client-secret { value env "WEIR_X_SECRET"; }`))),
    wrap: await tempGuardfile(`wrap ward mcp tickets {
    mcp-server http "http://127.0.0.1:9/mcp" {
        token-exchange { audience "a"; client-id "w"; client-secret { value env "WEIR_X_SECRET"; }; }
    }
    proxy find { upstream "search"; }
}
`),
  };
  for (const issuer of [down, "https://issuer.invalid"]) {
    const oauth = ["--oauth-issuer", issuer, "--oauth-resource", RESOURCE];
    const runs: [string, string[]][] = [
      ["serve-upstream", [
        "serve-upstream",
        "--tool",
        "search",
        "--http",
        "127.0.0.1:0",
        "--upstream",
        "http://127.0.0.1:9/mcp",
        ...oauth,
      ]],
      ["serve-upstream --token-exchange-*", [
        "serve-upstream",
        "--tool",
        "search",
        "--http",
        "127.0.0.1:0",
        "--upstream",
        "http://127.0.0.1:9/mcp",
        ...oauth,
        "--token-exchange-audience",
        "a",
        "--token-exchange-client-id",
        "w",
        "--token-exchange-secret-env",
        "WEIR_X_SECRET",
      ]],
      ["serve (spec)", ["serve", files.spec, "--http", "127.0.0.1:0", ...oauth]],
      ["serve (wrap)", ["serve", files.wrap, "--http", "127.0.0.1:0", ...oauth]],
    ];
    for (const [what, args] of runs) {
      const r = await runCli(args, { env: { WEIR_X_SECRET: SECRET } });
      assert.equal(r.code, 1, `${what} ${issuer}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /^weir: serve(-upstream)?: no authorization server metadata for .*: (connection refused|the host name does not resolve).*check the issuer URL/,
        `${what} ${issuer}`,
      );
      assert.doesNotMatch(r.stderr, /Uncaught|\n\s+at /, `${what}: no stack trace`);
      assert.ok(!r.stderr.includes(SECRET));
    }
  }
});
