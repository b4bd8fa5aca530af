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

/**
 * How many reads a stream may take for its size (see {@link readCapped}):
 * `free` reads whatever they carry, then one read per `minAverage` bytes.
 */
export interface PieceBudget {
  free: number;
  minAverage: number;
}

/** A stream that arrived in more pieces than its size allows; it has been cancelled. */
export class FragmentedStreamError extends Error {
  /**
   * @param reads the reads taken when reading stopped
   * @param bytes the bytes they carried
   */
  constructor(readonly reads: number, readonly bytes: number) {
    super(`the stream arrived in ${reads} pieces for ${bytes} bytes`);
    this.name = "FragmentedStreamError";
  }
}

/**
 * {@link readCapped} lets other work run once it has read for this many
 * milliseconds without waiting for data. (A `setTimeout(0)` turn costs about
 * 2.6 ms here, clamped as a nested timer, so it is taken by time, not per
 * read: a body whose reads all wait on the network never pays it.)
 */
export const YIELD_AFTER_MS = 5;

/** Largest single read into a body buffer: one read never asks for more than this. */
const READ_BYTES = 64 * 1024;
/**
 * Smallest read into a body buffer. Measured on Deno 2.9.6: a 1-byte BYOB
 * read of a `Deno.serve` chunked body with more data pending never
 * resolved, where reads of 16 bytes and more did.
 */
const MIN_READ_BYTES = 64;

/**
 * Read a stream into one buffer, up to a cap, for bodies held while they
 * arrive (request bodies). Each read lands directly in the buffer (a BYOB
 * reader, when the stream is a byte stream, as `Deno.serve` request bodies
 * are), so a body costs its own size and nothing per chunk: no chunk list,
 * no final join, no read-sized buffer per chunk left to the collector. (A
 * default reader allocates a 64 KiB buffer per read whatever arrived;
 * measured on Deno 2.9.6, a client dripping 1,000 bytes every 50 ms cost
 * about 3.7 MiB per 75 KB of body held as chunks, 0.36 MiB read this way.)
 * Other streams are read with a default reader, each chunk copied in.
 *
 * The buffer starts at `sizeHint` bytes and 64 more (a declared length; the
 * spare room lets the last read see the end) and otherwise at 64 KiB, and
 * doubles as needed, never beyond `max` + 64 (room to see a body pass the
 * cap). Untouched capacity costs no resident memory (fresh pages are mapped
 * as they are written).
 *
 * The cost of reading is bounded by the size read, not by how the sender
 * framed it. Each read hands over one piece as it arrived (one HTTP/1.1
 * chunk, or what one socket read gave), whatever room the buffer has: a
 * body sent in 1-byte chunks costs one read per byte, and on Deno 2.9.6 each
 * read of a `Deno.serve` body costs several microseconds of the one thread
 * that serves every client, growing faster than the count when the pieces
 * pile up (bench/chunked_body.ts measured 512 KiB in 1-byte chunks holding
 * the process for over 10 s). So with `options.pieces`, a stream that needs
 * more than `free + bytes / minAverage` reads is cancelled and
 * {@link FragmentedStreamError} thrown: at most that many reads are paid
 * whatever arrives. And after {@link YIELD_AFTER_MS} of reading the loop
 * waits for a macrotask turn, so that when the pieces are already queued
 * (each read then settles at once, a chain of microtasks that starves the
 * event loop: measured, `/healthz` went unanswered for the whole read) other
 * requests are still served meanwhile.
 *
 * @param max the cap, in bytes; more than this and the stream is cancelled
 * @param options.sizeHint the length the sender declared (`Content-Length`), when it is known and within `max`; a stream longer or shorter than it is still read exactly
 * @param options.signal when it aborts, the promise rejects at once with its reason; the stream
 *   is cancelled once the read in progress settles (when more bytes or the end arrive), never
 *   under it: on Deno 2.9.6, a `Deno.serve` request body cancelled under a pending read, and
 *   then answered, leaves its connection open (an erroring answer: neither closed nor served
 *   again; `Connection: close`: kept alive for the next request), where one cancelled between
 *   reads is closed at once (tests/ops/slow_clients_test.ts)
 * @param options.pieces the read budget: `free` reads, then one more per `minAverage` bytes received
 * @returns exactly the bytes the stream carried (a view on the buffer), or `null` when it carried more than `max`
 * @throws {FragmentedStreamError} when the stream needs more reads than `options.pieces` allows
 * @throws whatever the stream throws while being read
 */
export function readCapped(
  stream: ReadableStream<Uint8Array>,
  max: number,
  options: ReadCappedOptions = {},
): Promise<Uint8Array | null> {
  const reading = readInto(stream, max, options);
  const signal = options.signal;
  if (!signal) return reading;
  // Settles at the abort; the read goes on to its next piece, then cancels.
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
    reading.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** The options of {@link readCapped}. */
export interface ReadCappedOptions {
  /** the length the sender declared */
  sizeHint?: number;
  /** ends the wait at once, the reading between reads */
  signal?: AbortSignal;
  /** the read budget */
  pieces?: PieceBudget;
}

/** The reading loop of {@link readCapped}; on abort it stops (and cancels) between reads only. */
async function readInto(
  stream: ReadableStream<Uint8Array>,
  max: number,
  options: ReadCappedOptions,
): Promise<Uint8Array | null> {
  const { signal, pieces } = options;
  const hint = options.sizeHint;
  const limit = max + MIN_READ_BYTES;
  let buffer = new Uint8Array(
    hint !== undefined && hint >= 0 && hint <= max
      ? hint + MIN_READ_BYTES
      : Math.min(limit, READ_BYTES),
  );
  let total = 0;
  let byob: ReadableStreamBYOBReader | undefined;
  let reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = byob = stream.getReader({ mode: "byob" });
  } catch {
    reader = stream.getReader(); // not a byte stream
  }
  // Called between reads only (see readCapped's `signal`).
  const stopped = async () => {
    await reader.cancel().catch(() => {});
    return signal!.reason;
  };
  const grow = (needed: number) => {
    let size = buffer.byteLength;
    while (size < needed) size *= 2;
    const next = new Uint8Array(Math.min(size, limit));
    next.set(buffer.subarray(0, total));
    buffer = next;
  };
  let reads = 0;
  let ranSince = performance.now();
  while (true) {
    if (total > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    if (pieces && reads > pieces.free && reads - pieces.free > total / pieces.minAverage) {
      await reader.cancel().catch(() => {});
      throw new FragmentedStreamError(reads, total);
    }
    reads++;
    if (performance.now() - ranSince > YIELD_AFTER_MS) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (signal?.aborted) throw await stopped();
      ranSince = performance.now();
    }
    if (buffer.byteLength - total < MIN_READ_BYTES) grow(total + MIN_READ_BYTES);
    if (byob) {
      const room = Math.min(READ_BYTES, buffer.byteLength - total);
      const { done, value } = await byob.read(new Uint8Array(buffer.buffer, total, room));
      if (signal?.aborted) throw await stopped();
      // The read took the buffer and hands it back (transferred, not copied).
      if (value) buffer = new Uint8Array(value.buffer);
      if (done) break;
      total += value!.byteLength;
    } else {
      const { done, value } = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
      if (signal?.aborted) throw await stopped();
      if (done) break;
      if (total + value.byteLength > max) {
        total += value.byteLength;
        continue; // refused at the top of the loop
      }
      if (total + value.byteLength > buffer.byteLength) grow(total + value.byteLength);
      buffer.set(value, total);
      total += value.byteLength;
    }
  }
  return buffer.subarray(0, total);
}

/** Lower-case hexadecimal of `bytes`, two digits a byte. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Lower-case hex SHA-256 (FIPS 180-4) of `bytes`, or of `text` as UTF-8. */
export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource)));
}
