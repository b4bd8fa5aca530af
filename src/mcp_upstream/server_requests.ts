/**
 * What weir does with a request the upstream MCP server sends it: a
 * server-to-client request (`sampling/createMessage`, `roots/list`,
 * `elicitation/create`, `ping`, `tasks/*`, or any other method), in one
 * place for every path a call takes (weir's own HTTP/1.1 client in
 * `fast_call.ts`, the official clients in `sessions.ts`, the event streams
 * of `http_fetch.ts`). weir is a client that declares no capability and
 * relays nothing to its caller, so the upstream is answered at once and is
 * never left waiting (nor the call with it):
 *
 * - 2025-11-25 (which allows these requests): `ping` gets an empty result
 *   (the spec's "ping" utility: the receiver MUST respond promptly), every
 *   other method JSON-RPC `-32601` "Method not found" (the client did not
 *   declare sampling, roots, elicitation or tasks); the call goes on.
 * - 2026-07-28 forbids them (servers ask through an `input_required`
 *   result, which weir does not relay). One that arrives on a call's own
 *   event stream fails that call at once ({@link forbiddenRequest}) and the
 *   stream is closed, which is how that revision cancels a request over
 *   HTTP; over stdio, where every message shares one stream and no call can
 *   be told apart, it is answered `-32601` (JSON-RPC 2.0 section 4: a
 *   request gets a response), though the revision says a client writes no
 *   responses: an upstream that broke the first rule is not left waiting.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import { UpstreamRefused } from "./errors.ts";

/** A JSON-RPC request from the upstream: a method and an id. */
export interface ServerRequest {
  id: string | number;
  method: string;
}

/** Whether `message` is a JSON-RPC request (a `method` and a string or number `id`). */
export function isServerRequest(message: unknown): message is ServerRequest {
  if (typeof message !== "object" || message === null) return false;
  const { id, method } = message as { id?: unknown; method?: unknown };
  return typeof method === "string" && (typeof id === "string" || typeof id === "number");
}

/**
 * The JSON-RPC response weir sends to an upstream's request (see the module
 * doc): `{}` for a 2025-11-25 `ping`, else error `-32601`.
 * @example
 * ```ts
 * import { answerFor } from "./server_requests.ts";
 * answerFor("2025-11-25", { id: 7, method: "ping" }); // {jsonrpc: "2.0", id: 7, result: {}}
 * answerFor("2025-11-25", { id: 8, method: "roots/list" }).error; // {code: -32601, ...}
 * ```
 */
export function answerFor(
  revision: "2025-11-25" | "2026-07-28",
  request: ServerRequest,
): JsonObject {
  if (revision === "2025-11-25" && request.method === "ping") {
    return { jsonrpc: "2.0", id: request.id, result: {} };
  }
  return {
    jsonrpc: "2.0",
    id: request.id,
    error: {
      code: -32601,
      message: `Method not found: weir relays no ${
        JSON.stringify(request.method)
      } request to its caller`,
    },
  };
}

/**
 * The failure of a call on whose event stream a 2026-07-28 upstream sent a
 * request (see the module doc); the message names the method and follows
 * "the upstream answered: " in what the caller reads.
 */
export function forbiddenRequest(method: string): UpstreamRefused {
  return new UpstreamRefused(
    0,
    `a ${JSON.stringify(method.slice(0, 100))} request during the call, which 2026-07-28 ` +
      "forbids a server (it asks through input_required, which weir does not relay either); " +
      "weir closed the call's stream. The call was sent once and may have run; the tool " +
      "needs a client that answers such requests: leave it out of weir's allowlist",
  );
}
