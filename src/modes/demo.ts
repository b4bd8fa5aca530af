/**
 * `weir demo`: the embedded demo guardfile served in front of the demo
 * upstream, driven by the official MCP TypeScript client over HTTP, each
 * exchange printed. Every step checks what it shows; the exit code is 0 only
 * when all of them behaved.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import demoText from "../../guardfiles/demo.mcp.kdl" with { type: "text" };
import { parseGuardfile } from "../guardfile/load.ts";
import { formatDiagnostic } from "../guardfile/diagnostics.ts";
import { startDemoUpstream } from "../demo/ticket_api.ts";
import { guardedServer } from "./serve.ts";
import { listenHttp } from "../serving/listen_http.ts";

const FILE = "guardfiles/demo.mcp.kdl";

interface Printer {
  (line?: string): void;
}

/**
 * Run the demo.
 * @param print where lines go (stdout by default)
 * @returns the exit code: 0 when every step behaved as the guardfile says
 */
export async function runDemo(print: Printer = (l = "") => console.log(l)): Promise<number> {
  const loaded = parseGuardfile(demoText, FILE);
  if (!loaded.guardfile) {
    for (const d of loaded.diagnostics) console.error(`weir: ${formatDiagnostic(FILE, d)}`);
    return 1;
  }
  const token = crypto.randomUUID();
  const upstream = await startDemoUpstream(token);
  const env: Record<string, string> = { WEIR_DEMO_BASE_URL: upstream.url, WEIR_DEMO_TOKEN: token };
  const quiet = () => {};
  const server = guardedServer(loaded.guardfile, {
    resolver: { env: (name) => env[name], readFile: () => Promise.reject(new Error("no files")) },
    log: quiet,
  });
  const controller = new AbortController();
  const http = await listenHttp(server, {
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    log: quiet,
  });
  const mcpUrl = `http://127.0.0.1:${http.port}/mcp`;

  const client = new Client({ name: "weir-demo", version: "0.1.0" });
  let passed = 0;
  let failed = 0;
  const check = (ok: boolean, what: string) => {
    if (ok) passed++;
    else failed++;
    print(`   ${ok ? "ok" : "FAILED"}: ${what}`);
  };
  const seen = () => upstream.requests.length;
  const upstreamSince = (before: number) =>
    upstream.requests.slice(before).map((r) =>
      `${r.method} ${r.path}${r.query ? `?${r.query}` : ""}`
    );

  try {
    print(`weir demo: ${FILE} in front of a ticket API at ${upstream.url}`);
    print(`MCP endpoint ${mcpUrl}, driven by the official MCP TypeScript client`);
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
    print(`connected: server "${client.getServerVersion()?.name}", protocol 2025-11-25 handshake`);
    print();

    print("1. tools/list: the surface is exactly the grants, the withheld stub and the info tool");
    const { tools } = await client.listTools();
    for (const t of tools) {
      const kind = t._meta?.["weir.dev/withheld"]
        ? "withheld"
        : t.annotations?.readOnlyHint
        ? "read"
        : "write";
      print(`   ${t.name.padEnd(14)} ${kind.padEnd(8)} ${t.description}`);
    }
    check(
      tools.map((t: { name: string }) => t.name).join(",") ===
        "close_ticket,create_ticket,delete_ticket,get_ticket,list_ticket,weir_info",
      "six tools, sorted; nothing the guardfile does not name",
    );
    print();

    const call = async (
      step: string,
      name: string,
      args: Record<string, unknown>,
    ) => {
      print(`${step} tools/call ${name} ${JSON.stringify(args)}`);
      const before = seen();
      const result = await client.callTool({ name, arguments: args });
      const text = (result.content as { type: string; text: string }[])
        .map((c) => c.text).join("\n");
      print(
        `   <- ${result.isError ? "isError: " : ""}${
          text.length > 400 ? text.slice(0, 400) + "..." : text
        }`,
      );
      const sent = upstreamSince(before);
      print(`   upstream received: ${sent.length === 0 ? "nothing" : sent.join(", ")}`);
      return { result, sent };
    };

    const read = await call("2.", "list_ticket", { board: "demo-team", status: "open" });
    check(
      !read.result.isError && read.sent.join() === "GET /boards/demo-team/tickets?status=open",
      "a read grant reaches exactly its method, path and query",
    );
    print();

    const write = await call("3.", "create_ticket", {
      board: "demo-team",
      title: "Try weir",
      details: "from the demo",
    });
    const body = upstream.requests.at(-1)?.body;
    check(
      !write.result.isError && write.sent.join() === "POST /boards/demo-team/tickets" &&
        body === JSON.stringify({ title: "Try weir", details: "from the demo" }),
      "a write grant sends its declared body, and the credential header only upstream",
    );
    print();

    const withheld = await call("4.", "delete_ticket", { board: "demo-team", id: "1" });
    check(
      withheld.result.isError === true && withheld.sent.length === 0,
      "the withheld tool refuses and sends nothing",
    );
    print();

    const denied = await call("5.", "get_ticket", { board: "finance", id: "1" });
    check(
      denied.result.isError === true && denied.sent.length === 0,
      'restrict board matches "demo-*" refuses before any request',
    );
    print();
    print(
      failed === 0
        ? `all ${passed} checks passed: the agent could do what the guardfile grants, and nothing else.`
        : `${failed} of ${passed + failed} checks FAILED.`,
    );
  } catch (error) {
    print(`demo failed: ${(error as Error).message}`);
    failed++;
  } finally {
    await client.close().catch(() => {});
    controller.abort();
    await http.finished;
    await upstream.close();
  }
  return failed === 0 ? 0 : 1;
}
