/**
 * The cold-start baseline: a bare Deno script, no imports, that answers
 * `initialize` and `tools/list` on newline-delimited stdin as an MCP server
 * would (one `echo` tool), and ignores everything else.
 *
 * @module
 */
const decoder = new TextDecoder();
const encoder = new TextEncoder();
let buffered = "";
for await (const chunk of Deno.stdin.readable) {
  buffered += decoder.decode(chunk, { stream: true });
  let newline;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const message = JSON.parse(buffered.slice(0, newline));
    buffered = buffered.slice(newline + 1);
    let result;
    if (message.method === "initialize") {
      result = {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "bare", version: "1" },
      };
    } else if (message.method === "tools/list") {
      result = { tools: [{ name: "echo", inputSchema: { type: "object" } }] };
    } else continue;
    await Deno.stdout.write(
      encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }) + "\n"),
    );
  }
}
