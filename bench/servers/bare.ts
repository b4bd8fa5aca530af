/**
 * The cold-start floor: Deno.serve answering one fixed JSON body, nothing
 * imported. Usage: `deno run --allow-net bench/servers/bare.ts <port>`.
 *
 * @module
 */
const port = Number(Deno.args[0]);
const body = '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}';

Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: (addr) => console.log(`listening ${addr.port}`),
}, () => new Response(body, { headers: { "content-type": "application/json" } }));
