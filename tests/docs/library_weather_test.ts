/**
 * The library example of docs/library.md (the weather catalog), run exactly as written
 * with the official clients: v1 over stdio (2025-11-25), v2 over HTTP pinned
 * to 2026-07-28.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { CONFIG, ROOT } from "../support/cli.ts";
import { until } from "../support/wait.ts";

const page = await Deno.readTextFile(`${ROOT}docs/library.md`);
const block = /```ts\n(\/\/ weather\.ts:[\s\S]*?)```/.exec(page)?.[1];
const scriptDir = await Deno.makeTempDir({ prefix: "weir-library-doc-" });
globalThis.addEventListener("unload", () => Deno.removeSync(scriptDir, { recursive: true }));
const script = `${scriptDir}/weather.ts`;
if (block) {
  await Deno.writeTextFile(script, block.replace(`from "./mod.ts"`, `from "${ROOT}mod.ts"`));
}
const run = ["run", "--quiet", "--config", CONFIG, "-A", script];

type AnyClient = {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(p: unknown): Promise<{ content: unknown; isError?: boolean }>;
  listResources(): Promise<{ resources: { uri: string }[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(p: unknown): Promise<{ contents: { text?: string }[] }>;
  getPrompt(p: unknown): Promise<{ messages: { content: unknown }[] }>;
};

async function exercise(client: AnyClient) {
  assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ["get_weather"]);
  const oslo = await client.callTool({ name: "get_weather", arguments: { place: "Oslo" } });
  assert.deepEqual(oslo.content, [{ type: "text", text: "12°C" }]);
  const nowhere = await client.callTool({ name: "get_weather", arguments: { place: "Atlantis" } });
  assert.equal(nowhere.isError, true);
  const bad = await client.callTool({ name: "get_weather", arguments: { city: "Oslo" } });
  assert.equal(bad.isError, true, "an undeclared argument is refused");
  assert.deepEqual((await client.listResources()).resources.map((r) => r.uri), [
    "weather://places",
  ]);
  assert.deepEqual(
    (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
    ["weather://place/{name}"],
  );
  assert.equal(
    (await client.readResource({ uri: "weather://places" })).contents[0].text,
    "Oslo\nLima",
  );
  assert.equal(
    (await client.readResource({ uri: "weather://place/Lima" })).contents[0].text,
    "19°C",
  );
  await assert.rejects(client.readResource({ uri: "weather://place/a/b" }), "one segment only");
  const prompt = await client.getPrompt({ name: "forecast", arguments: { place: "Oslo" } });
  assert.deepEqual(prompt.messages[0].content, {
    type: "text",
    text: "What is the forecast for Oslo?",
  });
}

Deno.test("the weather example is in docs/library.md", () => {
  assert.ok(block, "a ```ts block starting with // weather.ts:");
});

Deno.test("docs/library.md weather example over stdio with the v1 client", async () => {
  const client = new ClientV1({ name: "library-doc-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: Deno.execPath(), args: run, cwd: ROOT }),
  );
  try {
    await exercise(client as unknown as AnyClient);
  } finally {
    await client.close();
  }
});

Deno.test("docs/library.md weather example over HTTP with the v2 client (2026-07-28)", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const child = new Deno.Command(Deno.execPath(), {
    args: [...run, "--http", String(port)],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    let up = false;
    await until(async () =>
      up = await fetch(`http://127.0.0.1:${port}/mcp`).then(async (
        r,
      ) => (await r.body?.cancel(), true))
        .catch(() => false), { stepMs: 100 });
    assert.ok(up, "the example listens");
    const client = new ClientV2(
      { name: "library-doc-test", version: "2.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    try {
      await exercise(client as unknown as AnyClient);
    } finally {
      await client.close();
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stderr.cancel();
  }
});
