/**
 * A body's reading cost is bounded by its size, not by how it was framed
 * (issue 22, kind 18), through `weir serve` with default flags: a valid
 * `tools/call` sent as HTTP/1.1 chunks of 1 byte is refused with 400 (rule
 * `framing`) after at most the documented budget of pieces, on `/mcp` and on
 * `/api`, while `/healthz` keeps answering; generated chunk sizes within the
 * budget are served whole. (How long any of it takes is bench/chunked_body.ts's
 * business: nothing here is timed.)
 */
import assert from "node:assert/strict";
import { serveHttp } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { parseResponse } from "../support/raw_http.ts";
import { BODY_PIECES } from "../../src/inbound/checks.ts";

const encoder = new TextEncoder();
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** `text` padded with spaces before its closing brace to `size` bytes. */
function padded(text: string, size: number): Uint8Array {
  const bytes = new Uint8Array(Math.max(size, text.length)).fill(0x20);
  bytes.set(encoder.encode(text.slice(0, -1)));
  bytes[bytes.length - 1] = 0x7d;
  return bytes;
}

/**
 * POST `body` as chunks of `chunk` bytes, `perWrite` chunks to a socket write,
 * reading the answer meanwhile (a refusal may come, and the connection be
 * reset, before all is sent).
 */
async function sendChunked(
  port: number,
  path: string,
  headers: string,
  body: Uint8Array,
  chunk: number,
  perWrite = 16,
) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const reading = (async () => {
    const parts: number[] = [];
    const buf = new Uint8Array(65536);
    try {
      for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
        parts.push(...buf.subarray(0, n));
        const text = new TextDecoder().decode(new Uint8Array(parts));
        if (/\r\n\r\n[\s\S]*\}\s*(0\r\n\r\n)?$/.test(text)) break;
      }
    } catch { /* reset after the answer */ }
    return parseResponse(new TextDecoder().decode(new Uint8Array(parts)));
  })();
  let sent = 0;
  try {
    await conn.write(encoder.encode(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n${headers}` +
        `Transfer-Encoding: chunked\r\n\r\n`,
    ));
    for (let at = 0; at < body.length; at += chunk * perWrite) {
      const frames: number[] = [];
      for (let i = at; i < Math.min(at + chunk * perWrite, body.length); i += chunk) {
        const piece = body.subarray(i, Math.min(i + chunk, body.length));
        frames.push(...encoder.encode(`${piece.length.toString(16)}\r\n`), ...piece, 13, 10);
      }
      await conn.write(new Uint8Array(frames));
      sent = Math.min(at + chunk * perWrite, body.length);
    }
    await conn.write(encoder.encode("0\r\n\r\n"));
  } catch { /* the server refused and reset the connection */ }
  const answer = await reading;
  try {
    conn.close();
  } catch { /* closed */ }
  return { answer, sent };
}

Deno.test("a body in 1-byte chunks is refused after the piece budget; /healthz answers meanwhile; larger chunks are served", async () => {
  const upstream = await startRecorder(() => Response.json({ id: "t-1" }));
  const file = await Deno.makeTempFile({ suffix: ".mcp.kdl" });
  await Deno.writeTextFile(
    file,
    `wrap ward mcp frag {\n  base-url "${upstream.url}"\n  auth none\n` +
      `  can get thing { path "/things/{id}"; }\n}\n`,
  );
  const served = await serveHttp(file);
  const port = Number(new URL(served.url).port);
  const mcpHeaders = "Content-Type: application/json\r\nAccept: application/json, " +
    "text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n" +
    "Mcp-Name: get_thing\r\n";
  const call = JSON.stringify({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "get_thing", arguments: { id: "t-1" }, _meta: META },
  });
  try {
    for (
      const [path, headers, text] of [
        ["/mcp", mcpHeaders, call],
        ["/api/get_thing", "Content-Type: application/json\r\n", `{"id":"t-1"}`],
      ] as const
    ) {
      // 256 KiB in 1-byte chunks, while a legitimate client asks for /healthz.
      const attack = sendChunked(port, path, headers, padded(text, 256 * 1024), 1);
      const health = await fetch(`${served.url}/healthz`);
      assert.equal(health.status, 200, "another client is answered meanwhile");
      await health.body?.cancel();
      const { answer, sent } = await attack;
      assert.equal(answer.status, 400, `${path}: ${answer.body}`);
      const body = JSON.parse(answer.body);
      const rule = path === "/mcp" ? body.error.data.rule : body.error.code;
      assert.equal(rule, "framing", answer.body);
      const pieces = Number(/arrived in (\d+) pieces for (\d+) bytes/.exec(answer.body)?.[1]);
      const bytes = Number(/arrived in \d+ pieces for (\d+) bytes/.exec(answer.body)?.[1]);
      assert.ok(
        pieces - BODY_PIECES.free <= bytes / BODY_PIECES.minAverage + 1,
        `${path}: stopped at the budget (${pieces} pieces for ${bytes} bytes)`,
      );
      assert.ok(sent < 256 * 1024, `${path}: refused before the whole body was sent (${sent})`);
    }
    // Generated chunk sizes well within the budget: served whole, on both routes.
    let x = 0x18;
    const random = (n: number) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    for (let i = 0; i < 6; i++) {
      const chunk = 256 + random(4096);
      const size = 1024 + random(512 * 1024);
      const { answer } = await sendChunked(port, "/mcp", mcpHeaders, padded(call, size), chunk);
      assert.equal(answer.status, 200, `${size} bytes in ${chunk}-byte chunks: ${answer.body}`);
      assert.equal(JSON.parse(answer.body).id, 7);
    }
  } finally {
    assert.equal(await served.stop(), 0);
    await upstream.close();
    await Deno.remove(file);
  }
  assert.match(served.stderr(), /"rule":"framing","status":400/);
});
