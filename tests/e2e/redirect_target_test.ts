/**
 * A redirect's target never reaches the caller; the operator's log gets it
 * with its query values redacted. A `Location` often carries a credential (a
 * presigned URL, a download token in the query: GitHub's archive endpoints
 * answer so), so every place an upstream's redirect is refused is driven
 * through the shipped CLI with one that carries userinfo, a token, a
 * signature and a fragment:
 *
 * - spec mode, weir's HTTP/1.1 client and `fetch` (`WEIR_UPSTREAM_CLIENT`),
 *   over `/api` and the official MCP clients of both revisions;
 * - serve-upstream, its own client and the official one, and at start-up
 *   (the operator's error names the target, redacted);
 * - the guardfile's `mcp-server` form;
 * - an AWS policy (serve FILE, `wrap ward mcp aws ssm`).
 *
 * The caller gets the status and `upstream_redirect`; the `tool_call` audit
 * line gets `location`; no secret of the target is written anywhere.
 * (OAuth's metadata, JWKS and introspection fetches, whose failures reach only
 * the operator's log: tests/oauth/jwks_test.ts.)
 */
import assert from "node:assert/strict";
import { callApi, type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { AskingPeer } from "../support/asking_upstream.ts";
import { startWrapper, textOf, v1Http, v2Http, type Wrapper } from "../support/upstream_cli.ts";
import { awsEnv } from "../support/aws.ts";
import { until } from "../support/wait.ts";

/** Never seen by anyone but the redirecting server. */
const SECRETS = ["SECRET-TOKEN-1", "SIGNATURE-2", "pw-3", "frag-4"];

/** The elsewhere the redirects point at (never reached: nothing listens there). */
const ELSEWHERE = "127.0.0.1:9";
const LOCATION =
  `http://user:pw-3@${ELSEWHERE}/download/archive.tar.gz?token=SECRET-TOKEN-1&X-Amz-Signature=SIGNATURE-2#frag-4`;
const LOGGED =
  `http://${ELSEWHERE}/download/archive.tar.gz?token=[redacted]&X-Amz-Signature=[redacted]`;

function redirect(status = 302): Response {
  return new Response(null, { status, headers: { location: LOCATION } });
}

/** An HTTP server that redirects every request `when` says. */
function redirecting(
  when: (body: Record<string, unknown> | undefined) => boolean,
  otherwise: (body: Record<string, unknown>) => Response,
): { url: string; stop: () => Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const text = await req.text();
    let body: Record<string, unknown> | undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch { /* not JSON */ }
    if (when(body)) return redirect();
    return otherwise(body ?? {});
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, stop: () => server.shutdown() };
}

/** An MCP upstream (2025-11-25) that answers the handshake and lists, and redirects each call. */
function mcpUpstream(): { url: string; stop: () => Promise<void> } {
  const peer = new AskingPeer("2025-11-25");
  const up = redirecting(
    (body) => body?.method === "tools/call",
    (body) => {
      const answer = peer.answer(body);
      return answer === null
        ? new Response(null, { status: 202 })
        : Response.json(answer, { status: "error" in answer ? 400 : 200 });
    },
  );
  return { url: `${up.url}/mcp`, stop: up.stop };
}

/** The caller's text says the status and nothing of the target. */
function assertCallerText(text: string): void {
  assert.match(text, /^upstream_redirect: .*302, a redirect; weir follows no redirect/, text);
  for (const part of [ELSEWHERE, "download", "archive", ...SECRETS]) {
    assert.ok(!text.includes(part), `the caller saw ${part}: ${text}`);
  }
}

/** The audit line of the refused call names the redacted target; no secret is logged. */
async function assertLogged(server: Served | Wrapper, calls: number): Promise<void> {
  const lines = () =>
    server.stderr().split("\n").filter((l) => l.includes('"outcome":"upstream_redirect"'));
  assert.ok(await until(() => lines().length >= calls), server.stderr());
  for (const line of lines()) assert.equal(JSON.parse(line).location, LOGGED, line);
  for (const secret of SECRETS) assert.ok(!server.stderr().includes(secret), server.stderr());
}

for (const client of ["http1", "fetch"] as const) {
  Deno.test(`spec mode (${client}): the caller gets the redirect's status, the log its target`, async () => {
    const up = redirecting(() => true, () => new Response(null, { status: 500 }));
    const file = await tempGuardfile(`wrap ward mcp files {
    base-url "${up.url}"
    auth none
    can get file { path "/files/{id}" }
}
`);
    const server = await serveHttp(file, { env: { WEIR_UPSTREAM_CLIENT: client } });
    try {
      const r = await callApi(server.url, "get_file", { id: "1" });
      assert.equal(r.status, 502, r.text);
      assertCallerText(r.text);
      for (const connect of [v1Http, v2Http]) {
        const mcp = await connect(server.url);
        try {
          const result = await mcp.callTool({ name: "get_file", arguments: { id: "2" } });
          assert.equal(result.isError, true);
          assertCallerText(textOf(result));
        } finally {
          await mcp.close();
        }
      }
      await assertLogged(server, 3);
    } finally {
      await server.stop();
      await up.stop();
    }
  });
}

for (const official of [false, true]) {
  Deno.test(`serve-upstream${official ? " (official client)" : ""}: a call's redirect target stays with the operator`, async () => {
    const up = mcpUpstream();
    const weir = await startWrapper(
      ["--tool", "ask", "--upstream", up.url],
      { env: official ? { WEIR_UPSTREAM_CLIENT: "fetch" } : undefined },
    );
    try {
      const r = await callApi(weir.url, "ask", { method: "ping" });
      assert.equal(r.status, 502, r.text);
      assertCallerText(r.text);
      await assertLogged(weir, 1);
    } finally {
      await weir.stop();
      await up.stop();
    }
  });
}

Deno.test("serve-upstream: a redirect at start-up names its target to the operator, redacted", async () => {
  const up = redirecting(() => true, () => new Response(null, { status: 500 }));
  try {
    const error = await startWrapper(["--tool", "ask", "--upstream", `${up.url}/mcp`]).then(
      (w) => w.stop().then(() => undefined),
      (e: Error) => e,
    );
    assert.ok(error instanceof Error, "weir started against an upstream that redirects");
    assert.ok(error.message.includes(`(it pointed to ${LOGGED})`), error.message);
    for (const secret of SECRETS) assert.ok(!error.message.includes(secret), error.message);
  } finally {
    await up.stop();
  }
});

Deno.test("the guardfile's mcp-server: a call's redirect target stays with the operator", async () => {
  const up = mcpUpstream();
  const file = await tempGuardfile(`wrap ward mcp asking {
    mcp-server http "${up.url}"
    proxy ask
}
`);
  const server = await serveHttp(file);
  try {
    const r = await callApi(server.url, "ask", { method: "ping" });
    assert.equal(r.status, 502, r.text);
    assertCallerText(r.text);
    await assertLogged(server, 1);
  } finally {
    await server.stop();
    await up.stop();
  }
});

Deno.test("an AWS policy: a redirect's target stays with the operator", async () => {
  const up = redirecting(() => true, () => new Response(null, { status: 500 }));
  const file = await tempGuardfile(`wrap ward mcp aws ssm {
    region "us-east-1"
    parameter "/p/one"
    can get parameter
}
`);
  const server = await serveHttp(file, { env: awsEnv({ AWS_ENDPOINT_URL_SSM: up.url }) });
  try {
    const r = await callApi(server.url, "get_parameter", { name: "/p/one" });
    assert.equal(r.status, 502, r.text);
    assert.match(r.text, /^upstream_redirect: GetParameter answered 302, a redirect/);
    assertCallerText(r.text);
    await assertLogged(server, 1);
  } finally {
    await server.stop();
    await up.stop();
  }
});
