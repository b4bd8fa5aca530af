/**
 * A guardfile that wraps an MCP server, through the shipped CLI (`weir serve
 * FILE --http`), against a stdio MCP server on the official SDK
 * (tests/fixtures/apps_upstream.ts):
 *
 * - re-verification on the server's own signals: with a long
 *   `max-staleness`, calls are forwarded without listing the tools again; a
 *   `notifications/tools/list_changed` makes the next call verify first, and
 *   a drift found then stubs the tool; `--max-staleness 0` lists before
 *   every call;
 * - MCP Apps: the `ui://` interface a served tool links to is listed and
 *   readable, nothing else is unless `proxy-resource` names it, and a link
 *   weir will not serve is removed from the listed tool.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CONFIG, ROOT, tempGuardfile } from "../support/cli.ts";
import { serveAll } from "../support/upstream_cli.ts";

const FIXTURE = `${ROOT}tests/fixtures/apps_upstream.ts`;

function guardfile(options: { staleness?: string; extra?: string } = {}): string {
  return `wrap ward mcp apps {
    mcp-server stdio "${Deno.execPath()}" "run" "--quiet" "--config" "${CONFIG}" "--allow-env" "--allow-read" "--allow-write" "${FIXTURE}" {
        max-staleness "${options.staleness ?? "60s"}"
    }
    proxy dashboard
    proxy leaky
    proxy echo
    proxy poke
    ${options.extra ?? ""}
}
`;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "t", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

function listings(log: string): number {
  try {
    return Deno.readTextFileSync(log).split("\n").filter((l) => l === "tools/list").length;
  } catch {
    return 0;
  }
}

async function setup(extra: string[] = [], text = guardfile()) {
  const dir = await Deno.makeTempDir({ prefix: "weir-wrap-signals-" });
  const log = `${dir}/requests.log`;
  const echo = `${dir}/echo.txt`;
  const file = await tempGuardfile(text);
  const weir = await serveAll(
    file,
    { WEIR_TEST_REQUEST_LOG: log, WEIR_TEST_ECHO_FILE: echo },
    extra,
  );
  const client = await connect(weir.url);
  return {
    log,
    echo,
    weir,
    client,
    close: async () => {
      await client.close();
      await weir.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("calls are forwarded without listing again; list_changed makes the next call verify, and a drift found then stubs the tool", async () => {
  const s = await setup();
  try {
    assert.equal(listings(s.log), 1, "one listing at start-up");
    for (let i = 0; i < 10; i++) {
      const r = await s.client.callTool({ name: "echo", arguments: { message: `m${i}` } });
      assert.deepEqual(r.content, [{ type: "text", text: `echo: m${i}` }]);
    }
    assert.equal(listings(s.log), 1, "ten calls, no listing: within max-staleness");
    // The definition changes upstream, silently: still within the bound.
    await Deno.writeTextFile(s.echo, "Echoes the message, and runs it as a shell command.");
    const silent = await s.client.callTool({ name: "echo", arguments: { message: "x" } });
    assert.equal(silent.isError, undefined);
    // The server says its list changed: the next call verifies first.
    await s.client.callTool({ name: "poke", arguments: {} });
    const drifted = await s.client.callTool({ name: "echo", arguments: { message: "y" } });
    assert.equal(drifted.isError, true);
    assert.match(
      (drifted.content as { text: string }[])[0].text,
      /schema_drift: tool "echo": its definition changed upstream/,
    );
    assert.equal(listings(s.log), 2);
    // The stub is listed with the reason; the other tools keep serving.
    const tools = (await s.client.listTools()).tools;
    assert.match(
      tools.find((t: { name: string }) => t.name === "echo")!.description!,
      /^NOT AVAILABLE: /,
    );
    const other = await s.client.callTool({ name: "dashboard", arguments: {} });
    assert.equal(other.isError, undefined);
  } finally {
    await s.close();
  }
  assert.match(s.weir.stderr(), /"event":"upstream_tools_changed"/);
  assert.equal(s.weir.stderr().match(/"event":"upstream_drift"/g)?.length, 1);
});

Deno.test("--max-staleness 0 lists the tools before every call (the flag wins over the file)", async () => {
  const s = await setup(["--max-staleness", "0"]);
  try {
    for (let i = 0; i < 5; i++) {
      await s.client.callTool({ name: "echo", arguments: { message: "m" } });
    }
    assert.equal(listings(s.log), 6);
  } finally {
    await s.close();
  }
});

Deno.test("MCP Apps: the interface a served tool links to is readable; nothing else; foreign links removed", async () => {
  const s = await setup();
  try {
    const tools = (await s.client.listTools()).tools;
    const dashboard = tools.find((t: { name: string }) => t.name === "dashboard")!;
    assert.deepEqual(dashboard._meta, { ui: { resourceUri: "ui://dash/app.html" } });
    const leaky = tools.find((t: { name: string }) => t.name === "leaky")!;
    assert.deepEqual(leaky._meta, { other: 1 }, "a link weir will not serve is removed");
    const resources = (await s.client.listResources()).resources;
    assert.deepEqual(resources.map((r: { uri: string }) => r.uri), ["ui://dash/app.html"]);
    assert.equal(resources[0].mimeType, "text/html;profile=mcp-app");
    const read = await s.client.readResource({ uri: "ui://dash/app.html" });
    assert.deepEqual(read.contents, [{
      uri: "ui://dash/app.html",
      mimeType: "text/html;profile=mcp-app",
      text: "<html><body>dashboard</body></html>",
    }]);
    for (const uri of ["ui://other/panel.html", "file:///etc/secret", "https://evil.example/x"]) {
      await assert.rejects(s.client.readResource({ uri }), /not found|Resource/i, uri);
    }
    const reads = Deno.readTextFileSync(s.log).split("\n").filter((l) => l === "resources/read");
    assert.equal(reads.length, 1, "no refused read reached the MCP server");
  } finally {
    await s.close();
  }
});

Deno.test("MCP Apps: proxy-resource makes one more resource readable, by its URI only", async () => {
  const s = await setup([], guardfile({ extra: `proxy-resource "ui://other/panel.html"` }));
  try {
    const resources = (await s.client.listResources()).resources;
    assert.deepEqual(resources.map((r: { uri: string }) => r.uri).sort(), [
      "ui://dash/app.html",
      "ui://other/panel.html",
    ]);
    const read = await s.client.readResource({ uri: "ui://other/panel.html" });
    assert.equal((read.contents[0] as { text: string }).text, "<html><body>panel</body></html>");
    await assert.rejects(s.client.readResource({ uri: "file:///etc/secret" }));
  } finally {
    await s.close();
  }
});
