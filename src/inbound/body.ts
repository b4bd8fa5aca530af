/**
 * What follows a request's head, and reading it: whether a body follows
 * (its HTTP/1.1 framing), how a refusal issued before it ends the connection,
 * and {@link readBody}, which reads it whole within a cap, a deadline and a
 * budget of pieces, refusing (and dropping the connection) past any of them.
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import { FragmentedStreamError, type PieceBudget, readCapped } from "../transport/bytes.ts";
import { Deadline, withinDeadline } from "../outbound/deadline.ts";
import { type AfterRefusal, logRefusal, Refusal } from "./refusal.ts";

/** 1 MiB, the default body cap. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** 15 s, the default whole-body deadline. */
export const DEFAULT_BODY_DEADLINE_MS = 15_000;

/**
 * The read budget of a request body ({@link readBody}): 1,024 pieces free,
 * then one per 64 bytes (a 1 MiB body may arrive in up to 17,408 pieces;
 * ordinary clients send a few dozen). bench/chunked_body.ts measures both
 * sides of it.
 */
export const BODY_PIECES: Readonly<PieceBudget> = { free: 1024, minAverage: 64 };

class BodyDeadline extends Error {}
const bodyDeadline = () => new BodyDeadline();

/** Bodies at most this large are let drain; a larger or unknown one is dropped. */
const DRAIN_LIMIT = 64 * 1024;

/**
 * How to end a refusal issued before the body was read: `close` when no body
 * or a small declared one follows, `drop` for a large, chunked or
 * unparsable one.
 */
export function beforeBody(request: Request): AfterRefusal {
  // The HTTP/1.1 framing says what follows the head (RFC 9112 section 6.3),
  // whatever `request.body` shows (Deno hands a GET none even when one follows).
  if (request.headers.get("transfer-encoding") !== null) return "drop";
  const length = request.headers.get("content-length");
  if (length === null) return "close";
  return /^\d+$/.test(length) && Number(length) <= DRAIN_LIMIT ? "close" : "drop";
}

/**
 * Refuse a request with `rule` and write the audit line: the shared way every
 * route refuses before it reads a body (`connection: close`, or dropped when a
 * large or unknown body follows).
 */
export function refuseBeforeBody(
  request: Request,
  log: Logger | undefined,
  status: number,
  rule: Refusal["rule"],
  message: string,
  reason: string = message,
  headers: Record<string, string> = {},
): Refusal {
  const refusal = new Refusal(status, rule, message, beforeBody(request), headers);
  logRefusal(log, refusal, reason);
  return refusal;
}

/**
 * A route that reads no request body refuses one (413, rule `size`; the
 * connection closed, or dropped when the body is large or of unknown length).
 * Whether a body follows is read from its HTTP/1.1 framing (RFC 9112 section
 * 6.3: `Transfer-Encoding`, or a `Content-Length` above 0), as it came over
 * the wire: Deno hands a `GET` no body even when bytes follow, and a
 * `DELETE` an empty one when none do.
 * @returns a refusal (its audit line written), or `null`
 */
export function checkNoBody(request: Request, log: Logger | undefined): Refusal | null {
  const length = request.headers.get("content-length");
  if (request.headers.get("transfer-encoding") === null && (length === null || length === "0")) {
    return null;
  }
  return refuseBeforeBody(
    request,
    log,
    413,
    "size",
    "Content Too Large: this endpoint takes no request body; send none",
  );
}

/**
 * Read the whole body, refusing with 413 as soon as it passes `max` bytes
 * (before reading further: the stream is cancelled and the connection
 * dropped), and with 408 when it has not all arrived within `deadlineMs`.
 *
 * After a 408 the connection is closed, never kept alive, but only once the
 * client sends more: `Deno.serve` (2.9.6) offers no way to end a connection
 * while a read of its body is pending, and answering with a dropped (erroring)
 * response then leaves it open for good, neither closed nor served. So the
 * 408 is an ordinary answer with `Connection: close`, and the pending read
 * goes on: a small body's `request.bytes()` to the body's end (64 KiB at
 * most), after which `Deno.serve` closes the connection; a larger or chunked
 * one to its next piece, when {@link readCapped} cancels the body between
 * reads, which closes it at once. A client that goes silent keeps its socket
 * until it leaves (docs/operating.md: the reverse proxy in front bounds it).
 *
 * Memory: a small declared body (64 KiB or less) is read in one
 * `request.bytes()` call, which is the cheapest under load. A larger or
 * chunked one is read straight into one buffer sized from its
 * `Content-Length` (grown by doubling when there is none), with
 * {@link readCapped}: measured on Deno 2.9.6, `request.bytes()` held about
 * 3.7 MiB per unfinished 1 MiB body, a list of the chunks as delivered about
 * 1.5 MiB (and 50 times the bytes received for a client dripping small
 * pieces: each read allocates a 64 KiB chunk), one buffer about 1.2 MiB
 * (bench/slow_clients.ts; the rest is the HTTP server's per-connection
 * buffering, below JavaScript).
 *
 * Cost: a body read in pieces (a chunked body, or one that arrives in many
 * small socket reads) costs one read per piece, whatever its size, so such a
 * body may take at most {@link BODY_PIECES}: `free` pieces, then one per
 * `minAverage` bytes. Past that it is refused (400, rule `framing`) and the
 * connection dropped, so reading a body never costs more than its size
 * allows (measured and explained in bench/chunked_body.ts).
 *
 * @param log receives the audit line of a 413 (rule `size`), 408 (rule
 *   `deadline`) or 400 (rules `framing`, `body_unreadable`)
 * @param deadlineMs whole-body deadline in milliseconds (0 disables)
 * @returns the exact bytes received, or a refusal
 */
export async function readBody(
  request: Request,
  max: number,
  log?: Logger,
  deadlineMs: number = DEFAULT_BODY_DEADLINE_MS,
): Promise<Uint8Array | Refusal> {
  const refused = (
    status: number,
    rule: Refusal["rule"],
    message: string,
    reason: string,
    after: AfterRefusal = "drop",
  ) => {
    const refusal = new Refusal(status, rule, message, after);
    logRefusal(log, refusal, reason);
    return refusal;
  };
  const tooLarge = () =>
    refused(
      413,
      "size",
      `Request body exceeds ${max} bytes; send a smaller one`,
      `body over ${max} bytes`,
    );
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > max) {
    await request.body?.cancel().catch(() => {});
    return tooLarge();
  }
  // A small declared body is read with request.bytes() before request.body is
  // touched: reading the body getter first makes Deno build a stream and
  // collect it chunk by chunk instead of taking the whole body at once.
  const small = declared !== null && /^\d+$/.test(declared) && Number(declared) <= DRAIN_LIMIT;
  const stream = small ? null : request.body;
  if (!small && !stream) return new Uint8Array(0);
  // A shared slot timer, not a setTimeout per request (src/outbound/deadline.ts);
  // the small path needs no signal, only a deadline on one promise.
  const deadline = small ? null : new Deadline(undefined, deadlineMs, bodyDeadline);
  try {
    if (small) {
      // A small declared length: HTTP framing holds the body to it, so read it
      // in one call (a stream reader allocates a 64 KiB chunk per read;
      // measured: peak RSS 110 MiB instead of 47 under load).
      const bytes = await (deadlineMs > 0
        ? withinDeadline(request.bytes(), deadlineMs, bodyDeadline)
        : request.bytes());
      // Only a Request built in code can carry more than it declares.
      return bytes.byteLength > max ? tooLarge() : bytes;
    }
    const bytes = await readCapped(stream!, max, {
      sizeHint: declared !== null && /^\d+$/.test(declared) ? Number(declared) : undefined,
      signal: deadline!.signal,
      pieces: BODY_PIECES,
    });
    return bytes ?? tooLarge();
  } catch (error) {
    if (error instanceof BodyDeadline) {
      // A read of the body is still pending: a dropped (erroring) answer would
      // leave the connection open for good, so this one is whole and says
      // `Connection: close`. The pending read ends the connection when it
      // settles: the small path's request.bytes() at the body's end, readCapped
      // at the next piece (it cancels the body then, between reads).
      return refused(
        408,
        "deadline",
        `Request Timeout: the body did not arrive within ${deadlineMs} ms; send it at once`,
        `body not received within ${deadlineMs} ms`,
        "close",
      );
    }
    if (error instanceof FragmentedStreamError) {
      return refused(
        400,
        "framing",
        `Bad Request: the body arrived in ${error.reads} pieces for ${error.bytes} bytes; past ` +
          `the first ${BODY_PIECES.free}, a body may take one piece per ` +
          `${BODY_PIECES.minAverage} bytes. Send it with Content-Length, or in larger chunks`,
        `body in ${error.reads} pieces for ${error.bytes} bytes`,
      );
    }
    return refused(
      400,
      "body_unreadable",
      "Bad Request: the request body could not be read; send it again",
      `body read failed: ${error instanceof Error ? error.name : typeof error}`,
    );
  } finally {
    deadline?.clear();
  }
}
