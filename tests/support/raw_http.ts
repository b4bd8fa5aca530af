/**
 * HTTP/1.1 by hand over `Deno.connect` to 127.0.0.1, for what `fetch` hides:
 * an arbitrary `Host`, a body larger than the server will read, and how many
 * bytes the server let the client push before it reset the connection.
 */

/** A parsed HTTP/1.1 response (chunked bodies decoded). */
export interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

/** Parse the bytes of one HTTP/1.1 response (as far as they arrived). */
export function parseResponse(text: string): RawResponse {
  const end = text.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = text.slice(0, end === -1 ? text.length : end).split("\r\n");
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = end === -1 ? "" : text.slice(end + 4);
  if (headers.get("transfer-encoding")?.includes("chunked")) {
    let decoded = "";
    let rest = body;
    for (let guard = 0; guard < 10_000; guard++) {
      const lineEnd = rest.indexOf("\r\n");
      if (lineEnd === -1) break;
      const size = parseInt(rest.slice(0, lineEnd), 16);
      if (!(size > 0)) break;
      decoded += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
    }
    body = decoded;
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

/** Send one request (head lines + body) and read the whole answer. */
export async function rawRequest(
  port: number,
  requestLine: string,
  headers: Record<string, string>,
  body = "",
): Promise<RawResponse> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = Object.entries({
    ...headers,
    "content-length": String(body.length),
    connection: "close",
  })
    .map(([k, v]) => `${k}: ${v}\r\n`).join("");
  await conn.write(new TextEncoder().encode(`${requestLine}\r\n${head}\r\n${body}`));
  return parseResponse(await new Response(conn.readable).text());
}

/** What happened when a client tried to push a large body. */
export interface PushOutcome {
  /** Body bytes the client managed to write before the connection failed (or all of them). */
  pushed: number;
  /** The body length the client tried to send. */
  attempted: number;
  /** The write error that stopped the client, if any (e.g. "BrokenPipe", "ConnectionReset"). */
  writeError?: string;
  /** What the server answered. */
  response: RawResponse;
}

/**
 * Try to POST `total` bytes of body, written 64 KiB at a time (at most
 * `total / 64 KiB` writes), while reading whatever the server answers.
 *
 * @param chunked send `Transfer-Encoding: chunked` instead of `Content-Length`
 */
export async function pushLargeBody(
  port: number,
  path: string,
  headers: Record<string, string>,
  total: number,
  chunked: boolean,
): Promise<PushOutcome> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const framing = chunked
    ? { "transfer-encoding": "chunked" }
    : { "content-length": String(total) };
  // `connection: close` so that a server that does read everything still ends the exchange.
  headers = { ...headers, connection: "close" };
  const head = Object.entries({ ...headers, ...framing }).map(([k, v]) => `${k}: ${v}\r\n`).join(
    "",
  );
  const encoder = new TextEncoder();
  const piece = new Uint8Array(64 * 1024).fill(0x20);
  const frame = chunked
    ? new Uint8Array([...encoder.encode(`${piece.length.toString(16)}\r\n`), ...piece, 13, 10])
    : piece;
  const reading = (async () => {
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(16 * 1024);
    try {
      for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
        chunks.push(buffer.slice(0, n));
      }
    } catch {
      // A reset after the answer: what arrived is what counts.
    }
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  })();
  let pushed = 0;
  let writeError: string | undefined;
  try {
    await conn.write(encoder.encode(`POST ${path} HTTP/1.1\r\n${head}\r\n`));
    for (let i = 0; i < total / piece.length; i++) {
      let written = 0;
      while (written < frame.length) written += await conn.write(frame.subarray(written));
      pushed += piece.length;
    }
    if (chunked) await conn.write(encoder.encode("0\r\n\r\n"));
  } catch (error) {
    writeError = (error as Error).name;
  }
  const text = await reading;
  try {
    conn.close();
  } catch {
    // Already closed by the reset.
  }
  return { pushed, attempted: total, writeError, response: parseResponse(text) };
}
