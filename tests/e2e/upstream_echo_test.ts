/**
 * An upstream's words that quote weir's own credential reach no one: not a
 * caller, not the audit line, not a command's message. A hostile upstream
 * echoes what it was sent (raw and as base64) into each thing weir passes on
 * or writes down, driven through the shipped CLI:
 *
 * - a redirect's `Location` (the audit line's `location`), with the
 *   credential in a path segment and base64 of it, in spec mode (both of
 *   weir's HTTP clients), the guardfile's `mcp-server` form,
 *   `serve-upstream --upstream-header` and an AWS policy (the session token
 *   and the secret key); query values were redacted before, the rest was not;
 * - an MCP server's JSON-RPC error at the handshake and at `tools/list`,
 *   quoted by every command that connects: `weir verify`, `weir diff --live`,
 *   `weir lint-upstream`, `weir describe`, `weir serve` (start-up);
 * - a background re-verification's failure, in the log line
 *   `upstream_reverify_failed`;
 * - tools named after the credential (the names a missing tool's message
 *   offers as the nearest), in `lint-upstream` (both forms), `verify` and
 *   `diff --live`.
 *
 * Each fails before the fix (the credential or its base64 was printed).
 */
import assert from "node:assert/strict";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { awsEnv, CREDENTIALS } from "../support/aws.ts";
import { base64Holds } from "../support/secret_echoes.ts";
import { until } from "../support/wait.ts";

const TOKEN = "echoed-cred-7f3a9c21b4";
const b64 = (text: string) => btoa(text);

/** Neither the secret nor any base64 of it is in `text`. */
function assertClean(text: string, secrets: readonly string[], where: string): void {
  for (const secret of secrets) {
    assert.ok(!text.includes(secret), `${where} holds ${secret}:\n${text}`);
    assert.ok(!base64Holds(text, secret), `${where} holds base64 of ${secret}:\n${text}`);
  }
}

/** A `Location` naming `secret` in a path segment and base64 of it in another. */
const echoingLocation = (secret: string) => `/dl/${secret}/then/${b64(secret)}?k=${secret}`;

/**
 * What a hostile MCP server does with each JSON-RPC method (default: answers
 * it); `named` (tools/list): it also lists tools named after the token and its base64.
 */
type Plan = Record<string, "error" | "redirect" | "named">;

/**
 * A raw MCP server (JSON answers, 2025-11-25) with one tool `echo`; each
 * method the plan names answers with the caller's bearer token quoted in a
 * JSON-RPC error, or redirects to a `Location` quoting it.
 */
function hostileMcp(plan: Plan): { url: string; stop: () => Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const msg = JSON.parse(await req.text());
    const token = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    if (msg.id === undefined) return new Response(null, { status: 202 });
    const how = plan[msg.method];
    if (how === "redirect") {
      return new Response(null, { status: 307, headers: { location: echoingLocation(token) } });
    }
    const answer = (body: Record<string, unknown>) =>
      Response.json({ jsonrpc: "2.0", id: msg.id, ...body });
    if (how === "error") {
      const message = `token ${token} is not valid here (${b64(token)})`;
      return answer({ error: { code: -32000, message, data: { token } } });
    }
    if (msg.method === "initialize") {
      return answer({
        result: {
          protocolVersion: msg.params.protocolVersion,
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: "hostile", version: "1" },
        },
      });
    }
    if (msg.method === "tools/list") {
      const inputSchema = { type: "object", properties: { text: { type: "string" } } };
      const names = how === "named"
        ? ["echo", token, `x_${b64(token).replace(/=+$/, "")}`]
        : ["echo"];
      const tools = names.map((name) => ({ name, description: "Echo.", inputSchema }));
      return answer({ result: { tools } });
    }
    if (msg.method === "tools/call") {
      return answer({ result: { content: [{ type: "text", text: "ok" }] } });
    }
    return answer({ error: { code: -32601, message: "no such method" } });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/mcp`, stop: () => server.shutdown() };
}

/** A guardfile wrapping `url` with `Authorization: Bearer $ECHO_TOKEN`. */
function wrapFile(url: string, extra = ""): Promise<string> {
  return tempGuardfile(`wrap ward mcp hostile {
    mcp-server http "${url}" {
        header "Authorization" { prefix "Bearer "; value env "ECHO_TOKEN"; }
        connect-timeout "1s"
${extra}    }
    proxy echo
}
`);
}

/** The `location` of every `upstream_redirect` audit line, once there are `count`. */
async function redirectLines(server: { stderr(): string }, count: number): Promise<string[]> {
  const lines = () =>
    server.stderr().split("\n").filter((l) => l.includes('"outcome":"upstream_redirect"'));
  assert.ok(await until(() => lines().length >= count), server.stderr());
  return lines().map((l) => String(JSON.parse(l).location));
}

for (const client of ["http1", "fetch"] as const) {
  Deno.test(`spec mode (${client}): a redirect quoting the bearer token is logged without it`, async () => {
    const up = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      const token = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
      return new Response(null, { status: 302, headers: { location: echoingLocation(token) } });
    });
    const file = await tempGuardfile(`wrap ward mcp files {
    base-url "http://127.0.0.1:${up.addr.port}"
    auth bearer { value env "ECHO_TOKEN"; }
    can get file { path "/files/{id}" }
}
`);
    const server = await serveHttp(file, {
      env: { ECHO_TOKEN: TOKEN, WEIR_UPSTREAM_CLIENT: client },
    });
    try {
      const r = await callApi(server.url, "get_file", { id: "1" });
      assert.equal(r.status, 502, r.text);
      const [location] = await redirectLines(server, 1);
      assert.match(location, /^http:\/\/127\.0\.0\.1:\d+\/dl\/\[redacted\]\/then\/\[redacted\]/);
    } finally {
      await server.stop();
      await up.shutdown();
    }
    assertClean(server.stderr(), [TOKEN], "the log");
  });
}

Deno.test("the mcp-server form and serve-upstream --upstream-header: a redirected call's audit line holds no header secret", async () => {
  const up = hostileMcp({ "tools/call": "redirect" });
  const env = { ECHO_TOKEN: TOKEN };
  try {
    const file = await wrapFile(up.url);
    for (
      const start of [
        () => serveHttp(file, { env }),
        () =>
          startWrapper(
            [
              "--upstream",
              up.url,
              "--tool",
              "echo",
              "--upstream-header",
              "Authorization=Bearer {env:ECHO_TOKEN}",
            ],
            { env },
          ),
      ]
    ) {
      const weir = await start();
      try {
        const r = await callApi(weir.url, "echo", { text: "hi" });
        assert.equal(r.status, 502, r.text);
        assertClean(r.text, [TOKEN], "the caller's answer");
        const [location] = await redirectLines(weir, 1);
        assert.match(location, /\/dl\/\[redacted\]\/then\/\[redacted\]/);
      } finally {
        await weir.stop();
      }
      assertClean(weir.stderr(), [TOKEN], "the log");
    }
  } finally {
    await up.stop();
  }
});

Deno.test("an AWS policy: a redirect quoting the session token or the secret key is logged without them", async () => {
  const { secretAccessKey, sessionToken } = CREDENTIALS;
  const up = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response(null, {
        status: 302,
        headers: { location: `/x/${encodeURIComponent(sessionToken)}/${b64(secretAccessKey)}` },
      }),
  );
  const file = await tempGuardfile(`wrap ward mcp aws ssm {
    region "us-east-1"
    parameter "/p/one"
    can get parameter
}
`);
  const server = await serveHttp(file, {
    env: awsEnv({ AWS_ENDPOINT_URL_SSM: `http://127.0.0.1:${up.addr.port}` }),
  });
  try {
    const r = await callApi(server.url, "get_parameter", { name: "/p/one" });
    assert.equal(r.status, 502, r.text);
    const [location] = await redirectLines(server, 1);
    assert.match(location, /\/x\/\[redacted\]\/\[redacted\]$/);
  } finally {
    await server.stop();
    await up.shutdown();
  }
  assertClean(server.stderr(), [secretAccessKey, sessionToken], "the log");
});

/** Every command that connects to a wrap file's MCP server, with its arguments. */
const COMMANDS: [string, (file: string) => string[]][] = [
  ["verify", (f) => ["verify", f]],
  ["diff --live", (f) => ["diff", "--live", f, f]],
  ["lint-upstream", (f) => ["lint-upstream", f]],
  ["describe", (f) => ["describe", f]],
  ["serve", (f) => ["serve", f, "--http", "127.0.0.1:0"]],
];

for (
  const [what, plan] of [
    ["the handshake", { initialize: "error" }],
    ["the handshake's redirect", { initialize: "redirect" }],
    ["tools/list", { "tools/list": "error" }],
  ] as const
) {
  Deno.test(`an MCP server quoting weir's header secret in ${what}: no command prints it`, async (t) => {
    const up = hostileMcp(plan);
    try {
      const file = await wrapFile(up.url);
      for (const [name, args] of COMMANDS) {
        await t.step(name, async () => {
          const out = await runCli(args(file), { env: { ECHO_TOKEN: TOKEN } });
          assert.notEqual(out.code, 0, `${name} succeeded:\n${out.stdout}\n${out.stderr}`);
          // It still says what went wrong, with the secret taken out.
          assert.match(out.stderr, /\[redacted\]|answered 307/, out.stderr);
          assertClean(out.stdout + out.stderr, [TOKEN], name);
        });
      }
    } finally {
      await up.stop();
    }
  });
}

Deno.test("a background re-verification that fails is logged without the header secret", async () => {
  const plan: Plan = {};
  const up = hostileMcp(plan);
  const file = await wrapFile(up.url, `        max-staleness "2s"\n`);
  const server = await serveHttp(file, { env: { ECHO_TOKEN: TOKEN } });
  try {
    plan["tools/list"] = "error";
    // A call once half the bound has passed re-verifies in the background.
    const logged = () => server.stderr().includes('"upstream_reverify_failed"');
    assert.ok(
      await until(async () => {
        await callApi(server.url, "echo", { text: "hi" });
        return logged();
      }, { timeoutMs: 20_000, stepMs: 200 }),
      server.stderr(),
    );
  } finally {
    await server.stop();
    await up.stop();
  }
  assertClean(server.stderr(), [TOKEN], "the log");
});

Deno.test("an MCP server listing tools named after weir's header secret: no command names them", async (t) => {
  const up = hostileMcp({ "tools/list": "named" });
  try {
    // A proxied tool the server does not list: the message offers the nearest names it does.
    const file = await tempGuardfile(`wrap ward mcp hostile {
    mcp-server http "${up.url}" {
        header "Authorization" { prefix "Bearer "; value env "ECHO_TOKEN"; }
    }
    proxy ech
}
`);
    const runs: [string, string[]][] = [
      ["lint-upstream FILE", ["lint-upstream", file]],
      ["lint-upstream FILE --format json", ["lint-upstream", file, "--format", "json"]],
      ["lint-upstream --upstream", [
        "lint-upstream",
        "--tool",
        "ech",
        "--upstream",
        up.url,
        "--upstream-header",
        "Authorization=Bearer {env:ECHO_TOKEN}",
      ]],
      ["verify", ["verify", file]],
      ["diff --live", ["diff", "--live", file, file]],
    ];
    for (const [name, args] of runs) {
      await t.step(name, async () => {
        const out = await runCli(args, { env: { ECHO_TOKEN: TOKEN } });
        assert.notEqual(out.code, 0, `${name} succeeded:\n${out.stdout}\n${out.stderr}`);
        // It still names the tool it could not find and the nearest it may say.
        assert.match(out.stdout + out.stderr, /nearest: echo/, out.stdout + out.stderr);
        assertClean(out.stdout + out.stderr, [TOKEN], name);
      });
    }
  } finally {
    await up.stop();
  }
});
