/**
 * Official clients (v2 pinned to 2026-07-28, v1) that answer every
 * elicitation (a `confirm` question) with one chosen action and record each
 * message they were asked, for the tests of weir's `confirm` control.
 */
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ROOT, serveHttp, weirCommand } from "./cli.ts";

/** An elicitation answer (MCP `ElicitResult.action`). */
export type ElicitAction = "accept" | "decline" | "cancel";

/** What the client answers next (set it between calls), and each message asked, in order. */
export interface Confirmations<A extends ElicitAction = ElicitAction> {
  next: A;
  asked: string[];
}

/** `accept` with empty content, or the refusal `next` names. */
function reply(answer: Confirmations) {
  return answer.next === "accept"
    ? { action: "accept" as const, content: {} }
    : { action: answer.next };
}

/**
 * A v2 client pinned to 2026-07-28 that declares form elicitation and answers
 * each with `answer.next` (starting at `first`).
 */
export function confirmingClientV2<A extends ElicitAction>(
  name: string,
  first: A,
): { client: ClientV2; answer: Confirmations<A> } {
  const answer: Confirmations<A> = { next: first, asked: [] };
  const client = new ClientV2({ name, version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  client.setRequestHandler("elicitation/create", (request) => {
    answer.asked.push((request.params as { message: string }).message);
    return reply(answer);
  });
  return { client, answer };
}

/** A v1 client that declares elicitation and answers each with `answer.next` (starting at `first`). */
export function confirmingClientV1<A extends ElicitAction>(
  name: string,
  first: A,
): { client: ClientV1; answer: Confirmations<A> } {
  const answer: Confirmations<A> = { next: first, asked: [] };
  const client = new ClientV1({ name, version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  client.setRequestHandler(ElicitRequestSchema, (request: { params: { message: string } }) => {
    answer.asked.push(request.params.message);
    return reply(answer);
  });
  return { client, answer };
}

/** A confirming official client connected to `weir serve FILE`, and how to stop both. */
export interface ServedConfirming {
  client: ClientV1 | ClientV2;
  answer: Confirmations<"accept">;
  close(): Promise<void>;
}

/**
 * Serve `file` with the shipped CLI and connect a client that accepts every
 * question: on 2026-07-28 the v2 client over HTTP (`input_required`), on
 * 2025-11-25 the v1 client over stdio (elicitation). `env` is weir's.
 */
export async function serveConfirming(
  revision: "2026-07-28" | "2025-11-25",
  file: string,
  env: Record<string, string>,
): Promise<ServedConfirming> {
  const weir = revision === "2026-07-28" ? await serveHttp(file, { env }) : undefined;
  const { client, answer } = weir
    ? confirmingClientV2("confirming", "accept")
    : confirmingClientV1("confirming", "accept");
  const { command, args } = weirCommand();
  try {
    // deno-lint-ignore no-explicit-any
    await (client as any).connect(
      weir ? new HttpV2(new URL(`${weir.url}/mcp`)) : new StdioV1({
        command,
        args: [...args, "serve", file, "--stdio"],
        cwd: ROOT,
        env: { ...Deno.env.toObject(), ...env },
        stderr: "ignore",
      }),
    );
  } catch (error) {
    await weir?.stop();
    throw error;
  }
  return {
    client,
    answer,
    close: async () => {
      await client.close();
      await weir?.stop();
    },
  };
}
