/**
 * The floor of one HTTP hop in Deno, for `bench/upstream.ts`: `Deno.serve`
 * in front of an MCP server, forwarding each POST body as it came with weir's
 * own HTTP/1.1 client (src/outbound/http1_client.ts: kept-alive connections,
 * `Content-Length` bodies) and returning the answer, with no check, no
 * session, no parse and no log line. No proxy written in Deno can add less
 * to a call than this does, so its ratios against direct say how much of
 * serve-upstream's cost is the hop itself.
 * Usage: `deno run --allow-net bench/servers/hop_floor.ts <port> <upstream URL>`.
 *
 * @module
 */
import { Http1Client } from "../../src/outbound/http1_client.ts";
import { announce, portArg } from "../catalog.ts";

const upstream = new URL(Deno.args[1]);
const client = new Http1Client();

Deno.serve({ hostname: "127.0.0.1", port: portArg(), onListen: announce }, async (request) => {
  const body = new Uint8Array(await request.arrayBuffer());
  const headers: [string, string][] = [];
  request.headers.forEach((value, name) => {
    if (name !== "host" && name !== "content-length") headers.push([name, value]);
  });
  const answer = await client.request({
    method: "POST",
    url: upstream,
    headers,
    body,
    maxBodyBytes: 8 * 1024 * 1024,
  });
  return new Response(answer.body as Uint8Array<ArrayBuffer> | null, {
    status: answer.status,
    headers: { "content-type": answer.headers.get("content-type") ?? "application/json" },
  });
});
