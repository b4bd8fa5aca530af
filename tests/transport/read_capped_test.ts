/**
 * readCapped, the read path of request bodies over 64 KiB and of chunked
 * ones: the exact bytes across any chunk boundaries (byte streams read with
 * a BYOB reader, other streams with a default reader), whatever the declared
 * length says; more than the cap refused and the stream cancelled; an abort
 * rejects at once and cancels the stream between reads (never under a pending
 * one). Then through a real `Deno.serve` listener and the MCP handler,
 * with a raw TCP client sending irregular pieces: `authorizeBody` sees
 * exactly the bytes sent.
 */
import assert from "node:assert/strict";
import { FragmentedStreamError, readCapped } from "../../src/transport/bytes.ts";
import { createHttpHandler, loopbackHosts } from "../../mod.ts";
import { listen } from "../support/listen.ts";
import { until } from "../support/wait.ts";
import { makeServer, MODERN_META } from "../support/mcp.ts";

/** Deterministic pseudo-random bytes (no two neighbouring chunks alike). */
function bytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed * 2654435761 >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** Cut `data` into pieces of the given sizes (cycled), the last one what remains. */
function pieces(data: Uint8Array, sizes: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0, i = 0; at < data.length; i++) {
    const size = sizes[i % sizes.length];
    out.push(data.slice(at, at + size));
    at += size;
  }
  return out;
}

/**
 * A stream of `chunks`, a byte stream or not; records whether it was
 * cancelled, and whether it had already closed itself (sent its last chunk
 * and was pulled again: a stream may pull ahead of its reader, more or less
 * depending on when the reader yields).
 */
function source(chunks: Uint8Array[], byteStream: boolean) {
  const state = { cancelled: false, closed: false, pulled: 0 };
  let i = 0;
  const stream = new ReadableStream<Uint8Array>(
    byteStream
      ? {
        type: "bytes",
        pull(controller) {
          state.pulled++;
          if (i < chunks.length) controller.enqueue(chunks[i++].slice());
          else {
            // A byte stream's pending BYOB read ends with respond(0) after close().
            state.closed = true;
            controller.close();
            (controller as ReadableByteStreamController).byobRequest?.respond(0);
          }
        },
        cancel() {
          state.cancelled = true;
        },
      }
      : {
        pull(controller) {
          state.pulled++;
          if (i < chunks.length) controller.enqueue(chunks[i++].slice());
          else {
            state.closed = true;
            controller.close();
          }
        },
        cancel() {
          state.cancelled = true;
        },
      },
  );
  return { stream, state };
}

const SIZES = [[1], [7, 65_536, 3], [65_537], [100_000, 1, 250_000], [4096]];

for (const byteStream of [true, false]) {
  const kind = byteStream ? "byte stream" : "default stream";

  Deno.test(`readCapped (${kind}): exact bytes across chunk boundaries, any declared length`, async () => {
    const max = 1024 * 1024;
    for (const [n, length] of [0, 1, 63, 64, 65, 65_536, 65_600, 300_001, max].entries()) {
      const data = bytes(length, n + 1);
      for (const sizes of SIZES) {
        if (sizes[0] === 1 && length > 70_000) continue; // a million 1-byte reads: too slow
        for (const hint of [undefined, length, 0, Math.floor(length / 2), length + 1000, max + 1]) {
          const { stream, state } = source(pieces(data, sizes), byteStream);
          const got = await readCapped(stream, max, { sizeHint: hint });
          assert.ok(got, `${length} bytes in pieces ${sizes}, hint ${hint}: refused`);
          assert.equal(got.byteLength, length, `${length} bytes, pieces ${sizes}, hint ${hint}`);
          assert.deepEqual(got, data, `${length} bytes, pieces ${sizes}, hint ${hint}`);
          assert.equal(state.cancelled, false);
        }
      }
    }
  });

  Deno.test(`readCapped (${kind}): past the cap it is null and the stream is cancelled`, async () => {
    const max = 200_000;
    for (const sizes of SIZES.slice(1)) {
      for (const hint of [undefined, max, 1000]) {
        const over = source(pieces(bytes(max + 1, 9), sizes), byteStream);
        assert.equal(await readCapped(over.stream, max, { sizeHint: hint }), null);
        // Cancelled, unless the stream had already ended on its own (nothing left to cancel).
        assert.ok(
          over.state.cancelled || over.state.closed,
          `pieces ${sizes}, hint ${hint}: left open, not cancelled`,
        );
        // It stopped reading at the cap, not at the end of a longer stream.
        const endless = source(pieces(bytes(10 * max, 3), sizes), byteStream);
        assert.equal(await readCapped(endless.stream, max, { sizeHint: hint }), null);
        assert.ok(endless.state.pulled < max / Math.min(...sizes) + 10, "read on past the cap");
        assert.equal(endless.state.cancelled, true, `pieces ${sizes}, hint ${hint}: not cancelled`);
        const exact = source(pieces(bytes(max, 5), sizes), byteStream);
        assert.deepEqual(await readCapped(exact.stream, max, { sizeHint: hint }), bytes(max, 5));
      }
    }
  });
}

for (const byteStream of [true, false]) {
  const kind = byteStream ? "byte stream" : "default stream";
  Deno.test(`readCapped (${kind}): the piece budget holds exactly at its boundary, for generated framings`, async () => {
    // free reads, then one per minAverage bytes: reads - free <= bytes / minAverage.
    const budget = { free: 16, minAverage: 8 };
    let x = 0x18;
    const random = (n: number) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    for (let trial = 0; trial < 200; trial++) {
      // Equal pieces of `size` bytes, `count` of them: the budget allows them
      // when count (plus the read that sees the end) fits.
      const size = 1 + random(16);
      const count = 1 + random(80);
      const data = bytes(size * count, trial + 1);
      const { stream, state } = source(pieces(data, [size]), byteStream);
      const reads = count + 1; // the last read sees the end
      const allowed = reads <= budget.free ||
        // checked before each read: read k (1-based) needs k-1-free <= bytes so far / minAverage
        Array.from({ length: reads }, (_, k) => k).every((k) =>
          k <= budget.free || k - budget.free <= Math.min(k, count) * size / budget.minAverage
        );
      try {
        const got = await readCapped(stream, 1 << 20, { pieces: budget });
        assert.ok(allowed, `${count} pieces of ${size} bytes were read whole`);
        assert.deepEqual(got, data);
      } catch (error) {
        assert.ok(error instanceof FragmentedStreamError, String(error));
        assert.ok(!allowed, `${count} pieces of ${size} bytes were refused: ${error.message}`);
        assert.ok(error.reads - budget.free > error.bytes / budget.minAverage);
        assert.ok(error.reads <= budget.free + error.bytes / budget.minAverage + 1);
        assert.equal(state.cancelled, true, "the stream is cancelled");
      }
    }
  });
}

Deno.test("readCapped: 1-byte pieces stop at the budget, whatever follows", async () => {
  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    type: "bytes",
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array([0x20]));
    },
  });
  await assert.rejects(
    readCapped(endless, 1 << 20, { pieces: { free: 1024, minAverage: 64 } }),
    (e) => e instanceof FragmentedStreamError && e.reads <= 1024 + 1 + e.bytes / 64 + 1,
  );
  assert.ok(pulled < 1100, `read ${pulled} pieces of 1 byte`);
});

Deno.test("readCapped: an abort rejects at once; the stream is cancelled between reads, never under one", async () => {
  const state = { cancelled: false, cancelledUnderRead: false, pending: false };
  let deliver: (() => void) | undefined;
  const stream = new ReadableStream<Uint8Array>({
    type: "bytes",
    start(controller) {
      controller.enqueue(new Uint8Array(10));
    },
    pull(controller) {
      state.pending = true;
      // The next piece comes only when the test says so.
      return new Promise<void>((resolve) => {
        deliver = () => {
          state.pending = false;
          controller.enqueue(new Uint8Array(5));
          resolve();
        };
      });
    },
    cancel() {
      state.cancelled = true;
      state.cancelledUnderRead = state.pending;
    },
  });
  const controller = new AbortController();
  const reason = new Error("deadline");
  const reading = readCapped(stream, 1000, { signal: controller.signal });
  assert.ok(await until(() => state.pending), "a read is pending");
  controller.abort(reason);
  await assert.rejects(reading, (e) => e === reason);
  assert.equal(state.cancelled, false, "not cancelled while its read is pending");
  deliver!();
  assert.ok(await until(() => state.cancelled), "cancelled once the read settled");
  assert.equal(state.cancelledUnderRead, false);
});

Deno.test("readCapped: a signal aborted before the first read rejects, and the stream is cancelled", async () => {
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    type: "bytes",
    start(controller) {
      controller.enqueue(new Uint8Array(10));
    },
    cancel() {
      cancelled = true;
    },
  });
  const reason = new Error("deadline");
  await assert.rejects(
    readCapped(stream, 1000, { signal: AbortSignal.abort(reason) }),
    (e) => e === reason,
  );
  assert.ok(await until(() => cancelled));
});

Deno.test("a body over 64 KiB arriving in irregular pieces reaches authorizeBody byte for byte", async () => {
  const { server } = makeServer({
    catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
    dispatch: () => ({ content: [{ type: "text", text: "hi" }] }),
  });
  const seen: Uint8Array[] = [];
  const local = listen((port) =>
    createHttpHandler(server, {
      authorize: () => true,
      allowedOrigins: [],
      allowedHosts: loopbackHosts(port),
      authorizeBody: (_request, body) => {
        seen.push(body.slice());
        return true;
      },
    })
  );
  const encoder = new TextEncoder();
  // A tools/list whose _meta carries 300 KB of varied (non-ASCII too) text.
  const filler = Array.from({ length: 50_000 }, (_, i) => `é${i % 97}ü`).join("");
  const body = encoder.encode(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: { ...MODERN_META, filler } },
    }),
  );
  assert.ok(body.length > 200_000);
  try {
    for (const chunked of [false, true]) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: local.port });
      try {
        await conn.write(encoder.encode(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${local.port}\r\n` +
            `Content-Type: application/json\r\nAccept: application/json\r\n` +
            `MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nConnection: close\r\n` +
            (chunked
              ? "Transfer-Encoding: chunked\r\n\r\n"
              : `Content-Length: ${body.length}\r\n\r\n`),
        ));
        for (const [i, piece] of pieces(body, [1, 3, 70_000, 17, 65_536, 999]).entries()) {
          const frame = chunked
            ? new Uint8Array([
              ...encoder.encode(`${piece.length.toString(16)}\r\n`),
              ...piece,
              ...encoder.encode("\r\n"),
            ])
            : piece;
          await conn.write(frame);
          // A pause now and then, so the server reads it in many pieces.
          if (i % 5 === 0) await new Promise((r) => setTimeout(r, 2));
        }
        if (chunked) await conn.write(encoder.encode("0\r\n\r\n"));
        const answer: number[] = [];
        const buf = new Uint8Array(65_536);
        for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
          answer.push(...buf.subarray(0, n));
        }
        assert.match(new TextDecoder().decode(new Uint8Array(answer)), /^HTTP\/1\.1 200/);
      } finally {
        conn.close();
      }
      assert.equal(seen.length, chunked ? 2 : 1);
      assert.deepEqual(seen.at(-1), body, chunked ? "chunked" : "Content-Length");
    }
  } finally {
    await local.close();
  }
});
