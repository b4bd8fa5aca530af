/**
 * The baselines of bench/chunked_body.ts: a bare `Deno.serve` that reads a
 * POSTed body one way and answers its length. `/healthz` answers at once.
 *
 * Usage: `deno run --allow-net bench/servers/chunked_reader.ts <reader>`, where
 * `<reader>` is `array-buffer` (`request.arrayBuffer()`: the runtime collects
 * the body, no cap), `iterate` (`for await` over `request.body`, chunk by
 * chunk) or `weir` (weir's `readBody`: the cap, the deadline and the piece
 * budget). Prints `listening <port>`.
 *
 * @module
 */
import { readBody } from "../../src/inbound/checks.ts";
import { plainRefusal, Refusal, withConnectionDrop } from "../../src/inbound/refusal.ts";

const reader = Deno.args[0];
if (!["array-buffer", "iterate", "weir"].includes(reader)) {
  console.error("usage: chunked_reader.ts array-buffer|iterate|weir");
  Deno.exit(2);
}

Deno.serve(
  {
    hostname: "127.0.0.1",
    port: 0,
    onListen: (addr) => console.log(`listening ${addr.port}`),
  },
  withConnectionDrop(async (request) => {
    if (new URL(request.url).pathname === "/healthz") return Response.json({ status: "ok" });
    let length = 0;
    if (reader === "array-buffer") length = (await request.arrayBuffer()).byteLength;
    else if (reader === "iterate") {
      for await (const chunk of request.body!) length += chunk.byteLength;
    } else {
      const body = await readBody(request, 1024 * 1024);
      if (body instanceof Refusal) return plainRefusal(body);
      length = body.byteLength;
    }
    return Response.json({ length });
  }),
);
