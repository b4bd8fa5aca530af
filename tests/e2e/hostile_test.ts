/**
 * What real clients and hostile inputs send, against the shipped CLI over
 * both transports (`weir serve FILE --stdio` and `--http`, default flags):
 * the protocol-version fallback of older clients, cancellation and reused
 * ids, ids beyond 2^53, echoes of huge values, and values nested thousands
 * deep. Every answer is JSON-RPC and the server keeps serving.
 */
import assert from "node:assert/strict";
import { serveHttp, spawnServeStdio } from "../support/cli.ts";
import { type Recorder, startRecorder } from "../support/upstream.ts";
import { until } from "../support/wait.ts";

const GUARDFILE = `
resource "notes" uri="docs://notes" mime="text/plain" {
    description "Notes."
    audience "assistant"
    text "Some notes."
}
wrap ward mcp hostile {
    base-url { value env "HOSTILE_BASE_URL" }
    auth none
    can get ticket {
        path "/tickets/{id}"
    }
}
`;

const INIT = (id: unknown, version = "2025-11-25") =>
  `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":"${version}",` +
  `"capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`;

/** A guardfile in a temp dir, an upstream whose /tickets/slow waits for `release`. */
async function fixture() {
  const dir = await Deno.makeTempDir({ prefix: "weir-hostile-" });
  const file = `${dir}/hostile.mcp.kdl`;
  await Deno.writeTextFile(file, GUARDFILE);
  const gate = Promise.withResolvers<void>();
  const upstream: Recorder = await startRecorder(async (req) => {
    if (req.path === "/tickets/slow") await gate.promise;
    return Response.json({ id: req.path.slice("/tickets/".length), big: 1 });
  });
  return {
    file,
    env: { HOSTILE_BASE_URL: upstream.url },
    upstream,
    release: () => gate.resolve(),
    async close() {
      gate.resolve();
      await upstream.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** An interactive `weir serve FILE --stdio`: send lines, read answers with a deadline. */
function stdio(file: string, env: Record<string, string>) {
  const child = spawnServeStdio(file, env);
  const writer = child.stdin.getWriter();
  const lines: string[] = [];
  let buffer = "";
  const decoder = new TextDecoder();
  const reading = (async () => {
    for await (const chunk of child.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      let i;
      while ((i = buffer.indexOf("\n")) !== -1) {
        lines.push(buffer.slice(0, i));
        buffer = buffer.slice(i + 1);
      }
    }
  })();
  const stderr = new Response(child.stderr).text();
  return {
    send: (text: string) => writer.write(new TextEncoder().encode(text + "\n")),
    /** Wait (bounded: GENEROUS_MS) until `n` lines have arrived; returns them all. */
    async read(n: number): Promise<string[]> {
      await until(() => lines.length >= n, { stepMs: 20 });
      assert.ok(lines.length >= n, `expected ${n} lines, got ${lines.length}: ${lines.join("\n")}`);
      return [...lines];
    },
    lines: () => [...lines],
    async close(): Promise<{ code: number; stderr: string }> {
      await writer.close().catch(() => {});
      const status = await child.status;
      await reading;
      return { code: status.code, stderr: await stderr };
    },
  };
}

const call = (id: unknown, ticket: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"get_ticket","arguments":{"id":"${ticket}"}}}`;

Deno.test({
  name: "stdio: a cancelled request is not answered; a reused id waits its turn",
  sanitizeResources: false,
  fn: async () => {
    const fx = await fixture();
    const io = stdio(fx.file, fx.env);
    try {
      await io.send(INIT(1));
      await io.read(1);
      await io.send(call(11, "slow"));
      // Wait until the upstream has the request, then cancel it.
      await until(() => fx.upstream.requests.length > 0, { stepMs: 20 });
      assert.equal(fx.upstream.requests.length, 1);
      await io.send(
        `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":11,"reason":"stop"}}`,
      );
      await io.send(`{"jsonrpc":"2.0","id":12,"method":"ping"}`);
      const after = await io.read(2);
      assert.deepEqual(JSON.parse(after[1]), { jsonrpc: "2.0", id: 12, result: {} });

      // Two requests in flight with one id: answered in request order.
      await io.send(call(20, "slow"));
      await io.send(call(20, "fast"));
      await io.send(`{"jsonrpc":"2.0","id":21,"method":"ping"}`);
      await io.read(3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      fx.release();
      const all = await io.read(5);
      assert.equal(all.length, 5, "nothing answered request 11");
      const twenties = all.map((l) => JSON.parse(l)).filter((m) => m.id === 20);
      assert.equal(twenties.length, 2);
      assert.match(twenties[0].result.content[0].text, /"id":"slow"/);
      assert.match(twenties[1].result.content[0].text, /"id":"fast"/);
      assert.ok(!all.some((l) => JSON.parse(l).id === 11), "request 11 was cancelled");
    } finally {
      const { code } = await io.close();
      assert.equal(code, 0);
      await fx.close();
    }
  },
});

/** Ids a client may send, with the exact text that must come back. */
const EXACT_IDS = [
  "9007199254740993",
  "-9007199254740993",
  "12345678901234567890123",
  "1.0",
  "1e3",
];

Deno.test("ids come back exactly as sent, beyond 2^53 and however spelled (stdio and HTTP)", async () => {
  const fx = await fixture();
  const served = await serveHttp(fx.file, { env: fx.env });
  const io = stdio(fx.file, fx.env);
  try {
    for (const id of EXACT_IDS) {
      const res = await fetch(`${served.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: INIT(id),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.ok(text.includes(`"id":${id},`), `HTTP id ${id}: ${text}`);
      await io.send(INIT(id));
    }
    // An error answer keeps the id exact too.
    await io.send(`{"jsonrpc":"2.0","id":9007199254740993,"method":"no/such"}`);
    const lines = await io.read(EXACT_IDS.length + 1);
    EXACT_IDS.forEach((id, i) => {
      assert.ok(lines[i].includes(`"id":${id},`), `stdio id ${id}: ${lines[i]}`);
    });
    assert.ok(lines.at(-1)!.includes(`"id":9007199254740993,`), lines.at(-1));
    assert.equal(JSON.parse(lines.at(-1)!).error.code, -32601);
  } finally {
    await io.close();
    assert.equal(await served.stop(), 0);
    await fx.close();
  }
});

Deno.test("HTTP: after initialize at 2025-03-26, requests without MCP-Protocol-Version are served as 2025-03-26", async () => {
  const fx = await fixture();
  const served = await serveHttp(fx.file, { env: fx.env });
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body,
    });
  try {
    const init = await post(INIT(1, "2025-03-26"));
    assert.equal((await init.json()).result.protocolVersion, "2025-03-26");
    for (const method of ["tools/list", "resources/list", "ping"]) {
      const res = await post(`{"jsonrpc":"2.0","id":2,"method":"${method}"}`);
      const body = await res.json();
      assert.equal(res.status, 200, `${method}: ${JSON.stringify(body)}`);
      assert.ok("result" in body, method);
      assert.equal(body.result.resultType, undefined, "served under a handshake revision");
    }
    const listed = await (await post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)).json();
    assert.deepEqual(listed.result.tools.map((t: { name: string }) => t.name), [
      "get_ticket",
      "weir_info",
    ]);
    // A header naming a version weir does not serve is still 400.
    const bad = await post(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, {
      "mcp-protocol-version": "1999-01-01",
    });
    assert.equal(bad.status, 400);
    const badBody = await bad.json();
    assert.match(badBody.error.message, /Unsupported MCP-Protocol-Version header: 1999-01-01/);
  } finally {
    assert.equal(await served.stop(), 0);
    await fx.close();
  }
});

/** An array nested `depth` deep. */
const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

Deno.test("never crash at any depth, never echo unbounded: stdio and HTTP keep answering in JSON-RPC", async () => {
  const fx = await fixture();
  const served = await serveHttp(fx.file, { env: fx.env });
  const io = stdio(fx.file, fx.env);
  const huge = "docs://" + "x".repeat(100_000);
  const hostile = [
    // A cursor 6,000 deep (once killed the stdio server).
    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":${deep(6000)}}}`,
    // Deep _meta, deep params elsewhere, a deep log level.
    `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":${
      deep(6000)
    }}}}`,
    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_ticket","arguments":{"id":${
      deep(6000)
    }}}}`,
    `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"${huge}"}}`,
    `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"${"n".repeat(100_000)}"}}`,
    `{"jsonrpc":"2.0","id":6,"method":"${"m".repeat(100_000)}"}`,
    `{"jsonrpc":"2.0","id":${deep(6000)},"method":"ping"}`,
    `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"${"c".repeat(100_000)}"}}`,
  ];
  try {
    await io.send(INIT(0));
    for (const [i, line] of hostile.entries()) {
      await io.send(line);
      await io.send(`{"jsonrpc":"2.0","id":"after-${i}","method":"ping"}`);
      const res = await fetch(`${served.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "mcp-protocol-version": "2025-11-25",
        },
        body: line,
      });
      assert.match(res.headers.get("content-type") ?? "", /application\/json/, `HTTP ${i}`);
      const text = await res.text();
      const body = JSON.parse(text);
      assert.equal(body.jsonrpc, "2.0", `HTTP ${i}`);
      assert.ok(text.length < 4096, `HTTP ${i} echoes ${text.length} characters`);
      // A value nested past the bound is invalid params naming where, never an internal error.
      assert.notEqual(body.error?.code, -32603, `HTTP ${i}: ${text.slice(0, 300)}`);
      if (i <= 2) {
        assert.equal(body.error?.code, -32602, `HTTP ${i}: ${text.slice(0, 300)}`);
        assert.match(body.error.message, /^params[.[].* nests deeper than \d+ levels/);
      }
    }
    const lines = (await io.read(hostile.length * 2 + 1)).slice(1);
    for (const [i, line] of lines.entries()) {
      const body = JSON.parse(line);
      assert.equal(body.jsonrpc, "2.0");
      assert.ok(line.length < 4096, `stdio line ${i} echoes ${line.length} characters`);
      assert.notEqual(body.error?.code, -32603, `stdio line ${i}: ${line.slice(0, 300)}`);
      if ([1, 2, 3].includes(body.id)) {
        assert.equal(body.error?.code, -32602, `stdio id ${body.id}: ${line.slice(0, 300)}`);
        assert.match(body.error.message, /^params[.[].* nests deeper than \d+ levels/);
      }
    }
    for (let i = 0; i < hostile.length; i++) {
      assert.ok(lines.some((l) => JSON.parse(l).id === `after-${i}`), `still serving after ${i}`);
    }
    const notFound = lines.map((l) => JSON.parse(l)).find((m) => m.id === 4);
    assert.equal(notFound.error.code, -32002);
    assert.ok(notFound.error.data.uri.length <= 120);
    // The tool API answers JSON too, bounded, whatever the depth or size.
    for (
      const [path, body] of [
        ["/api/get_ticket", `{"id":${deep(6000)}}`],
        ["/api/get_ticket", deep(6000)],
        [`/api/${"n".repeat(20_000)}`, "{}"],
        ["/api/get_ticket", `{"${"k".repeat(100_000)}":1}`],
      ]
    ) {
      const res = await fetch(`${served.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${text.slice(0, 200)}`);
      assert.ok(text.length < 4096, `tool API echoes ${text.length} characters`);
      JSON.parse(text);
    }
    // HTTP is still up, too.
    const health = await fetch(`${served.url}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
  } finally {
    const { code, stderr } = await io.close();
    assert.equal(code, 0, stderr);
    assert.equal(await served.stop(), 0);
    await fx.close();
  }
});
