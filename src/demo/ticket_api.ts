/**
 * The demo upstream: a small ticket API on 127.0.0.1 that records every
 * request it receives. It deliberately offers more than the demo guardfile
 * grants (deleting tickets, any board), so the demo can show what the guard
 * keeps out. Also used by tests as a real local upstream.
 *
 * Routes (JSON; `X-Demo-Key` must equal the token, else 401):
 * - `GET /boards/{board}/tickets[?status=]`, `GET /boards/{board}/tickets/{id}`
 * - `POST /boards/{board}/tickets` `{title, details?}` -> 201
 * - `PATCH /boards/{board}/tickets/{id}` `{status?, title?}`
 * - `DELETE /boards/{board}/tickets/{id}` -> 204
 *
 * @module
 */

/** One request as the upstream saw it. */
export interface RecordedRequest {
  method: string;
  /** Raw request target path (still percent-encoded). */
  path: string;
  /** Raw query string without `?` ("" when none). */
  query: string;
  headers: Record<string, string>;
  body: string;
}

/** A running demo upstream. */
export interface DemoUpstream {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

interface Ticket {
  id: string;
  title: string;
  details: string;
  status: "open" | "closed";
}

/** Start the upstream on an ephemeral loopback port. */
export function startDemoUpstream(token: string): Promise<DemoUpstream> {
  const boards = new Map<string, Ticket[]>([
    ["demo-team", [
      { id: "1", title: "Write the release notes", details: "", status: "open" },
      { id: "2", title: "Rotate the staging key", details: "", status: "closed" },
    ]],
    ["finance", [
      { id: "1", title: "Payroll export", details: "account numbers inside", status: "open" },
    ]],
  ]);
  const requests: RecordedRequest[] = [];
  const json = (status: number, body: unknown) =>
    new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: body === undefined ? {} : { "content-type": "application/json" },
    });

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const rawPath = request.url.slice(url.origin.length).split("?")[0];
    const body = await request.text();
    requests.push({
      method: request.method,
      path: rawPath,
      query: url.search.slice(1),
      headers: Object.fromEntries(request.headers),
      body,
    });
    if (request.headers.get("x-demo-key") !== token) return json(401, { error: "bad key" });
    const m = /^\/boards\/([^/]+)\/tickets(?:\/([^/]+))?$/.exec(rawPath);
    if (!m) return json(404, { error: "no such route" });
    const board = decodeURIComponent(m[1]);
    const tickets = boards.get(board);
    if (!tickets) return json(404, { error: `no board ${board}` });
    const id = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
    const ticket = id === undefined ? undefined : tickets.find((t) => t.id === id);
    if (id !== undefined && !ticket) return json(404, { error: `no ticket ${id}` });
    const input = body ? JSON.parse(body) : {};
    switch (`${request.method} ${id === undefined ? "list" : "item"}`) {
      case "GET list": {
        const status = url.searchParams.get("status");
        return json(200, { board, tickets: tickets.filter((t) => !status || t.status === status) });
      }
      case "GET item":
        return json(200, ticket);
      case "POST list": {
        if (typeof input.title !== "string") return json(422, { error: "title is required" });
        const created: Ticket = {
          id: String(tickets.length + 1),
          title: input.title,
          details: input.details ?? "",
          status: "open",
        };
        tickets.push(created);
        return json(201, created);
      }
      case "PATCH item":
        Object.assign(ticket!, input.status ? { status: input.status } : {});
        return json(200, ticket);
      case "DELETE item":
        tickets.splice(tickets.indexOf(ticket!), 1);
        return json(204, undefined);
      default:
        return json(405, { error: "method not allowed" });
    }
  };

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({
          url: `http://127.0.0.1:${port}`,
          requests,
          close: () => server.shutdown(),
        }),
    }, handle);
  });
}
