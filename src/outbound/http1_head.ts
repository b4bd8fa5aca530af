/**
 * The answer head of weir's HTTP/1.1 client (`http1_client.ts`): its bytes
 * as text, its lines, the status line and header fields, and the error
 * every phase of an exchange throws. RFC 9112 sections 2.2, 4 and 5, RFC
 * 9110 section 5.5; what is refused is listed in `http1_client.ts`'s doc.
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
