/** The guard over stdio, driven by the official v1 client (2025-11-25). */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { ROOT, weirCommand } from "../support/cli.ts";
import {
  adaptSdkClient,
  assertNoLeak,
  envFor,
  FIXTURE,
  guardScenario,
  startTicketUpstream,
} from "./scenario.ts";

Deno.test("guard over stdio with the v1 client", async (t) => {
  const upstream = await startTicketUpstream();
  const { command, args } = weirCommand();
  const transport = new StdioClientTransport({
    command,
    args: [...args, "serve", FIXTURE, "--stdio"],
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...envFor(upstream) },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => (stderr += new TextDecoder().decode(chunk)));
  const client = new Client({ name: "weir-test", version: "1.0.0" });
  try {
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, "tickets");
    assert.match(client.getInstructions() ?? "", /policy-approved/);
    const seen = await guardScenario(
      adaptSdkClient(client),
      upstream,
      t,
    );
    await t.step("an unknown tool is a -32602 protocol error", async () => {
      await assert.rejects(
        client.callTool({ name: "nope", arguments: {} }),
        (e: unknown) => e instanceof McpError && (e as unknown as { code: number }).code === -32602,
      );
    });
    await client.close();
    assert.match(stderr, /"event":"tool_call"/, "calls are logged on stderr");
    assertNoLeak([...seen, stderr]);
  } finally {
    await client.close().catch(() => {});
    await upstream.close();
  }
});
