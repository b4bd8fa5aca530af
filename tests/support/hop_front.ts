/**
 * Fronts that stand between weir and an upstream for the tests of the hop
 * itself (redirects, connections closed mid-request, hostile answers), on
 * 127.0.0.1 at ports chosen at run time:
 *
 * - {@link startFront}: `Deno.serve`; each request is recorded, then either
 *   answered by the test (any `Response`, streamed or not) or passed to the
 *   inner upstream as it came;
 * - {@link startClosingFront}: raw HTTP/1.1 over `Deno.listen`; a request the
 *   test picks is read whole, recorded, and its connection closed with no
 *   answer; every other request is passed on (keep-alive kept, each answer
 *   framed by `Content-Length`, never `Connection: close`), and the test may
 *   have the connection closed right after a request's answer (as a server
 *   ending an idle kept-alive connection does). Each request records the
 *   number of the connection it came on.
 */

/** One request as a front received it. */
export interface FrontRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: Headers;
  body: string;
  /** Which connection it came on (1, 2, ... in order of acceptance; closing fronts only). */
  connection?: number;
}

/** A running front. */
export interface Front {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  port: number;
  requests: FrontRequest[];
  stop(): Promise<void>;
}

/** Pass a request on to `inner` and return its answer (streamed). */
async function pass(inner: string, req: FrontRequest, signal?: AbortSignal): Promise<Response> {
  try {
    return await passOn(inner, req, signal);
  } catch {
    // weir went away (its standalone stream closed): nothing to answer.
    return new Response(null, { status: 502 });
  }
}

async function passOn(inner: string, req: FrontRequest, signal?: AbortSignal): Promise<Response> {
  const headers = new Headers(req.headers);
  headers.delete("host");
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  const answer = await fetch(inner, {
    method: req.method,
    headers,
    body: req.method === "GET" || req.method === "HEAD" ? undefined : req.body,
    signal,
  });
  const out = new Headers(answer.headers);
  // fetch decoded the body: say so.
  out.delete("content-encoding");
  out.delete("content-length");
  return new Response(answer.body, { status: answer.status, headers: out });
}

/**
 * Start a front before `inner`: `decide` answers a request itself, or
 * returns `undefined` to pass it on.
 */
export function startFront(
  inner: string,
  decide: (req: FrontRequest) => Response | undefined | Promise<Response | undefined>,
): Promise<Front> {
  const requests: FrontRequest[] = [];
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({
          url: `http://127.0.0.1:${port}/mcp`,
          port,
          requests,
          stop: () => server.shutdown(),
        }),
    }, async (request) => {
      const url = new URL(request.url);
      const req: FrontRequest = {
        method: request.method,
        path: url.pathname + url.search,
        headers: request.headers,
        body: await request.text(),
      };
      requests.push(req);
      return (await decide(req)) ?? await pass(inner, req, request.signal);
    });
  });
}

/**
 * Start a raw front before `inner`: a request for which `close` says true is
 * read whole and its connection closed with no answer byte; one for which
 * `closeAfter` says true is answered, then its connection closed (the answer
 * does not say so: the client finds out when the connection ends).
 */
export function startClosingFront(
  inner: string,
  close: (req: FrontRequest) => boolean,
  closeAfter: (req: FrontRequest) => boolean = () => false,
): Front {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const requests: FrontRequest[] = [];
  const conns = new Set<Deno.Conn>();
  const stopping = new AbortController();
  let accepted = 0;
  const serve = async (conn: Deno.Conn) => {
    conns.add(conn);
    const connection = ++accepted;
    const decoder = new TextDecoder();
    let buffer = new Uint8Array(0);
    const more = async (): Promise<boolean> => {
      const chunk = new Uint8Array(64 * 1024);
      const n = await conn.read(chunk).catch(() => null);
      if (n === null) return false;
      const next = new Uint8Array(buffer.length + n);
      next.set(buffer);
      next.set(chunk.subarray(0, n), buffer.length);
      buffer = next;
      return true;
    };
    try {
      for (;;) {
        let end = -1;
        while ((end = indexOfHeadEnd(buffer)) < 0) if (!(await more())) return;
        const head = decoder.decode(buffer.subarray(0, end));
        const [requestLine, ...lines] = head.split("\r\n");
        const [method, path] = requestLine.split(" ");
        const headers = new Headers();
        for (const line of lines) {
          const colon = line.indexOf(":");
          if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
        }
        let body = "";
        buffer = buffer.slice(end + 4);
        if (/chunked/i.test(headers.get("transfer-encoding") ?? "")) {
          // Chunked: size line, data, CRLF ... until the 0-size chunk and its CRLF.
          for (;;) {
            let lineEnd = -1;
            while ((lineEnd = indexOfCrlf(buffer)) < 0) if (!(await more())) return;
            const size = parseInt(decoder.decode(buffer.subarray(0, lineEnd)), 16);
            while (buffer.length < lineEnd + 2 + size + 2) if (!(await more())) return;
            body += decoder.decode(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
            buffer = buffer.slice(lineEnd + 2 + size + 2);
            if (size === 0) break;
          }
        } else {
          const length = Number(headers.get("content-length") ?? "0");
          while (buffer.length < length) if (!(await more())) return;
          body = decoder.decode(buffer.subarray(0, length));
          buffer = buffer.slice(length);
        }
        const req: FrontRequest = { method, path, headers, body, connection };
        requests.push(req);
        if (close(req)) return;
        const answer = await pass(inner, req, stopping.signal);
        const bytes = new Uint8Array(await answer.arrayBuffer());
        let out = `HTTP/1.1 ${answer.status} ${answer.statusText || "OK"}\r\n`;
        answer.headers.forEach((value, name) => {
          if (name !== "transfer-encoding" && name !== "connection") out += `${name}: ${value}\r\n`;
        });
        out += `content-length: ${bytes.length}\r\n\r\n`;
        const head2 = new TextEncoder().encode(out);
        const all = new Uint8Array(head2.length + bytes.length);
        all.set(head2);
        all.set(bytes, head2.length);
        for (let written = 0; written < all.length;) {
          written += await conn.write(all.subarray(written));
        }
        if (closeAfter(req)) return;
      }
    } catch {
      // The other side went away.
    } finally {
      conns.delete(conn);
      try {
        conn.close();
      } catch { /* closed */ }
    }
  };
  (async () => {
    for await (const conn of listener) serve(conn);
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    requests,
    stop: () => {
      stopping.abort();
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      return Promise.resolve();
    },
  };
}

function indexOfCrlf(bytes: Uint8Array): number {
  for (let i = 0; i + 1 < bytes.length; i++) if (bytes[i] === 13 && bytes[i + 1] === 10) return i;
  return -1;
}

function indexOfHeadEnd(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}
