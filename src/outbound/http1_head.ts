/**
 * The answer head of weir's HTTP/1.1 client (`http1_client.ts`): its bytes
 * as text, its lines, the status line and header fields (the usual head
 * read from its bytes in one pass), the body's framing the fields name, and
 * the error every phase of an exchange throws. RFC 9112 sections 2.2, 4, 5
 * and 6.3, RFC 9110 section 5.5; what is refused is listed in
 * `http1_client.ts`'s doc.
 *
 * @module
 */

/** Longest answer head (status line and header fields) accepted, in bytes. */
export const MAX_HEAD_BYTES = 64 * 1024;

/**
 * A failure of the exchange, not of the caller's signal. `phase` tells
 * whether any of the answer had arrived: `"send"` (connecting, writing, or
 * waiting for the status line: the request may or may not have been
 * processed) or `"body"` (the head arrived, the body broke off or was
 * malformed).
 */
export class Http1Error extends Error {
  override name = "Http1Error";
  /** Where the exchange failed. */
  readonly phase: "send" | "body";
  /** The answer's status, once its head had arrived (`phase` `"body"`). */
  status?: number;
  constructor(message: string, phase: "send" | "body") {
    super(message);
    this.phase = phase;
  }
}

const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder();
/** An RFC 9110 token (a header field name, a method). */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BARE_CR_OR_NUL = /\r(?!\n)|\0/;

/** A parsed answer head. */
export interface Head {
  status: number;
  statusText: string;
  headers: Map<string, string>;
  keepAlive: boolean;
}

/**
 * The head's bytes as text, each byte one character (`latin1`, as the WHATWG
 * Encoding Standard names windows-1252). An ASCII head (the usual one) is
 * read by the UTF-8 decoder, which gives the same text for ASCII bytes and
 * costs about a third of the `latin1` decoder's time on Deno 2.9.6.
 */
export function decodeHead(bytes: Uint8Array, ascii: boolean): string {
  return ascii ? utf8.decode(bytes) : latin1.decode(bytes);
}

/**
 * The lines of `text` as `text.split(/\r?\n/)` gives them (a line's one CR
 * before its LF taken off, any other CR kept), without the regular expression.
 */
export function headLines(text: string): string[] {
  const lines: string[] = [];
  let from = 0;
  for (;;) {
    const lf = text.indexOf("\n", from);
    if (lf < 0) {
      lines.push(from === 0 ? text : text.slice(from));
      return lines;
    }
    const to = lf > from && text.charCodeAt(lf - 1) === 13 ? lf - 1 : lf;
    lines.push(text.slice(from, to));
    from = lf + 1;
  }
}

/** Bytes of an RFC 9110 token (`tchar`), by byte value: 1 for a token byte. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
  TCHAR[c.charCodeAt(0)] = 1;
}
/** Bytes a usual head's reason or field value holds: HT, and SP to `~`. */
const VISIBLE = new Uint8Array(256);
VISIBLE[9] = 1;
for (let byte = 32; byte <= 126; byte++) VISIBLE[byte] = 1;
const CR = 13, LF = 10, SP = 32, HT = 9, COLON = 58;
/** {@link usualHead}'s field offsets, reused: it runs to its end without yielding. */
const SPANS: number[] = [];

/**
 * The usual head at the start of `buf[from, to)`, parsed from its bytes in
 * one pass: exactly what `parseHead(decodeHead(head, ascii))` answers for
 * those bytes, or `undefined` when they do not begin with a whole head of
 * that usual form (then the general path decides, refusals included). The
 * usual form: `HTTP/1.0` or `HTTP/1.1`, SP, a status code of three digits
 * (the first not 0), an optional SP and reason; then header fields
 * `token ":" value`; reasons and values hold only HT and SP to `~`; every
 * line ends with CRLF, and the first empty line ends the head. Nothing it
 * accepts is refused by the general path, and its status, reason, fields
 * and keep-alive are the general path's (property test:
 * tests/outbound/http1_head_property_test.ts).
 *
 * @param found its `end` is set to the index just past the head (what
 *   follows is the body, or the next answer)
 */
export function usualHead(
  buf: Uint8Array,
  from: number,
  to: number,
  found: { end: number },
): Head | undefined {
  // "HTTP/1." then the minor version, SP, three digits: 12 bytes, then at least CRLF CRLF.
  if (to - from < 16) return undefined;
  const minor = buf[from + 7];
  if (
    buf[from] !== 72 || buf[from + 1] !== 84 || buf[from + 2] !== 84 || buf[from + 3] !== 80 ||
    buf[from + 4] !== 47 || buf[from + 5] !== 49 || buf[from + 6] !== 46 ||
    (minor !== 48 && minor !== 49) || buf[from + 8] !== SP
  ) return undefined;
  const d1 = buf[from + 9] - 48, d2 = buf[from + 10] - 48, d3 = buf[from + 11] - 48;
  if (d1 < 1 || d1 > 9 || d2 < 0 || d2 > 9 || d3 < 0 || d3 > 9) return undefined;
  let p = from + 12;
  let reasonFrom = p;
  if (buf[p] === SP) {
    reasonFrom = ++p;
    while (p < to && VISIBLE[buf[p]] === 1) p++;
  }
  const reasonTo = p;
  // Past `to` are stale bytes: every read below is bounded by it.
  if (p + 1 >= to || buf[p] !== CR || buf[p + 1] !== LF) return undefined;
  p += 2;
  // Per field: name from, name to, value from, value to (trimmed), upper-case letters in the name.
  const spans = SPANS;
  spans.length = 0;
  for (;;) {
    if (p + 1 >= to) return undefined;
    if (buf[p] === CR) {
      if (buf[p + 1] !== LF) return undefined;
      p += 2;
      break;
    }
    const nameFrom = p;
    let upper = 0;
    while (p < to && TCHAR[buf[p]] === 1) {
      if (buf[p] >= 65 && buf[p] <= 90) upper = 1;
      p++;
    }
    if (p === nameFrom || p >= to || buf[p] !== COLON) return undefined;
    const nameTo = p++;
    while (p < to && (buf[p] === SP || buf[p] === HT)) p++;
    const valueFrom = p;
    while (p < to && VISIBLE[buf[p]] === 1) p++;
    let valueTo = p;
    if (p + 1 >= to || buf[p] !== CR || buf[p + 1] !== LF) return undefined;
    while (valueTo > valueFrom && (buf[valueTo - 1] === SP || buf[valueTo - 1] === HT)) valueTo--;
    spans.push(nameFrom - from, nameTo - from, valueFrom - from, valueTo - from, upper);
    p += 2;
  }
  found.end = p;
  // Every byte is ASCII: the UTF-8 decoder's text has one character per byte.
  const text = utf8.decode(buf.subarray(from, p));
  const headers = new Map<string, string>();
  for (let i = 0; i < spans.length; i += 5) {
    const name = text.slice(spans[i], spans[i + 1]);
    const lower = spans[i + 4] === 1 ? name.toLowerCase() : name;
    const value = text.slice(spans[i + 2], spans[i + 3]);
    const before = headers.get(lower);
    headers.set(lower, before === undefined ? value : `${before}, ${value}`);
  }
  const connection = headers.get("connection");
  const keepAlive = minor === 49 &&
    (connection === undefined || !/\bclose\b/.test(connection.toLowerCase()));
  return {
    status: d1 * 100 + d2 * 10 + d3,
    statusText: text.slice(reasonFrom - from, reasonTo - from),
    headers,
    keepAlive,
  };
}

/** Parse the head's text: the status line and header fields (see the module doc for what is refused). */
export function parseHead(text: string): Head {
  const lines = headLines(text);
  const statusLine = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: (.*))?$/.exec(lines[0]);
  if (!statusLine) {
    throw new Http1Error("the answer does not start with an HTTP/1.x status line", "send");
  }
  // A bare CR (not before LF) or a NUL: RFC 9110 section 5.5 lets a recipient
  // reject the message, RFC 9112 section 2.2 the element; fetch refuses it too.
  if (BARE_CR_OR_NUL.test(text)) {
    throw new Http1Error("the answer's head holds a bare CR or a NUL", "send");
  }
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === "") continue;
    if (line[0] === " " || line[0] === "\t") {
      throw new Http1Error("the answer uses obsolete header line folding", "send");
    }
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) throw new Http1Error("the answer has a malformed header field", "send");
    const lower = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    const before = headers.get(lower);
    headers.set(lower, before === undefined ? value : `${before}, ${value}`);
  }
  const minor = statusLine[1];
  const connection = (headers.get("connection") ?? "").toLowerCase();
  const keepAlive = minor === "1" ? !/\bclose\b/.test(connection) : false;
  return { status: Number(statusLine[2]), statusText: statusLine[3] ?? "", headers, keepAlive };
}

/** A `Content-Length` value weir reads: 1 to 15 digits (under 2^53, so `Number` is exact). */
export const ONE_LENGTH = /^\d{1,15}$/;

/** How a body is delimited. */
export type Framing = { kind: "length"; length: number } | { kind: "chunked" } | { kind: "close" };

/** How the body is delimited (RFC 9112 section 6.3). */
export function framingOf(headers: Map<string, string>): Framing {
  const te = headers.get("transfer-encoding");
  if (te !== undefined) {
    const codings = te.split(",").map((c) => c.trim().toLowerCase()).filter((c) => c !== "");
    if (codings.at(-1) === "chunked") {
      if (codings.length > 1) {
        throw new Http1Error(`unsupported transfer-coding (${te.slice(0, 40)})`, "body");
      }
      return { kind: "chunked" };
    }
    return { kind: "close" };
  }
  const cl = headers.get("content-length");
  if (cl !== undefined) {
    // The usual field: one number, nothing to split.
    if (ONE_LENGTH.test(cl)) return { kind: "length", length: Number(cl) };
    // Repeated fields arrive joined: "5, 5" is one length, "5, 6" is an error.
    const values = new Set(cl.split(",").map((v) => v.trim()));
    const [only] = values;
    if (values.size !== 1 || !ONE_LENGTH.test(only)) {
      throw new Http1Error("the answer's Content-Length is not one number", "body");
    }
    return { kind: "length", length: Number(only) };
  }
  return { kind: "close" };
}
