/**
 * The info tool (`weir_info`) says no more than `tools/list` says to the same
 * caller: a static token limited to some tools (the guardfile's
 * `inbound-token` node and `--tool-token-env`) sees only its own tools and
 * withheld stubs in the answer, over MCP (both revisions, the official
 * clients) and over the tool API (`POST /api/weir_info`); a token of every
 * tool and no token on loopback (the default) see them all. Through the
 * shipped CLI, in spec mode, the guardfile form of serve-upstream (`weir
 * serve FILE` with `mcp-server`); the flag form (`weir serve-upstream`) serves
 * no info tool.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";
import { startWrapper } from "../support/upstream_cli.ts";

const READER = "reader-token-0123456789abcdef";
const WRITER = "writer-token-0123456789abcdef";
const ALL = "all-tools-token-0123456789abcd";
const ENV = { READER_TOKEN: READER, WRITER_TOKEN: WRITER, ALL_TOKEN: ALL };

/** What one caller learns: its tools/list names and weir_info's answer, per way of asking. */
interface Seen {
  listed: string[];
  info: { how: string; answer: Record<string, unknown> }[];
}

function headers(token?: string): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

async function seenBy(url: string, token?: string): Promise<Seen> {
  const info: Seen["info"] = [];
  const v1 = new ClientV1({ name: "info-v1", version: "1" });
  await v1.connect(new HttpV1(new URL(`${url}/mcp`), { requestInit: { headers: headers(token) } }));
  let listed: string[];
  try {
    listed = (await v1.listTools()).tools.map((t: { name: string }) => t.name).sort();
    const r = await v1.callTool({ name: "weir_info", arguments: {} });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    info.push({ how: "2025-11-25", answer: r.structuredContent as Record<string, unknown> });
  } finally {
    await v1.close();
  }
  const v2 = new ClientV2({ name: "info-v2", version: "2" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await v2.connect(new HttpV2(new URL(`${url}/mcp`), { requestInit: { headers: headers(token) } }));
  try {
    const names = (await v2.listTools()).tools.map((t: { name: string }) => t.name).sort();
    assert.deepEqual(names, listed, "both revisions list the same tools to one caller");
    const r = await v2.callTool({ name: "weir_info", arguments: {} });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    info.push({ how: "2026-07-28", answer: r.structuredContent as Record<string, unknown> });
  } finally {
    await v2.close();
  }
  const res = await fetch(`${url}/api/weir_info`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers(token) },
    body: "{}",
    signal: AbortSignal.timeout(30_000),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  info.push({ how: "/api", answer: body.structuredContent as Record<string, unknown> });
  return { listed, info };
}

async function listedOver(url: string, token: string): Promise<string[]> {
  const v1 = new ClientV1({ name: "info-v1", version: "1" });
  await v1.connect(new HttpV1(new URL(`${url}/mcp`), { requestInit: { headers: headers(token) } }));
  try {
    return (await v1.listTools()).tools.map((t: { name: string }) => t.name).sort();
  } finally {
    await v1.close();
  }
}

/**
 * Each caller's weir_info names exactly `tools` (and `withheld`), which is
 * also what tools/list names to it, three ways of asking alike.
 */
async function expectSees(
  url: string,
  who: string,
  token: string | undefined,
  tools: string[],
  withheld: string[],
): Promise<void> {
  const seen = await seenBy(url, token);
  assert.deepEqual(seen.listed, [...tools].sort(), `${who}: tools/list`);
  for (const { how, answer } of seen.info) {
    const at = `${who} via ${how}`;
    assert.deepEqual(answer.tools, [...tools].sort(), `${at}: weir_info tools`);
    assert.equal(answer.toolCount, tools.length, `${at}: weir_info toolCount`);
    assert.deepEqual(answer.withheld, withheld, `${at}: weir_info withheld`);
    const text = JSON.stringify(answer);
    for (const name of ALL_NAMES) {
      if (!tools.includes(name)) assert.ok(!text.includes(name), `${at} names ${name}: ${text}`);
    }
  }
}

/** Every tool name the surfaces below serve (get_a ... delete_d, the stub, weir_info). */
const ALL_NAMES = ["get_alpha", "get_bravo", "close_charlie", "delete_delta", "weir_info"];

const TOKEN_FLAGS = [
  "--tool-token-env",
  "WRITER_TOKEN:close_charlie,delete_delta,weir_info",
  "--inbound-token-env",
  "ALL_TOKEN",
];
const READER_NODE = `inbound-token reader {
    value env "READER_TOKEN"
    tools "get_alpha" "weir_info"
}
`;

/** The reader, the writer, the all-tools token and no token on loopback, against one surface. */
async function expectPerCaller(url: string, opts: { anonymous: boolean }): Promise<void> {
  await expectSees(url, "reader", READER, ["get_alpha", "weir_info"], []);
  await expectSees(url, "writer", WRITER, ["close_charlie", "delete_delta", "weir_info"], [
    "delete_delta",
  ]);
  await expectSees(url, "all-tools token", ALL, ALL_NAMES, ["delete_delta"]);
  if (opts.anonymous) await expectSees(url, "no token", undefined, ALL_NAMES, ["delete_delta"]);
}

Deno.test("spec mode: weir_info names only the caller's tools (two limited tokens, all, none)", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(`${READER_NODE}withhold "delete_delta" {
    reason "Nothing is deleted here."
}
wrap ward mcp tokens {
  base-url "${upstream.url}"
  auth none
  can get alpha { path "/a" }
  can get bravo { path "/b" }
  can close charlie { method "POST"; path "/c" }
}
`);
  const server = await serveHttp(file, { env: ENV, extra: TOKEN_FLAGS });
  try {
    await expectPerCaller(server.url, { anonymous: false });
    assert.equal(upstream.requests.length, 0, "weir_info reads nothing upstream");
  } finally {
    await server.stop();
    await upstream.close();
  }
  // No token configured at all, on loopback (the default): every tool.
  const open = await tempGuardfile(`withhold "delete_delta" {
    reason "Nothing is deleted here."
}
wrap ward mcp open {
  base-url "http://127.0.0.1:9"
  auth none
  can get alpha { path "/a" }
  can get bravo { path "/b" }
  can close charlie { method "POST"; path "/c" }
}
`);
  const loopback = await serveHttp(open);
  try {
    await expectSees(loopback.url, "no token", undefined, ALL_NAMES, ["delete_delta"]);
  } finally {
    await loopback.stop();
  }
});

const TOOLS: ListedTool[] = ["get_alpha", "get_bravo", "close_charlie", "delete_delta"].map((
  name,
) => ({ name, inputSchema: { type: "object", properties: {} } }));

Deno.test("MCP wrap (guardfile form and serve-upstream flags): weir_info names only the caller's tools", async () => {
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools: TOOLS });
  const wrapFile = (tokens: boolean) =>
    tempGuardfile(`${tokens ? READER_NODE : ""}withhold "delete_delta" {
    reason "Nothing is deleted here."
}
wrap ward mcp tickets {
    mcp-server http "${up.url}"
    proxy get_alpha
    proxy get_bravo
    proxy close_charlie
}
`);
  const inFile = await serveHttp(await wrapFile(true), { env: ENV, extra: TOKEN_FLAGS });
  const open = await serveHttp(await wrapFile(false));
  // The flag form (`weir serve-upstream --tool ...`) serves no info tool: nothing to leak.
  const flags = await startWrapper([
    "--upstream",
    up.url,
    ...["get_alpha", "get_bravo", "close_charlie"].flatMap((t) => ["--tool", t]),
    "--tool-token-env",
    "READER_TOKEN:get_alpha",
    "--inbound-token-env",
    "ALL_TOKEN",
  ], { env: ENV });
  try {
    await expectPerCaller(inFile.url, { anonymous: false });
    await expectSees(open.url, "no token", undefined, ALL_NAMES, ["delete_delta"]);
    const all = await listedOver(flags.url, ALL);
    assert.deepEqual(all, ["close_charlie", "get_alpha", "get_bravo"]);
    assert.deepEqual(await listedOver(flags.url, READER), ["get_alpha"]);
    const api = await fetch(`${flags.url}/api/weir_info`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers(ALL) },
      body: "{}",
    });
    await api.body?.cancel();
    assert.equal(api.status, 404);
    assert.equal(up.calls().length, 0, "weir_info reads nothing upstream");
  } finally {
    await inFile.stop();
    await open.stop();
    await flags.stop();
    await up.stop();
  }
});
