/**
 * serve-upstream passes the upstream's numbers through digit for digit (no
 * number is rounded or re-spelled on its way through weir): integers beyond
 * 2^53 and spellings like `1.0` in `structuredContent`, whether the upstream
 * answers with a JSON body, an event stream, or over stdio; a typed
 * `outputSchema` still accepts them as numbers.
 */
import assert from "node:assert/strict";
import { startWrapper } from "../support/upstream_cli.ts";
import { postMcp, rawHttpUpstream } from "../support/raw_upstream.ts";

/** The answer's structured content, exactly as the upstream writes it. */
const EXACT = '{"n":9007199254740993,"f":1.0,"e":1e400,"s":"kept"}';
const TOOLS = JSON.stringify({
  tools: [
    { name: "plain", inputSchema: { type: "object" } },
    {
      name: "typed",
      inputSchema: { type: "object" },
      outputSchema: {
        type: "object",
        properties: { n: { type: "integer" }, f: { type: "number" }, s: { type: "string" } },
      },
    },
  ],
});

/** One JSON-RPC answer's text for a request, or null for a notification. */
function answer(msg: { id?: unknown; method?: string }): string | null {
  if (msg.id === undefined) return null;
  const reply = (result: string) =>
    `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}`;
  switch (msg.method) {
    case "initialize":
      return reply(JSON.stringify({
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "exact", version: "1" },
      }));
    case "tools/list":
      return reply(TOOLS);
    case "tools/call":
      return reply(
        `{"content":[{"type":"text","text":${
          JSON.stringify(EXACT)
        }}],"structuredContent":${EXACT}}`,
      );
    default:
      return `{"jsonrpc":"2.0","id":${
        JSON.stringify(msg.id)
      },"error":{"code":-32601,"message":"no"}}`;
  }
}

/** The same upstream as a stdio child: a script written for the test. */
async function stdioUpstream(): Promise<{ args: string[]; cleanup: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "weir-exact-" });
  const script = `${dir}/upstream.ts`;
  await Deno.writeTextFile(
    script,
    `const answer = ${answer.toString()};\n` +
      `const EXACT = ${JSON.stringify(EXACT)};\nconst TOOLS = ${JSON.stringify(TOOLS)};\n` +
      `let buffer = "";\n` +
      `for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {\n` +
      `  buffer += chunk;\n  let nl;\n` +
      `  while ((nl = buffer.indexOf("\\n")) >= 0) {\n` +
      `    const line = buffer.slice(0, nl); buffer = buffer.slice(nl + 1);\n` +
      `    if (!line.trim()) continue;\n` +
      `    const text = answer(JSON.parse(line));\n` +
      `    if (text !== null) await Deno.stdout.write(new TextEncoder().encode(text + "\\n"));\n` +
      `  }\n}\n`,
  );
  return {
    args: ["--", Deno.execPath(), "run", "--quiet", "--no-config", script],
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}

function call(url: string, name: string): Promise<string> {
  return postMcp(url, {
    jsonrpc: "2.0",
    id: 9,
    method: "tools/call",
    params: { name, arguments: {} },
  });
}

async function assertExact(url: string): Promise<void> {
  for (const tool of ["plain", "typed"]) {
    const text = await call(url, tool);
    assert.ok(text.includes(`"structuredContent":${EXACT}`), `${tool}: ${text}`);
    assert.ok(!text.includes('"isError":true'), text);
  }
}

for (const sse of [false, true]) {
  Deno.test(`serve-upstream keeps numbers exact from an HTTP upstream (${sse ? "event stream" : "JSON body"})`, async () => {
    const up = rawHttpUpstream(answer, { sse });
    const weir = await startWrapper(["--tool", "plain", "--tool", "typed", "--upstream", up.url]);
    try {
      await assertExact(weir.url);
    } finally {
      await weir.stop();
      await up.stop();
    }
  });
}

Deno.test("serve-upstream keeps numbers exact from a stdio upstream", async () => {
  const up = await stdioUpstream();
  const weir = await startWrapper(["--tool", "plain", "--tool", "typed", ...up.args]);
  try {
    await assertExact(weir.url);
  } finally {
    await weir.stop();
    await up.cleanup();
  }
});
