/**
 * The inbound body cap holds at boundary-1, boundary and boundary+1 however
 * the bytes arrive: a body of exactly the cap is served, one byte more is
 * 413, with Content-Length and with chunked framing, sent in one write, byte
 * by byte around the boundary, or at generated cut points (a raw TCP client
 * against a real `Deno.serve` listener running the core's handler).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { createHttpHandler, McpServer } from "../../mod.ts";

const enc = new TextEncoder();
const CAP = 4096;

const mcp = new McpServer({
  name: "cap",
  log: () => {},
  catalog: {
    tools: [{ name: "t", inputSchema: { type: "object" } }],
    resources: [],
    prompts: [],
  },
  dispatch: () => ({ content: [] }),
});
const handler = createHttpHandler(mcp, {
  authorize: () => true,
  allowedOrigins: [],
  maxBodyBytes: CAP,
});

/** A tools/list request of exactly `size` bytes. */
function ping(size: number): string {
  const bare =
    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`;
  return bare.slice(0, -1) + " ".repeat(size - bare.length) + "}";
}

function request(port: number, body: string, framing: "length" | "chunked"): Uint8Array {
  const head =
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
    `accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n` +
    `mcp-method: tools/list\r\nconnection: close\r\n`;
  if (framing === "length") {
    return enc.encode(`${head}content-length: ${enc.encode(body).length}\r\n\r\n${body}`);
  }
  const chunks = body.match(/.{1,500}/gs)!.map((c) => `${c.length.toString(16)}\r\n${c}\r\n`);
  return enc.encode(`${head}transfer-encoding: chunked\r\n\r\n${chunks.join("")}0\r\n\r\n`);
}

async function send(port: number, bytes: Uint8Array, cuts: number[]): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      if (cut <= from || cut > bytes.length) continue;
      try {
        let off = from;
        while (off < cut) off += await conn.write(bytes.subarray(off, cut));
      } catch {
        break; // the server may answer 413 and close before the rest is written
      }
      from = cut;
      if (cut < bytes.length) await new Promise((r) => setTimeout(r, 2));
    }
    const buf = new Uint8Array(4096);
    let text = "";
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
      if (/^HTTP\/1\.1 \d{3}/.test(text)) break;
    }
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

Deno.test("createHttpHandler(): the body cap holds at its boundary for every framing and split", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const port = server.addr.port;
  try {
    for (const framing of ["length", "chunked"] as const) {
      for (const delta of [-1, 0, 1]) {
        const bytes = request(port, ping(CAP + delta), framing);
        const bodyStart = new TextDecoder().decode(bytes).indexOf("\r\n\r\n") + 4;
        const around = bodyStart + CAP;
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              fc.constant([] as number[]),
              fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 6 })
                .map((c) => c.sort((a, b) => a - b)),
              fc.constant(Array.from({ length: 8 }, (_, i) => around - 4 + i)),
            ),
            async (cuts) => {
              const status = await send(port, bytes, cuts);
              if (delta <= 0) assert.equal(status, 200, `${framing} ${CAP + delta}: ${status}`);
              else {assert.equal(
                  status,
                  413,
                  `${framing}: ${CAP + delta} bytes (cuts ${cuts}) -> ${status}`,
                );}
            },
          ),
          { numRuns: 6 },
        );
      }
    }
  } finally {
    await server.shutdown();
  }
});
