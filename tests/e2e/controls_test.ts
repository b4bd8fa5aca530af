/**
 * The reference's remaining controls together, as a user runs them: one
 * guardfile (tests/fixtures/controls.mcp.kdl) with confirm on a delete, a PDF
 * grant and a feed grant, a rate limit shared in a real Redis, and a sql read
 * and a sql write against a real PostgreSQL. It lints clean, and each control
 * behaves through the official v2 client pinned to 2026-07-28 (HTTP) and the
 * official v1 client on 2025-11-25 (stdio, where elicitation can be carried).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { Redis } from "ioredis";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ROOT, runCli, serveHttp, weirCommand } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { confirmingClientV1, confirmingClientV2 } from "../support/elicit.ts";
import { redisMissing, startRedis } from "../support/redis.ts";
import { postgresMissing, startPostgres } from "../support/postgres.ts";

const FIXTURE = "tests/fixtures/controls.mcp.kdl";
const missing = redisMissing() ?? postgresMissing();
if (missing) console.error(`SKIP controls_test: ${missing}`);

type Result = { content?: unknown; structuredContent?: unknown; isError?: boolean };
interface Caller {
  call(name: string, args: Record<string, unknown>): Promise<Result>;
  tools(): Promise<string[]>;
  answer: { next: "accept" | "decline"; asked: string[] };
}
const textOf = (r: Result) =>
  ((r.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");

async function scenario(t: Deno.TestContext, label: string, c: Caller, deletes: () => number) {
  await t.step(`${label}: every control is listed`, async () => {
    assert.deepEqual(await c.tools(), [
      "create_order",
      "delete_ticket",
      "get_news",
      "get_report",
      "list_orders",
      "weir_info",
    ]);
  });
  await t.step(`${label}: confirm gates the delete`, async () => {
    const before = deletes();
    c.answer.next = "decline";
    const no = await c.call("delete_ticket", { id: "41" });
    assert.equal(no.isError, true);
    assert.match(textOf(no), /^confirmation_declined/);
    assert.equal(deletes(), before, "a decline reaches nothing");
    c.answer.next = "accept";
    const yes = await c.call("delete_ticket", { id: "42" });
    assert.notEqual(yes.isError, true, textOf(yes));
    assert.equal(deletes(), before + 1);
    assert.match(c.answer.asked.at(-1)!, /^Delete this ticket\? It cannot be undone\./);
    assert.match(c.answer.asked.at(-1)!, /\nArguments:\n {2}"id": "42"$/);
  });
  await t.step(`${label}: a PDF and a feed come back as text and entries`, async () => {
    const pdf = await c.call("get_report", { name: "q3.pdf" });
    const p = pdf.structuredContent as {
      coverage: { pages: unknown };
      result: { pages: { text: string }[] };
    };
    assert.deepEqual(p.coverage.pages, { shown: 2, total: 3 });
    assert.equal(p.result.pages[1].text, "Quarter page 2");
    const feed = await c.call("get_news", {});
    const f = feed.structuredContent as {
      coverage: { entries: unknown };
      result: { entries: { title: string }[] };
    };
    assert.deepEqual(f.coverage.entries, { shown: 2, total: 2 });
    assert.deepEqual(f.result.entries.map((e) => e.title), ["Launch", "Fix"]);
  });
  await t.step(`${label}: a sql read (truncated in coverage) and a sql write`, async () => {
    const read = await c.call("list_orders", { min_total: 10 });
    const r = read.structuredContent as {
      coverage: { truncated: boolean };
      result: { rows: { total: number }[] };
    };
    assert.equal(r.coverage.truncated, true);
    assert.deepEqual(r.result.rows.map((row) => row.total), [10, 20]);
    const write = await c.call("create_order", { customer: `${label} buyer`, total: 99 });
    assert.deepEqual((write.structuredContent as { result: unknown }).result, {
      rows_affected: 1,
    });
  });
}

Deno.test({
  name: "confirm, extract, a Redis rate limit and sql grants through both official clients",
  ignore: missing !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const redis = await startRedis();
    const pg = await startPostgres();
    const admin = postgres(pg.adminUrl, { onnotice: () => {} });
    await admin.unsafe(`CREATE TABLE orders (id serial PRIMARY KEY, customer text, total int)`);
    await admin.unsafe(
      `INSERT INTO orders (customer, total) VALUES ('a', 10), ('b', 20), ('c', 30)`,
    );

    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let i = 1; i <= 3; i++) {
      doc.addPage([300, 200]).drawText(`Quarter page ${i}`, { x: 20, y: 100, size: 12, font });
    }
    const pdf = new Uint8Array(await doc.save());
    const feed = `<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title>
      <entry><title>Launch</title><id>1</id></entry><entry><title>Fix</title><id>2</id></entry></feed>`;
    const upstream = await startRecorder((req) => {
      if (req.path.startsWith("/reports/")) {
        return new Response(pdf, { headers: { "content-type": "application/pdf" } });
      }
      if (req.path === "/news.xml") {
        return new Response(feed, { headers: { "content-type": "application/atom+xml" } });
      }
      return Response.json({ deleted: req.path });
    });
    const deletes = () => upstream.requests.filter((r) => r.method === "DELETE").length;
    const env = {
      CONTROLS_REDIS_URL: redis.url,
      CONTROLS_BASE_URL: upstream.url,
      CONTROLS_DSN: pg.adminUrl,
    };
    const server = await serveHttp(FIXTURE, { env });
    const { client: v2, answer: v2Answer } = confirmingClientV2<"accept" | "decline">(
      "controls-v2",
      "accept",
    );
    const { command, args } = weirCommand();
    const { client: v1, answer: v1Answer } = confirmingClientV1<"accept" | "decline">(
      "controls-v1",
      "accept",
    );
    const store = new Redis(redis.url, { lazyConnect: true });
    try {
      await t.step("the guardfile lints clean", async () => {
        const lint = await runCli(["lint", FIXTURE], { env });
        assert.equal(lint.code, 0, lint.stderr);
        // Nothing but lint's surface-size report (no diagnostic).
        assert.match(lint.stderr, /^weir: \S+: surface: \d+ tools, \d+ tokens [^\n]*\n$/);
      });

      await v2.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      await scenario(t, "v2 on 2026-07-28", {
        call: (name, a) => v2.callTool({ name, arguments: a }) as Promise<Result>,
        tools: async () => (await v2.listTools()).tools.map((x) => x.name).sort(),
        answer: v2Answer,
      }, deletes);

      await v1.connect(
        new StdioClientTransport({
          command,
          args: [...args, "serve", FIXTURE, "--stdio"],
          cwd: ROOT,
          env: { ...Deno.env.toObject(), ...env },
          stderr: "pipe",
        }),
      );
      assert.equal(v1.getServerVersion()?.name, "desk");
      await scenario(t, "v1 on 2025-11-25", {
        call: (name, a) => v1.callTool({ name, arguments: a }) as Promise<Result>,
        tools: async () => (await v1.listTools()).tools.map((x: { name: string }) => x.name).sort(),
        answer: v1Answer,
      }, deletes);

      await t.step("both servers drew from the one bucket in Redis", async () => {
        await store.connect();
        const tokens = Number(await store.hget("weir:ratelimit:controls-e2e", "tokens"));
        // 600 per minute, 7 upstream-bound calls per client so far; the bucket refills 10/s.
        assert.ok(tokens < 600, `tokens ${tokens}`);
        assert.ok((await store.pttl("weir:ratelimit:controls-e2e")) > 0, "the bucket expires");
        store.disconnect();
      });

      await t.step("Redis down: both clients get a clear tool error, nothing is sent", async () => {
        await redis.stop();
        const before = upstream.requests.length;
        for (const client of [v2, v1]) {
          const r = await client.callTool({ name: "get_news", arguments: {} }) as Result;
          assert.equal(r.isError, true);
          assert.match(textOf(r), /^rate_limit_store_unavailable: the shared rate-limit store/);
        }
        assert.equal(upstream.requests.length, before);
      });
    } finally {
      await v2.close().catch(() => {});
      await v1.close().catch(() => {});
      store.disconnect();
      await server.stop();
      await upstream.close();
      await admin.end();
      await pg.close();
      await redis.close();
    }
  },
});
