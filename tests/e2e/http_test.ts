/**
 * The guard over HTTP (`weir serve --http`): the official v1 client
 * (2025-11-25), the official v2 client pinned to 2026-07-28, and the plain
 * tool API, each run through the same contract against a recording upstream.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { serveHttp } from "../support/cli.ts";
import {
  adaptSdkClient,
  assertNoLeak,
  type ClientAdapter,
  envFor,
  FIXTURE,
  guardScenario,
  startTicketUpstream,
} from "./scenario.ts";

Deno.test("guard over HTTP: v1 client, v2 client (2026-07-28), tool API", async (t) => {
  const upstream = await startTicketUpstream();
  const server = await serveHttp(FIXTURE, { env: envFor(upstream) });
  const seen: string[] = [];
  try {
    await t.step("v1 client, 2025-11-25", async (t) => {
      const client = new ClientV1({ name: "weir-test", version: "1.0.0" });
      await client.connect(new HttpV1(new URL(`${server.url}/mcp`)));
      try {
        seen.push(...await guardScenario(adaptSdkClient(client), upstream, t));
        await assert.rejects(
          client.callTool({ name: "nope", arguments: {} }),
          (e: unknown) =>
            e instanceof McpError && (e as unknown as { code: number }).code === -32602,
        );
      } finally {
        await client.close();
      }
    });

    await t.step("v2 client pinned to 2026-07-28", async (t) => {
      const client = new ClientV2(
        { name: "weir-test", version: "2.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new HttpV2(new URL(`${server.url}/mcp`)));
      try {
        seen.push(...await guardScenario(adaptSdkClient(client), upstream, t));
      } finally {
        await client.close();
      }
    });

    await t.step("tool API: POST /api/<tool> through the same guard", async (t) => {
      const api: ClientAdapter = {
        list: async () => {
          // The tool API has no listing; take the list from MCP itself.
          const client = new ClientV1({ name: "weir-test", version: "1.0.0" });
          await client.connect(new HttpV1(new URL(`${server.url}/mcp`)));
          try {
            return (await client.listTools()).tools;
          } finally {
            await client.close();
          }
        },
        call: async (name, args) => {
          const res = await fetch(`${server.url}/api/${name}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(args),
          });
          const body = await res.json();
          if (res.status === 404) {
            return {
              isError: true,
              text: "",
              protocolError: { code: 404, message: JSON.stringify(body) },
            };
          }
          assert.equal(res.headers.get("cache-control"), "no-store");
          assert.equal(res.headers.get("x-content-type-options"), "nosniff");
          assert.equal(
            res.status === 200,
            body.isError !== true,
            `status ${res.status} matches isError`,
          );
          return {
            isError: body.isError === true,
            text: body.content.map((c: { text: string }) => c.text).join("\n"),
            structured: body.structuredContent,
          };
        },
      };
      seen.push(...await guardScenario(api, upstream, t));
      const statuses = async (
        tool: string,
        args: unknown,
      ) => (await fetch(`${server.url}/api/${tool}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(args),
      }).then(async (r) => (await r.body?.cancel(), r.status)));
      assert.equal(await statuses("get_ticket", { board: "team-a", id: "1", x: 1 }), 400);
      assert.equal(await statuses("get_ticket", { board: "sales", id: "1" }), 400); // pattern
      assert.equal(await statuses("get_ticket", { board: "team-a%2F..%2Fsales", id: "1" }), 403);
      assert.equal(await statuses("delete_ticket", {}), 403);
      assert.equal(await statuses("get_ticket", { board: "team-a", id: "boom" }), 502);
      assert.equal(await statuses("get_ticket", [1, 2]), 400);
      const get = await fetch(`${server.url}/api/get_ticket`);
      await get.body?.cancel();
      assert.equal(get.status, 405);
    });

    await t.step("GET /healthz; anything else is 404", async () => {
      const health = await fetch(`${server.url}/healthz`);
      const body = await health.json();
      assert.deepEqual(body, { status: "ok", surface: body.surface });
      assert.match(body.surface, /^[0-9a-f]{16}$/);
      const other = await fetch(`${server.url}/admin`);
      await other.body?.cancel();
      assert.equal(other.status, 404);
    });
  } finally {
    const code = await server.stop();
    await upstream.close();
    assert.equal(code, 0, "SIGTERM ends serve cleanly");
  }
  assertNoLeak([...seen, server.stderr()]);
});
