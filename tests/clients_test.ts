/**
 * The client configuration snippets in docs/clients/ (Claude Code, Claude
 * Desktop, Cursor, VS Code), parsed as each client reads its file and then
 * used: each stdio entry's command line is started (the `weir` command mapped
 * to this checkout's CLI, `/home/you/weir/` to the checkout) and each HTTP
 * entry's URL and headers (the client's variable syntax filled in) are used
 * against a running `weir serve --http`, both through the official MCP client.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ROOT, serveHttp, weirCommand } from "./support/cli.ts";

const PLACEHOLDER_ROOT = "/home/you/weir/";
const TOKEN = "client-snippet-token-0123456789";

// deno-lint-ignore no-explicit-any
type Entry = Record<string, any>;

/**
 * The server command docs/install.md gives next to the client files (the block
 * marked tested-by this file): its flags after `--http PORT`, which the HTTP
 * entries are used against.
 */
const SERVER_FLAGS: string[] = (() => {
  const page = Deno.readTextFileSync(`${ROOT}docs/install.md`);
  const at = page.indexOf("docs-check: tested-by tests/clients_test.ts");
  assert.ok(at >= 0, "docs/install.md marks the server command block");
  const block = /```sh\n([\s\S]*?)```/.exec(page.slice(at));
  assert.ok(block, "docs/install.md shows the server command");
  const line = block[1].split("\n").find((l) => l.startsWith("weir serve "));
  assert.ok(line, "the block starts weir serve");
  const words = line.split(/\s+/);
  const http = words.indexOf("--http");
  assert.equal(words[http + 1], "8080", "the port the client files name");
  assert.equal(words[2], `${PLACEHOLDER_ROOT}guardfiles/open-meteo.mcp.kdl`);
  assert.match(block[1], /^export WEIR_TOKEN=/m, "the block sets the variable the clients send");
  return words.slice(http + 2);
})();

interface Snippet {
  file: string;
  /** Where the client keeps its servers in the file. */
  serversKey: "mcpServers" | "servers";
  /** How the client's file spells an environment variable or input in a header. */
  fill: (header: string) => string;
  http: boolean;
}

const SNIPPETS: Snippet[] = [
  {
    file: "claude-code.mcp.json",
    serversKey: "mcpServers",
    fill: (h) => h.replace("${WEIR_TOKEN}", TOKEN),
    http: true,
  },
  { file: "claude-desktop.json", serversKey: "mcpServers", fill: (h) => h, http: false },
  {
    file: "cursor.mcp.json",
    serversKey: "mcpServers",
    fill: (h) => h.replace("${env:WEIR_TOKEN}", TOKEN),
    http: true,
  },
  {
    file: "vscode.mcp.json",
    serversKey: "servers",
    fill: (h) => h.replace("${input:weir-token}", TOKEN),
    http: true,
  },
];

async function load(s: Snippet): Promise<{ stdio: Entry; http?: Entry }> {
  const doc = JSON.parse(await Deno.readTextFile(`${ROOT}docs/clients/${s.file}`));
  const servers: Record<string, Entry> = doc[s.serversKey];
  assert.ok(servers, `${s.file}: no "${s.serversKey}"`);
  const entries = Object.values(servers);
  const stdio = entries.find((e) => e.command);
  const http = entries.find((e) => e.url);
  assert.ok(stdio, `${s.file}: no stdio entry`);
  assert.equal(Boolean(http), s.http, `${s.file}: HTTP entry`);
  return { stdio, http };
}

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t: { name: string }) => t.name).sort();
}

for (const snippet of SNIPPETS) {
  Deno.test(`docs/clients/${snippet.file}: the stdio entry starts weir with an absolute guardfile path`, async () => {
    const { stdio } = await load(snippet);
    assert.ok(stdio.type === undefined || stdio.type === "stdio", `${stdio.type}`);
    assert.match(stdio.command, /(^|\/)weir$/);
    const [command, file, ...rest] = stdio.args as string[];
    assert.equal(command, "serve");
    assert.ok(file.startsWith("/"), `the guardfile path is absolute: ${file}`);
    assert.deepEqual(rest, ["--stdio"]);
    const weir = weirCommand();
    const client = new Client({ name: "snippet-test", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: weir.command,
        args: [...weir.args, command, file.replace(PLACEHOLDER_ROOT, ROOT), ...rest],
        cwd: "/",
        env: stdio.env ?? {},
        stderr: "pipe",
      }),
    );
    try {
      assert.ok((await names(client)).includes("get_forecast"));
    } finally {
      await client.close();
    }
  });

  if (!snippet.http) continue;
  Deno.test(`docs/clients/${snippet.file}: the HTTP entry reaches weir serve --http with its token`, async () => {
    const { http } = await load(snippet);
    const url = new URL(http!.url);
    assert.equal(url.pathname, "/mcp");
    const headers = Object.fromEntries(
      Object.entries(http!.headers as Record<string, string>).map(([k, v]) => [k, snippet.fill(v)]),
    );
    assert.equal(headers.Authorization, `Bearer ${TOKEN}`, "the token comes from a variable");
    const served = await serveHttp(`${ROOT}guardfiles/open-meteo.mcp.kdl`, {
      env: { WEIR_TOKEN: TOKEN },
      extra: SERVER_FLAGS,
    });
    const client = new Client({ name: "snippet-test", version: "1" });
    try {
      // The snippet's URL with the port this test's server got.
      const live = new URL(url.pathname, served.url);
      await client.connect(new StreamableHTTPClientTransport(live, { requestInit: { headers } }));
      assert.ok((await names(client)).includes("get_forecast"));
    } finally {
      await client.close();
      await served.stop();
    }
  });
}

Deno.test("docs/install.md: the server command refuses a wrong token; without it loopback serves any", async () => {
  assert.deepEqual(SERVER_FLAGS, ["--inbound-token-env", "WEIR_TOKEN"]);
  const call = (url: string, token: string) =>
    fetch(`${url}/api/weir_info`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: "{}",
    }).then(async (r) => (await r.body?.cancel(), r.status));
  const guarded = await serveHttp(`${ROOT}guardfiles/open-meteo.mcp.kdl`, {
    env: { WEIR_TOKEN: TOKEN },
    extra: SERVER_FLAGS,
  });
  try {
    assert.equal(await call(guarded.url, TOKEN), 200);
    assert.equal(await call(guarded.url, "some-other-token-0123456789"), 401);
  } finally {
    await guarded.stop();
  }
  // What docs/install.md says of the loopback default: no inbound authentication,
  // so any Authorization header is ignored.
  const open = await serveHttp(`${ROOT}guardfiles/open-meteo.mcp.kdl`);
  try {
    assert.equal(await call(open.url, "whatever"), 200);
  } finally {
    await open.stop();
  }
});
