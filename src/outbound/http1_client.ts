/**
 * A lean HTTP/1.1 client for weir's upstream requests (RFC 9112 message
 * syntax, RFC 9110 semantics), over `Deno.connect` / `Deno.connectTls`, with a
 * bounded keep-alive pool per origin.
 *
 * Why weir owns this instead of calling `fetch`: measured on Deno 2.9.6, a
 * `fetch` of a small JSON answer costs about 25 µs of CPU more than writing
 * the request and parsing the answer by hand (the `Request` object, WebIDL
 * conversions, header guards, a body stream and its reader, the dependent
 * abort signal), which was a quarter of a guarded call. What weir needs of an
 * HTTP client is narrow: one request, the whole answer up to a size cap, no
 * redirects followed, a deadline. That is what this does:
 *
 * - requests: `METHOD path?query HTTP/1.1`, `Host` from the URL, the given
 *   headers (names must be tokens, values without CR, LF or NUL), a body with
 *   `Content-Length`; `Accept-Encoding: gzip, deflate, br` unless given.
 * - answers: status line, header fields (obsolete line folding, a malformed
 *   field, a field value holding a bare CR or a NUL, a status code under
 *   100, a `Content-Length` that is not one number, or a head over 64 KiB
 *   (status line through the empty line that ends it, however it arrives)
 *   are errors: RFC 9110 section 5.5, RFC 9112 sections 2.2, 4, 5 and 6.3),
 *   at most 8 interim 1xx answers skipped, bodies framed by `Content-Length`,
 *   `chunked` (trailers read and dropped; each framing line at most 8 KiB,
 *   chunk extensions and trailers together at most 64 KiB), or the
 *   connection's end; no body for `HEAD`, 204 and 304.
 *   A `Content-Encoding` of gzip, deflate or br is decoded as it arrives by
 *   `node:zlib`'s streaming decoders, which hand out at most 16 KiB at a
 *   time, and the cap applies to the decoded bytes (a small compressed body
 *   can inflate to gigabytes: about 1 KiB of br is 1 GiB of zeros, and the
 *   web `DecompressionStream` hands out all that a chunk decodes to at once);
 *   a malformed coded body is a `"body"` error; any other coding is an
 *   error when there is a body.
 * - the cap: past `maxBodyBytes` the answer's body is `null` and the
 *   connection is closed, having read no more than the cap (plus one read).
 * - the pool: an answer read to its end over HTTP/1.1 without
 *   `Connection: close` leaves its connection idle for the next request to the
 *   same origin (at most {@link MAX_IDLE_PER_ORIGIN}, for
 *   {@link IDLE_TIMEOUT_MS}). An idle connection keeps a read pending, so a
 *   server closing it is seen at once and it is dropped; a request that finds
 *   its reused connection closed before any answer byte is sent again once,
 *   on a new connection, only when its method is safe (GET, HEAD, OPTIONS,
 *   TRACE: RFC 9110 section 9.2.1) or when writing its first byte failed
 *   (nothing of it left weir), never otherwise: the upstream may have read a
 *   POST, PUT, PATCH or DELETE before the connection closed, and weir
 *   delivers a request at most once (that call fails, saying it may have run).
 *   The idle watch makes the usual case (the server closed an idle
 *   connection: a keep-alive timeout, a restart) a new connection before
 *   anything is written; a close that crosses the request on the wire (the
 *   close arrives after weir took the connection) is the case that fails.
 *   Idle connections do not keep the process alive.
 *   What this cannot do (nor can `fetch`): HTTP/1.1 has no way to tie an
 *   answer to its request, so bytes an upstream sends unasked are caught
 *   only when they arrive with an answer or while the connection is idle. An
 *   extra answer that crosses the next request on the wire is read as that
 *   request's answer, and a sequential caller can then stay one answer
 *   behind until a pause lets the idle read see the surplus (measured through
 *   the CLI with an upstream that sent one extra answer 1 ms late, then 4
 *   quick calls, 30 times: 117 of 120 calls mismatched here, 112 with
 *   `fetch`; a `setTimeout(0)` before reuse only brought it to 70). Such an
 *   upstream is broken or hostile; it is also the one that reads every request.
 * - cancellation: when `signal` aborts, the connection is closed and the
 *   signal's reason is thrown.
 *
 * A departure from the first design, which had the guard call `fetch` and
 * kept `Deno.*` out of the layers below the command line: this module uses
 * `Deno.connect`/`Deno.connectTls`, and `fetch` stays as the path for proxies
 * and for `WEIR_UPSTREAM_CLIENT=fetch` (tests compare both, answer by answer).
 *
 * Not done, by design: redirects (returned as answers), proxies (weir uses
 * `fetch` when a proxy variable is set: see `src/guard/send.ts`), HTTP/2,
 * cookies, caching, `Expect: 100-continue`.
 *
 * Reading an answer (the buffered connection, the head, the framing, the
 * codings under the cap) is `http1_answer.ts`.
 *
 * @module
 */
import {
  Connection,
  type Head,
  Http1Error,
  type Http1Request,
  type Http1Response,
  MAX_CHUNK_LINE_BYTES,
  MAX_HEAD_BYTES,
  nameOf,
  readBody,
  readHead,
  StaleConnection,
  TOKEN,
  type UrlTarget,
} from "./http1_answer.ts";
import { withinDeadline } from "./deadline.ts";
import { connectFailureWords } from "./connect_failure.ts";

export {
  Http1Error,
  type Http1Request,
  type Http1Response,
  MAX_CHUNK_LINE_BYTES,
  MAX_HEAD_BYTES,
  type UrlTarget,
};

/** Idle connections kept per origin. */
export const MAX_IDLE_PER_ORIGIN = 32;

/** How long an idle connection is kept, in milliseconds. */
export const IDLE_TIMEOUT_MS = 30_000;

/**
 * How long the rest of a chunked body read with `until` may take to end
 * before its connection is closed instead of reused, in milliseconds.
 */
export const DRAIN_MS = 1_000;

const encoder = new TextEncoder();
const BAD_VALUE = /[\r\n\0]/;
/**
 * Methods a reused connection's failure before any answer byte may re-send,
 * once, on a new connection: the safe ones (RFC 9110 section 9.2.1), which
 * change nothing upstream. Never POST, PUT, PATCH or DELETE: their request may
 * have been read before the connection closed, and weir delivers a request at
 * most once.
 */
const SAFE = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);
/** A listener's options, shared: one object, not one per request. */
const ONCE = { once: true } as const;

/**
 * An HTTP/1.1 client with its own connection pool. One per process is the
 * usual use ({@link sharedClient}); tests make their own and `close()` it.
 */
export class Http1Client {
  readonly #idle = new Map<string, Connection[]>();
  #sweeper: ReturnType<typeof setInterval> | undefined;

  /**
   * Send one request and read its answer whole (up to the cap).
   * @throws the signal's reason when it aborts; {@link Http1Error} when the
   *   exchange fails; `TypeError` for a request that cannot be written (a bad
   *   header name or value, a URL that is not http(s))
   */
  async request(request: Http1Request): Promise<Http1Response> {
    const { url, signal } = request;
    signal?.throwIfAborted();
    const head = requestHead(request);
    const key = url.protocol + url.host;
    for (let attempt = 0;; attempt++) {
      const connection = this.#takeIdle(key) ?? await connect(url, signal);
      const abort = () => connection.close();
      signal?.addEventListener("abort", abort, ONCE);
      try {
        const response = await exchange(connection, request, head);
        if (response.rest) this.#drain(connection, response.rest, request.maxBodyBytes);
        else if (response.reusable) this.#release(connection);
        else connection.close();
        return response.response;
      } catch (error) {
        connection.close();
        if (signal?.aborted) throw signal.reason;
        // Sent again once, on a new connection: a safe method, or any request
        // of which no byte was written (the server cannot have read it).
        if (
          error instanceof StaleConnection && attempt === 0 &&
          (SAFE.has(request.method) || !error.written)
        ) continue;
        if (error instanceof StaleConnection) {
          throw new Http1Error(
            "the connection closed before an answer began; the request may have been read " +
              "and was not sent again",
            "send",
          );
        }
        throw error;
      } finally {
        signal?.removeEventListener("abort", abort);
      }
    }
  }

  /**
   * Read and drop the rest of a chunked body whose caller has what it wanted
   * (`Http1Request.until`): released for reuse when it ends within
   * {@link DRAIN_MS} and `maxBytes`, closed otherwise. An MCP server ends a
   * request's event stream right after the answer, so this keeps its
   * connection; one that keeps the stream open costs a connection.
   */
  #drain(connection: Connection, rest: AsyncIterator<Uint8Array>, maxBytes: number): void {
    let total = 0;
    const read = (async () => {
      for (;;) {
        const next = await rest.next();
        if (next.done) return true;
        total += next.value.byteLength;
        if (total > maxBytes) return false;
      }
    })();
    withinDeadline(read, DRAIN_MS).then(
      (ended) => ended && !connection.dead ? this.#release(connection) : connection.close(),
      () => connection.close(),
    );
  }

  /** Close every idle connection (calls in flight keep theirs until they end). */
  close(): void {
    for (const list of this.#idle.values()) for (const c of list) c.close();
    this.#idle.clear();
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  /** Idle connections held now, for tests and diagnostics. */
  get idleCount(): number {
    let n = 0;
    for (const list of this.#idle.values()) n += list.length;
    return n;
  }

  #takeIdle(key: string): Connection | undefined {
    const list = this.#idle.get(key);
    while (list && list.length > 0) {
      const connection = list.pop()!;
      if (connection.dead) continue;
      connection.conn.ref();
      connection.reused = true;
      return connection;
    }
    return undefined;
  }

  #release(connection: Connection): void {
    let list = this.#idle.get(connection.key);
    if (!list) this.#idle.set(connection.key, list = []);
    if (list.length >= MAX_IDLE_PER_ORIGIN || connection.start !== connection.end) {
      // A full pool, or bytes the server sent past its answer: not reusable.
      connection.close();
      return;
    }
    connection.start = connection.end = 0;
    connection.idleSince = performance.now();
    connection.conn.unref();
    // Watch the idle connection: the server closing it (or sending anything)
    // ends its idleness at once instead of failing the next request.
    const pending = connection.conn.read(connection.buf);
    connection.pending = pending;
    // Still idle when it settles: the server closed it (or sent bytes unasked).
    const settled = () => {
      if (connection.pending !== pending) return;
      connection.close();
      const at = list!.indexOf(connection);
      if (at >= 0) list!.splice(at, 1);
    };
    pending.then(settled, settled);
    list.push(connection);
    this.#sweep();
  }

  #sweep(): void {
    if (this.#sweeper !== undefined) return;
    this.#sweeper = setInterval(() => {
      const now = performance.now();
      let left = 0;
      for (const [key, list] of this.#idle) {
        // In place: each idle connection's watcher holds this very list.
        let kept = 0;
        for (const c of list) {
          if (!c.dead && now - c.idleSince < IDLE_TIMEOUT_MS) list[kept++] = c;
          else c.close();
        }
        list.length = kept;
        if (kept === 0) this.#idle.delete(key);
        left += kept;
      }
      if (left === 0) {
        clearInterval(this.#sweeper);
        this.#sweeper = undefined;
      }
    }, IDLE_TIMEOUT_MS / 3);
    (this.#sweeper as { unref?: () => void }).unref?.();
  }
}

let shared: Http1Client | undefined;

/** The process's client (created on first use). */
export function sharedClient(): Http1Client {
  return shared ??= new Http1Client();
}

async function connect(url: UrlTarget, signal: AbortSignal | undefined): Promise<Connection> {
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const tls = url.protocol === "https:";
  const port = url.port ? Number(url.port) : tls ? 443 : 80;
  let conn: Deno.Conn;
  try {
    const opening = tls
      ? Deno.connectTls({ hostname, port, alpnProtocols: ["http/1.1"] })
      : Deno.connect({ hostname, port });
    conn = signal ? await raceAbort(opening, signal) : await opening;
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    // Fixed words only: the message reaches the caller, so no host or address.
    const why = connectFailureWords(error) ?? (error instanceof Error ? error.name : "error");
    throw new Http1Error(`could not connect (${why})`, "send");
  }
  if (!tls) (conn as Deno.TcpConn).setNoDelay?.(true);
  return new Connection(conn, url.protocol + url.host);
}

/** `opening`, rejected with the signal's reason if it aborts first (the connection, if any, closed). */
function raceAbort(opening: Promise<Deno.Conn>, signal: AbortSignal): Promise<Deno.Conn> {
  if (signal.aborted) {
    opening.then((c) => c.close(), () => {});
    return Promise.reject(signal.reason);
  }
  return new Promise((resolve, reject) => {
    const abort = () => {
      opening.then((c) => c.close(), () => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", abort, { once: true });
    opening.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** The request head as bytes, validated (throws `TypeError` on a bad name or value). */
function requestHead(request: Http1Request): string {
  const { method, url } = request;
  if (!TOKEN.test(method)) throw new TypeError("the request method is not a token");
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`unsupported URL scheme ${url.protocol}`);
  }
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  let acceptEncoding = false;
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length" || lower === "transfer-encoding") continue;
    if (lower === "connection") continue;
    if (!TOKEN.test(name)) throw new TypeError("a request header name is not a token");
    if (BAD_VALUE.test(value)) throw new TypeError(`request header ${lower} has CR, LF or NUL`);
    if (lower === "accept-encoding") acceptEncoding = true;
    head += `${lower}: ${value.trim()}\r\n`;
  }
  if (!acceptEncoding) head += "accept-encoding: gzip, deflate, br\r\n";
  const body = request.body;
  if (body !== undefined) head += `content-length: ${body.byteLength}\r\n`;
  else if (method === "POST" || method === "PUT" || method === "PATCH") {
    head += "content-length: 0\r\n";
  }
  return head + "\r\n";
}

/** Largest write buffer a connection keeps between requests, in bytes. */
const MAX_KEPT_OUT = 64 * 1024;

/**
 * The request's bytes (the head as UTF-8, then the body) in the connection's
 * own write buffer, reused from one request to the next: one connection
 * carries one exchange at a time, and its buffer is not touched again until
 * that exchange's writes have settled. The same bytes as
 * `TextEncoder.encode(head)` followed by the body, without a new buffer per
 * request (measured on Deno 2.9.6: `encodeInto` a kept buffer 81 ns,
 * `encode` 354 ns for a 110-byte head).
 */
export function requestBytes(
  connection: Connection,
  head: string,
  body: Uint8Array | undefined,
): Uint8Array {
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 4 for 2 units).
  const room = head.length * 3 + (body?.byteLength ?? 0);
  let out = connection.out;
  if (out === undefined || out.byteLength < room) {
    out = new Uint8Array(Math.max(room, 2048));
    if (out.byteLength <= MAX_KEPT_OUT) connection.out = out;
  }
  let length = encoder.encodeInto(head, out).written;
  if (body !== undefined && body.byteLength > 0) {
    out.set(body, length);
    length += body.byteLength;
  }
  return out.subarray(0, length);
}

/** One exchange on one connection. */
async function exchange(
  connection: Connection,
  request: Http1Request,
  head: string,
): Promise<
  { response: Http1Response; reusable: boolean; rest?: AsyncIterator<Uint8Array> }
> {
  const out = requestBytes(connection, head, request.body);
  let written = 0;
  try {
    while (written < out.length) written += await connection.conn.write(out.subarray(written));
  } catch (error) {
    if (connection.reused) throw new StaleConnection(written > 0);
    throw new Http1Error(`the request could not be written (${nameOf(error)})`, "send");
  }
  let parsed: Head;
  for (let interim = 0;; interim++) {
    parsed = await readHead(connection);
    // Interim answers (100 Continue, 103 Early Hints) precede the final one.
    if (parsed.status >= 200 || parsed.status === 101) break;
    if (interim >= 8) throw new Http1Error("the upstream sent interim answers only", "send");
  }
  const { status } = parsed;
  try {
    const read = readBody(connection, request, parsed);
    return read instanceof Promise ? await read : read;
  } catch (error) {
    if (error instanceof Http1Error) error.status = status;
    throw error;
  }
}
