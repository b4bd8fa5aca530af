/**
 * The attacking client of bench/chunked_body.ts, run as a worker (its own
 * thread and event loop): one connection sends a `tools/call` padded to `kib`
 * KiB as HTTP/1.1 chunks of `chunk` bytes, `perWrite` chunks per socket
 * write, reads the answer meanwhile, and posts back what it saw.
 *
 * @module
 */
/// <reference lib="deno.worker" />

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A `tools/call` of get_thing, padded with spaces to exactly `size` bytes. */
function paddedCall(size: number): Uint8Array {
  const text = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "get_thing", arguments: { id: "t-1" }, _meta: META },
  });
  const bytes = new Uint8Array(Math.max(size, text.length)).fill(0x20);
  bytes.set(encoder.encode(text.slice(0, -1)));
  bytes[bytes.length - 1] = 0x7d; // the closing brace last
  return bytes;
}

const HEAD = (port: number) =>
  encoder.encode(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n` +
      `Mcp-Method: tools/call\r\nMcp-Name: get_thing\r\nConnection: close\r\n` +
      `Transfer-Encoding: chunked\r\n\r\n`,
  );

interface Job {
  port: number;
  kib: number;
  chunk: number;
  perWrite: number;
  timeoutMs: number;
}

self.onmessage = async (event: MessageEvent<Job>) => {
  const { port, kib, chunk, perWrite, timeoutMs } = event.data;
  const body = paddedCall(kib * 1024);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const started = performance.now();
  let sentAt = NaN;
  let bytesSent = 0;
  const answer = (async () => {
    const buf = new Uint8Array(65536);
    let text = "";
    try {
      while (!/\r\n\r\n[\s\S]*\}/.test(text)) {
        const n = await conn.read(buf);
        if (n === null) break;
        text += decoder.decode(buf.subarray(0, n));
      }
    } catch { /* reset after the answer */ }
    return { text, at: performance.now() };
  })();
  const writing = (async () => {
    try {
      await conn.write(HEAD(port));
      for (let at = 0; at < body.length; at += chunk * perWrite) {
        const parts: Uint8Array[] = [];
        for (let i = at; i < Math.min(at + chunk * perWrite, body.length); i += chunk) {
          const piece = body.subarray(i, Math.min(i + chunk, body.length));
          parts.push(
            encoder.encode(`${piece.length.toString(16)}\r\n`),
            piece,
            encoder.encode("\r\n"),
          );
        }
        const frame = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
        let o = 0;
        for (const p of parts) {
          frame.set(p, o);
          o += p.length;
        }
        for (let w = 0; w < frame.length;) w += await conn.write(frame.subarray(w));
        bytesSent = Math.min(at + chunk * perWrite, body.length);
      }
      await conn.write(encoder.encode("0\r\n\r\n"));
    } catch { /* the server reset the connection */ }
    sentAt = performance.now();
  })();
  const timeout = new Promise<null>((r) => setTimeout(() => r(null), timeoutMs));
  const got = await Promise.race([answer, timeout]);
  await Promise.race([writing, timeout]);
  try {
    conn.close();
  } catch { /* closed */ }
  if (got === null || got.text === "") {
    self.postMessage({ status: 0, rule: "", answeredMs: NaN, afterSendMs: NaN, bytesSent });
    return;
  }
  self.postMessage({
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got.text)?.[1] ?? 0),
    rule: /"(?:code|rule)":"([a-z_]+)"/.exec(got.text)?.[1] ?? "",
    answeredMs: got.at - started,
    afterSendMs: Number.isNaN(sentAt) ? 0 : Math.max(0, got.at - sentAt),
    bytesSent,
  });
};
