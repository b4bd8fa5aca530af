/**
 * The official v1 client (`@modelcontextprotocol/sdk`, 2025-11-25 handshake)
 * over Streamable HTTP against the fixture server: the whole client scenario,
 * every response schema-checked on the wire.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createHttpHandler, loopbackHosts } from "../../mod.ts";
import { createFixtureServer } from "../fixtures/catalog_server.ts";
import { listen } from "../support/listen.ts";
import { LEGACY } from "../support/schemas.ts";
import { tapHandler, type WireLog } from "../support/wire.ts";
import { type OfficialClient, officialClientScenario } from "./client_scenario.ts";

Deno.test("v1 client over HTTP (2025-11-25)", async (t) => {
  let log: WireLog | undefined;
  const server = listen((port) => {
    const tap = tapHandler(createHttpHandler(createFixtureServer(), {
      authorize: () => true,
      allowedOrigins: [],
      allowedHosts: loopbackHosts(port),
    }));
    log = tap.log;
    return tap.handler;
  });
  const client = new Client({ name: "weir-test-v1", version: "1.0.0" });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    await officialClientScenario(t, client as unknown as OfficialClient, LEGACY, log!);
  } finally {
    await client.close();
    await server.close();
  }
});
