/**
 * The official v1 client (`@modelcontextprotocol/sdk`) over stdio, spawning
 * the fixture server script (`tests/fixtures/catalog_server.ts`, built only
 * on `mod.ts` and served with `serveStdio`): the whole client scenario, every
 * response schema-checked as the client receives it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LEGACY } from "../support/schemas.ts";
import { tapTransport } from "../support/wire.ts";
import { type OfficialClient, officialClientScenario } from "./client_scenario.ts";

export const CONFIG = new URL("../../deno.json", import.meta.url).pathname;
export const FIXTURE = new URL("../fixtures/catalog_server.ts", import.meta.url).pathname;

Deno.test("v1 client over stdio (2025-11-25)", async (t) => {
  const { transport, log } = tapTransport(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: ["run", "--quiet", "--config", CONFIG, FIXTURE],
      stderr: "inherit",
    }),
  );
  const client = new Client({ name: "weir-test-v1-stdio", version: "1.0.0" });
  try {
    await client.connect(transport as never);
    await officialClientScenario(t, client as unknown as OfficialClient, LEGACY, log);
  } finally {
    await client.close();
  }
});
