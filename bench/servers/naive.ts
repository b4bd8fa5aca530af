/**
 * The baseline: a raw Deno.serve handler doing the JSON work an MCP server
 * cannot avoid, and nothing else. Per request it parses the JSON-RPC body;
 * `tools/list` builds the result object and stringifies it; `tools/call`
 * validates the arguments with `@cfworker/json-schema` (the validator weir
 * uses, schema compiled once) and stringifies the result. No header, Origin or
 * version checks. Usage: `deno run --allow-net bench/servers/naive.ts <port>`.
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

function reply(id: unknown, result: unknown, status = 200): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id, result }), { status, headers: HEADERS });
}

Deno.serve({ hostname: "127.0.0.1", port: portArg(), onListen: announce }, async (request) => {
  const message = await request.json();
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
