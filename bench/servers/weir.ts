/**
 * weir's core as a library user mounts it: McpServer + createHttpHandler from
 * mod.ts, served by Deno.serve on 127.0.0.1 (with the Host check a loopback
 * `weir serve` applies). Usage: `deno run --allow-net bench/servers/weir.ts <port>`;
 * prints `listening <port>`.
 *
 * @module
 */
import { createHttpHandler, loopbackHosts, McpServer } from "../../mod.ts";
import { announce, echoResult, portArg, SERVER_INFO, TOOLS } from "../catalog.ts";

const port = portArg();
const server = new McpServer({
  ...SERVER_INFO,
  catalog: { tools: TOOLS, resources: [], prompts: [] },
  dispatch: (name, args) => echoResult(name === "echo" ? String(args.message) : name),
  log: () => {},
});
const handler = createHttpHandler(server, {
  authorize: () => true,
  allowedOrigins: [],
  allowedHosts: loopbackHosts(port),
});

Deno.serve({ hostname: "127.0.0.1", port, onListen: announce }, handler);
