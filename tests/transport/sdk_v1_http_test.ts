/**
 * The official v1 client (`@modelcontextprotocol/sdk`, 2025-11-25 handshake)
 * over Streamable HTTP against the fixture server: the whole client scenario,
 * every response schema-checked on the wire.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LEGACY } from "../support/schemas.ts";
import {
  listenTappedFixture,
  type OfficialClient,
  officialClientScenario,
} from "./client_scenario.ts";

Deno.test("v1 client over HTTP (2025-11-25)", async (t) => {
  const { server, log } = listenTappedFixture();
  const client = new Client({ name: "weir-test-v1", version: "1.0.0" });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    await officialClientScenario(t, client as unknown as OfficialClient, LEGACY, log());
  } finally {
    await client.close();
    await server.close();
  }
});
