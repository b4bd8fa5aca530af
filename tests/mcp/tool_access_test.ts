/**
 * `toolAccess`: a host narrows the tools per caller from the transport's
 * `authorize` verdict. A narrowed tools/list shows only allowed tools (pages
 * and cursors included) and is private under 2026-07-28; a tool it hides is
 * unknown to tools/call and to the tool API.
 */
import assert from "node:assert/strict";
import { McpServer, type ToolAccess } from "../../src/mcp/server.ts";
import { MODERN_META } from "../support/mcp.ts";

const NAMES = ["a_read", "b_write", "c_read", "d_write", "e_read"];

function server(calls: string[]): McpServer {
  return new McpServer({
    name: "access",
    catalog: { tools: NAMES.map((name) => ({ name })), resources: [], prompts: [] },
    dispatch: (name) => {
      calls.push(name);
      return { content: [{ type: "text", text: name }] };
    },
    pageSize: 2,
    cache: { tools: { ttlMs: 60_000, cacheScope: "public" } },
    toolAccess: (auth): ToolAccess | undefined => {
      const scopes = (auth as { scopes?: string[] } | undefined)?.scopes;
      if (!scopes) return undefined;
      return { key: scopes.join(" "), allows: (n) => scopes.some((s) => n.endsWith(s)) };
    },
  });
}

async function listAll(s: McpServer, auth: unknown, modern: boolean) {
  const names: string[] = [];
  const scopes = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const params: Record<string, unknown> = modern ? { _meta: MODERN_META } : {};
    if (cursor) params.cursor = cursor;
    const reply = await s.handle(
      { jsonrpc: "2.0", id: page, method: "tools/list", params },
      modern ? { auth } : { auth, headers: new Headers({ "mcp-protocol-version": "2025-11-25" }) },
    );
    const result = JSON.parse(reply.body!).result;
    names.push(...result.tools.map((t: { name: string }) => t.name));
    if (result.cacheScope) scopes.add(result.cacheScope);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return { names, scopes: [...scopes] };
}

Deno.test("tools/list shows only allowed tools, across pages, under both revisions", async () => {
  const s = server([]);
  for (const modern of [true, false]) {
    assert.deepEqual((await listAll(s, { scopes: ["read"] }, modern)).names, [
      "a_read",
      "c_read",
      "e_read",
    ]);
    assert.deepEqual((await listAll(s, { scopes: ["write"] }, modern)).names, [
      "b_write",
      "d_write",
    ]);
    assert.deepEqual((await listAll(s, undefined, modern)).names, NAMES);
  }
});

Deno.test("a narrowed tools/list is private under 2026-07-28; an unnarrowed one keeps the host's hint", async () => {
  const s = server([]);
  assert.deepEqual((await listAll(s, { scopes: ["read"] }, true)).scopes, ["private"]);
  assert.deepEqual((await listAll(s, undefined, true)).scopes, ["public"]);
});

Deno.test("a hidden tool is unknown to tools/call and to the tool API, and never dispatched", async () => {
  const calls: string[] = [];
  const s = server(calls);
  const reply = await s.handle(
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "b_write", arguments: {}, _meta: MODERN_META },
    },
    { auth: { scopes: ["read"] } },
  );
  assert.match(JSON.parse(reply.body!).error.message, /Unknown tool: "b_write"/);
  const api = await s.callTool("b_write", {}, { auth: { scopes: ["read"] } });
  assert.equal(api.status, 404);
  assert.deepEqual(calls, []);
  const allowed = await s.callTool("b_write", {}, { auth: { scopes: ["write"] } });
  assert.equal(allowed.status, 200);
  assert.deepEqual(calls, ["b_write"]);
});

Deno.test("declaredToolAccess(): an authorize verdict naming its tools narrows list and call; both narrowings hold", async () => {
  const calls: string[] = [];
  const s = server(calls);
  const only = { tools: new Set(["a_read", "b_write", "d_write"]) };
  assert.deepEqual((await listAll(s, only, true)).names, ["a_read", "b_write", "d_write"]);
  assert.deepEqual((await listAll(s, only, true)).scopes, ["private"]);
  // With the host's own toolAccess as well, a tool must pass both.
  const both = { tools: ["a_read", "b_write"], scopes: ["read"] };
  assert.deepEqual((await listAll(s, both, false)).names, ["a_read"]);
  const refused = await s.handle(
    {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "c_read", arguments: {}, _meta: MODERN_META },
    },
    { auth: only },
  );
  assert.match(refused.body!, /Unknown tool/);
  assert.deepEqual(calls, []);
  // "*": every tool, but the list is caller-dependent.
  const every = await listAll(s, { tools: "*" }, true);
  assert.deepEqual(every.names, NAMES);
  assert.deepEqual(every.scopes, ["private"]);
  // Without `tools`, nothing changes: public.
  assert.deepEqual((await listAll(s, undefined, true)).scopes, ["public"]);
});

Deno.test("dispatch learns the caller's access (ctx.tools) on tools/call and the tool API; absent when not narrowed", async () => {
  const seen: (ToolAccess | undefined)[] = [];
  const s = new McpServer({
    name: "access",
    catalog: { tools: NAMES.map((name) => ({ name })), resources: [], prompts: [] },
    dispatch: (_name, _args, ctx) => {
      seen.push(ctx.tools);
      return { content: [{ type: "text", text: "ok" }] };
    },
    toolAccess: (auth): ToolAccess | undefined => {
      const scopes = (auth as { scopes?: string[] } | undefined)?.scopes;
      if (!scopes) return undefined;
      return { key: scopes.join(" "), allows: (n) => scopes.some((s) => n.endsWith(s)) };
    },
  });
  const call = (auth: unknown, modern: boolean) =>
    s.handle(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "a_read", arguments: {}, ...(modern ? { _meta: MODERN_META } : {}) },
      },
      modern ? { auth } : { auth, headers: new Headers({ "mcp-protocol-version": "2025-11-25" }) },
    );
  for (const modern of [true, false]) {
    await call({ scopes: ["read"] }, modern);
    await call(undefined, modern);
  }
  await s.callTool("a_read", {}, { auth: { scopes: ["read"] } });
  await s.callTool("a_read", {}, {});
  // A verdict naming its tools (weir's limited static tokens) narrows alike.
  await s.callTool("a_read", {}, { auth: { tools: ["a_read", "b_write"] } });
  assert.equal(seen.length, 7);
  const allowed = (a: ToolAccess | undefined) => a && NAMES.filter((n) => a.allows(n));
  assert.deepEqual(seen.map(allowed), [
    ["a_read", "c_read", "e_read"],
    undefined,
    ["a_read", "c_read", "e_read"],
    undefined,
    ["a_read", "c_read", "e_read"],
    undefined,
    ["a_read", "b_write"],
  ]);
});
