/**
 * The upstream of the guarded-proxy benchmark: `GET /things/<id>` answers a
 * small JSON record (about 120 bytes, one array) naming the id it was asked
 * for; anything else is 404. Usage: `deno run --allow-net
 * bench/servers/upstream.ts <port>`; prints `listening <port>`.
 *
 * @module
 */
import { announce, portArg } from "../catalog.ts";

const HEADERS = { "content-type": "application/json" };

Deno.serve({ hostname: "127.0.0.1", port: portArg(), onListen: announce }, (request) => {
  const path = new URL(request.url).pathname;
  if (request.method !== "GET" || !path.startsWith("/things/")) {
    return new Response("not found", { status: 404 });
  }
  const id = decodeURIComponent(path.slice("/things/".length));
  return new Response(
    JSON.stringify({
      id,
      name: "thing",
      state: "open",
      tags: ["a", "b", "c"],
      owner: { login: "me", id: 7 },
      count: 42,
    }),
    { headers: HEADERS },
  );
});
