/**
 * Reading one HTTP/1.1 answer for weir's client (`http1_client.ts`): the
 * buffered connection, the status line and header fields, the body framing
 * (`Content-Length`, `chunked` with extensions and trailers bounded, the
 * connection's end), content-codings decoded under the size cap, and the
 * errors that say which phase failed. RFC 9112 (message syntax) and RFC 9110
 * (semantics), as `http1_client.ts` lists them.
 *
 * @module
 */
import { concatBytes } from "../transport/bytes.ts";
import {
  decodeHead,
  type Framing,
  framingOf,
  type Head,
  Http1Error,
  MAX_HEAD_BYTES,
  ONE_LENGTH,
  parseHead,
  usualHead,
} from "./http1_head.ts";

export {
  decodeHead,
  type Framing,
  framingOf,
  type Head,
  headLines,
  Http1Error,
  MAX_HEAD_BYTES,
  parseHead,
  TOKEN,
  usualHead,
} from "./http1_head.ts";

/** Longest line of chunk framing (a chunk size with extensions, a trailer field), in bytes. */
export const MAX_CHUNK_LINE_BYTES = 8 * 1024;

/**
 * What the client reads of a request's URL: a `URL` fits, and so do parts a
 * caller built without parsing (src/guard/outgoing.ts `plainTarget`).
 */
export interface UrlTarget {
  /** `http:` or `https:`. */
  readonly protocol: string;
  /** Host name and port (when not the scheme's default), as `URL.host`. */
  readonly host: string;
  /** As `URL.hostname` (an IPv6 address in brackets). */
  readonly hostname: string;
  /** As `URL.port` (empty for the scheme's default). */
  readonly port: string;
  /** The path, percent-encoded, as `URL.pathname`. */
  readonly pathname: string;
  /** `?` and the query, or empty, as `URL.search`. */
  readonly search: string;
}

/** One request. */
export interface Http1Request {
  /** `GET`, `POST`... (a token). */
  method: string;
  /** An `http:` or `https:` URL (or its parts); its path and query are sent as they are. */
  url: UrlTarget;
  /** Header fields (names case-insensitive); `host` and `content-length` are set here. */
  headers: Iterable<[string, string]>;
  /** The request content, sent with `Content-Length`. */
  body?: Uint8Array;
  /** Aborting closes the connection and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Largest answer body accepted, in bytes (decoded, when content-coded). */
  maxBodyBytes: number;
  /**
   * Called with each piece of a body that is framed by `chunked` or by the
   * connection's end and not content-coded, as it arrives; returning true
   * ends the read there: the body is what arrived so far. For an event
   * stream whose awaited message has arrived, which a server may keep open.
   * The rest of a `chunked` body is then read and dropped after the answer
   * is returned (`http1_client.ts`): the connection is reused only when it
   * ends, within a bound, as an MCP server's stream ends after its answer;
   * otherwise it is closed.
   */
  until?: (piece: Uint8Array) => boolean;
}

/** One answer, read whole. */
export interface Http1Response {
  status: number;
  statusText: string;
  /** Header fields by lower-case name; repeated fields joined with `, `. */
  headers: Map<string, string>;
  /** The body, decoded when content-coded; `null` when it passed `maxBodyBytes`. */
  body: Uint8Array | null;
}

const latin1 = new TextDecoder("latin1");
const CODINGS: Record<string, "gzip" | "deflate" | "br"> = {
  gzip: "gzip",
  "x-gzip": "gzip",
  deflate: "deflate",
  br: "br",
};

type Zlib = typeof import("node:zlib");
/** `node:zlib`, loaded on the first coded answer (so start-up does not load it). */
let zlibModule: Promise<Zlib> | undefined;

/** A connection and the bytes read from it but not yet consumed. */
export class Connection {
  readonly conn: Deno.Conn;
  readonly key: string;
  buf = new Uint8Array(16 * 1024);
  /** The request's bytes are written from here (`requestBytes` in http1_client.ts). */
  out: Uint8Array | undefined = undefined;
  start = 0;
  end = 0;
  /** A read started while idle; the next {@link fill} consumes it. */
  pending: Promise<number | null> | null = null;
  dead = false;
  idleSince = 0;
  /** Whether this connection has carried an exchange before (for the retry rule). */
  reused = false;

  constructor(conn: Deno.Conn, key: string) {
    this.conn = conn;
    this.key = key;
  }

  /** Read more bytes after `end`; false at the end of the stream. */
  async fill(): Promise<boolean> {
    if (this.start === this.end) this.start = this.end = 0;
    if (this.end === this.buf.length) {
      if (this.start > 0) {
        this.buf.copyWithin(0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      } else {
        const bigger = new Uint8Array(this.buf.length * 2);
        bigger.set(this.buf.subarray(0, this.end));
        this.buf = bigger;
      }
    }
    let n: number | null;
    if (this.pending) {
      // The idle read targeted the start of the (then empty) buffer.
      const pending = this.pending;
      this.pending = null;
      n = await pending;
    } else {
      n = await this.conn.read(this.buf.subarray(this.end));
    }
    if (n === null) return false;
    this.end += n;
    return true;
  }

  close(): void {
    if (this.dead) return;
    this.dead = true;
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

/**
 * The reused connection was closed by the server before any answer byte.
 * `written` says whether any byte of the request had been written to it: when
 * none had, the request cannot have been read, and any method may be sent
 * again on a new connection.
 */
export class StaleConnection extends Error {
  readonly written: boolean;
  constructor(written = true) {
    super("the reused connection was closed before an answer");
    this.written = written;
  }
}

/** An answer read whole, and whether its connection may carry another exchange. */
export interface BodyRead {
  response: Http1Response;
  reusable: boolean;
  /** The rest of a `chunked` body to read and drop (`Http1Request.until` ended the read). */
  rest?: AsyncIterator<Uint8Array>;
}

/**
 * Read the body that follows `parsed`: without waiting when it is the usual
 * one, a `Content-Length` body within the cap, not content-coded, already
 * whole in the connection's buffer (the same answer {@link readAnyBody}
 * gives it: tests/outbound/http1_head_property_test.ts); else as
 * {@link readAnyBody} reads it.
 */
export function readBody(
  connection: Connection,
  request: Http1Request,
  parsed: Head,
): BodyRead | Promise<BodyRead> {
  const { status, headers } = parsed;
  const length = status >= 200 && status !== 204 && status !== 304 && request.method !== "HEAD" &&
      !headers.has("transfer-encoding") && !headers.has("content-encoding")
    ? headers.get("content-length")
    : undefined;
  if (length !== undefined && ONE_LENGTH.test(length)) {
    const n = Number(length);
    const { start } = connection;
    if (n <= request.maxBodyBytes && connection.end - start >= n) {
      // Copied out: the connection's buffer is read into again once it is idle.
      const body = connection.buf.slice(start, start + n);
      connection.start = start + n;
      return {
        response: { status, statusText: parsed.statusText, headers, body },
        reusable: parsed.keepAlive,
      };
    }
  }
  return readAnyBody(connection, request, parsed);
}

/** Read the body that follows `parsed`, however it is framed and coded. */
export async function readAnyBody(
  connection: Connection,
  request: Http1Request,
  parsed: Head,
): Promise<BodyRead> {
  const { status, headers } = parsed;
  if (status === 101) throw new Http1Error("the upstream switched protocols", "body");
  const noBody = request.method === "HEAD" || status === 204 || status === 304;
  let reusable = parsed.keepAlive;
  let body: Uint8Array | null;
  const coding = (headers.get("content-encoding") ?? "").trim().toLowerCase();
  const decode = !noBody && coding !== "" && coding !== "identity";
  if (decode && !Object.hasOwn(CODINGS, coding)) {
    throw new Http1Error(`the answer has an unsupported content-coding (${coding})`, "body");
  }
  const cap = request.maxBodyBytes;
  if (noBody) {
    body = new Uint8Array(0);
  } else {
    const framing = framingOf(headers);
    // Transfer-Encoding beside Content-Length may be a smuggling attempt: read
    // by Transfer-Encoding, never reuse the connection (RFC 9112 section 6.3, item 3).
    if (
      framing.kind === "close" ||
      (headers.has("transfer-encoding") && headers.has("content-length"))
    ) {
      reusable = false;
    }
    if (decode) {
      const zlib = await (zlibModule ??= import("node:zlib"));
      body = await decodeAtMost(zlib, CODINGS[coding], codedChunks(connection, framing, cap), cap);
      if (body === null) reusable = false;
    } else if (framing.kind === "length") {
      body = framing.length > cap ? null : await readLength(connection, framing.length);
      if (body === null) reusable = false;
    } else {
      const chunks: Uint8Array[] = [];
      let total = 0;
      const source = framing.kind === "chunked" ? readChunked(connection) : readToEnd(connection);
      body = new Uint8Array(0);
      for (;;) {
        const next = await source.next();
        if (next.done) break;
        const chunk = next.value;
        total += chunk.byteLength;
        if (total > cap) {
          body = null;
          reusable = false;
          break;
        }
        chunks.push(chunk);
        if (request.until?.(chunk)) {
          const response = {
            status,
            statusText: parsed.statusText,
            headers,
            body: concatBytes(chunks, total),
          };
          // The rest of a chunked body may end soon (the client drains it);
          // a body framed by the connection's end never leaves it reusable.
          if (reusable && framing.kind === "chunked") return { response, reusable, rest: source };
          return { response, reusable: false };
        }
      }
      if (body !== null) body = concatBytes(chunks, total);
    }
  }
  return {
    response: { status, statusText: parsed.statusText, headers, body },
    reusable,
  };
}

/**
 * Where {@link usualHead} found a head's end: one object for every
 * connection, safe because it is read right after the call that sets it,
 * with no `await` between.
 */
const FOUND = { end: 0 };

/** Read and parse one answer head. */
export async function readHead(connection: Connection): Promise<Head> {
  // Bytes past `start` already searched (relative: `fill` may move the buffer).
  let scanned = 0;
  // The bytes searched so far OR'd together: under 0x80, the head is ASCII.
  let high = 0;
  let sawByte = connection.end > connection.start;
  for (;;) {
    const { buf, start, end } = connection;
    // The usual head, whole in the first bytes looked at: parsed in one pass.
    if (scanned === 0 && end > start) {
      const head = usualHead(buf, start, end, FOUND);
      if (head !== undefined && FOUND.end - start <= MAX_HEAD_BYTES) {
        connection.start = FOUND.end;
        return head;
      }
    }
    // Find the empty line that ends the head (CRLF CRLF, or bare LF LF).
    for (let i = start + scanned; i < end; i++) {
      const byte = buf[i];
      high |= byte;
      if (byte !== 10 || i === start) continue;
      if (buf[i - 1] === 10 || (i - 2 >= start && buf[i - 1] === 13 && buf[i - 2] === 10)) {
        // The cap holds however the bytes arrived: a head found whole in one
        // read is measured as one found piece by piece.
        if (i + 1 - start > MAX_HEAD_BYTES) throw headTooLarge();
        connection.start = i + 1;
        return usualHead(buf, start, i + 1, FOUND) ??
          parseHead(decodeHead(buf.subarray(start, i + 1), high < 0x80));
      }
    }
    scanned = end - start;
    // No end yet after MAX_HEAD_BYTES bytes: the head is longer than that.
    if (scanned >= MAX_HEAD_BYTES) throw headTooLarge();
    let more: boolean;
    try {
      more = await connection.fill();
    } catch (error) {
      if (!sawByte && connection.reused) throw new StaleConnection();
      throw new Http1Error(`the connection failed before an answer (${nameOf(error)})`, "send");
    }
    if (!more) {
      if (!sawByte && connection.reused) throw new StaleConnection();
      throw new Http1Error("the connection closed before a complete answer head", "send");
    }
    sawByte = true;
  }
}

function headTooLarge(): Http1Error {
  return new Http1Error(`the answer's head is over ${MAX_HEAD_BYTES} bytes`, "send");
}

/** Read exactly `length` body bytes. */
async function readLength(connection: Connection, length: number): Promise<Uint8Array> {
  const have = connection.end - connection.start;
  if (have >= length) {
    const body = connection.buf.slice(connection.start, connection.start + length);
    connection.start += length;
    return body;
  }
  const body = new Uint8Array(length);
  body.set(connection.buf.subarray(connection.start, connection.end));
  let got = have;
  connection.start = connection.end = 0;
  while (got < length) {
    let n: number | null;
    try {
      n = await connection.conn.read(body.subarray(got));
    } catch (error) {
      throw new Http1Error(`the body broke off (${nameOf(error)})`, "body");
    }
    if (n === null) throw new Http1Error("the body ended before its Content-Length", "body");
    got += n;
  }
  return body;
}

/** The body's bytes as they arrive, for a known framing. */
async function* framedChunks(connection: Connection, framing: Framing): AsyncGenerator<Uint8Array> {
  if (framing.kind === "chunked") yield* readChunked(connection);
  else if (framing.kind === "close") yield* readToEnd(connection);
  else yield* exactly(connection, framing.length, "the body ended before its Content-Length");
}

/** The next `count` body bytes as they arrive; `ended` says what broke off if they do not. */
async function* exactly(
  connection: Connection,
  count: number,
  ended: string,
): AsyncGenerator<Uint8Array> {
  let left = count;
  while (left > 0) {
    if (connection.start === connection.end && !(await fillBody(connection))) {
      throw new Http1Error(ended, "body");
    }
    const n = Math.min(left, connection.end - connection.start);
    yield connection.buf.slice(connection.start, connection.start + n);
    connection.start += n;
    left -= n;
  }
}

/** The raw (still coded) body's bytes, refused with an error past `cap` coded bytes. */
async function* codedChunks(
  connection: Connection,
  framing: Framing,
  cap: number,
): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of framedChunks(connection, framing)) {
    total += chunk.byteLength;
    // A coded body never needs to be larger than the decoded cap allows.
    if (total > cap + 1024) throw new Http1Error("the coded body passed the size cap", "body");
    yield chunk;
  }
}

/**
 * Decode a coded body as it arrives, keeping at most `cap` decoded bytes.
 * `node:zlib`'s decoders emit at most 16 KiB at a time (their `chunkSize`),
 * so a bomb is stopped once the cap is passed, holding about the cap.
 * @returns the decoded bytes, or `null` past `cap`
 * @throws {Http1Error} `"body"` when the coded bytes are malformed (bytes
 *   after the end of the coded stream included: they would be left unread on
 *   the connection, inside the answer's framing); whatever
 *   `source` throws (framing errors, the connection closed by an abort)
 */
async function decodeAtMost(
  zlib: Zlib,
  coding: "gzip" | "deflate" | "br",
  source: AsyncGenerator<Uint8Array>,
  cap: number,
): Promise<Uint8Array | null> {
  const decoder = coding === "gzip"
    ? zlib.createGunzip()
    : coding === "deflate"
    ? zlib.createInflate()
    : zlib.createBrotliDecompress();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  let malformed = false;
  // node:zlib's deflate and br decoders end at the end of the coded stream
  // and drop what follows it: their count of bytes taken tells.
  let written = 0;
  const ended = new Promise<void>((resolve) => {
    decoder.on("data", (chunk: Uint8Array) => {
      if (over) return;
      total += chunk.byteLength;
      if (total > cap) {
        over = true;
        decoder.destroy();
        resolve();
        return;
      }
      chunks.push(chunk);
    });
    decoder.on("end", () => resolve());
    decoder.on("close", () => resolve());
    decoder.on("error", () => {
      malformed = true;
      resolve();
    });
  });
  const stop = ended.then(() => null);
  try {
    for (;;) {
      const next = source.next();
      // Past the cap (or malformed) while waiting for the network: stop now.
      next.catch(() => {});
      const step = await Promise.race([next, stop]);
      if (step === null || step.done) break;
      written += step.value.byteLength;
      if (!decoder.write(step.value)) {
        await Promise.race([new Promise((r) => decoder.once("drain", r)), stop]);
      }
    }
  } catch (error) {
    decoder.destroy();
    throw error;
  }
  if (!over && !malformed) decoder.end();
  await ended;
  if (over) return null;
  if (decoder.bytesWritten < written) malformed = true;
  if (malformed) throw new Http1Error(`the answer's ${coding} coding is malformed`, "body");
  // Copied out: zlib's chunks are views into its own output buffers.
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

async function fillBody(connection: Connection): Promise<boolean> {
  try {
    return await connection.fill();
  } catch (error) {
    throw new Http1Error(`the body broke off (${nameOf(error)})`, "body");
  }
}

/** Body bytes until the connection ends. */
async function* readToEnd(connection: Connection): AsyncGenerator<Uint8Array> {
  for (;;) {
    if (connection.start < connection.end) {
      yield connection.buf.slice(connection.start, connection.end);
      connection.start = connection.end;
    }
    if (!(await fillBody(connection))) return;
  }
}

/** Decoded `chunked` transfer coding (RFC 9112 section 7.1); trailers are read and dropped. */
async function* readChunked(connection: Connection): AsyncGenerator<Uint8Array> {
  // Chunk extensions and trailer fields carry nothing weir reads: together
  // they may take MAX_HEAD_BYTES, so an endless stream of them is refused
  // rather than read until the deadline (or forever, with none). Counted: the
  // bytes of each chunk-size line beyond its size digits, and of each trailer
  // field line, line ends not counted.
  let extra = 0;
  const spend = (bytes: number) => {
    extra += bytes;
    if (extra > MAX_HEAD_BYTES) {
      throw new Http1Error(
        `the answer's chunk extensions and trailer fields are over ${MAX_HEAD_BYTES} bytes`,
        "body",
      );
    }
  };
  for (;;) {
    const line = await readLine(connection);
    // 1*HEXDIG (RFC 9112 section 7.1): leading zeros allowed, the value under 2^48.
    const size = /^0*([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/.exec(line);
    if (!size) throw new Http1Error("the answer has a malformed chunk size", "body");
    spend(line.length - size[1].length);
    const left = parseInt(size[1], 16);
    if (left === 0) {
      // Trailer fields, then the empty line.
      for (let trailer = await readLine(connection); trailer !== "";) {
        spend(trailer.length);
        trailer = await readLine(connection);
      }
      return;
    }
    yield* exactly(connection, left, "the body ended inside a chunk");
    if ((await readLine(connection)) !== "") {
      throw new Http1Error("a chunk is not followed by CRLF", "body");
    }
  }
}

/**
 * One line of chunk framing (without CRLF or LF), at most
 * {@link MAX_CHUNK_LINE_BYTES} bytes before its line end, however it arrives.
 */
async function readLine(connection: Connection): Promise<string> {
  let scanned = 0;
  const tooLong = () => new Http1Error("the answer has an over-long chunk line", "body");
  for (;;) {
    const { buf, start, end } = connection;
    const i = buf.subarray(start + scanned, end).indexOf(10);
    if (i >= 0) {
      const at = start + scanned + i;
      const lineEnd = at > start && buf[at - 1] === 13 ? at - 1 : at;
      if (lineEnd - start > MAX_CHUNK_LINE_BYTES) throw tooLong();
      const line = latin1.decode(buf.subarray(start, lineEnd));
      connection.start = at + 1;
      return line;
    }
    scanned = end - start;
    // Past the cap with no line end (a CR may still come before the LF).
    if (scanned > MAX_CHUNK_LINE_BYTES + 1) throw tooLong();
    if (!(await fillBody(connection))) {
      throw new Http1Error("the body ended inside chunk framing", "body");
    }
  }
}

export function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : "error";
}
