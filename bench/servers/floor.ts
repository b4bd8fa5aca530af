/**
 * The floor under weir's checks: the naive handler (`naive.ts`, same JSON
 * work, same answers) plus only what weir's checks must read, and none of the
 * checks themselves. Per request it reads the 8 request headers the checks
 * look at (Host, Origin, Content-Type, Accept, Content-Length,
 * MCP-Protocol-Version, Mcp-Method, Mcp-Name: one op call each on a served
 * request, and Deno then copies the header list when the response is sent),
 * and takes the body as bytes decoded strictly as UTF-8 (weir needs the JSON
 * text for exact ids and numbers, so it cannot use `request.json()`, which
 * parses text Deno decoded leniently). Its rate divided by the naive
 * handler's is the most any handler doing weir's checks could reach against
 * the naive baseline. Usage: `deno run --allow-net bench/servers/floor.ts <port>`.
 *
 * @module
 */
import { Validator } from "@cfworker/json-schema";
import { announce, echoResult, portArg, SERVER_INFO, TOOLS } from "../catalog.ts";

const validators = new Map(
  TOOLS.map((t) => [t.name, new Validator(t.inputSchema, "2020-12", false)]),
);
const META = { "io.modelcontextprotocol/serverInfo": SERVER_INFO };
const HEADERS = { "content-type": "application/json" };
const READ = [
  "host",
  "origin",
  "content-type",
  "accept",
  "content-length",
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
];
const utf8 = new TextDecoder("utf-8", { fatal: true });
/** Read so the header reads cannot be optimized away. */
export let headerBytes = 0;

function reply(id: unknown, result: unknown, status = 200): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id, result }), { status, headers: HEADERS });
}

Deno.serve({ hostname: "127.0.0.1", port: portArg(), onListen: announce }, async (request) => {
  for (const name of READ) headerBytes += request.headers.get(name)?.length ?? 0;
  const message = JSON.parse(utf8.decode(await request.bytes()));
  const params = message.params ?? {};
  if (message.method === "tools/list") {
    return reply(message.id, {
      tools: TOOLS,
      resultType: "complete",
      ttlMs: 0,
      cacheScope: "private",
      _meta: META,
    });
  }
  if (message.method === "tools/call") {
    const validator = validators.get(params.name);
    if (!validator) return reply(message.id, { content: [], isError: true });
    const checked = validator.validate(params.arguments ?? {});
    const result = checked.valid
      ? echoResult(String(params.arguments.message))
      : { content: [{ type: "text", text: checked.errors[0].error }], isError: true };
    return reply(message.id, { ...result, resultType: "complete", _meta: META });
  }
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no" } }),
    { status: 404, headers: HEADERS },
  );
});
