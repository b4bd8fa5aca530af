/**
 * The OAuth flags of `weir serve` refuse what cannot work before serving:
 * usage errors exit 2, an issuer whose metadata cannot be read exits 1 naming
 * the URLs tried, and a static token is never silently combined with OAuth.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/cli.ts";
import { freePort } from "../support/oidc.ts";

const FILE = "tests/fixtures/oauth_tickets.mcp.kdl";
const ISSUER = "https://id.example.com";
const RESOURCE = "https://mcp.example.com/mcp";

const USAGE: [string, string[], Record<string, string>, RegExp][] = [
  [
    "static token and OAuth together",
    [
      "--http",
      "127.0.0.1:0",
      "--inbound-token-env",
      "T",
      "--oauth-issuer",
      ISSUER,
      "--oauth-resource",
      RESOURCE,
    ],
    { T: "a-static-token-1234" },
    /--inbound-token-env and --oauth-issuer cannot be combined: choose the static token or OAuth/,
  ],
  [
    "issuer without resource",
    ["--http", "127.0.0.1:0", "--oauth-issuer", ISSUER],
    {},
    /--oauth-issuer and --oauth-resource go together: give both/,
  ],
  [
    "OAuth over stdio",
    ["--stdio", "--oauth-issuer", ISSUER, "--oauth-resource", RESOURCE],
    {},
    /--oauth-issuer applies to --http only/,
  ],
  [
    "a resource with a fragment",
    ["--http", "127.0.0.1:0", "--oauth-issuer", ISSUER, "--oauth-resource", `${RESOURCE}#x`],
    {},
    /--oauth-resource .* must not carry a #fragment/,
  ],
  [
    "a plain-http resource beyond loopback",
    [
      "--http",
      "127.0.0.1:0",
      "--oauth-issuer",
      ISSUER,
      "--oauth-resource",
      "http://mcp.example.com/mcp",
    ],
    {},
    /must be https \(http only on a loopback host\)/,
  ],
  [
    "a plain-http issuer beyond loopback",
    [
      "--http",
      "127.0.0.1:0",
      "--oauth-issuer",
      "http://id.example.com",
      "--oauth-resource",
      RESOURCE,
    ],
    {},
    /--oauth-issuer http:\/\/id\.example\.com must be an https URL/,
  ],
  [
    "introspection client without its secret",
    [
      "--http",
      "127.0.0.1:0",
      "--oauth-issuer",
      ISSUER,
      "--oauth-resource",
      RESOURCE,
      "--oauth-introspection-client-id",
      "rs",
    ],
    {},
    /--oauth-introspection-client-id and --oauth-introspection-secret-env go together/,
  ],
];

for (const [name, flags, env, expected] of USAGE) {
  Deno.test(`serve refuses ${name} (exit 2)`, async () => {
    const r = await runCli(["serve", FILE, ...flags], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, expected);
  });
}

Deno.test("serve exits 1 when the issuer's metadata cannot be read, naming the URLs tried", async () => {
  const issuer = `http://127.0.0.1:${freePort()}`;
  const r = await runCli([
    "serve",
    FILE,
    "--http",
    "127.0.0.1:0",
    "--oauth-issuer",
    issuer,
    "--oauth-resource",
    "http://127.0.0.1:9/mcp",
  ], { env: { TICKETS_BASE_URL: "http://127.0.0.1:9", TICKETS_KEY: "k-123456789" } });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /no authorization server metadata for http:\/\/127\.0\.0\.1:\d+/);
  assert.ok(r.stderr.includes(`${issuer}/.well-known/oauth-authorization-server`));
  assert.ok(r.stderr.includes(`${issuer}/.well-known/openid-configuration`));
});
