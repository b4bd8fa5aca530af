/**
 * RFC 6750 section 3.1 on every 401 weir answers (issue 34, item 7): a
 * request that carries no bearer credential (no `Authorization`, or another
 * scheme: `Basic`, `Token`, `Digest`) gets a Bearer challenge with no error
 * code and no error information; a malformed bearer credential (`Bearer`
 * alone, a token that is not a `b64token`) gets `error="invalid_request"`; a
 * well-formed token that does not pass gets `error="invalid_token"`; the
 * right token, with the scheme in any case, passes.
 *
 * Through the shipped CLI: static inbound tokens in spec mode, serve-upstream
 * and the guardfile's `inbound-token`, the admin endpoints, and OAuth (a real
 * OpenID provider) in spec mode; on `/mcp` and `/api/<tool>`.
 */
import assert from "node:assert/strict";
import { ROOT, type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { freePort, startOidc, tokenFor } from "../support/oidc.ts";

const TOKEN = "in-token-0123456789abcdef";
const ADMIN = "admin-token-0123456789abcdef";

/** `Authorization` values and the error code each must get (`null`: none). */
const REFUSED: [string, string | undefined, string | null][] = [
  ["no Authorization", undefined, null],
  ["Basic", "Basic d2VpcjpzZWNyZXQ=", null],
  ["Token", `Token ${TOKEN}`, null],
  ["Digest", 'Digest username="weir", realm="x"', null],
  ["Bearerish scheme", `BearerX ${TOKEN}`, null],
  ["Bearer alone", "Bearer", "invalid_request"],
  ["Bearer, not a b64token", "Bearer a b c", "invalid_request"],
  ["Bearer, a wrong token", "Bearer wrong-token-0123456789", "invalid_token"],
];

function paramsOf(header: string | null): Record<string, string> {
  assert.ok(header?.startsWith("Bearer"), `a Bearer challenge, got ${header}`);
  return Object.fromEntries([...header!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

async function post(url: string, authorization: string | undefined): Promise<Response> {
  // The admin endpoints: GET /admin/describe (no body).
  if (url.endsWith("/admin/describe")) {
    return await fetch(url, { headers: authorization === undefined ? {} : { authorization } });
  }
  return await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: url.endsWith("/mcp") ? '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' : "{}",
  });
}

/** Every refused case on `urls`, then the right credential (`ok`) passes. */
async function holds(urls: string[], ok: string, what: string): Promise<void> {
  for (const url of urls) {
    for (const [name, authorization, error] of REFUSED) {
      const res = await post(url, authorization);
      await res.body?.cancel();
      const said = `${what} ${url} ${name}: ${res.headers.get("www-authenticate")}`;
      assert.equal(res.status, 401, said);
      const params = paramsOf(res.headers.get("www-authenticate"));
      if (error === null) {
        assert.equal(params.error, undefined, said);
        assert.equal(params.error_description, undefined, said);
      } else assert.equal(params.error, error, said);
    }
    // RFC 6750 section 2.1: "Bearer" 1*SP b64token; more than one space is the same credential.
    for (const right of [ok, ok.replace(" ", "   ")]) {
      const res = await post(url, right);
      await res.body?.cancel();
      assert.notEqual(res.status, 401, `${what} ${url}: the right credential as ${right}`);
    }
  }
}

Deno.test("static inbound tokens, spec mode: RFC 6750 section 3.1 on /mcp and /api", async () => {
  const server = await serveHttp(`${ROOT}guardfiles/demo.mcp.kdl`, {
    env: { IN_TOKEN: TOKEN, ADMIN_TOKEN: ADMIN, DEMO_TICKETS_URL: "http://127.0.0.1:9" },
    extra: ["--inbound-token-env", "IN_TOKEN", "--admin-token-env", "ADMIN_TOKEN"],
  });
  try {
    await holds([`${server.url}/mcp`, `${server.url}/api/weir_info`], `bearer ${TOKEN}`, "serve");
    // The admin endpoints (their own realm and token).
    await holds([`${server.url}/admin/describe`], `Bearer ${ADMIN}`, "admin");
  } finally {
    await server.stop();
  }
});

Deno.test("static inbound tokens, serve-upstream and the guardfile's inbound-token", async () => {
  const up = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "json",
    tools: [{ name: "echo", inputSchema: { type: "object" } }],
  });
  const wrapper = await startWrapper(
    ["--tool", "echo", "--upstream", up.url, "--inbound-token-env", "IN_TOKEN"],
    { env: { IN_TOKEN: TOKEN } },
  );
  const file = await tempGuardfile(`inbound-token ops {
    value env "IN_TOKEN"
    tools "echo"
}
wrap ward mcp echoes {
    mcp-server http "${up.url}"
    proxy echo
}
`);
  let served: Served | undefined;
  try {
    await holds([`${wrapper.url}/mcp`, `${wrapper.url}/api/echo`], `Bearer ${TOKEN}`, "upstream");
    served = await serveHttp(file, { env: { IN_TOKEN: TOKEN } });
    await holds([`${served.url}/mcp`, `${served.url}/api/echo`], `Bearer ${TOKEN}`, "file");
  } finally {
    await served?.stop();
    await wrapper.stop();
    await up.stop();
  }
});

Deno.test("OAuth, spec mode: RFC 6750 section 3.1 on /mcp and /api", async () => {
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const oidc = await startOidc(resource);
  let server: Served | undefined;
  try {
    server = await serveHttp(`${ROOT}guardfiles/demo.mcp.kdl`, {
      address: `127.0.0.1:${port}`,
      env: { DEMO_TICKETS_URL: "http://127.0.0.1:9" },
      extra: ["--oauth-issuer", oidc.issuer, "--oauth-resource", resource],
    });
    const token = await tokenFor(oidc, resource, "tickets:read");
    await holds([`${server.url}/mcp`, `${server.url}/api/weir_info`], `Bearer ${token}`, "oauth");
  } finally {
    await server?.stop();
    await oidc.close();
  }
});
