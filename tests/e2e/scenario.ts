/**
 * The guard's end-to-end contract, written once and run through each real
 * client and transport (v1 over stdio and HTTP, v2 over HTTP with 2026-07-28,
 * and the HTTP tool API). A client adapter supplies `list` and `call`.
 */
import assert from "node:assert/strict";
import { type Recorded, type Recorder, startRecorder } from "../support/upstream.ts";

export const TOKEN = "tk-secret-9f8e7d6c";
export const FIXTURE = "tests/fixtures/tickets.mcp.kdl";

/** What one tool call returned, normalized across clients. */
export interface CallOutcome {
  isError: boolean;
  text: string;
  structured?: unknown;
  /** Set when the call was refused at the protocol level (JSON-RPC error / 404). */
  protocolError?: { code: number; message: string };
}

export interface ClientAdapter {
  list(): Promise<{ name: string; inputSchema: Record<string, unknown>; description?: string }[]>;
  call(name: string, args: Record<string, unknown>): Promise<CallOutcome>;
}

/** The surface of the official clients (v1 and v2) that the scenario uses. */
export interface SdkClient {
  listTools(): Promise<{ tools: { name: string; inputSchema: Record<string, unknown> }[] }>;
  callTool(
    p: { name: string; arguments: Record<string, unknown> },
  ): Promise<Record<string, unknown>>;
}

/** Adapt an official client: tool errors are results, protocol errors carry their code. */
export function adaptSdkClient(sdk: unknown): ClientAdapter {
  const client = sdk as SdkClient;
  return {
    list: async () => (await client.listTools()).tools,
    call: async (name, args): Promise<CallOutcome> => {
      try {
        const r = await client.callTool({ name, arguments: args });
        return {
          isError: r.isError === true,
          text: (r.content as { text: string }[]).map((c) => c.text).join("\n"),
          structured: r.structuredContent,
        };
      } catch (error) {
        const e = error as { code?: number; message: string };
        if (typeof e.code !== "number") throw error;
        return { isError: true, text: "", protocolError: { code: e.code, message: e.message } };
      }
    },
  };
}

/** The recorder the fixture guardfile points at: echoes, or fails on request. */
export function startTicketUpstream(): Promise<Recorder> {
  return startRecorder((req: Recorded) => {
    if (req.path.includes("boom")) {
      // A hostile upstream that echoes the credential it was sent.
      return new Response(`internal failure; you sent ${req.headers.get("x-tickets-key")}`, {
        status: 500,
        statusText: "Internal Server Error",
      });
    }
    return Response.json({ method: req.method, path: req.path, tickets: [{ id: 1 }, { id: 2 }] });
  });
}

export function envFor(upstream: Recorder): Record<string, string> {
  return { TICKETS_BASE_URL: upstream.url, TICKETS_KEY: TOKEN };
}

const HOSTILE = [
  "..",
  ".",
  "../admin",
  "a/b",
  "a?b=1",
  "a#frag",
  "%2F",
  "%2e%2e",
  ".%2e",
  "x\r\nHost: evil.example",
  "",
  "//evil.example",
  "a\u0000b",
];

/** Run the whole contract. Returns every text the client saw, for the leak check. */
export async function guardScenario(
  client: ClientAdapter,
  upstream: Recorder,
  t: Deno.TestContext,
): Promise<string[]> {
  const seen: string[] = [];
  const call = async (name: string, args: Record<string, unknown>) => {
    const out = await client.call(name, args);
    seen.push(out.text, JSON.stringify(out.structured ?? null), out.protocolError?.message ?? "");
    return out;
  };
  const sent = () => upstream.requests.length;

  await t.step(
    "tools/list is exactly the grants, the withheld stub and the info tool",
    async () => {
      const tools = await client.list();
      assert.deepEqual(tools.map((x) => x.name), [
        "close_ticket",
        "create_ticket",
        "delete_ticket",
        "get_ticket",
        "list_ticket",
        "weir_info",
      ]);
      const get = tools.find((x) => x.name === "get_ticket")!;
      assert.deepEqual(get.inputSchema.required, ["board", "id"]);
      assert.equal(get.inputSchema.additionalProperties, false);
      const withheld = tools.find((x) => x.name === "delete_ticket")!;
      assert.match(withheld.description ?? "", /NOT AVAILABLE.*archived, never deleted/);
    },
  );

  await t.step("each grant reaches exactly its method, path, body and credential", async () => {
    const cases: [string, Record<string, unknown>, string, string, string, string | null][] = [
      [
        "list_ticket",
        { board: "team-a", status: "open" },
        "GET",
        "/boards/team-a/tickets",
        "status=open",
        null,
      ],
      ["get_ticket", { board: "ops", id: "7" }, "GET", "/boards/ops/tickets/7", "", null],
      [
        "create_ticket",
        { board: "team-a", title: "Fix it", details: "now" },
        "POST",
        "/boards/team-a/tickets",
        "",
        '{"title":"Fix it","details":"now"}',
      ],
      [
        "close_ticket",
        { board: "team-b", id: "3" },
        "PATCH",
        "/boards/team-b/tickets/3",
        "",
        '{"status":"closed","notify":false}',
      ],
    ];
    for (const [tool, args, method, path, query, body] of cases) {
      const before = sent();
      const out = await call(tool, args);
      assert.equal(out.isError, false, `${tool}: ${out.text}`);
      assert.equal(sent(), before + 1, `${tool} sends exactly one request`);
      const req = upstream.requests.at(-1)!;
      assert.equal(req.method, method);
      assert.equal(req.path, path);
      assert.equal(req.query, query);
      assert.equal(req.body, body ?? "");
      assert.equal(req.headers.get("x-tickets-key"), `Key ${TOKEN}`);
      if (body) assert.equal(req.headers.get("content-type"), "application/json");
      const env = out.structured as { coverage: { bytes: number }; result: { path: string } };
      assert.ok(out.text.startsWith('{"coverage":'), "coverage leads the text");
      assert.equal(env.result.path, path);
      assert.ok(env.coverage.bytes > 0);
    }
  });

  await t.step("an undeclared argument is refused by name, before any request", async () => {
    const before = sent();
    const out = await call("get_ticket", { board: "team-a", id: "1", verbose: true });
    assert.equal(out.isError, true);
    assert.match(out.text, /unexpected argument "verbose"/);
    assert.equal(sent(), before);
  });

  await t.step("a tool the guardfile does not name never reaches the upstream", async () => {
    const before = sent();
    const out = await call("delete_board", { board: "team-a" });
    assert.ok(out.protocolError || out.isError, "refused");
    assert.match(out.protocolError?.message ?? out.text, /delete_board/);
    assert.equal(sent(), before);
  });

  await t.step("the withheld tool refuses and sends nothing", async () => {
    const before = sent();
    const out = await call("delete_ticket", { board: "team-a", id: "1" });
    assert.equal(out.isError, true);
    assert.match(out.text, /verb_withheld.*close_ticket/s);
    assert.equal(sent(), before);
  });

  await t.step("restrict refuses before any request", async () => {
    const before = sent();
    // Outside the globs as sent: the advertised schema's pattern refuses, naming it.
    for (const board of ["sales", "team", "team-a/../sales", "OPS"]) {
      const out = await call("get_ticket", { board, id: "1" });
      assert.equal(out.isError, true, board);
      assert.match(out.text, /argument "board": must match the pattern \^\(\?:team-/);
    }
    // Inside as sent, outside once an upstream percent-decodes it: the guard.
    const decoded = await call("get_ticket", { board: "team-a%2F..%2Fsales", id: "1" });
    assert.equal(decoded.isError, true);
    assert.match(decoded.text, /policy_denied/);
    assert.equal(sent(), before);
  });

  await t.step("hostile path values never leave their segment", async () => {
    for (const value of HOSTILE) {
      const before = sent();
      const out = await call("get_ticket", { board: "team-a", id: value });
      if (out.isError) {
        assert.equal(sent(), before, `refused ${JSON.stringify(value)} sent nothing`);
        continue;
      }
      assert.equal(sent(), before + 1);
      const req = upstream.requests.at(-1)!;
      const prefix = "/boards/team-a/tickets/";
      assert.ok(req.path.startsWith(prefix), `${JSON.stringify(value)} -> ${req.path}`);
      const segment = req.path.slice(prefix.length);
      assert.ok(!/[/?#]/.test(segment), `one segment: ${segment}`);
      assert.equal(decodeURIComponent(segment), value, "the value arrives unchanged");
      assert.equal(req.query, "", "no query was added");
    }
  });

  await t.step(
    "an upstream error names method, template and status, never the credential",
    async () => {
      const out = await call("get_ticket", { board: "team-a", id: "boom" });
      assert.equal(out.isError, true);
      assert.match(out.text, /GET \/boards\/\{board\}\/tickets\/\{id\} -> 500/);
      assert.ok(!out.text.includes(TOKEN));
      assert.match(out.text, /\[redacted\]/);
    },
  );

  return seen;
}

/** The credential must appear in nothing a caller or an operator sees. */
export function assertNoLeak(texts: string[]): void {
  for (const text of texts) {
    assert.ok(!text.includes(TOKEN), `credential leaked in: ${text.slice(0, 200)}`);
  }
}
