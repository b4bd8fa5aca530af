/**
 * A caller's own session (token exchange, src/mcp_upstream/caller_sessions.ts)
 * pushed out of the bounded table while that caller's call is in flight on it
 * is ended (`DELETE`) only once the call has settled, on the short path
 * (weir's own HTTP/1.1 client) and on the official client's path alike: the
 * call is answered, then the session goes. An official v1 SDK server keeping
 * 2025-11-25 sessions on 127.0.0.1 whose `wait` tool answers when the test
 * says; `UpstreamConnection` with a bound of one caller session.
 */
import assert from "node:assert/strict";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { UpstreamConnection } from "../../src/mcp_upstream/connection.ts";
import { Redactor } from "../../src/guard/secrets.ts";
import { until } from "../support/wait.ts";

/** A 2025-11-25 server with sessions; records calls and ended sessions in order. */
function sessionServer() {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const events: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const id = req.headers.get("mcp-session-id");
    if (req.method === "DELETE" && id) events.push(`DELETE ${req.headers.get("authorization")}`);
    const known = id ? transports.get(id) : undefined;
    if (known) return await known.handleRequest(req);
    if (id) return new Response("Session not found", { status: 404 });
    const server = new Server({ name: "sessions", version: "1.0.0" }, {
      capabilities: { tools: {} },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: "wait", inputSchema: { type: "object" } }, {
        name: "hello",
        inputSchema: { type: "object" },
      }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (call: { params: { name: string } }) => {
      events.push(`call ${call.params.name}`);
      if (call.params.name === "wait") await released;
      return { content: [{ type: "text", text: `${call.params.name} done` }] };
    });
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid: string) => void transports.set(sid, transport),
        onsessionclosed: (sid: string) => void transports.delete(sid),
      });
    await server.connect(transport);
    return await transport.handleRequest(req);
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    events,
    release,
    stop: async () => {
      release();
      for (const t of transports.values()) await t.close().catch(() => {});
      // A call whose session was ended under it is never answered (the defect this holds):
      // a bounded wait for the listener to drain, so a failing run ends.
      const drained = http.shutdown().then(() => true);
      await until(() => Promise.race([drained, Promise.resolve(false)]), { timeoutMs: 5000 });
    },
  };
}

for (const path of ["short path", "official client"] as const) {
  Deno.test(`a caller's session pushed out while its call is in flight ends after the call (${path})`, async () => {
    const server = sessionServer();
    const connection = await UpstreamConnection.open({
      target: { kind: "http", url: new URL(server.url) },
      secrets: () => new Redactor(),
      requestTimeoutMs: 30_000,
      maxResponseBytes: 1 << 20,
      connectTimeoutMs: 0,
      callerSessions: 1,
    });
    try {
      const as = (who: string) => ({
        headers: { authorization: `Bearer ${who}-exchanged-token` },
        caller: `subject ${who}`,
        // Progress asked for: the official client's path (the short path takes no progress).
        ...(path === "official client" ? { onProgress: () => {} } : {}),
      });
      const waiting = connection.callTool("wait", {}, as("alice"));
      waiting.catch(() => {});
      assert.ok(
        await until(() => server.events.includes("call wait"), { timeoutMs: 5000 }),
        `alice's call arrived: ${server.events.join(", ")}`,
      );
      // bob's session pushes alice's out of a table of one.
      const hello = await connection.callTool("hello", {}, as("bob"));
      assert.equal((hello.content[0] as { text: string }).text, "hello done");
      assert.deepEqual(server.events, ["call wait", "call hello"], "nothing ended mid-call");
      server.release();
      const done = await waiting;
      assert.equal((done.content[0] as { text: string }).text, "wait done");
      // Then alice's session is ended, with alice's token.
      assert.ok(
        await until(() => server.events.includes("DELETE Bearer alice-exchanged-token")),
        server.events.join(", "),
      );
      assert.equal(server.events.indexOf("DELETE Bearer alice-exchanged-token"), 2);
    } finally {
      await connection.close();
      await server.stop();
    }
  });
}
