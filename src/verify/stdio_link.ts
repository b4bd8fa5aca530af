/**
 * A stdio client session for `weir verify`: weir's own stdio transport
 * (`serveStdio`) fed by in-process streams, spoken to as a 2025-11-25 client
 * that declares elicitation, so a gated call is asked over the session
 * (`elicitation/create`) and answered here.
 *
 * @module
 */
import type { McpServer } from "../mcp/server.ts";
import { serveStdio } from "../transport/stdio.ts";

/** What one call over the session gave. */
export interface StdioAnswer {
  /** Every line weir wrote while the call ran (the answer and any request to the client). */
  text: string;
  /** The call's result was a success. */
  ok: boolean;
  /** weir asked the client a question (elicitation) before answering. */
  asked: boolean;
}

/** An open session. */
export interface StdioLink {
  /**
   * Call a tool.
   * @param onAsk runs when weir asks the client to confirm, before the answer is sent
   */
  call(tool: string, args: string, onAsk: () => void): Promise<StdioAnswer>;
  close(): Promise<void>;
}

/** Open a session on `server` and do the 2025-11-25 handshake. */
export async function openStdioLink(server: McpServer): Promise<StdioLink> {
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const served = serveStdio(server, { readable: input.readable, writable: output.writable });
  const writer = input.writable.getWriter();
  const lines = output.readable.pipeThrough(new TextDecoderStream()).getReader();
  const encoder = new TextEncoder();
  let buffered = "";
  const send = (line: string) => writer.write(encoder.encode(line + "\n"));
  const next = async (): Promise<string> => {
    while (!buffered.includes("\n")) {
      const { done, value } = await lines.read();
      if (done) throw new Error("weir's stdio session ended");
      buffered += value;
    }
    const at = buffered.indexOf("\n");
    const line = buffered.slice(0, at);
    buffered = buffered.slice(at + 1);
    return line;
  };
  let id = 0;
  /** Send a request and read until its answer, answering weir's own requests meanwhile. */
  const request = async (line: string, own: number, onAsk: () => void) => {
    await send(line);
    const seen: string[] = [];
    let asked = false;
    while (true) {
      const text = await next();
      seen.push(text);
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(text);
      } catch {
        continue;
      }
      if (message.method === "elicitation/create" && message.id !== undefined) {
        asked = true;
        onAsk();
        await send(
          JSON.stringify({
            jsonrpc: "2.0",
            id: message.id,
            result: { action: "accept", content: {} },
          }),
        );
        continue;
      }
      if (message.id === own && ("result" in message || "error" in message)) {
        const result = message.result as Record<string, unknown> | undefined;
        return { text: seen.join("\n"), ok: !!result && result.isError !== true, asked };
      }
    }
  };
  await request(
    JSON.stringify({
      jsonrpc: "2.0",
      id: ++id,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: {} },
        clientInfo: { name: "weir-verify", version: "1" },
      },
    }),
    id,
    () => {},
  );
  await send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return {
    call: (tool, args, onAsk) => {
      const own = ++id;
      return request(
        `{"jsonrpc":"2.0","id":${own},"method":"tools/call","params":{"name":${
          JSON.stringify(tool)
        },"arguments":${args}}}`,
        own,
        onAsk,
      );
    },
    close: async () => {
      await writer.close();
      await served;
      await lines.cancel().catch(() => {});
    },
  };
}
