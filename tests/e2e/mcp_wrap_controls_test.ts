/**
 * The guard's controls on the tools of a wrapped MCP server, by served name,
 * through the shipped CLI in front of a recording MCP server on the official
 * SDK: `confirm` (a person says yes before the call is forwarded: 2026-07-28
 * input_required + retry; never over the tool API), a `rate-limit` kept in a
 * real redis-server and shared by two weir processes, and two static tokens
 * that see two different subsets of the tools (the guardfile's
 * `inbound-token` nodes and `--tool-token-env`), in list and in call.
 */
import assert from "node:assert/strict";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";
import { confirmingClientV2, type ElicitAction } from "../support/elicit.ts";
import { redisMissing, startRedis } from "../support/redis.ts";
import { modernPost } from "../support/modern_http.ts";
import { startWrapper } from "../support/upstream_cli.ts";

const TOOLS: ListedTool[] = ["get_ticket", "list_tickets", "close_ticket", "delete_ticket"].map((
  name,
) => ({
  name,
  inputSchema: { type: "object", properties: { id: { type: "string" } } },
}));

const textOf = (r: { content?: unknown }) =>
  ((r.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");

Deno.test("confirm on a wrapped tool: asked before the call is forwarded; declined, nothing is sent", async () => {
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools: TOOLS });
  const file = await tempGuardfile(`confirm "close" message="Close this ticket?"
wrap ward mcp tickets {
    mcp-server http "${up.url}"
    proxy close { upstream "close_ticket"; }
    proxy get_ticket
}
`);
  const weir = await serveHttp(file);
  const { client, answer } = confirmingClientV2<ElicitAction>("confirm-wrap", "accept");
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${weir.url}/mcp`)));
    const ok = await client.callTool({ name: "close", arguments: { id: "7" } });
    assert.equal(ok.isError, undefined, textOf(ok));
    assert.equal(answer.asked.length, 1);
    assert.match(
      answer.asked[0],
      /^Close this ticket\?\n\nTool: close\nRequest: tools\/call close_ticket\nArguments:\n {2}"id": "7"$/,
      "the served tool, the MCP server's tool and the arguments",
    );
    assert.equal(up.calls().length, 1);
    assert.equal(JSON.parse(up.calls()[0]).params.name, "close_ticket");

    answer.next = "decline";
    const declined = await client.callTool({ name: "close", arguments: { id: "8" } });
    assert.equal(declined.isError, true);
    assert.match(textOf(declined), /confirmation_declined/);
    const api = await callApi(weir.url, "close", { id: "9" });
    assert.equal(api.status, 403);
    assert.match(api.text, /confirmation_impossible/);
    assert.equal(up.calls().length, 1, "no declined or impossible call reached the MCP server");
    const ungated = await client.callTool({ name: "get_ticket", arguments: { id: "1" } });
    assert.equal(ungated.isError, undefined);
  } finally {
    await client.close();
    await weir.stop();
    await up.stop();
  }
});

const missing = redisMissing();
if (missing) console.error(`SKIP mcp_wrap_controls_test (redis): ${missing}`);

Deno.test({
  name: "a Redis rate-limit on wrapped tools: two weir processes allow the limit in total",
  ignore: missing !== null,
  fn: async () => {
    const redis = await startRedis();
    const up = await startSdkUpstream({ revision: "2025-11-25", framing: "sse", tools: TOOLS });
    const file = await tempGuardfile(`rate-limit "4/1h" {
    store redis env "REDIS_URL"
    bucket "wrapped"
}
wrap ward mcp tickets {
    mcp-server http "${up.url}" {
        request-timeout "1s"
    }
    proxy get_ticket
}
`);
    const env = { REDIS_URL: redis.url };
    const a = await serveHttp(file, { env });
    const b = await serveHttp(file, { env });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await callApi(i % 2 ? b.url : a.url, "get_ticket", { id: `t${i}` });
        statuses.push(r.status);
        if (r.status !== 200) assert.match(r.text, /^rate_limited: /);
      }
      assert.deepEqual(statuses.slice(0, 4), [200, 200, 200, 200]);
      assert.equal(statuses.filter((s) => s === 429).length, 6, `statuses ${statuses}`);
      assert.equal(up.calls().length, 4, "only the calls that got a slot reached the MCP server");
    } finally {
      await a.stop();
      await b.stop();
      await up.stop();
      await redis.close();
    }
  },
});

const READER = "reader-token-0123456789abcdef";
const WRITER = "writer-token-0123456789abcdef";

async function v1(url: string, token: string) {
  const client = new ClientV1({ name: "t", version: "1" });
  await client.connect(
    new HttpV1(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

Deno.test("two static tokens see two different subsets of the wrapped tools, in list and in call", async () => {
  const up = await startSdkUpstream({ revision: "2025-11-25", framing: "json", tools: TOOLS });
  const file = await tempGuardfile(`inbound-token reader {
    value env "READER_TOKEN"
    tools "get_ticket" "list_tickets"
}
withhold "delete_ticket" {
    reason "Tickets are archived, never deleted."
}
wrap ward mcp tickets {
    mcp-server http "${up.url}"
    proxy get_ticket
    proxy list_tickets
    proxy close_ticket
}
`);
  const weir = await serveHttp(file, {
    env: { READER_TOKEN: READER, WRITER_TOKEN: WRITER },
    extra: ["--tool-token-env", "WRITER_TOKEN:close_ticket,delete_ticket"],
  });
  const reader = await v1(weir.url, READER);
  const writer = await v1(weir.url, WRITER);
  try {
    const names = async (c: ClientV1) =>
      (await c.listTools()).tools.map((t: { name: string }) => t.name).sort();
    assert.deepEqual(await names(reader), ["get_ticket", "list_tickets"]);
    assert.deepEqual(await names(writer), ["close_ticket", "delete_ticket"]);
    assert.equal(
      (await reader.callTool({ name: "get_ticket", arguments: { id: "1" } })).isError,
      undefined,
    );
    assert.equal(
      (await writer.callTool({ name: "close_ticket", arguments: { id: "1" } })).isError,
      undefined,
    );
    const calls = up.calls().length;
    await assert.rejects(reader.callTool({ name: "close_ticket", arguments: { id: "1" } }));
    await assert.rejects(writer.callTool({ name: "get_ticket", arguments: { id: "1" } }));
    const api = await fetch(`${weir.url}/api/close_ticket`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${READER}` },
      body: "{}",
    });
    assert.equal(api.status, 404);
    await api.body?.cancel();
    assert.equal(up.calls().length, calls, "nothing outside a subset reached the MCP server");
  } finally {
    await reader.close();
    await writer.close();
    await weir.stop();
    await up.stop();
  }
  assert.match(weir.stderr(), /"subject":"token:reader"/);
});

/** Every page of a 2026-07-28 `tools/list` for `token`: the names, and each page's cacheScope. */
async function pages(url: string, token: string) {
  const names: string[] = [];
  const scopes: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const answer = await modernPost(url, "tools/list", cursor ? { cursor } : {}, { token });
    assert.equal(answer.status, 200, JSON.stringify(answer));
    const result = answer.result!;
    names.push(...(result.tools as { name: string }[]).map((t) => t.name));
    scopes.push(result.cacheScope);
    cursor = result.nextCursor as string | undefined;
    if (cursor === undefined) break;
  }
  return { names: names.sort(), scopes };
}

Deno.test("two static tokens, 60 wrapped tools: each token's list is its subset, private on every page (both forms)", async () => {
  const many: ListedTool[] = Array.from({ length: 60 }, (_, i) => ({
    name: `tool_${String(i).padStart(2, "0")}`,
    inputSchema: { type: "object", properties: {} },
  }));
  const all = many.map((t) => t.name);
  const readerTools = all.slice(0, 55);
  const writerTools = all.slice(55);
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools: many });
  const env = { READER_TOKEN: READER, WRITER_TOKEN: WRITER };
  const file = await tempGuardfile(
    `wrap ward mcp many {\n    mcp-server http "${up.url}"\n` +
      all.map((n) => `    proxy ${n}\n`).join("") + "}\n",
  );
  const tokenFlags = [
    "--tool-token-env",
    `READER_TOKEN:${readerTools.join(",")}`,
    "--tool-token-env",
    `WRITER_TOKEN:${writerTools.join(",")}`,
  ];
  const inFile = await serveHttp(file, { env, extra: tokenFlags });
  const flags = await startWrapper(
    ["--upstream", up.url, ...all.flatMap((n) => ["--tool", n]), ...tokenFlags],
    { env },
  );
  try {
    for (const weir of [inFile, flags]) {
      const reader = await pages(weir.url, READER);
      assert.deepEqual(reader.names, readerTools);
      assert.ok(reader.scopes.length >= 2, "the reader's list has more than one page");
      assert.deepEqual(reader.scopes, reader.scopes.map(() => "private"));
      const writer = await pages(weir.url, WRITER);
      assert.deepEqual(writer.names, writerTools);
      assert.deepEqual(writer.scopes, writer.scopes.map(() => "private"));
      const refused = await modernPost(weir.url, "tools/call", {
        name: "tool_00",
        arguments: {},
      }, { token: WRITER });
      assert.ok(refused.error || refused.result?.isError === true, JSON.stringify(refused));
    }
    assert.equal(up.calls().length, 0, "no call outside a subset reached the MCP server");
  } finally {
    await inFile.stop();
    await flags.stop();
    await up.stop();
  }
});
