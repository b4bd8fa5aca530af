/**
 * MCP over stdio: newline-delimited JSON-RPC in, nothing but JSON-RPC
 * responses out (one per line), a clean end on end of input once requests in
 * flight are answered, and the same on an abort signal (SIGTERM).
 */
import assert from "node:assert/strict";
import { type Dispatch, serveStdio } from "../../mod.ts";
import { initializeRequest, makeServer, MODERN_META } from "../support/mcp.ts";
import { assertValidResponse, LEGACY, MODERN, type Revision } from "../support/schemas.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;
const FIXTURE = new URL("../fixtures/catalog_server.ts", import.meta.url).pathname;

/** A controllable stdin/stdout pair around `serveStdio`. */
function pipe(dispatch: Dispatch, options: { maxLineBytes?: number; signal?: AbortSignal } = {}) {
  const { server } = makeServer({
    catalog: {
      tools: [{ name: "echo" }, { name: "slow" }, { name: "waits_for_cancel" }],
      resources: [],
      prompts: [],
    },
    dispatch,
  });
  let input!: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      input = controller;
    },
    cancel() {
      cancelled = true;
    },
  });
  let output = "";
  let closed = false;
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      output += new TextDecoder().decode(chunk);
    },
    close() {
      closed = true;
    },
  });
  let done = false;
  const served = serveStdio(server, { readable, writable, ...options }).then(() => {
    done = true;
  });
  const encoder = new TextEncoder();
  return {
    send: (text: string) => input.enqueue(encoder.encode(text)),
    end: () => input.close(),
    served,
    isDone: () => done,
    isClosed: () => closed,
    /** Whether the server stopped reading its input (cancelled the stream). */
    isCancelled: () => cancelled,
    lines: () => output.split("\n").filter((line, i, all) => i < all.length - 1 || line !== ""),
    output: () => output,
  };
}

const request = (id: number, method: string, params: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: MODERN_META } });

/** Parse every output line, check it against the schema, and index it by id. */
function responses(
  lines: string[],
  expect: Record<string | number, [Revision | Revision[], string?]>,
): Map<unknown, Record<string, unknown>> {
  const byId = new Map<unknown, Record<string, unknown>>();
  for (const line of lines) {
    assert.ok(!line.includes("\r"), "no raw carriage returns");
    const parsed = JSON.parse(line) as Record<string, unknown>;
    const key = (parsed.id ?? null) as string | number;
    const [revision, method] = expect[String(key)] ?? [[LEGACY, MODERN]];
    assertValidResponse(revision, parsed, method);
    byId.set(parsed.id ?? null, parsed);
  }
  return byId;
}

/** Let queued work run (a turn of the event loop), without timing anything. */
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

const echo: Dispatch = () => ({ content: [{ type: "text", text: "hi" }] });

Deno.test("one JSON-RPC message per line in, one response per line out", async () => {
  const io = pipe(echo);
  // Two messages in one chunk, one split across three chunks, CRLF, blank lines.
  io.send(request(1, "tools/list") + "\n" + request(2, "tools/call", { name: "echo" }) + "\n");
  const split = request(3, "server/discover");
  io.send(split.slice(0, 10));
  io.send(split.slice(10, 30));
  io.send(split.slice(30) + "\r\n\n   \n");
  io.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  io.end();
  await io.served;
  const lines = io.lines();
  assert.equal(lines.length, 3, io.output());
  const byId = responses(lines, {
    1: [MODERN, "tools/list"],
    2: [MODERN, "tools/call"],
    3: [MODERN, "server/discover"],
  });
  assert.deepEqual([...byId.keys()].sort(), [1, 2, 3]);
  assert.ok(io.isClosed(), "stdout is closed at the end");
});

Deno.test("a line that is not JSON is -32700; an over-long line is refused and skipped", async () => {
  const io = pipe(echo, { maxLineBytes: 200 });
  io.send("{this is not json\n");
  io.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"pad":"${"x".repeat(300)}"}}\n`);
  io.send(`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"pad":"${"y".repeat(150)}`);
  io.send(`${"y".repeat(150)}"}}\n`);
  io.send(request(11, "tools/list") + "\n");
  io.send("[" + request(12, "tools/list") + "]\n");
  io.end();
  await io.served;
  const errors = io.lines().map((line) => JSON.parse(line));
  responses(io.lines(), { 11: [MODERN, "tools/list"] });
  const codes = errors.map((e) => [e.id ?? null, e.error?.code ?? "result"]);
  assert.deepEqual(
    codes.sort((a, b) => String(a).localeCompare(String(b))),
    [
      [11, "result"],
      [null, -32600],
      [null, -32600],
      [null, -32600],
      [null, -32700],
    ].sort((a, b) => String(a).localeCompare(String(b))),
  );
  assert.equal(errors.filter((e) => /exceeds 200 bytes/.test(e.error?.message)).length, 2);
});

Deno.test("end of input ends the server only after requests in flight are answered", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const io = pipe(async (name) => {
    if (name === "slow") {
      started();
      await gate;
      return { content: [{ type: "text", text: "finally" }] };
    }
    return { content: [{ type: "text", text: "quick" }] };
  });
  io.send(request(1, "tools/call", { name: "slow" }) + "\n");
  io.send(request(2, "tools/call", { name: "echo" }) + "\n");
  await running;
  io.end();
  for (let i = 0; i < 5; i++) await turn();
  assert.equal(io.isDone(), false, "still serving: a request is in flight");
  assert.equal(io.isClosed(), false);
  assert.equal(io.lines().length, 1, "the quick answer did not wait for the slow one");
  release();
  await io.served;
  const byId = responses(io.lines(), { 1: [MODERN, "tools/call"], 2: [MODERN, "tools/call"] });
  assert.deepEqual((byId.get(1)!.result as { content: unknown }).content, [
    { type: "text", text: "finally" },
  ]);
  assert.ok(io.isClosed());
});

Deno.test("an abort signal stops reading, answers what is in flight, then ends", async () => {
  const stop = new AbortController();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const io = pipe(async (name) => {
    if (name === "slow") {
      started();
      await gate;
    }
    return { content: [{ type: "text", text: name }] };
  }, { signal: stop.signal });
  io.send(request(1, "tools/call", { name: "slow" }) + "\n");
  await running;
  stop.abort();
  for (let i = 0; i < 5; i++) await turn();
  assert.ok(io.isCancelled(), "input is no longer read");
  assert.equal(io.isDone(), false, "still answering the request in flight");
  release();
  await io.served;
  const byId = responses(io.lines(), { 1: [MODERN, "tools/call"] });
  assert.deepEqual([...byId.keys()], [1]);
  assert.ok(io.isClosed());
});

Deno.test("notifications/cancelled aborts the request it names, which is then not answered", async () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let aborted: unknown;
  const io = pipe((name, _args, ctx) => {
    if (name !== "waits_for_cancel") return echo(name, _args, ctx);
    started();
    return new Promise((_resolve, reject) => {
      ctx.signal.addEventListener("abort", () => {
        aborted = ctx.signal.reason;
        reject(ctx.signal.reason);
      }, { once: true });
    });
  });
  io.send(request(7, "tools/call", { name: "waits_for_cancel" }) + "\n");
  await running;
  io.send(
    JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 7, reason: "user hit stop" },
    }) + "\n",
  );
  io.send(request(8, "tools/list") + "\n");
  io.end();
  await io.served;
  assert.ok(aborted instanceof Error, "the handler saw the abort");
  // MCP "Cancellation": the receiver does not answer a cancelled request.
  const lines = io.lines();
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.equal(JSON.parse(lines[0]).id, 8);
});

Deno.test("a cancellation names a big id exactly: 2^53+1 cancels 2^53+1, not 2^53", async () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let aborted = false;
  const io = pipe((name, _args, ctx) => {
    if (name !== "waits_for_cancel") return echo(name, _args, ctx);
    started();
    return new Promise((_resolve, reject) => {
      ctx.signal.addEventListener("abort", () => {
        aborted = true;
        reject(ctx.signal.reason);
      }, { once: true });
    });
  });
  const call = request(0, "tools/call", { name: "waits_for_cancel" });
  io.send(call.replace('"id":0', '"id":9007199254740993') + "\n");
  await running;
  // 2^53 is another id: it cancels nothing.
  io.send(
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740992}}\n',
  );
  io.send(request(8, "tools/list") + "\n");
  for (let i = 0; i < 100 && io.lines().length === 0; i++) await turn();
  assert.equal(io.lines().length, 1, "tools/list answered");
  assert.equal(aborted, false, "2^53 did not cancel 2^53+1");
  io.send(
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}\n',
  );
  io.end();
  await io.served;
  assert.equal(aborted, true, "2^53+1 cancelled its request");
  const lines = io.lines();
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.equal(JSON.parse(lines[0]).id, 8);
});

Deno.test("after initialize, the connection serves 2025-11-25 requests without _meta", async () => {
  const io = pipe(echo);
  io.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) + "\n");
  await turn();
  io.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "c", version: "1" },
      },
    }) + "\n",
  );
  for (let i = 0; i < 3; i++) await turn();
  io.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  io.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }) + "\n");
  io.send(request(4, "tools/list") + "\n");
  io.end();
  await io.served;
  const byId = responses(io.lines(), {
    1: [MODERN],
    2: [LEGACY, "initialize"],
    3: [LEGACY, "tools/list"],
    4: [MODERN, "tools/list"],
  });
  assert.equal((byId.get(1)!.error as { code: number }).code, -32602, "no handshake yet");
  assert.equal((byId.get(3)!.result as Record<string, unknown>).resultType, undefined);
  assert.equal((byId.get(4)!.result as Record<string, unknown>).resultType, "complete");
});

/** Spawn the fixture server script as a real subprocess. */
function spawnFixture() {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--config", CONFIG, FIXTURE],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("the fixture process writes only JSON-RPC to stdout and exits 0 at end of input", async () => {
  const child = spawnFixture();
  const writer = child.stdin.getWriter();
  const lines = [
    JSON.stringify(initializeRequest(1)),
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    request(3, "resources/read", { uri: "fixture://notes/7" }),
    "not json",
  ];
  await writer.write(new TextEncoder().encode(lines.join("\n") + "\n"));
  await writer.close();
  const { code, stdout } = await child.output();
  assert.equal(code, 0);
  const out = new TextDecoder().decode(stdout);
  assert.ok(out.endsWith("\n"));
  const byId = responses(out.trimEnd().split("\n"), {
    1: [LEGACY, "initialize"],
    2: [LEGACY, "tools/list"],
    3: [MODERN, "resources/read"],
  });
  assert.deepEqual([...byId.keys()].sort(), [1, 2, 3, null].sort());
});

Deno.test("the fixture process ends cleanly on SIGTERM", async () => {
  const child = spawnFixture();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(request(1, "tools/list") + "\n"));
  const reader = child.stdout.getReader();
  let out = "";
  for (let i = 0; i < 1000 && !out.includes("\n"); i++) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  responses([out.trimEnd()], { 1: [MODERN, "tools/list"] });
  child.kill("SIGTERM");
  const status = await child.status;
  assert.equal(status.code, 0);
  assert.equal(status.signal, null, "it exited by itself rather than being killed");
  reader.releaseLock();
  await child.stdout.cancel();
  await child.stderr.cancel();
  await writer.close().catch(() => {});
});

/**
 * The plain reader and writer the CLI hands over (`Deno.stdin`, `Deno.stdout`,
 * not their streams): lines split across reads and longer than one read's
 * buffer, short writes, and an abort while a read is pending.
 */
Deno.test("plain read/write handles: split and long lines, short writes, abort mid-read", async () => {
  const { server } = makeServer({
    catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
    dispatch: echo,
  });
  const encoder = new TextEncoder();
  const long = JSON.stringify({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "z".repeat(200_000) }, _meta: MODERN_META },
  });
  let queued = encoder.encode(request(1, "tools/list") + "\n" + long + "\n" + request(3, "x"));
  let release!: () => void;
  const stalled = new Promise<void>((resolve) => (release = resolve));
  const reads: number[] = [];
  const reader = {
    async read(p: Uint8Array): Promise<number | null> {
      if (queued.length === 0) {
        await stalled; // the client is silent: only the abort can end input now
        return null;
      }
      const n = Math.min(p.length, queued.length, 50_000);
      p.set(queued.subarray(0, n));
      queued = queued.subarray(n);
      reads.push(n);
      return n;
    },
  };
  let out = new Uint8Array(0);
  const writer = {
    write(p: Uint8Array): Promise<number> {
      const n = Math.min(p.length, 7); // a pipe taking a few bytes at a time
      const next = new Uint8Array(out.length + n);
      next.set(out);
      next.set(p.subarray(0, n), out.length);
      out = next;
      return Promise.resolve(n);
    },
  };
  const stop = new AbortController();
  const served = serveStdio(server, { readable: reader, writable: writer, signal: stop.signal });
  while (new TextDecoder().decode(out).split("\n").length < 3) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.ok(reads.length >= 5, `the input came in several reads (${reads})`);
  stop.abort("SIGTERM");
  await served;
  release();
  const lines = new TextDecoder().decode(out).trimEnd().split("\n");
  const byId = responses(lines, { 1: [MODERN, "tools/list"], 2: [MODERN, "tools/call"] });
  // As with a stream: what was read before the abort is answered, the last
  // (unterminated) message too.
  assert.deepEqual([...byId.keys()].sort(), [1, 2, 3]);
  assert.equal((byId.get(3)!.error as { code: number }).code, -32601);
  assert.ok(byId.get(2)!.result, "the 200 kB line was read whole and answered");
});

Deno.test("serveStdio(): a line arriving one byte per read, or in generated splits, is read whole; past the cap refused", async () => {
  const { server } = makeServer({
    catalog: {
      tools: [{
        name: "echo",
        inputSchema: { type: "object", properties: { text: { type: "string" } } },
      }],
      resources: [],
      prompts: [],
    },
    dispatch: (_name, args) => ({ content: [{ type: "text", text: String(args.text) }] }),
  });
  const encoder = new TextEncoder();
  const line = (id: number, size: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "é".repeat(size) }, _meta: MODERN_META },
    });
  let x = 0x5d10;
  const random = (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  for (const split of ["one byte", "generated"] as const) {
    const max = 40_000;
    // Within the cap, just past it (refused, skipped), then within it again.
    const input = encoder.encode(
      [line(1, 15_000), line(2, 20_000), line(3, 100)].join("\n") + "\n",
    );
    let at = 0;
    const reader = {
      read(p: Uint8Array): Promise<number | null> {
        if (at >= input.length) return Promise.resolve(null);
        const n = Math.min(p.length, input.length - at, split === "one byte" ? 1 : 1 + random(700));
        p.set(input.subarray(at, at + n));
        at += n;
        return Promise.resolve(n);
      },
    };
    const out: string[] = [];
    await serveStdio(server, {
      readable: reader,
      writable: {
        write: (p) => {
          out.push(new TextDecoder().decode(p));
          return Promise.resolve(p.length);
        },
      },
      maxLineBytes: max,
    });
    const lines = out.join("").trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 3, split);
    const byId = new Map(lines.map((l) => [l.id ?? "refused", l]));
    assert.equal(byId.get(1).result.content[0].text.length, 15_000, split);
    assert.match(byId.get("refused").error.message, /exceeds 40000 bytes/, split);
    assert.ok(byId.get(3).result, split);
  }
});
