/**
 * The MCP handler is a plain `(Request) => Promise<Response>`: another
 * router can mount it under any path prefix, next to its own routes, and the
 * official clients work through it unchanged.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { createHttpHandler, loopbackHosts } from "../../mod.ts";
import { createFixtureServer } from "../fixtures/catalog_server.ts";
import { listen } from "../support/listen.ts";
import { tapHandler, type WireLog } from "../support/wire.ts";

/** Another application's router, with MCP mounted under /tenants/acme/mcp. */
function appRouter(
  port: number,
): { router: (request: Request) => Promise<Response>; log: WireLog } {
  const tap = tapHandler(createHttpHandler(createFixtureServer("mounted"), {
    authorize: () => true,
    allowedOrigins: [],
    allowedHosts: loopbackHosts(port),
  }));
  const router = (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (pathname === "/tenants/acme/mcp" || pathname.startsWith("/tenants/acme/mcp/")) {
      return tap.handler(request);
    }
    if (pathname === "/status") return Promise.resolve(Response.json({ app: "ok" }));
    return Promise.resolve(new Response("not here", { status: 404 }));
  };
  return { router, log: tap.log };
}

Deno.test("mounted under a path prefix, the endpoint serves both official clients", async () => {
  let log: WireLog | undefined;
  const app = listen((port) => {
    const made = appRouter(port);
    log = made.log;
    return made.router;
  });
  const url = new URL(`${app.origin}/tenants/acme/mcp`);
  const v1 = new ClientV1({ name: "mounted-v1", version: "1.0.0" });
  const v2 = new ClientV2({ name: "mounted-v2", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  try {
    await v1.connect(new HttpV1(url));
    const v1Tools = await v1.listTools();
    assert.deepEqual(v1Tools.tools.map((t: { name: string }) => t.name), [
      "add",
      "churn",
      "echo",
      "tag",
    ]);
    const v1Call = await v1.callTool({ name: "add", arguments: { a: 1, b: 2 } });
    assert.deepEqual(v1Call.structuredContent, { sum: 3 });

    await v2.connect(new HttpV2(url));
    const note = await v2.readResource({ uri: "fixture://notes/mounted" });
    assert.deepEqual(note.contents, [
      { uri: "fixture://notes/mounted", mimeType: "text/plain", text: "note mounted" },
    ]);

    const status = await fetch(`${app.origin}/status`);
    assert.deepEqual(await status.json(), { app: "ok" });
    const elsewhere = await fetch(`${app.origin}/mcp`, { method: "POST", body: "{}" });
    assert.equal(elsewhere.status, 404, "the router, not MCP, owns other paths");
    await elsewhere.body?.cancel();

    assert.deepEqual(log!.problems, []);
    assert.ok((log!.checked.get("tools/call") ?? 0) >= 1);
    assert.ok((log!.checked.get("resources/read") ?? 0) >= 1);
  } finally {
    await v1.close();
    await v2.close();
    await app.close();
  }
});
