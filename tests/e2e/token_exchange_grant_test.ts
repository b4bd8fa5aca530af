/**
 * A provider whose metadata lists its grant types without the token exchange
 * grant (a stock oidc-provider) is warned about at start-up: every exchange,
 * and so every call, would be refused with unsupported_grant_type. weir still
 * starts (the list is optional and may be stale); a provider that lists the
 * grant gets no warning.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { freePort, startOidc } from "../support/oidc.ts";
import { EXCHANGE_CLIENT, startExchangeProvider } from "../support/oidc_exchange.ts";

function exchangeFile(audience: string): Promise<string> {
  return tempGuardfile(`wrap ward mcp tickets {
    base-url "https://tickets.example.com/api"
    auth token-exchange {
        audience "${audience}"
        client-id "${EXCHANGE_CLIENT.clientId}"
        client-secret { value env "WEIR_EXCHANGE_SECRET"; }
    }
    can get ticket { path "/tickets/{id}"; scope "tickets:read"; }
}
`);
}

async function startupLines(issuer: string, port: number, audience: string): Promise<string> {
  const weir = await serveHttp(await exchangeFile(audience), {
    address: `127.0.0.1:${port}`,
    extra: ["--oauth-issuer", issuer, "--oauth-resource", `http://127.0.0.1:${port}/mcp`],
    env: { WEIR_EXCHANGE_SECRET: EXCHANGE_CLIENT.clientSecret },
  });
  try {
    const health = await fetch(`${weir.url}/healthz`);
    await health.body?.cancel();
    assert.equal(health.status, 200, "weir serves despite the warning");
    return weir.stderr();
  } finally {
    await weir.stop();
  }
}

Deno.test("token exchange: a provider that does not list the exchange grant is warned about at start-up", async () => {
  const port = freePort();
  const stock = await startOidc(`http://127.0.0.1:${port}/mcp`);
  try {
    const lines = await startupLines(stock.issuer, port, "https://tickets.example.com/api");
    const warned = lines.split("\n").find((l) => l.includes("token_exchange_grant_unlisted"));
    assert.ok(warned, lines);
    assert.match(warned, /"level":"warn"/);
    assert.match(warned, /urn:ietf:params:oauth:grant-type:token-exchange/);
    assert.match(warned, /enable it at the provider, or set the oauth profile/);
  } finally {
    await stock.close();
  }
});

Deno.test("token exchange: a provider that lists the exchange grant gets no warning", async () => {
  const port = freePort();
  const provider = await startExchangeProvider(`http://127.0.0.1:${port}/mcp`);
  try {
    const lines = await startupLines(provider.oidc.issuer, port, provider.upstreamAudience);
    assert.ok(lines.includes('"event":"serving"'), lines);
    assert.ok(!lines.includes("token_exchange_grant_unlisted"), lines);
  } finally {
    await provider.close();
  }
});
