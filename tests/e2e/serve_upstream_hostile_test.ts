/**
 * `weir serve-upstream` and `weir lint-upstream` in front of a hostile MCP
 * upstream (raw HTTP, no SDK): what weir emits stays clean text (docs/spec-mode.md,
 * "Clean text out") whatever the upstream's descriptions, results and tool
 * names hold, and an answer nested past the depth bound is refused by name
 * while weir keeps serving.
 */
import assert from "node:assert/strict";
import { runWeir, startWrapper } from "../support/upstream_cli.ts";
import { postMcp, rawHttpUpstream } from "../support/raw_upstream.ts";

const ESC = "\u001b";
const DIRTY = "hi \u001b[2J\u001b]0;title\u0007 \ud800 end";

/** A raw MCP upstream over HTTP answering one JSON object per request. */
function hostileUpstream(): { url: string; stop: () => Promise<void> } {
  type Msg = { id?: unknown; method?: string; params?: { arguments?: { mode?: string } } };
  return rawHttpUpstream((msg: Msg) => {
    if (msg.id === undefined) return null;
    const reply = (result: string) =>
      `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}`;
    switch (msg.method) {
      case "initialize":
        return reply(JSON.stringify({
          protocolVersion: "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "hostile", version: "1" },
        }));
      case "tools/list":
        return reply(JSON.stringify({
          tools: [
            {
              name: "echo",
              title: `Echo ${ESC}[31mred`,
              description: `echo ${ESC}]0;title\u0007 \udc00`,
              inputSchema: { type: "object", properties: { mode: { type: "string" } } },
            },
            { name: `ech${ESC}[2Jx`, inputSchema: { type: "object" } },
          ],
        }));
      case "tools/call": {
        const mode = msg.params?.arguments?.mode;
        if (mode === "deep") {
          return reply(
            `{"content":[{"type":"text","text":"x"}],"structuredContent":` +
              `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}}`,
          );
        }
        return reply(JSON.stringify({
          content: [{ type: "text", text: DIRTY }],
          structuredContent: { [`k${ESC}[2J`]: DIRTY },
        }));
      }
      default:
        return JSON.stringify({
          jsonrpc: "2.0",
          id: msg.id,
          error: { code: -32601, message: "no" },
        });
    }
  });
}

function rpc(url: string, id: number, method: string, params: unknown): Promise<string> {
  return postMcp(url, { jsonrpc: "2.0", id, method, params });
}

/** Whether decoded text holds anything clean text never does. */
function dirty(text: string): boolean {
  return !text.isWellFormed() || /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text);
}

Deno.test("serve-upstream: the upstream's definitions and results come out as clean text", async () => {
  const up = hostileUpstream();
  const weir = await startWrapper(["--tool", "echo", "--upstream", up.url]);
  try {
    const listed = await rpc(weir.url, 1, "tools/list", {});
    const tools = JSON.parse(listed).result.tools;
    assert.equal(tools.length, 1);
    assert.ok(!dirty(tools[0].description) && !dirty(tools[0].title), listed);
    assert.match(tools[0].description, /^echo /);

    const called = await rpc(weir.url, 2, "tools/call", { name: "echo", arguments: {} });
    const result = JSON.parse(called).result;
    assert.ok(!dirty(result.content[0].text), called);
    assert.equal(result.content[0].text, "hi  \ufffd end");
    for (const [key, value] of Object.entries(result.structuredContent)) {
      assert.ok(!dirty(key) && !dirty(value as string), called);
    }

    const deep = JSON.parse(
      await rpc(weir.url, 3, "tools/call", { name: "echo", arguments: { mode: "deep" } }),
    ).result;
    assert.equal(deep.isError, true);
    assert.match(deep.content[0].text, /^upstream_too_deep: /);

    const after = JSON.parse(await rpc(weir.url, 4, "tools/call", { name: "echo", arguments: {} }));
    assert.equal(after.result.content[0].text, "hi  \ufffd end", "weir keeps serving");
  } finally {
    await weir.stop();
    await up.stop();
  }
});

Deno.test("serve-upstream and lint-upstream: messages quoting the upstream's names are clean", async () => {
  const up = hostileUpstream();
  try {
    const served = await runWeir([
      "serve-upstream",
      "--tool",
      "echx",
      "--http",
      "127.0.0.1:0",
      "--upstream",
      up.url,
    ]);
    assert.equal(served.code, 1);
    assert.match(served.stderr, /not listed by the upstream \(nearest: /);
    assert.ok(!served.stderr.includes(ESC), served.stderr);

    const linted = await runWeir(["lint-upstream", "--tool", "echx", "--upstream", up.url]);
    assert.equal(linted.code, 1);
    assert.match(linted.stderr, /echx/);
    assert.ok(!linted.stderr.includes(ESC), linted.stderr);
  } finally {
    await up.stop();
  }
});

Deno.test("serve-upstream: a stdio upstream does not inherit weir's inbound token", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-env-" });
  const script = `${dir}/env_upstream.ts`;
  // A stdio MCP server whose one tool's description reports what it was given.
  await Deno.writeTextFile(
    script,
    `const seen = ["WEIR_TEST_INBOUND", "WEIR_TEST_OTHER"]
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
      : msg.method === "tools/list"
      ? { tools: [{ name: "env", description: seen, inputSchema: { type: "object" } }] }
      : { content: [{ type: "text", text: seen }] };
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
      "--",
      Deno.execPath(),
      "run",
      "-A",
      script,
    ],
    { env: { WEIR_TEST_INBOUND: token, WEIR_TEST_OTHER: "kept" } },
  );
  try {
    const listed = await postMcp(
      weir.url,
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
      { authorization: `Bearer ${token}` },
    );
    const tools = JSON.parse(listed).result.tools;
    assert.equal(tools[0].description, "WEIR_TEST_INBOUND=unset WEIR_TEST_OTHER=kept");
  } finally {
    await weir.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
