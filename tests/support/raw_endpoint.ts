/**
 * A raw HTTP/1.1 endpoint for tests of weir's outbound hops: it writes exactly
 * the bytes a test plans, in the pieces it plans (a short pause between
 * writes), late when it plans, and records every request it read. With
 * {@link framed} a test builds an answer under Content-Length, chunked,
 * close-delimited or gzip framing, and with {@link cutsOf} generates where
 * the answer is cut into writes (none, anywhere, every byte around a
 * boundary).
 */
import fc from "./property.ts";

const enc = new TextEncoder();

/** What the endpoint does with one request. */
export interface Plan {
  /** The whole answer, status line to the last byte. */
  bytes: Uint8Array;
  /** Where to cut it into writes (a short pause between writes). */
  cuts?: number[];
  /** Wait this long before answering. */
  delayMs?: number;
}

/** One request as the endpoint read it. */
export interface Received {
  method: string;
  /** The request target (path and query). */
  path: string;
  /** The head as text. */
  head: string;
  /** The body (by Content-Length). */
  body: Uint8Array;
}

/** A running raw endpoint. */
export interface RawEndpoint {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request read, in order. */
  received: Received[];
  close(): Promise<void>;
}

/** Serve on 127.0.0.1, answering each request (read by Content-Length) with `plan(request)`. */
export function rawEndpoint(plan: (request: Received) => Plan): RawEndpoint {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received: Received[] = [];
  // Delays still running: close() ends them (no timer outlives the endpoint).
  const delays = new Map<ReturnType<typeof setTimeout>, () => void>();
  const loop = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(1 << 16);
        const chunks: Uint8Array[] = [];
        let total = 0;
        let head = "";
        let headEnd = -1;
        let length = 0;
        while (true) {
          const n = await conn.read(buf);
          if (n === null) return;
          chunks.push(buf.slice(0, n));
          total += n;
          if (headEnd < 0) {
            head += new TextDecoder().decode(buf.subarray(0, n));
            headEnd = head.indexOf("\r\n\r\n");
            if (headEnd < 0) continue;
            length = Number(/\r\ncontent-length: *(\d+)/i.exec(head.slice(0, headEnd))?.[1] ?? 0);
          }
          if (total >= headEnd + 4 + length) break;
        }
        const all = new Uint8Array(total);
        let at = 0;
        for (const c of chunks) {
          all.set(c, at);
          at += c.length;
        }
        const text = head.slice(0, headEnd);
        const [method, path] = text.split(" ");
        const request = {
          method,
          path,
          head: text,
          body: all.subarray(headEnd + 4, headEnd + 4 + length),
        };
        received.push(request);
        const answer = plan(request);
        if (answer.delayMs) {
          await new Promise<void>((r) => {
            const timer = setTimeout(() => {
              delays.delete(timer);
              r();
            }, answer.delayMs);
            delays.set(timer, r);
          });
        }
        let from = 0;
        for (const cut of [...(answer.cuts ?? []), answer.bytes.length]) {
          if (cut <= from || cut > answer.bytes.length) continue;
          let off = from;
          while (off < cut) off += await conn.write(answer.bytes.subarray(off, cut));
          from = cut;
          if (cut < answer.bytes.length) await new Promise((r) => setTimeout(r, 2));
        }
      })().catch(() => {}).finally(() => {
        try {
          conn.close();
        } catch { /* closed */ }
      });
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    received,
    async close() {
      listener.close();
      for (const [timer, end] of delays) {
        clearTimeout(timer);
        end();
      }
      delays.clear();
      await loop.catch(() => {});
    },
  };
}

/** How an answer's body is framed. */
export type Framing = "length" | "chunked" | "close" | "gzip";

/** Every framing. */
export const FRAMINGS: readonly Framing[] = ["length", "chunked", "close", "gzip"];

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * An HTTP/1.1 answer carrying `body` under `framing` (chunks of 700 bytes;
 * gzip with a Content-Length of the compressed bytes); `around` is where the
 * body's end (or, gzip, its first bytes) lands in the answer.
 */
export async function framed(
  body: Uint8Array,
  framing: Framing,
  options: { status?: string; contentType?: string; extra?: string } = {},
): Promise<{ bytes: Uint8Array; around: number }> {
  const start = `HTTP/1.1 ${options.status ?? "200 OK"}\r\ncontent-type: ${
    options.contentType ?? "application/json"
  }\r\n${options.extra ?? ""}`;
  let head: string;
  let payload = body;
  if (framing === "length") head = `${start}content-length: ${body.length}\r\n\r\n`;
  else if (framing === "close") head = `${start}connection: close\r\n\r\n`;
  else if (framing === "gzip") {
    payload = await gzip(body);
    head = `${start}content-encoding: gzip\r\ncontent-length: ${payload.length}\r\n\r\n`;
  } else {
    head = `${start}transfer-encoding: chunked\r\n\r\n`;
    const parts: Uint8Array[] = [];
    for (let i = 0; i < body.length; i += 700) {
      const piece = body.subarray(i, i + 700);
      parts.push(enc.encode(`${piece.length.toString(16)}\r\n`), piece, enc.encode("\r\n"));
    }
    parts.push(enc.encode("0\r\n\r\n"));
    payload = new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer());
  }
  const headBytes = enc.encode(head);
  const bytes = new Uint8Array(headBytes.length + payload.length);
  bytes.set(headBytes);
  bytes.set(payload, headBytes.length);
  return { bytes, around: headBytes.length + Math.min(payload.length, body.length) };
}

/**
 * An answer whose head (status line through the empty line) is exactly
 * `size` bytes, padded with one field, carrying `body` under Content-Length.
 */
export function headOfSize(size: number, body: Uint8Array, contentType = "application/json") {
  const fixed =
    `HTTP/1.1 200 OK\r\ncontent-type: ${contentType}\r\ncontent-length: ${body.length}` +
    `\r\nx-pad: \r\n\r\n`;
  const head = fixed.replace("x-pad: ", `x-pad: ${"a".repeat(size - fixed.length)}`);
  const headBytes = enc.encode(head);
  if (headBytes.length !== size) throw new Error(`head of ${headBytes.length}, not ${size}`);
  const bytes = new Uint8Array(headBytes.length + body.length);
  bytes.set(headBytes);
  bytes.set(body, headBytes.length);
  return bytes;
}

/** Cut points in an answer of `length` bytes: none, generated, or every byte around `around`. */
export const cutsOf = (length: number, around: number): fc.Arbitrary<number[]> =>
  fc.oneof(
    fc.constant([] as number[]),
    fc.uniqueArray(fc.integer({ min: 1, max: length - 1 }), { maxLength: 5 })
      .map((c) => c.sort((a, b) => a - b)),
    fc.constant(
      Array.from({ length: 6 }, (_, i) => around - 3 + i).filter((c) => c > 0 && c < length),
    ),
  );
