/**
 * The official v2 client (`@modelcontextprotocol/client`) pinned to
 * 2026-07-28 over Streamable HTTP against the fixture server: the whole
 * client scenario statelessly (per-request `_meta`, `Mcp-Method`/`Mcp-Name`
 * headers), every response schema-checked on the wire.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { MODERN } from "../support/schemas.ts";
import {
  listenTappedFixture,
  type OfficialClient,
  officialClientScenario,
} from "./client_scenario.ts";

Deno.test("v2 client over HTTP, pinned to 2026-07-28", async (t) => {
  const { server, log } = listenTappedFixture();
  const client = new Client({ name: "weir-test-v2", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    const pageOf = (cursor?: string) =>
      cursor === undefined
        ? client.request({ method: "resources/list", params: {} })
        : client.listResources({ cursor });
    await officialClientScenario(t, client as unknown as OfficialClient, MODERN, log(), pageOf);
    await t.step("the client never needed the handshake", () => {
      assert.equal(log().checked.get("initialize"), undefined);
      assert.ok((log().checked.get("server/discover") ?? 0) >= 1);
    });
  } finally {
    await client.close();
    await server.close();
  }
});
