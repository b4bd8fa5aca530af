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
