/**
 * `--read-only` and `--schema-profile` in front of an MCP server, through the
 * shipped CLI, in both forms (`weir serve-upstream` flags, and a guardfile's
 * `surface` node or the same flags on `weir serve FILE`): a tool that does not
 * say `readOnlyHint: true` is a withheld stub and its call never reaches the
 * MCP server; a profile lists each schema in its dialect (the MCP server's
 * generated `$schema` dropped), and a tool the profile cannot list soundly is
 * one unservable stub naming the keyword while the others keep serving.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";

const READ: ListedTool = {
  name: "get_ticket",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { id: { type: "string", minLength: 1, maxLength: 20 } },
    required: ["id"],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
};
const WRITE: ListedTool = {
  name: "close_ticket",
  inputSchema: {
    type: "object",
    properties: { id: { type: "string" } },
    required: ["id"],
  },
  annotations: { readOnlyHint: false, destructiveHint: false },
};
const UNION: ListedTool = {
  name: "find_ticket",
  inputSchema: {
    type: "object",
    properties: { key: { type: ["string", "boolean"] } },
    required: ["key"],
  },
  annotations: { readOnlyHint: true },
};

type Tool = {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown> & { properties?: Record<string, Record<string, unknown>> };
};

async function check(url: string, calls: () => number) {
  const client = new ClientV1({ name: "t", version: "1" });
  await client.connect(new HttpV1(new URL(`${url}/mcp`)));
  try {
    const tools = (await client.listTools()).tools as Tool[];
    const byName = new Map(tools.map((t) => [t.name, t]));
    // gemini: one type, the bound in words, no $schema or additionalProperties.
    const read = byName.get("get_ticket")!;
    assert.equal(read.inputSchema.$schema, undefined);
    assert.equal(read.inputSchema.additionalProperties, undefined);
    assert.equal(read.inputSchema.properties!.id.maxLength, undefined);
    assert.equal(read.inputSchema.properties!.id.minLength, 1);
    assert.match(String(read.inputSchema.properties!.id.description), /At most 20 characters/);
    // The write tool and the union are stubs saying why.
    assert.match(byName.get("close_ticket")!.description!, /read-only mode/);
    assert.match(byName.get("find_ticket")!.description!, /gemini schema profile cannot list/);
    const ok = await client.callTool({ name: "get_ticket", arguments: { id: "t1" } });
    assert.equal(ok.isError, undefined, JSON.stringify(ok));
    const before = calls();
    for (const name of ["close_ticket", "find_ticket"]) {
      const refused = await client.callTool({ name, arguments: { id: "t1", key: "x" } })
        .catch((e: unknown) => e as Error);
      assert.ok(
        refused instanceof Error || (refused as { isError?: boolean }).isError === true,
        name,
      );
    }
    assert.equal(calls(), before, "a stub never reaches the MCP server");
  } finally {
    await client.close();
  }
}

Deno.test("serve-upstream --read-only --schema-profile gemini: stubs for writes and unlistable schemas, the rest in the dialect", async () => {
  const up = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "json",
    tools: [READ, WRITE, UNION],
  });
  try {
    const weir = await startWrapper([
      "--upstream",
      up.url,
      "--tool",
      "get_ticket",
      "--tool",
      "close_ticket",
      "--tool",
      "find_ticket",
      "--read-only",
      "--schema-profile",
      "gemini",
    ]);
    try {
      await check(weir.url, () => up.calls().length);
    } finally {
      await weir.stop();
    }
    // The operator hears of each stub at start-up.
    for (const tool of ["close_ticket", "find_ticket"]) {
      assert.match(weir.stderr(), new RegExp(`"event":"upstream_tool_stubbed","tool":"${tool}"`));
    }
  } finally {
    await up.stop();
  }
});

Deno.test("a guardfile wrapping an MCP server: the surface node, and the same flags on weir serve FILE", async () => {
  const up = await startSdkUpstream({
    revision: "2026-07-28",
    framing: "json",
    tools: [READ, WRITE, UNION],
  });
  const body = `wrap ward mcp tickets {
    mcp-server http "${up.url}"
    proxy get_ticket
    proxy close_ticket
    proxy find_ticket
}
`;
  try {
    const inFile = await tempGuardfile(`surface read-only=#true schema-profile="gemini"\n${body}`);
    const a = await serveHttp(inFile);
    try {
      await check(a.url, () => up.calls().length);
    } finally {
      await a.stop();
    }
    const plain = await tempGuardfile(body);
    const b = await serveHttp(plain, { extra: ["--read-only", "--schema-profile", "gemini"] });
    try {
      await check(b.url, () => up.calls().length);
    } finally {
      await b.stop();
    }
  } finally {
    await up.stop();
  }
});
