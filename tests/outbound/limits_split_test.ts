/**
 * Every limit of weir's HTTP/1.1 upstream client holds exactly at its
 * boundary however the bytes arrive: answers built at boundary-1, boundary
 * and boundary+1, written by a raw TCP server in one write or split at
 * generated points (each piece its own write, a pause between, so the client
 * sees separate reads). Limits: the answer head (64 KiB), one chunk framing
 * line (8 KiB), chunk extensions and trailers together (64 KiB), and the
 * body cap under each framing (Content-Length, chunked, until close, gzip).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { gzipSync } from "node:zlib";
import {
  Http1Client,
  Http1Error,
  MAX_CHUNK_LINE_BYTES,
  MAX_HEAD_BYTES,
} from "../../src/outbound/http1_client.ts";

const enc = new TextEncoder();

/** A server answering each request with `answer()`, written in the pieces `cuts` gives. */
function splitServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let next: { bytes: Uint8Array; cuts: number[] } = { bytes: new Uint8Array(), cuts: [] };
  const open = new Set<Deno.Conn>();
  const loop = (async () => {
    for await (const conn of listener) {
      open.add(conn);
      (async () => {
        const buf = new Uint8Array(65536);
        let seen = "";
        while (!seen.includes("\r\n\r\n")) {
          const n = await conn.read(buf);
          if (n === null) return;
          seen += new TextDecoder().decode(buf.subarray(0, n));
        }
        const { bytes, cuts } = next;
        let from = 0;
        for (const cut of [...cuts, bytes.length]) {
          if (cut <= from) continue;
          await writeAll(conn, bytes.subarray(from, cut));
          from = cut;
          if (cut < bytes.length) await new Promise((r) => setTimeout(r, 2));
        }
      })().catch(() => {}).finally(() => {
        open.delete(conn);
        try {
          conn.close();
        } catch { /* closed */ }
      });
    }
  })();
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    url: new URL(`http://127.0.0.1:${port}/x`),
    answer(bytes: Uint8Array, cuts: number[]) {
      next = { bytes, cuts };
    },
    async close() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* gone */ }
      }
      await loop.catch(() => {});
    },
  };
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

/** Split points of a byte string: none (one write), a few generated ones, or every byte near `around`. */
const cutsOf = (length: number, around: number) =>
  fc.oneof(
    fc.constant([] as number[]),
    fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, length - 1) }), { maxLength: 6 })
      .map((c) => c.sort((a, b) => a - b)),
    fc.constant(
      Array.from({ length: 8 }, (_, i) => around - 4 + i).filter((c) => c > 0 && c < length),
    ),
  );

const BOUNDARY = [-1, 0, 1];

type Outcome = { ok: true; body: Uint8Array | null } | { ok: false; error: Http1Error };

async function fetchOnce(
  server: ReturnType<typeof splitServer>,
  bytes: Uint8Array,
  cuts: number[],
  maxBodyBytes = 1 << 20,
): Promise<Outcome> {
  server.answer(bytes, cuts);
  const client = new Http1Client();
  try {
    const r = await client.request({
      method: "GET",
      url: server.url,
      headers: [["connection", "close"]],
      signal: AbortSignal.timeout(20_000),
      maxBodyBytes,
    });
    return { ok: true, body: r.body };
  } catch (error) {
    if (error instanceof Http1Error) return { ok: false, error };
    throw error;
  } finally {
    client.close();
  }
}

/** An answer whose head (status line through the empty line) is exactly `size` bytes. */
function headOf(size: number): Uint8Array {
  const fixed = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nx-pad: \r\n\r\n";
  return enc.encode(fixed.replace("x-pad: ", `x-pad: ${"a".repeat(size - fixed.length)}`));
}

Deno.test("http1: the 64 KiB head cap holds at boundary-1, boundary, boundary+1, however the head arrives", async () => {
  const server = splitServer();
  try {
    for (const delta of BOUNDARY) {
      const size = MAX_HEAD_BYTES + delta;
      const bytes = headOf(size);
      assert.equal(bytes.length, size);
      await fc.assert(
        fc.asyncProperty(cutsOf(bytes.length, MAX_HEAD_BYTES), async (cuts) => {
          const out = await fetchOnce(server, bytes, cuts);
          if (delta <= 0) {
            assert.ok(out.ok, `${size} bytes refused: ${!out.ok && out.error.message}`);
          } else {
            assert.ok(!out.ok, `${size}-byte head accepted (cuts ${cuts})`);
            assert.match(out.error.message, /head is over 65536 bytes/);
          }
        }),
        { numRuns: 6 },
      );
    }
  } finally {
    await server.close();
  }
});

Deno.test("http1: one chunk framing line is at most 8 KiB however it arrives", async () => {
  const server = splitServer();
  try {
    for (const delta of BOUNDARY) {
      // "5;" + extension: the line (without CRLF) is MAX_CHUNK_LINE_BYTES + delta bytes.
      const line = `5;${"e".repeat(MAX_CHUNK_LINE_BYTES + delta - 2)}`;
      const text =
        `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${line}\r\nhello\r\n0\r\n\r\n`;
      const bytes = enc.encode(text);
      const at = text.indexOf(line) + line.length;
      await fc.assert(
        fc.asyncProperty(cutsOf(bytes.length, at), async (cuts) => {
          const out = await fetchOnce(server, bytes, cuts);
          if (delta <= 0) {
            assert.ok(out.ok, `line of ${line.length} refused: ${!out.ok && out.error.message}`);
            assert.equal(new TextDecoder().decode(out.body!), "hello");
          } else {
            assert.ok(!out.ok, `a ${line.length}-byte chunk line accepted (cuts ${cuts})`);
            assert.match(out.error.message, /over-long chunk line/);
          }
        }),
        { numRuns: 6 },
      );
    }
  } finally {
    await server.close();
  }
});

Deno.test("http1: chunk extensions and trailers together are at most 64 KiB however they arrive", async () => {
  const server = splitServer();
  try {
    for (const delta of BOUNDARY) {
      // Trailer lines of 8000 bytes (line ends not counted) up to MAX_HEAD_BYTES + delta.
      let left = MAX_HEAD_BYTES + delta;
      const trailers: string[] = [];
      while (left > 0) {
        const n = Math.min(8000, left);
        trailers.push(`x: ${"t".repeat(n - 3)}`);
        left -= n;
      }
      const text = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n` +
        trailers.map((t) => `${t}\r\n`).join("") + "\r\n";
      const bytes = enc.encode(text);
      await fc.assert(
        fc.asyncProperty(cutsOf(bytes.length, bytes.length - 10), async (cuts) => {
          const out = await fetchOnce(server, bytes, cuts);
          if (delta <= 0) assert.ok(out.ok, `refused at ${delta}: ${!out.ok && out.error.message}`);
          else {
            assert.ok(!out.ok, `trailers of 64 KiB + 1 accepted (cuts ${cuts})`);
            assert.match(out.error.message, /chunk extensions and trailer fields are over 65536/);
          }
        }),
        { numRuns: 5 },
      );
    }
  } finally {
    await server.close();
  }
});

Deno.test("http1: the body cap holds at its boundary under every framing and split", async () => {
  const server = splitServer();
  const cap = 3000;
  const framings: Record<string, (body: Uint8Array) => Uint8Array> = {
    "content-length": (body) =>
      concat(enc.encode(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n`), body),
    chunked: (body) => {
      const parts: Uint8Array[] = [
        enc.encode("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"),
      ];
      for (let i = 0; i < body.length; i += 700) {
        const piece = body.subarray(i, i + 700);
        parts.push(enc.encode(`${piece.length.toString(16)}\r\n`), piece, enc.encode("\r\n"));
      }
      parts.push(enc.encode("0\r\n\r\n"));
      return concat(...parts);
    },
    "until close": (body) =>
      concat(enc.encode("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n"), body),
    gzip: (body) => {
      const coded = new Uint8Array(gzipSync(body));
      return concat(
        enc.encode(
          `HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${coded.length}\r\n\r\n`,
        ),
        coded,
      );
    },
  };
  try {
    for (const [framing, frame] of Object.entries(framings)) {
      for (const delta of BOUNDARY) {
        const body = enc.encode("b".repeat(cap + delta));
        const bytes = frame(body);
        await fc.assert(
          fc.asyncProperty(cutsOf(bytes.length, bytes.length - 2), async (cuts) => {
            const out = await fetchOnce(server, bytes, cuts, cap);
            assert.ok(out.ok, `${framing} ${cap + delta}: ${!out.ok && out.error.message}`);
            if (delta <= 0) {
              assert.equal(out.body?.length, cap + delta, `${framing} ${cap + delta}`);
            } else {assert.equal(
                out.body,
                null,
                `${framing}: ${cap + delta} bytes passed a ${cap} cap`,
              );}
          }),
          { numRuns: 5 },
        );
      }
    }
  } finally {
    await server.close();
  }
});

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
