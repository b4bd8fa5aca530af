/**
 * The two shipped guardfiles that wrap an MCP server, as a user runs them
 * through the CLI: `guardfiles/everything.mcp.kdl` (server-everything as a
 * stdio child, started with npx as the file says) and
 * `guardfiles/github-mcp.mcp.kdl` (an HTTP MCP server with a token header;
 * served here against a local server on the official SDK listing GitHub's
 * tool names, the URL swapped in a copy). Each lints, describes and serves;
 * SIGHUP picks up an edit that adds a tool, a broken edit keeps the old
 * surface, and `POST /admin/reload` and `GET /admin/describe` work on it.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { Validator } from "@seriousme/openapi-schema-validator";
import { ROOT, runCli } from "../support/cli.ts";
import { runWeir, serveAll } from "../support/upstream_cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { GITHUB_MCP_TOOLS } from "../support/github_mcp_tools.ts";
import { until as holds } from "../support/wait.ts";

const EVERYTHING = "guardfiles/everything.mcp.kdl";
const GITHUB = "guardfiles/github-mcp.mcp.kdl";
const ADMIN = "admin-token-0123456789abcdef";

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "t", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

function names(list: { tools: { name: string }[] }): string[] {
  return list.tools.map((t) => t.name).sort();
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  if (await holds(check, { stepMs: 100 })) return;
  throw new Error(`timed out waiting for ${what}`);
}

Deno.test("both shipped MCP-server guardfiles lint offline, listing what they serve", async () => {
  const lint = await runCli(["lint", "--methods", EVERYTHING, GITHUB]);
  assert.equal(lint.code, 0, lint.stderr);
  assert.equal(
    lint.stdout.trim(),
    [
      `${EVERYTHING}\tadd\tMCP`,
      `${EVERYTHING}\techo\tMCP`,
      `${EVERYTHING}\tget-env\tWITHHELD`,
      `${EVERYTHING}\tweather\tMCP`,
      `${EVERYTHING}\tweir_info\t-`,
      `${GITHUB}\tadd_issue_comment\tMCP`,
      `${GITHUB}\tget_issue\tMCP`,
      `${GITHUB}\tlist_issues\tMCP`,
      `${GITHUB}\tmerge_pull_request\tWITHHELD`,
      `${GITHUB}\tweir_info\t-`,
    ].join("\n"),
  );
});

Deno.test("everything.mcp.kdl: describe and serve as shipped; SIGHUP adds a tool, a broken edit keeps the old surface", async () => {
  const described = await runWeir(["describe", EVERYTHING]);
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /add {2}MCP tool get-sum\n {2}Adds two numbers from 0 to 1000\./);
  assert.match(
    described.stdout,
    /argument city: string \(required, one of "New York", "Chicago", sent as location\)/,
  );

  const dir = await Deno.makeTempDir({ prefix: "weir-everything-" });
  const file = `${dir}/everything.mcp.kdl`;
  const shipped = await Deno.readTextFile(`${ROOT}${EVERYTHING}`);
  await Deno.writeTextFile(file, shipped);
  const weir = await serveAll(file, { WEIR_ADMIN: ADMIN }, ["--admin-token-env", "WEIR_ADMIN"]);
  const client = await connect(weir.url);
  try {
    assert.deepEqual(names(await client.listTools()), [
      "add",
      "echo",
      "get-env",
      "weather",
      "weir_info",
    ]);
    const sum = await client.callTool({ name: "add", arguments: { first: 2, second: 40 } });
    assert.match(JSON.stringify(sum.content), /42/);
    const refused = await client.callTool({ name: "add", arguments: { first: 2, second: 4000 } });
    assert.equal(refused.isError, true);
    const weather = await client.callTool({ name: "weather", arguments: { city: "Chicago" } });
    assert.equal(weather.isError, undefined, JSON.stringify(weather));
    assert.ok(weather.structuredContent, "structuredContent passes through");

    // An edit that adds a tool: SIGHUP picks it up.
    await Deno.writeTextFile(
      file,
      shipped.replace("    proxy echo\n", "    proxy echo\n    proxy get-tiny-image\n"),
    );
    weir.kill("SIGHUP");
    await until(async () => names(await client.listTools()).includes("get-tiny-image"), "reload");
    const image = await client.callTool({ name: "get-tiny-image", arguments: {} });
    assert.equal(image.isError, undefined);

    // A broken edit: the old surface keeps serving.
    await Deno.writeTextFile(file, shipped.replace("proxy echo", "proxi echo"));
    weir.kill("SIGHUP");
    await until(() => /reload_refused/.test(weir.stderr()), "reload_refused");
    assert.match(weir.stderr(), /unknown node \\"proxi\\" in wrap/);
    assert.ok(names(await client.listTools()).includes("get-tiny-image"));
    const echo = await client.callTool({ name: "echo", arguments: { message: "still here" } });
    assert.match(JSON.stringify(echo.content), /still here/);

    // The admin endpoints do the same.
    await Deno.writeTextFile(file, shipped);
    const reload = await fetch(`${weir.url}/admin/reload`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const answer = await reload.json();
    assert.equal(reload.status, 200, JSON.stringify(answer));
    assert.deepEqual(answer.removed, ["get-tiny-image"]);
    const describe = await fetch(`${weir.url}/admin/describe`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const surface = await describe.json();
    assert.deepEqual(
      surface.tools.map((t: { name: string }) => t.name),
      ["add", "echo", "get-env", "weather", "weir_info"],
    );
    assert.equal(surface.tools[0].kind, "proxy");
  } finally {
    await client.close();
    await weir.stop();
    await Deno.remove(dir, { recursive: true });
  }
  assert.match(weir.stderr(), /"event":"reloaded","trigger":"SIGHUP"/);
});

Deno.test("github-mcp.mcp.kdl: describe and serve against an HTTP MCP server; the rules hold, the token is not logged", async () => {
  const up = await startSdkUpstream({
    revision: "2026-07-28",
    framing: "json",
    tools: GITHUB_MCP_TOOLS,
  });
  const dir = await Deno.makeTempDir({ prefix: "weir-github-" });
  const file = `${dir}/github-mcp.mcp.kdl`;
  await Deno.writeTextFile(
    file,
    (await Deno.readTextFile(`${ROOT}${GITHUB}`)).replace(
      "https://api.githubcopilot.com/mcp/",
      up.url,
    ),
  );
  const env = { GITHUB_TOKEN: "ghp_test_token_0123456789" };
  try {
    const described = await runWeir(["describe", "--format", "openapi", file], env);
    assert.equal(described.code, 0, described.stderr);
    const openapi = JSON.parse(described.stdout);
    const valid = await new Validator().validate(openapi);
    assert.equal(valid.valid, true, JSON.stringify(valid.errors, null, 2));
    assert.deepEqual(Object.keys(openapi.paths).sort(), [
      "/api/add_issue_comment",
      "/api/get_issue",
      "/api/list_issues",
      "/api/merge_pull_request",
      "/api/weir_info",
    ]);
    const weir = await serveAll(file, env);
    const client = new ClientV2({ name: "t", version: "2" }, {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    });
    await client.connect(new HttpV2(new URL(`${weir.url}/mcp`)));
    try {
      const ok = await client.callTool({
        name: "get_issue",
        arguments: { owner: "acme", repo: "web", issue_number: 7 },
      });
      assert.equal(ok.isError, undefined, JSON.stringify(ok));
      const before = up.calls().length;
      const other = await client.callTool({
        name: "get_issue",
        arguments: { owner: "someone-else", repo: "web", issue_number: 7 },
      }).catch((e) => e);
      assert.ok(other instanceof Error || other.isError === true);
      const page = await client.callTool({
        name: "list_issues",
        arguments: { owner: "acme", repo: "web", perPage: 100 },
      }).catch((e) => e);
      assert.ok(page instanceof Error || page.isError === true, "perPage is held to 50");
      // A comment needs a person: over the tool API nobody can say yes.
      const api = await fetch(`${weir.url}/api/add_issue_comment`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ owner: "acme", repo: "web", issue_number: 7, body: "hi" }),
      });
      assert.equal(api.status, 403);
      await api.body?.cancel();
      assert.equal(up.calls().length, before, "nothing refused reached the MCP server");
    } finally {
      await client.close();
      await weir.stop();
    }
    assert.ok(!weir.stderr().includes(env.GITHUB_TOKEN), "the token is never logged");
  } finally {
    await up.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
