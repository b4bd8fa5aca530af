/**
 * A real local HTTP upstream for tests: listens on 127.0.0.1, records every
 * request exactly as received (method, raw path, raw query, headers, body),
 * and answers from a handler (by default: 200 with a JSON echo of the request).
 */

export interface Recorded {
  method: string;
  /** Raw request-target path, still percent-encoded. */
  path: string;
  /** Raw query string, no leading "?". */
  query: string;
  headers: Headers;
  body: string;
}

export interface Recorder {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export type Answer = (req: Recorded) => Response | Promise<Response>;

export const echo: Answer = (req) =>
  Response.json({ method: req.method, path: req.path, query: req.query, items: [1, 2, 3] });

export function startRecorder(answer: Answer = echo): Promise<Recorder> {
  const requests: Recorded[] = [];
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({ url: `http://127.0.0.1:${port}`, requests, close: () => server.shutdown() }),
    }, async (request) => {
      const target = request.url.slice(new URL(request.url).origin.length);
      const q = target.indexOf("?");
      const rec: Recorded = {
        method: request.method,
        path: q === -1 ? target : target.slice(0, q),
        query: q === -1 ? "" : target.slice(q + 1),
        headers: request.headers,
        body: await request.text(),
      };
      requests.push(rec);
      return await answer(rec);
    });
  });
}
