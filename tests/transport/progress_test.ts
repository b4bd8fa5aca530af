/**
 * A tool's progress reaches the official clients' `onprogress`, on both
 * transports and both revisions: over HTTP the answer becomes an event stream
 * (progress events, then the result) only when the call asked for progress
 * and the tool reported some; over stdio the notifications go on the line
 * before the answer. Progress that does not increase, or comes after the
 * answer, is dropped. A server that says its tool list can change tells
 * stdio clients on the 2025-11-25 handshake when it does.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { type CallContext, createHttpHandler, McpServer, serveStdio } from "../../mod.ts";
import { assertProgressWithin } from "../support/progress.ts";
import { until } from "../support/wait.ts";

const TOOLS = [
  { name: "slow", inputSchema: { type: "object" } },
  { name: "quiet", inputSchema: { type: "object" } },
];

function server(toolsListChanged = false): McpServer {
  return new McpServer({
    name: "progress-test",
    toolsListChanged,
    log: () => {},
    catalog: { tools: TOOLS, resources: [], prompts: [] },
    dispatch: async (name, _args, ctx: CallContext) => {
      if (name === "slow") {
        for (const p of [1, 2, 2, 1, 3]) {
          ctx.progress?.(p, 3, `step ${p}`);
          await new Promise((r) => setTimeout(r, 10));
        }
        const late = ctx.progress;
        queueMicrotask(() => setTimeout(() => late?.(9, 3), 50));
      }
      return { content: [{ type: "text", text: `${name} done` }] };
    },
  });
}

Deno.test("progress over HTTP: an event stream only when asked and given; both official clients", async () => {
  const handler = createHttpHandler(server(), { authorize: () => true, allowedOrigins: [] });
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  const url = new URL(`http://127.0.0.1:${http.addr.port}/mcp`);
  try {
    const v1 = new ClientV1({ name: "t", version: "1" });
    await v1.connect(new HttpV1(url));
    const seen1: number[] = [];
    const r1 = await v1.request(
      { method: "tools/call", params: { name: "slow", arguments: {} } },
      CallToolResultSchema,
      { onprogress: (p: { progress: number }) => seen1.push(p.progress) },
    );
    assert.equal((r1.content[0] as { text: string }).text, "slow done");
    assertProgressWithin(seen1, 3);
    await v1.close();

    const v2 = new ClientV2({ name: "t", version: "2" }, {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    });
    await v2.connect(new HttpV2(url));
    const seen2: number[] = [];
    const r2 = await v2.callTool({ name: "slow", arguments: {} }, {
      onprogress: (p: { progress: number }) => seen2.push(p.progress),
    });
    assert.equal((r2.content as { text: string }[])[0].text, "slow done");
    assertProgressWithin(seen2, 3);
    await v2.close();

    // Raw: the framing itself.
    const post = (params: Record<string, unknown>, accept: string) =>
      fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params }),
      });
    const streamed = await post(
      { name: "slow", arguments: {}, _meta: { progressToken: "t1" } },
      "application/json, text/event-stream",
    );
    assert.equal(streamed.headers.get("content-type"), "text/event-stream");
    const events = (await streamed.text()).split("\n\n").filter((e) => e.trim() !== "");
    const messages = events.map((e) => JSON.parse(e.replace(/^event: message\ndata: /, "")));
    assert.deepEqual(messages.slice(0, 3).map((m) => m.params.progress), [1, 2, 3]);
    assert.deepEqual(messages[0].params, {
      progressToken: "t1",
      progress: 1,
      total: 3,
      message: "step 1",
    });
    assert.equal(messages[3].id, 7);
    assert.equal(messages.length, 4, "nothing after the answer");
    for (
      const [params, accept] of [
        [{ name: "slow", arguments: {} }, "application/json, text/event-stream"],
        [{ name: "slow", arguments: {}, _meta: { progressToken: 1 } }, "application/json"],
        [
          { name: "quiet", arguments: {}, _meta: { progressToken: 2 } },
          "application/json, text/event-stream",
        ],
      ] as const
    ) {
      const r = await post(params, accept);
      assert.equal(r.headers.get("content-type"), "application/json", JSON.stringify(params));
      assert.equal((await r.json()).id, 7);
    }
  } finally {
    await http.shutdown();
  }
});

Deno.test("progress and list_changed over stdio, on the line before the answer", async () => {
  const s = server(true);
  assert.deepEqual(s.capabilities.tools, { listChanged: true });
  assert.deepEqual(server(false).capabilities.tools, { listChanged: false });
  const toServer = new TransformStream<Uint8Array, Uint8Array>();
  const fromServer = new TransformStream<Uint8Array, Uint8Array>();
  const done = serveStdio(s, { readable: toServer.readable, writable: fromServer.writable });
  const writer = toServer.writable.getWriter();
  const lines: Record<string, unknown>[] = [];
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of fromServer.readable.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        lines.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
    }
  })();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  const untilLines = async (n: number) => {
    await until(() => lines.length >= n, { stepMs: 10 });
  };
  await send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "c", version: "1" },
    },
  });
  await untilLines(1);
  await send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "slow", arguments: {}, _meta: { progressToken: 42 } },
  });
  await untilLines(5);
  await new Promise((r) => setTimeout(r, 150));
  assert.deepEqual(
    lines.slice(1).map((l) => l.method ?? `answer ${l.id}`),
    [
      "notifications/progress",
      "notifications/progress",
      "notifications/progress",
      "answer 2",
    ],
  );
  s.toolsChanged();
  await untilLines(6);
  assert.equal(lines[5].method, "notifications/tools/list_changed");
  await writer.close();
  await done;
  await reading;
});
