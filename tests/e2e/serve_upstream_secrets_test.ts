/**
 * weir's credentials stay put in serve-upstream and lint-upstream, through
 * the shipped CLI, against an upstream that echoes the `--upstream-header`
 * value it was sent (as written and base64-encoded) everywhere it can:
 *
 * - in a progress notification's message: redacted before the caller sees it;
 * - in a tool's definition (description, a schema's `default`): the tool is a
 *   `NOT AVAILABLE` stub saying why (a definition weir could only redact by
 *   changing what the upstream enforces), the others keep serving, and
 *   lint-upstream prints the same decision in the same words;
 * - in its `serverInfo`, and in error answers at start-up: never in weir's
 *   log lines, start-up messages or lint-upstream's report;
 * - a stdio upstream gets none of weir's own secrets from the environment
 *   (the inbound token, the state keys).
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runWeir, startWrapper } from "../support/upstream_cli.ts";
import { postMcp } from "../support/raw_upstream.ts";

const SECRET = "upstream-credential-5f2b9c7e41";
const HEADER = ["--upstream-header", "Authorization=Bearer {env:ECHO_TOKEN}"];
const ENV = { ECHO_TOKEN: SECRET };

/** Every form of the secret a test looks for in what weir emitted. */
function leaks(text: string): string[] {
  const forms = [SECRET, btoa(SECRET), btoa(`Bearer ${SECRET}`)];
  return forms.filter((f) => text.includes(f));
}

/**
 * An MCP upstream (2025-11-25, raw HTTP) that quotes the Authorization header
 * it received: in `serverInfo`, in the tool `leaky`'s definition, in the
 * progress it sends for a call, and (when `failing()`) in a 500 answer to
 * `initialize`.
 */
function echoingUpstream(failing = () => false) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const auth = req.headers.get("authorization") ?? "";
    const msg = await req.json();
    if (msg.id === undefined) return new Response(null, { status: 202 });
    const answer = (result: unknown) =>
      `data: ${JSON.stringify({ jsonrpc: "2.0", id: msg.id, result })}\n\n`;
    const sse = { "content-type": "text/event-stream" };
    switch (msg.method) {
      case "initialize":
        if (failing()) return new Response(`no entry for ${auth}`, { status: 500 });
        return new Response(
          answer({
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: `upstream for ${auth}`, version: "1" },
          }),
          { headers: sse },
        );
      case "tools/list":
        return new Response(
          answer({
            tools: [
              { name: "echo", inputSchema: { type: "object" } },
              {
                name: "leaky",
                description: `Uses ${btoa(auth)}.`,
                inputSchema: {
                  type: "object",
                  properties: { who: { type: "string", default: auth } },
                },
              },
            ],
          }),
          { headers: sse },
        );
      case "tools/call": {
        const token = msg.params._meta?.progressToken;
        const progress = token === undefined ? "" : `data: ${
          JSON.stringify({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: 1, total: 2, message: `sent ${auth}` },
          })
        }\n\n`;
        return new Response(progress + answer({ content: [{ type: "text", text: "done" }] }), {
          headers: sse,
        });
      }
      default:
        return Response.json({
          jsonrpc: "2.0",
          id: msg.id,
          error: { code: -32601, message: "no" },
        });
    }
  });
  return { url: `http://127.0.0.1:${server.addr.port}/mcp`, stop: () => server.shutdown() };
}

Deno.test("serve-upstream: an upstream that echoes the credential gets it nowhere", async (t) => {
  const up = echoingUpstream();
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--tool",
    "leaky",
    "--upstream",
    up.url,
    ...HEADER,
  ], {
    env: ENV,
  });
  const client = new Client({ name: "secrets-test", version: "1" });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${weir.url}/mcp`)));
    let stubWords = "";
    await t.step("a definition quoting it is a stub saying why; the others serve", async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(leaks(JSON.stringify(tools)), []);
      const leaky = tools.find((x: { name: string }) => x.name === "leaky")!;
      assert.match(leaky.description ?? "", /^NOT AVAILABLE: .*--upstream-header secret/);
      stubWords = /^NOT AVAILABLE: (.*)\. Calling it/.exec(leaky.description!)![1];
      const refused = await client.callTool({ name: "leaky", arguments: {} });
      assert.equal(refused.isError, true);
      assert.match(JSON.stringify(refused.content), /tool_unavailable/);
    });
    await t.step("progress quoting it reaches the caller redacted", async () => {
      const seen: { message?: string }[] = [];
      const result = await client.callTool({ name: "echo", arguments: {} }, undefined, {
        onprogress: (p: { message?: string }) => seen.push(p),
      });
      assert.deepEqual(result.content, [{ type: "text", text: "done" }]);
      assert.equal(seen.length, 1);
      assert.equal(seen[0].message, "sent Bearer [redacted]");
    });
    await t.step("lint-upstream decides the same, in the same words", async () => {
      const lint = await runWeir(
        ["lint-upstream", "--tool", "echo", "--tool", "leaky", "--upstream", up.url, ...HEADER],
        ENV,
      );
      assert.equal(lint.code, 1, lint.stderr);
      assert.equal(lint.stdout.trim(), "echo\tpresent\nleaky\twithheld");
      assert.ok(
        lint.stderr.includes(`weir: lint-upstream: tool "leaky": ${stubWords}`),
        `${lint.stderr}\nwanted: ${stubWords}`,
      );
      assert.deepEqual(leaks(lint.stdout + lint.stderr), []);
    });
  } finally {
    await client.close();
    await weir.stop();
    await up.stop();
  }
  await t.step("weir's log never holds it (the upstream's serverInfo quoted it)", () => {
    assert.match(weir.stderr(), /"event":"upstream_connected"/);
    assert.deepEqual(leaks(weir.stderr()), []);
  });
});

Deno.test("serve-upstream and lint-upstream: start-up failures quoting the credential do not print it", async () => {
  const up = echoingUpstream(() => true);
  try {
    const lint = await runWeir(
      ["lint-upstream", "--tool", "echo", "--upstream", up.url, ...HEADER],
      ENV,
    );
    assert.equal(lint.code, 1);
    assert.match(lint.stderr, /no entry for Bearer \[redacted\]/);
    assert.deepEqual(leaks(lint.stdout + lint.stderr), []);
    const serve = await runWeir(
      [
        "serve-upstream",
        "--tool",
        "echo",
        "--http",
        "127.0.0.1:0",
        "--upstream",
        up.url,
        "--connect-timeout",
        "1500ms",
        ...HEADER,
      ],
      ENV,
    );
    assert.equal(serve.code, 1);
    // The retry lines and the final message both quote the upstream's answer.
    assert.match(serve.stderr, /"event":"upstream_connect_retry"/);
    assert.match(serve.stderr, /could not connect: .*no entry for Bearer \[redacted\]/);
    assert.deepEqual(leaks(serve.stderr), []);
  } finally {
    await up.stop();
  }
});

Deno.test("serve-upstream: a stdio upstream gets none of weir's own secrets", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-env-" });
  const script = `${dir}/env_upstream.ts`;
  const names = ["WEIR_TEST_INBOUND", "WEIR_TEST_KEYS", "WEIR_TEST_OTHER"];
  // A stdio MCP server whose one tool's description reports what it was given.
  await Deno.writeTextFile(
    script,
    `const seen = ${JSON.stringify(names)}
  .map((n) => n + "=" + (Deno.env.get(n) ?? "unset")).join(" ");
const out = (m: unknown) => Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(m) + "\\n"));
let buf = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buf += chunk;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const msg = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    if (msg.id === undefined) continue;
    const result = msg.method === "initialize"
      ? { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "env", version: "1" } }
      : { tools: [{ name: "env", description: seen, inputSchema: { type: "object" } }] };
    out({ jsonrpc: "2.0", id: msg.id, result });
  }
}
`,
  );
  const token = "inbound-token-for-env-test-0123456789";
  const weir = await startWrapper(
    [
      "--tool",
      "env",
      "--inbound-token-env",
      "WEIR_TEST_INBOUND",
      "--state-keys-env",
      "WEIR_TEST_KEYS",
      "--",
      Deno.execPath(),
      "run",
      "-A",
      script,
    ],
    {
      env: {
        WEIR_TEST_INBOUND: token,
        WEIR_TEST_KEYS: "state-key-for-env-test-0123456789abcdef",
        WEIR_TEST_OTHER: "kept",
      },
    },
  );
  try {
    const listed = await postMcp(
      weir.url,
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
      { authorization: `Bearer ${token}` },
    );
    const tools = JSON.parse(listed).result.tools;
    assert.equal(
      tools[0].description,
      "WEIR_TEST_INBOUND=unset WEIR_TEST_KEYS=unset WEIR_TEST_OTHER=kept",
    );
  } finally {
    await weir.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
