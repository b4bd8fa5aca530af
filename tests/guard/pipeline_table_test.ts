/**
 * The control pipeline's order (src/guard/pipeline.ts), held by one table of
 * stage outcomes driven through every mode that serves tools: spec mode and
 * the guardfile form that wraps an MCP server, each over MCP 2026-07-28
 * (HTTP and stdio, the v2 client), MCP 2025-11-25 (stdio and HTTP, the v1
 * client) and the tool API. Each row is one call on a fresh server (confirm
 * on `close_ticket`, one rate-limit slot per hour, `reject-empty` on
 * `get_empty`), and asserts:
 *
 * - whether a person was asked (an elicitation, or the `input_required`
 *   round of 2026-07-28, reached the client);
 * - how many requests reached the upstream;
 * - the call's audit line (a refusal's rule, or an allowed call's outcome);
 * - whether the budget was spent: the next well-formed call passes only when
 *   the row's call spent no slot.
 *
 * A mode that asked a person before its checks, took a slot for a refused
 * call or kept one for a call it never sent fails a row.
 */
import assert from "node:assert/strict";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import {
  type CallToolResult,
  createHttpHandler,
  type LogEvent,
  McpServer,
  serveStdio,
} from "../../mod.ts";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { guardedServer } from "../../src/modes/serve.ts";
import { listenHttp } from "../../src/serving/listen_http.ts";
import { buildWrapSurface } from "../../src/wrap/surface.ts";
import type { Surface } from "../../src/surface/model.ts";
import { startRecorder } from "../support/upstream.ts";
import { confirmingClientV1, confirmingClientV2, type ElicitAction } from "../support/elicit.ts";
import { MemoryLineTransport } from "../support/line_transport.ts";
import { redisMissing, startRedis } from "../support/redis.ts";
import { closeClient } from "../../src/store/redis.ts";

type Mode = "spec" | "wrap";
type Transport = "2026 HTTP" | "2026 stdio" | "2025 stdio" | "2025 HTTP" | "tool API";
const TRANSPORTS: Transport[] = ["2026 HTTP", "2026 stdio", "2025 stdio", "2025 HTTP", "tool API"];
/** Where a person can be asked: 2026-07-28 anywhere, 2025-11-25 over stdio; never the tool API. */
const canAsk = (t: Transport) => t !== "2025 HTTP" && t !== "tool API";

/** The controls of every row's file; the rate limit in this process, or in Redis under `bucket`. */
const controls = (redis?: { url: string; bucket: string }) =>
  `confirm "close_ticket" message="Close this ticket?"
rate-limit "1/1h"${
    redis ? ` {\n    store redis literal "${redis.url}"\n    bucket "${redis.bucket}"\n}` : ""
  }
reject-empty "get_empty"
`;

type Store = Parameters<typeof controls>[0];

/** The upstream credential weir holds (from the environment, so a secret): no argument may carry it. */
const TOKEN_VAR = "PIPELINE_TABLE_TOKEN";
const TOKEN = "tk-table-5e1f0c9a7b3d";
Deno.env.set(TOKEN_VAR, TOKEN);

const specFile = (upstream: string, store: Store) =>
  `${controls(store)}wrap ward mcp tickets {
    base-url "${upstream}"
    auth bearer {
        value env "${TOKEN_VAR}"
    }
    can close ticket { path "/tickets/{id}" }
    can get ticket { path "/tickets/{id}" }
    can get empty { path "/empty/{id}" }
}
`;

const wrapFile = (url: string, store: Store) =>
  `${controls(store)}wrap ward mcp tickets {
    mcp-server http "${url}" {
        header "Authorization" {
            prefix "Bearer "
            value env "${TOKEN_VAR}"
        }
    }
    proxy close_ticket {
        argument "id" {
            restrict "T-*"
        }
    }
    proxy get_ticket
    proxy get_empty
}
`;

/** One call of a row: the tool, its arguments, and what the person answers if asked. */
interface Call {
  tool: string;
  args: Record<string, unknown>;
  person?: ElicitAction;
}

/** What a row's call must come to, per mode and transport. */
interface Expected {
  /** `refused <rule>` or `allowed <outcome>`: the call's last audit line. */
  audit: string;
  asked: number;
  /** Requests at the upstream after the row (its `before` calls included). */
  upstream: number;
  /** The next well-formed call passes (the row's call spent no slot). */
  budgetLeft: boolean;
}

interface Row {
  stage: string;
  /** Calls before the row's call (they set the scene: an empty bucket). */
  before?: Call[];
  call: Call;
  /** The server hides `close_ticket` from every caller (its tool access). */
  hidden?: boolean;
  expect: (mode: Mode, transport: Transport) => Expected;
}

const FOLLOW_UP: Call = { tool: "get_ticket", args: { id: "T-9" } };

const TABLE: Row[] = [
  {
    stage: "refused at (a): `..` as a gated tool's id (the issue's case)",
    call: { tool: "close_ticket", args: { id: ".." }, person: "accept" },
    // The wrapped tool's restrict is also its schema's pattern: the core refuses first.
    expect: (mode) => ({
      audit: mode === "spec" ? "refused dot_segment" : "refused schema",
      asked: 0,
      upstream: 0,
      budgetLeft: true,
    }),
  },
  {
    stage: "refused at (a): a value that decodes to a control character",
    call: { tool: "close_ticket", args: { id: "T-%0A" }, person: "accept" },
    expect: () => ({
      audit: "refused control_character",
      asked: 0,
      upstream: 0,
      budgetLeft: true,
    }),
  },
  {
    stage: "refused at (a): an argument holding weir's own upstream credential (base64)",
    call: { tool: "close_ticket", args: { id: `T-${btoa(TOKEN)}` }, person: "accept" },
    expect: () => ({ audit: "refused secret_argument", asked: 0, upstream: 0, budgetLeft: true }),
  },
  {
    stage: "refused at (b): a tool the caller may not call",
    hidden: true,
    call: { tool: "close_ticket", args: { id: "T-1" }, person: "accept" },
    expect: () => ({ audit: "refused unknown_tool", asked: 0, upstream: 0, budgetLeft: true }),
  },
  {
    stage: "refused at (c): no budget left, so no person is asked",
    before: [{ tool: "get_ticket", args: { id: "T-1" } }],
    call: { tool: "close_ticket", args: { id: "T-2" }, person: "accept" },
    expect: () => ({ audit: "refused rate_limit", asked: 0, upstream: 1, budgetLeft: false }),
  },
  {
    stage: "refused at (d): the person declines (or cannot be asked)",
    call: { tool: "close_ticket", args: { id: "T-1" }, person: "decline" },
    expect: (_mode, t) => ({
      audit: "refused confirm",
      asked: canAsk(t) ? 1 : 0,
      upstream: 0,
      budgetLeft: true,
    }),
  },
  {
    stage: "sent once a person says yes",
    call: { tool: "close_ticket", args: { id: "T-1" }, person: "accept" },
    expect: (_mode, t) =>
      canAsk(t)
        ? { audit: "allowed ok", asked: 1, upstream: 1, budgetLeft: false }
        : { audit: "refused confirm", asked: 0, upstream: 0, budgetLeft: true },
  },
  {
    stage: "sent (an ungated tool)",
    call: { tool: "get_ticket", args: { id: "T-1" } },
    expect: () => ({ audit: "allowed ok", asked: 0, upstream: 1, budgetLeft: false }),
  },
  {
    stage: "failed at (f): an empty answer under reject-empty",
    call: { tool: "get_empty", args: { id: "T-1" } },
    expect: () => ({ audit: "allowed reject_empty", asked: 0, upstream: 1, budgetLeft: false }),
  },
];

/**
 * A wrapped MCP server on weir's own core: `names` as tools taking an `id`,
 * each answering its name and id (`get_empty` answers nothing), counting
 * `tools/call`.
 */
function startWrappedServer(names = ["close_ticket", "get_ticket", "get_empty"]) {
  const calls: string[] = [];
  const schema = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
  const server = new McpServer({
    name: "wrapped",
    log: () => {},
    catalog: {
      tools: names.map((name) => ({ name, inputSchema: schema })),
      resources: [],
      prompts: [],
    },
    dispatch: (name, args): Promise<CallToolResult> => {
      calls.push(name);
      return Promise.resolve(
        name === "get_empty"
          ? { content: [] }
          : { content: [{ type: "text", text: `${name} ${args.id}` }] },
      );
    },
  });
  const handler = createHttpHandler(server, { authorize: () => true, allowedOrigins: [] });
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    calls,
    close: () => http.shutdown(),
  };
}

/** A served row: the server, its audit lines, and the upstream's request count. */
interface Served {
  server: McpServer;
  events: LogEvent[];
  upstream: () => number;
  close: () => Promise<void>;
}

async function serve(mode: Mode, hidden: boolean, store?: Store): Promise<Served> {
  const events: LogEvent[] = [];
  const log = (event: LogEvent) => void events.push(event);
  const toolAccess = hidden
    ? () => ({ key: "no-close", allows: (name: string) => name !== "close_ticket" })
    : undefined;
  if (mode === "spec") {
    const up = await startRecorder((req) =>
      req.path.startsWith("/empty/") ? Response.json({}) : Response.json({ id: req.path })
    );
    const loaded = loadGuardfileText(specFile(up.url, store), "table.mcp.kdl");
    assert.ok(loaded.guardfile, JSON.stringify(loaded.diagnostics));
    const server = guardedServer(loaded.guardfile, { log, toolAccess });
    return { server, events, upstream: () => up.requests.length, close: () => up.close() };
  }
  const up = startWrappedServer();
  const loaded = loadGuardfileText(wrapFile(up.url, store), "table.mcp.kdl");
  assert.ok(loaded.mcpWrap, JSON.stringify(loaded.diagnostics));
  const surface = await buildWrapSurface(loaded.mcpWrap, { log, toolAccess });
  return {
    server: surface.server,
    events,
    upstream: () => up.calls.length,
    close: async () => {
      await surface.connection.close();
      await up.close();
    },
  };
}

/** A client of one transport: calls a tool, answering a question with the call's `person`. */
interface Caller {
  call(call: Call): Promise<{ passed: boolean; text: string }>;
  asked: () => number;
  close(): Promise<void>;
}

const textOf = (r: { content?: unknown }) =>
  ((r.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");

async function connect(server: McpServer, transport: Transport): Promise<Caller> {
  const stdio = transport.endsWith("stdio");
  let stop: () => Promise<void> = () => Promise.resolve();
  let origin = "";
  let clientTransport: unknown;
  if (stdio) {
    const toServer = new TransformStream<Uint8Array, Uint8Array>();
    const fromServer = new TransformStream<Uint8Array, Uint8Array>();
    const done = serveStdio(server, { readable: toServer.readable, writable: fromServer.writable });
    clientTransport = new MemoryLineTransport(fromServer.readable, toServer.writable);
    stop = async () => {
      await done;
    };
  } else {
    const http = await listenHttp(server, { hostname: "127.0.0.1", port: 0, log: () => {} });
    origin = `http://127.0.0.1:${http.port}`;
    stop = () => http.shutdown();
  }
  if (transport === "tool API") {
    return {
      async call({ tool, args }) {
        const response = await fetch(`${origin}/api/${tool}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(args),
        });
        const text = await response.text();
        return { passed: response.status === 200, text };
      },
      asked: () => 0,
      close: stop,
    };
  }
  const modern = transport.startsWith("2026");
  const { client, answer } = modern
    ? confirmingClientV2<ElicitAction>("table", "accept")
    : confirmingClientV1<ElicitAction>("table", "accept");
  if (!stdio) {
    clientTransport = modern
      ? new HttpV2(new URL(`${origin}/mcp`))
      : new HttpV1(new URL(`${origin}/mcp`));
  }
  // deno-lint-ignore no-explicit-any
  await (client as any).connect(clientTransport);
  return {
    async call({ tool, args, person }) {
      answer.next = person ?? "accept";
      try {
        const result = await client.callTool({ name: tool, arguments: args }) as CallToolResult;
        return { passed: result.isError !== true, text: textOf(result) };
      } catch (error) {
        return { passed: false, text: String(error) };
      }
    },
    asked: () => answer.asked.length,
    close: async () => {
      await client.close();
      await stop();
    },
  };
}

/** The last audit line of `tool`, as `refused <rule>` or `allowed <outcome>`. */
function lastAudit(events: LogEvent[], tool: string): string {
  const line = events.findLast((e) =>
    (e.event === "refused" || e.event === "tool_call") && e.tool === tool
  );
  if (!line) return "no audit line";
  return line.event === "refused" ? `refused ${line.rule}` : `allowed ${line.outcome}`;
}

/** Drive one row on a fresh server and hold it to the row's expectation. */
async function runRow(mode: Mode, transport: Transport, row: Row, store?: Store): Promise<void> {
  const served = await serve(mode, row.hidden === true, store);
  const caller = await connect(served.server, transport);
  try {
    for (const before of row.before ?? []) {
      const r = await caller.call(before);
      assert.ok(r.passed, `the scene-setting call failed: ${r.text}`);
    }
    const asked = caller.asked();
    const outcome = await caller.call(row.call);
    const audit = lastAudit(served.events, row.call.tool);
    const askedNow = caller.asked() - asked;
    const upstream = served.upstream();
    const followUp = await caller.call(FOLLOW_UP);
    const want = row.expect(mode, transport);
    assert.deepEqual(
      { audit, asked: askedNow, upstream, budgetLeft: followUp.passed },
      want,
      `${mode}, ${transport}, ${row.stage}: the call answered ${outcome.text}; ` +
        `the next call answered ${followUp.text}`,
    );
    assert.equal(
      outcome.passed,
      want.audit.startsWith("allowed ok"),
      `the call answered ${outcome.text}`,
    );
    if (!want.budgetLeft) assert.match(followUp.text, /rate_limited/);
  } finally {
    await caller.close();
    await served.close();
  }
}

for (const mode of ["spec", "wrap"] as const) {
  Deno.test(`pipeline order (${mode} mode): one table of stage outcomes through every transport`, async (t) => {
    for (const transport of TRANSPORTS) {
      for (const row of TABLE) {
        await t.step(`${transport}: ${row.stage}`, () => runRow(mode, transport, row));
      }
    }
  });
}

const redisGone = redisMissing();
if (redisGone) console.error(`SKIP pipeline_table_test (redis): ${redisGone}`);

Deno.test({
  name: "pipeline order with the rate limit shared in Redis: a slot is given back there too",
  ignore: redisGone !== null,
  // ioredis keeps a reconnect timer until its client is closed (shared per URL).
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const redis = await startRedis();
    let n = 0;
    try {
      for (const mode of ["spec", "wrap"] as const) {
        for (const transport of ["2026 HTTP", "tool API"] as const) {
          for (const row of TABLE) {
            const store = { url: redis.url, bucket: `table-${n++}` };
            await t.step(
              `${mode}, ${transport}: ${row.stage}`,
              () => runRow(mode, transport, row, store),
            );
          }
        }
      }
    } finally {
      await closeClient(redis.url);
      await redis.close();
    }
  },
});

Deno.test("the controls of a wrapped tool named toString or constructor are its own, never inherited", async () => {
  const up = startWrappedServer(["toString", "constructor", "hasOwnProperty"]);
  const { calls, url } = up;
  // Only hasOwnProperty has controls of its own; the other two have none.
  const loaded = loadGuardfileText(
    `cache "hasOwnProperty" ttl="1h"
reject-empty-argument "hasOwnProperty" field="id"
wrap ward mcp protos {
    mcp-server http "${url}"
    proxy toString
    proxy constructor
    proxy hasOwnProperty
}
`,
    "protos.mcp.kdl",
  );
  assert.ok(loaded.mcpWrap, JSON.stringify(loaded.diagnostics));
  const events: LogEvent[] = [];
  const surface = await buildWrapSurface(loaded.mcpWrap, { log: (e) => void events.push(e) });
  const caller = await connect(surface.server, "2026 HTTP");
  try {
    for (const tool of ["toString", "constructor", "toString", "constructor"]) {
      const r = await caller.call({ tool, args: { id: "1" } });
      assert.ok(r.passed, `${tool}: ${r.text}`);
    }
    assert.deepEqual(calls, ["toString", "constructor", "toString", "constructor"], "none cached");
    const blank = await caller.call({ tool: "hasOwnProperty", args: { id: "" } });
    assert.match(blank.text, /reject_empty_argument/);
    for (let i = 0; i < 2; i++) {
      assert.ok((await caller.call({ tool: "hasOwnProperty", args: { id: "1" } })).passed);
    }
    assert.equal(calls.filter((c) => c === "hasOwnProperty").length, 1, "its own cache holds");
    const described = surface.describe!() as Surface;
    const byName = new Map(described.tools.map((t) => [t.name, t]));
    assert.equal(byName.get("toString")?.controls.cacheTtlMs, undefined);
    assert.equal(byName.get("hasOwnProperty")?.controls.cacheTtlMs, 3_600_000);
    assert.deepEqual(byName.get("constructor")?.pins, []);
  } finally {
    await caller.close();
    await surface.connection.close();
    await up.close();
  }
});
