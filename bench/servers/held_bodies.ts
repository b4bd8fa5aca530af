/**
 * The floor of `bench/held_bodies_floor.ts`: a bare `Deno.serve` handler that
 * reads each request body into one buffer of its declared length (BYOB reads,
 * no copies, no checks) and answers only once it has all of it. Usage:
 * `deno run --allow-net bench/servers/held_bodies.ts <port>`; prints
 * `listening <port>`.
 *
 * @module
 */
import { announce, portArg } from "../catalog.ts";

const held: Uint8Array[] = [];

Deno.serve({ hostname: "127.0.0.1", port: portArg(), onListen: announce }, async (request) => {
  const length = Number(request.headers.get("content-length") ?? 0);
  let buffer = new ArrayBuffer(length);
  const reader = request.body!.getReader({ mode: "byob" });
  let offset = 0;
  try {
    while (offset < length) {
      const view = new Uint8Array(buffer, offset, Math.min(65536, length - offset));
      const { done, value } = await reader.read(view);
      if (done || !value) break;
      offset += value.byteLength;
      buffer = value.buffer as ArrayBuffer;
    }
  } catch {
    return new Response(null, { status: 400 }); // the client went away
  }
  held.push(new Uint8Array(buffer, 0, offset));
  return new Response(String(held.length));
});
