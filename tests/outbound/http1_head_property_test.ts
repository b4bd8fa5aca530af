/**
 * The upstream client's fast paths (src/outbound/http1_answer.ts,
 * http1_client.ts), each against the general path it stands for.
 *
 * The answer head: an ASCII head decoded by the UTF-8 decoder, lines found
 * without a regular expression.
 * Over generated heads (any bytes, CR, LF and NUL placed anywhere, bytes over
 * 0x7f, split across reads anywhere), `readHead` answers exactly what the
 * general path answers: every head decoded as `latin1` and split by
 * `/\r?\n/` (the code before the fast path, kept here as the reference): the
 * same status, reason, fields and keep-alive, or the same refusal.
 *
 * The framing: a `Content-Length` of one number read without splitting, the
 * same framing or refusal as the split. The request: its bytes built in the
 * connection's kept buffer are `TextEncoder.encode(head)` and the body,
 * request after request on one connection.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { requestBytes } from "../../src/outbound/http1_client.ts";
import {
  Connection,
  decodeHead,
  type Framing,
  framingOf,
  type Head,
  headLines,
  parseHead,
  readAnyBody,
  readBody,
  readHead,
  TOKEN,
  usualHead,
} from "../../src/outbound/http1_answer.ts";

const latin1 = new TextDecoder("latin1");
const BARE_CR_OR_NUL = /\r(?!\n)|\0/;

/** The parser as it was before the fast path (lines by `split(/\r?\n/)`). */
function referenceParse(text: string): Head {
  const lines = text.split(/\r?\n/);
  const statusLine = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: (.*))?$/.exec(lines[0]);
  if (!statusLine) throw new Error("the answer does not start with an HTTP/1.x status line");
  if (BARE_CR_OR_NUL.test(text)) throw new Error("the answer's head holds a bare CR or a NUL");
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === "") continue;
    if (line[0] === " " || line[0] === "\t") {
      throw new Error("the answer uses obsolete header line folding");
    }
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) throw new Error("the answer has a malformed header field");
    const lower = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    const before = headers.get(lower);
    headers.set(lower, before === undefined ? value : `${before}, ${value}`);
  }
  const connection = (headers.get("connection") ?? "").toLowerCase();
  const keepAlive = statusLine[1] === "1" ? !/\bclose\b/.test(connection) : false;
  return { status: Number(statusLine[2]), statusText: statusLine[3] ?? "", headers, keepAlive };
}

/** What a parse gives, as a comparable value: the head, or the error's message. */
function outcome(parse: () => Head): unknown {
  try {
    const head = parse();
    return { ...head, headers: [...head.headers] };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** A connection whose reads hand out `pieces` in turn, then end. */
function connectionOf(pieces: Uint8Array[]): Connection {
  let next = 0;
  const conn = {
    read(into: Uint8Array): Promise<number | null> {
      const piece = pieces[next++];
      if (piece === undefined) return Promise.resolve(null);
      into.set(piece);
      return Promise.resolve(piece.byteLength);
    },
    close() {},
  } as unknown as Deno.Conn;
  return new Connection(conn, "http://test");
}

/** Bytes split at the given cut points. */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const cut of at) {
    if (cut > from) pieces.push(bytes.subarray(from, cut));
    from = Math.max(from, cut);
  }
  if (from < bytes.length) pieces.push(bytes.subarray(from));
  return pieces;
}

const encoder = new TextEncoder();
const PIECES = [
  "HTTP/1.1 200 OK",
  "HTTP/1.0 204 ",
  "HTTP/1.1 404",
  "HTTP/1.1 099 Low",
  "HTTP/2 200 OK",
  "\r\n",
  "\n",
  "\r",
  "\0",
  ": ",
  ":",
  " ",
  "\t",
  "content-length: 12",
  "Content-Type: application/json",
  "connection: close",
  "Connection: keep-alive, Close",
  "x-a",
  "bad name",
  "v\u00e9",
];
/** Heads built of the pieces above and any bytes (over 0x7f too), ending as a head ends. */
const headBytes = fc.tuple(
  fc.array(
    fc.oneof(
      fc.constantFrom(...PIECES).map((p) => Uint8Array.from(p, (c) => c.charCodeAt(0) & 0xff)),
      fc.uint8Array({ minLength: 1, maxLength: 6 }),
    ),
    { maxLength: 24 },
  ),
  fc.constantFrom("\r\n\r\n", "\n\n", "\n\r\n"),
).map(([parts, end]) => {
  const tail = encoder.encode(end);
  const total = parts.reduce((n, p) => n + p.byteLength, 0) + tail.byteLength;
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const p of [...parts, tail]) {
    bytes.set(p, at);
    at += p.byteLength;
  }
  return bytes;
});

Deno.test("http1 head: lines found without a regular expression are split(/\\r?\\n/)'s", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("a", "b", " ", ":", "\r", "\n", "\r\n", "\n\r", "\0", "é")).map(
        (parts) => parts.join(""),
      ),
      (text) => {
        assert.deepEqual(headLines(text), text.split(/\r?\n/));
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("http1 head: an ASCII head decoded as UTF-8 is the latin1 text", () => {
  fc.assert(
    fc.property(fc.uint8Array({ max: 0x7f, maxLength: 300 }), (bytes) => {
      assert.equal(decodeHead(bytes, true), latin1.decode(bytes));
    }),
    { numRuns: 1000 },
  );
  const high = Uint8Array.of(0x48, 0x80, 0x9f, 0xe9, 0xff, 0xef, 0xbb, 0xbf);
  assert.equal(decodeHead(high, false), latin1.decode(high));
});

Deno.test("http1 head: readHead answers what the general path answers, however the head arrives", async () => {
  await fc.assert(
    fc.asyncProperty(headBytes, fc.array(fc.nat(), { maxLength: 4 }), async (bytes, cuts) => {
      let read: unknown;
      try {
        const head = await readHead(connectionOf(split(bytes, cuts)));
        read = { ...head, headers: [...head.headers] };
      } catch (error) {
        read = { error: (error as Error).message };
      }
      // The reference: the first empty line ends the head (every generated head has one).
      const end = headEnd(bytes);
      assert.ok(end > 0);
      assert.deepEqual(
        read,
        outcome(() => referenceParse(latin1.decode(bytes.subarray(0, end + 1)))),
      );
    }),
    { numRuns: 1500 },
  );
});

Deno.test("http1 head: a high byte anywhere in the head keeps the latin1 text", async () => {
  const text = "HTTP/1.1 200 OK\r\nx-v: caf\u00e9 \u0085\u0092\r\nlocation: /\u00ff\r\n\r\n";
  const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
  for (const cuts of [[], [5], [19, 20], [1, 2, 3, 30]]) {
    const head = await readHead(connectionOf(split(bytes, cuts)));
    assert.deepEqual(head, referenceParse(latin1.decode(bytes)));
    // windows-1252, as before: 0x92 is a right single quote, not U+0092.
    assert.equal(head.headers.get("x-v"), "caf\u00e9 \u2026\u2019");
  }
});

/** Index of the LF that ends the head (as readHead searches), or -1. */
function headEnd(bytes: Uint8Array): number {
  for (let i = 1; i < bytes.length; i++) {
    if (bytes[i] !== 10) continue;
    if (bytes[i - 1] === 10 || (i >= 2 && bytes[i - 1] === 13 && bytes[i - 2] === 10)) return i;
  }
  return -1;
}

Deno.test("http1 head: parseHead of any text is the reference's", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...PIECES, "a", "\u00e9", "\u2026")).map((p) => p.join("")),
      (text) => {
        assert.deepEqual(outcome(() => parseHead(text)), outcome(() => referenceParse(text)));
      },
    ),
    { numRuns: 2000 },
  );
});

/** The framing as it was read before the one-number path. */
function referenceFraming(headers: Map<string, string>): Framing {
  const te = headers.get("transfer-encoding");
  if (te !== undefined) {
    const codings = te.split(",").map((c) => c.trim().toLowerCase()).filter((c) => c !== "");
    if (codings.at(-1) === "chunked") {
      if (codings.length > 1) throw new Error(`unsupported transfer-coding (${te.slice(0, 40)})`);
      return { kind: "chunked" };
    }
    return { kind: "close" };
  }
  const cl = headers.get("content-length");
  if (cl !== undefined) {
    const values = new Set(cl.split(",").map((v) => v.trim()));
    const [only] = values;
    if (values.size !== 1 || !/^\d{1,15}$/.test(only)) {
      throw new Error("the answer's Content-Length is not one number");
    }
    return { kind: "length", length: Number(only) };
  }
  return { kind: "close" };
}

Deno.test("http1 framing: a Content-Length read without splitting frames as the split does", () => {
  const lengths = fc.oneof(
    fc.stringMatching(/^\d{1,17}$/),
    fc.array(
      fc.constantFrom("5", "05", "6", " ", ",", "x", "-1", "1e3", "\u0665", "999999999999999"),
      {
        maxLength: 6,
      },
    ).map((p) => p.join("")),
  );
  fc.assert(
    fc.property(
      lengths,
      fc.option(fc.constantFrom("chunked", "gzip, chunked", "gzip")),
      (cl, te) => {
        const headers = new Map([["content-length", cl.trim()]]);
        if (te !== null) headers.set("transfer-encoding", te);
        const framing = (read: typeof framingOf) => {
          try {
            return read(headers);
          } catch (error) {
            return { error: (error as Error).message };
          }
        };
        assert.deepEqual(framing(framingOf), framing(referenceFraming));
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("http1 request: bytes built in the connection's kept buffer are encode(head) and the body", () => {
  const encoder = new TextEncoder();
  const text = fc.array(
    fc.oneof(
      fc.constantFrom(
        "GET /a HTTP/1.1\r\n",
        "x-v: caf\u00e9\r\n",
        "\ud83d\ude00",
        "\ud800",
        "\r\n",
      ),
      fc.string({ maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 8 }),
      fc.constant("y".repeat(3000)),
    ),
    { maxLength: 12 },
  ).map((p) => p.join(""));
  const request = fc.tuple(text, fc.option(fc.uint8Array({ maxLength: 5000 })));
  fc.assert(
    fc.property(fc.array(request, { minLength: 1, maxLength: 5 }), (requests) => {
      // One connection, several requests in turn: nothing of an earlier one leaks into a later one.
      const connection = connectionOf([]);
      for (const [head, body] of requests) {
        const bytes = requestBytes(connection, head, body ?? undefined);
        const headBytes = encoder.encode(head);
        const expected = new Uint8Array(headBytes.byteLength + (body?.byteLength ?? 0));
        expected.set(headBytes);
        if (body) expected.set(body, headBytes.byteLength);
        assert.deepEqual(bytes, expected);
      }
    }),
    { numRuns: 500 },
  );
});

/** A head of the usual form (`usualHead`'s), as text: every character one byte. */
const usualText = fc.tuple(
  fc.constantFrom("0", "1"),
  fc.integer({ min: 100, max: 999 }),
  fc.option(fc.string({ unit: fc.constantFrom("O", "K", " ", "\t", "~", "a", ":"), maxLength: 8 })),
  fc.array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          "content-type",
          "Content-Length",
          "connection",
          "Connection",
          "CONNECTION",
          "x-a",
          "X-A",
        ),
        fc.string({ unit: fc.constantFrom("a", "Z", "-", "!", "~", "0", "`", "|"), minLength: 1 }),
      ),
      fc.constantFrom(":", ": ", ":\t", ":  \t"),
      fc.oneof(
        fc.constantFrom("close", "keep-alive, Close", "xclose", "12", "application/json", ""),
        fc.string({ unit: fc.constantFrom("a", " ", "\t", ":", "~", '"', "C"), maxLength: 10 }),
      ),
    ),
    { maxLength: 6 },
  ),
).map(([minor, code, reason, fields]) =>
  `HTTP/1.${minor} ${code}${reason === null ? "" : ` ${reason}`}\r\n` +
  fields.map(([name, colon, value]) => `${name}${colon}${value}\r\n`).join("") + "\r\n"
);
/** Pieces put anywhere into a usual head: each leaves the usual form, or keeps it differently. */
const STRAY = [
  "\r",
  "\n",
  "\0",
  "\v",
  "\f",
  "\u00a0",
  "\u0085",
  "\u007f",
  "\u00ff",
  ":",
  " ",
  "\t",
  "\r\n",
  "\r\n\r\n",
  "\n\n",
  "\n\r\n",
  "A",
  "(",
];
const bytesOf = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
/** Usual heads, some with stray pieces put in, then what follows a head (a body, another answer). */
const nearUsual = fc.tuple(
  usualText,
  fc.array(fc.tuple(fc.nat(), fc.constantFrom(...STRAY)), { maxLength: 3 }),
  fc.constantFrom("", "{}", "HTTP/1.1 200 OK\r\n\r\n", "\r\n", "x"),
).map(([text, strays, after]) => {
  let head = text;
  for (const [at, piece] of strays) {
    const i = at % (head.length + 1);
    head = head.slice(0, i) + piece + head.slice(i);
  }
  return { usual: strays.length === 0, bytes: bytesOf(head + after) };
});

Deno.test("http1 head: the usual head parsed from its bytes is the general path's head", () => {
  fc.assert(
    fc.property(nearUsual, fc.uint8Array({ maxLength: 8 }), ({ usual, bytes }, before) => {
      // In a buffer after other bytes, as a connection's buffer holds it.
      const buf = new Uint8Array(before.length + bytes.length);
      buf.set(before);
      buf.set(bytes, before.length);
      const found = { end: -1 };
      const head = usualHead(buf, before.length, buf.length, found);
      const end = headEnd(bytes);
      if (usual) assert.ok(head !== undefined, "a usual head takes the fast path");
      if (head === undefined) return;
      assert.equal(found.end - before.length, end + 1, "the head ends where the search ends it");
      assert.deepEqual(
        outcome(() => head),
        outcome(() => referenceParse(latin1.decode(bytes.subarray(0, end + 1)))),
      );
    }),
    { numRuns: 4000 },
  );
});

Deno.test("http1 head: the usual head's parse reads no byte past the bytes it is given", () => {
  fc.assert(
    fc.property(usualText, fc.nat(), (text, cut) => {
      // The whole head is in the buffer; the bytes given end before its end.
      const buf = bytesOf(text);
      const to = cut % buf.length;
      assert.equal(usualHead(buf, 0, to, { end: -1 }), undefined);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("http1 head: readHead of usual and near-usual heads answers what the general path answers", async () => {
  await fc.assert(
    fc.asyncProperty(nearUsual, fc.array(fc.nat(), { maxLength: 3 }), async ({ bytes }, cuts) => {
      const end = headEnd(bytes);
      fc.pre(end > 0);
      const connection = connectionOf(split(bytes, cuts));
      const read = await outcomeAsync(() => readHead(connection));
      assert.deepEqual(
        read,
        outcome(() => referenceParse(latin1.decode(bytes.subarray(0, end + 1)))),
      );
      // What follows the head is left for the body.
      if (!("error" in (read as object))) assert.equal(connection.start, end + 1);
    }),
    { numRuns: 3000 },
  );
});

async function outcomeAsync(parse: () => Promise<Head>): Promise<unknown> {
  try {
    const head = await parse();
    return { ...head, headers: [...head.headers] };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

Deno.test("http1 body: a whole Content-Length body read without waiting is the general read's", async () => {
  const fieldsOf = fc.record({
    "content-length": fc.option(
      fc.constantFrom("0", "3", "5", "05", "5, 5", "5, 6", " 5", "x", "1e0", "0x3", "99999999"),
      { freq: 2 },
    ),
    "transfer-encoding": fc.option(fc.constantFrom("chunked", "gzip", ""), { freq: 2 }),
    "content-encoding": fc.option(fc.constantFrom("", "identity", "gzip", "x"), { freq: 2 }),
  });
  await fc.assert(
    fc.asyncProperty(
      fieldsOf,
      fc.constantFrom(101, 200, 201, 204, 304, 404, 502),
      fc.constantFrom("GET", "HEAD", "POST"),
      fc.boolean(),
      fc.nat({ max: 10 }),
      fc.uint8Array({ maxLength: 12 }),
      fc.array(fc.uint8Array({ minLength: 1, maxLength: 6 }), { maxLength: 3 }),
      async (fields, status, method, keepAlive, cap, buffered, later) => {
        const headers = new Map<string, string>();
        for (const [name, value] of Object.entries(fields)) {
          if (value !== null) headers.set(name, value);
        }
        const head: Head = { status, statusText: "S", headers, keepAlive };
        const request = { method, url: new URL("http://test/"), headers: [], maxBodyBytes: cap };
        const read = async (how: typeof readBody) => {
          const connection = connectionOf(later);
          // What the head's read left in the buffer, after other bytes already consumed.
          connection.buf.set([1, 2], 0);
          connection.buf.set(buffered, 2);
          connection.start = 2;
          connection.end = 2 + buffered.length;
          try {
            const { response, reusable, rest } = await how(connection, request, head);
            return {
              ...response,
              headers: [...response.headers],
              reusable,
              rest: rest !== undefined,
              left: connection.buf.slice(connection.start, connection.end),
            };
          } catch (error) {
            return { error: (error as Error).message };
          }
        };
        assert.deepEqual(await read(readBody), await read(readAnyBody));
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("http1 body: the usual body already buffered is read without a promise", () => {
  const connection = connectionOf([]);
  connection.buf.set([7, 8, 9, 10]);
  connection.end = 4;
  const head: Head = {
    status: 200,
    statusText: "OK",
    headers: new Map([["content-length", "3"], ["content-type", "application/json"]]),
    keepAlive: true,
  };
  const request = { method: "GET", url: new URL("http://test/"), headers: [], maxBodyBytes: 3 };
  const read = readBody(connection, request, head);
  assert.ok(!(read instanceof Promise));
  assert.deepEqual(read.response.body, Uint8Array.of(7, 8, 9));
  assert.equal(read.reusable, true);
  assert.equal(connection.start, 3);
});
