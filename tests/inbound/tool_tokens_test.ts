/**
 * Static tokens limited to some tools (`--tool-token-env VAR:TOOL,...` and
 * the guardfile's `inbound-token` nodes), through the shipped CLI with the
 * official clients of both revisions: `tools/list` and `tools/call` (and the
 * tool API) decide alike per token, and a list that depends on the caller is
 * marked `cacheScope: "private"` on every page.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { modernPost } from "../support/modern_http.ts";
import { until } from "../support/wait.ts";

const READER = "reader-token-0123456789abcdef";
const WRITER = "writer-token-0123456789abcdef";
const ALL = "all-tools-token-0123456789abcd";

/** 60 grants (two pages of tools/list), and one inbound-token node. */
function guardfile(base: string, readerTools: string[]): string {
  const grants = Array.from({ length: 60 }, (_, i) => {
    const n = String(i).padStart(2, "0");
    return `  can get t${n} { path "/t/${n}" }`;
  });
  return `inbound-token reader {
  value env "READER_TOKEN"
  tools ${readerTools.map((t) => JSON.stringify(t)).join(" ")}
}
wrap ward mcp tokens {
  base-url "${base}"
  auth none
${grants.join("\n")}
}
`;
}

async function v1(url: string, token: string) {
  const client = new ClientV1({ name: "t", version: "1" });
  await client.connect(
    new HttpV1(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function v2(url: string, token: string) {
  const client = new ClientV2({ name: "t", version: "2" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(
    new HttpV2(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function api(url: string, tool: string, token: string): Promise<number> {
  const res = await fetch(`${url}/api/${tool}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: "{}",
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("two limited tokens see two different subsets, in list and in call, both revisions and /api", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(guardfile(upstream.url, ["get_t01", "weir_info"]));
  const server = await serveHttp(file, {
    env: { READER_TOKEN: READER, WRITER_TOKEN: WRITER, ALL_TOKEN: ALL },
    extra: ["--tool-token-env", "WRITER_TOKEN:get_t02,get_t03", "--inbound-token-env", "ALL_TOKEN"],
  });
  try {
    const reader = await v1(server.url, READER);
    const writer = await v2(server.url, WRITER);
    try {
      assert.deepEqual((await reader.listTools()).tools.map((t: { name: string }) => t.name), [
        "get_t01",
        "weir_info",
      ]);
      assert.deepEqual((await writer.listTools()).tools.map((t: { name: string }) => t.name), [
        "get_t02",
        "get_t03",
      ]);
      const ok = await reader.callTool({ name: "get_t01", arguments: {} });
      assert.equal(ok.isError, undefined, JSON.stringify(ok));
      const ok2 = await writer.callTool({ name: "get_t03", arguments: {} });
      assert.notEqual(ok2.isError, true, JSON.stringify(ok2));
      // Outside the subset: unknown, as if not listed, and nothing is sent.
      const before = upstream.requests.length;
      await assert.rejects(
        reader.callTool({ name: "get_t02", arguments: {} }),
        /Unknown tool|get_t02/,
      );
      const refused = await writer.callTool({ name: "get_t01", arguments: {} }).catch((e) => e);
      assert.ok(
        refused instanceof Error || (refused as { isError?: boolean }).isError,
        JSON.stringify(refused),
      );
      assert.equal(upstream.requests.length, before);
    } finally {
      await reader.close();
      await writer.close();
    }
    // The tool API decides alike.
    assert.equal(await api(server.url, "get_t01", READER), 200);
    assert.equal(await api(server.url, "get_t02", READER), 404);
    assert.equal(await api(server.url, "get_t02", WRITER), 200);
    assert.equal(await api(server.url, "get_t01", WRITER), 404);
    assert.equal(await api(server.url, "get_t59", ALL), 200);
    assert.equal(await api(server.url, "get_t59", "wrong-token-0123456789abcdef"), 401);
    // The audit line names the file's caller.
    assert.match(server.stderr(), /"subject":"token:reader"/);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("a list that depends on the caller is cacheScope private on every page (2026-07-28)", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(guardfile(upstream.url, ["get_t01"]));
  const server = await serveHttp(file, {
    env: { READER_TOKEN: READER, ALL_TOKEN: ALL },
    extra: ["--inbound-token-env", "ALL_TOKEN"],
  });
  try {
    // The all-tools token's list is two pages; others see less, so each page is private.
    let cursor: string | undefined;
    const names: string[] = [];
    let pages = 0;
    do {
      const page = await modernPost(server.url, "tools/list", cursor ? { cursor } : {}, {
        token: ALL,
      });
      assert.equal(page.result?.cacheScope, "private", JSON.stringify(page.result).slice(0, 200));
      names.push(...(page.result!.tools as { name: string }[]).map((t) => t.name));
      cursor = page.result!.nextCursor as string | undefined;
      pages++;
    } while (cursor);
    assert.equal(pages, 2);
    assert.equal(names.length, 61);
    const reader = await modernPost(server.url, "tools/list", {}, { token: READER });
    assert.equal(reader.result?.cacheScope, "private");
    assert.deepEqual((reader.result!.tools as { name: string }[]).map((t) => t.name), ["get_t01"]);
    // A cursor of one caller is not another's.
    const first = await modernPost(server.url, "tools/list", {}, { token: ALL });
    const stolen = await modernPost(server.url, "tools/list", {
      cursor: first.result!.nextCursor,
    }, { token: READER });
    assert.equal(stolen.error?.code, -32602);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("without limited tokens the tool list stays public", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(
    `wrap ward mcp t {\n  base-url "${upstream.url}"\n  auth none\n  can get t { path "/t" }\n}\n`,
  );
  const server = await serveHttp(file, {
    env: { ALL_TOKEN: ALL },
    extra: ["--inbound-token-env", "ALL_TOKEN"],
  });
  try {
    const page = await modernPost(server.url, "tools/list", {}, { token: ALL });
    assert.equal(page.result?.cacheScope, "public");
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("SIGHUP re-reads the inbound-token nodes: the new subset holds at once", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(guardfile(upstream.url, ["get_t01"]));
  const server = await serveHttp(file, { env: { READER_TOKEN: READER } });
  try {
    const before = await modernPost(server.url, "tools/list", {}, { token: READER });
    assert.deepEqual((before.result!.tools as { name: string }[]).map((t) => t.name), ["get_t01"]);
    await Deno.writeTextFile(file, guardfile(upstream.url, ["get_t05", "get_t06"]));
    server.kill("SIGHUP");
    let names: string[] = [];
    await until(async () => {
      const after = await modernPost(server.url, "tools/list", {}, { token: READER });
      names = (after.result!.tools as { name: string }[]).map((t) => t.name);
      return names[0] === "get_t05";
    }, { stepMs: 100 });
    assert.deepEqual(names, ["get_t05", "get_t06"]);
    assert.equal(await api(server.url, "get_t01", READER), 404);
    // A broken edit keeps the old surface and the old tokens.
    await Deno.writeTextFile(file, guardfile(upstream.url, ["no_such_tool"]));
    server.kill("SIGHUP");
    for (let i = 0; i < 100 && !/reload_refused/.test(server.stderr()); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(server.stderr(), /no_such_tool\\" is not a tool this guardfile serves/);
    assert.equal(await api(server.url, "get_t05", READER), 200);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("--tool-token-env: usage and start-up errors say what to fix", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(
    `wrap ward mcp t {\n  base-url "${upstream.url}"\n  auth none\n  can get t { path "/t" }\n}\n`,
  );
  try {
    const env = { W: WRITER };
    const unknown = await runCli(
      ["serve", file, "--http", "127.0.0.1:0", "--tool-token-env", "W:get_t,get_x"],
      { env },
    );
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--tool-token-env names tools .* does not serve: W: "get_x"/);
    const stdio = await runCli(["serve", file, "--stdio", "--tool-token-env", "W:get_t"], { env });
    assert.equal(stdio.code, 2);
    assert.match(stdio.stderr, /apply to --http only/);
    const malformed = await runCli(
      ["serve", file, "--http", "127.0.0.1:0", "--tool-token-env", "get_t"],
      { env },
    );
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /--tool-token-env takes VAR:TOOL/);
    const unset = await runCli([
      "serve",
      file,
      "--http",
      "127.0.0.1:0",
      "--tool-token-env",
      "NOPE:get_t",
    ]);
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /--tool-token-env NOPE: the variable is not set/);
    const twice = await runCli(
      [
        "serve",
        file,
        "--http",
        "127.0.0.1:0",
        "--tool-token-env",
        "W:get_t",
        "--inbound-token-env",
        "W",
      ],
      { env },
    );
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /the variable W is named twice/);
  } finally {
    await upstream.close();
  }
});
