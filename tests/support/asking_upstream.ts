/**
 * An MCP upstream that asks its client something in the middle of a tool
 * call: a server-to-client request (`sampling/createMessage`, `roots/list`,
 * `elicitation/create`, `ping`, `tasks/*`, or a method no revision defines),
 * written raw (no SDK) so that it can send what a revision forbids too.
 *
 * Its one tool, `ask {method}`, sends a request of that method and waits (at
 * most {@link ASK_WAIT_MS}) for the client's answer, then answers the call
 * with `answered <the answer's result or error as JSON>`, or
 * `no answer within ... ms`. Over HTTP the request goes on the call's own
 * event stream (`sse`), or, with JSON answers (`json`, 2025-11-25 only), on
 * the standalone `GET` stream; over stdio it is a line on stdout
 * (`tests/fixtures/asking_stdio_upstream.ts`). Under 2026-07-28 it refuses
 * the 2025-11-25 handshake, so a client falls back to 2026-07-28.
 */

/** Every server-to-client request method of either revision, and one neither defines. */
export const SERVER_REQUESTS = [
  "ping",
  "sampling/createMessage",
  "roots/list",
  "elicitation/create",
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "weir-test/unknown",
] as const;

/** How long the upstream waits for its answer before giving up (ms). */
export const ASK_WAIT_MS = 10_000;

type Revision = "2025-11-25" | "2026-07-28";
interface Message extends Record<string, unknown> {
  jsonrpc?: string;
  id?: unknown;
  method?: string;
  params?: { protocolVersion?: string; arguments?: { method?: unknown } };
}

/** Plausible params for each request the upstream sends. */
const PARAMS: Record<string, Record<string, unknown>> = {
  "sampling/createMessage": {
    messages: [{ role: "user", content: { type: "text", text: "Say yes." } }],
    maxTokens: 5,
  },
  "elicitation/create": {
    message: "Continue?",
    requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
  },
  "tasks/get": { taskId: "t-1" },
  "tasks/result": { taskId: "t-1" },
  "tasks/cancel": { taskId: "t-1" },
};

const TOOL = {
  name: "ask",
  description: "Asks the client something, then answers.",
  inputSchema: {
    type: "object",
    properties: { method: { type: "string" } },
    required: ["method"],
  },
};

/** One answer weir sent to one of the upstream's requests. */
export interface ClientAnswer {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/**
 * The JSON-RPC side of the asking upstream, shared by the HTTP and stdio
 * forms: answers weir's requests, sends its own through `send`, and keeps
 * the answers weir gave.
 */
export class AskingPeer {
  readonly revision: Revision;
  /** Every answer weir sent to the upstream's requests, in order. */
  readonly answers: ClientAnswer[] = [];
  readonly #waiting = new Map<string, (answer: ClientAnswer) => void>();
  #next = 0;

  constructor(revision: Revision) {
    this.revision = revision;
  }

  /** Take a message from weir that is an answer; true when it was one. */
  takeAnswer(message: Message): boolean {
    if (message.method !== undefined || !("result" in message || "error" in message)) return false;
    const answer = message as unknown as ClientAnswer;
    this.answers.push(answer);
    this.#waiting.get(String(answer.id))?.(answer);
    this.#waiting.delete(String(answer.id));
    return true;
  }

  /**
   * The answer to one of weir's requests that is not `tools/call`, or
   * `null` for a notification; `{status}` for the 2025-11-25 handshake
   * refused under 2026-07-28.
   */
  answer(message: Message): Message | null {
    if (message.id === undefined) return null;
    const id = message.id;
    const modern = this.revision === "2026-07-28";
    const complete = modern ? { resultType: "complete" } : {};
    switch (message.method) {
      case "initialize":
        if (modern) {
          return {
            jsonrpc: "2.0",
            id,
            error: {
              code: -32022,
              message: "Unsupported protocol version",
              data: { supported: ["2026-07-28"], requested: message.params?.protocolVersion },
            },
          };
        }
        return {
          jsonrpc: "2.0",
          id,
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "asking-upstream", version: "1.0.0" },
          },
        };
      case "server/discover":
        if (!modern) break;
        return {
          jsonrpc: "2.0",
          id,
          result: {
            ...complete,
            supportedVersions: ["2026-07-28"],
            capabilities: { tools: {} },
            ttlMs: 0,
            cacheScope: "public",
            _meta: {
              "io.modelcontextprotocol/serverInfo": { name: "asking-upstream", version: "1.0.0" },
            },
          },
        };
      case "tools/list":
        return {
          jsonrpc: "2.0",
          id,
          result: {
            ...complete,
            tools: [TOOL],
            ...(modern ? { ttlMs: 0, cacheScope: "public" } : {}),
          },
        };
    }
    return { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } };
  }

  /**
   * Run `tools/call` of `ask`: `send` the request it names, wait for weir's
   * answer (bounded), and return the call's answer.
   */
  async call(message: Message, send: (request: Message) => void): Promise<Message> {
    const method = String(message.params?.arguments?.method ?? "");
    const id = `ask-${++this.#next}`;
    const answered = new Promise<ClientAnswer | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), ASK_WAIT_MS);
      this.#waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
    });
    send({ jsonrpc: "2.0", id, method, params: PARAMS[method] ?? {} });
    const answer = await answered;
    const text = answer
      ? `answered ${
        JSON.stringify("error" in answer ? { error: answer.error } : { result: answer.result })
      }`
      : `no answer within ${ASK_WAIT_MS} ms`;
    return {
      jsonrpc: "2.0",
      id: message.id,
      result: {
        ...(this.revision === "2026-07-28" ? { resultType: "complete" } : {}),
        content: [{ type: "text", text }],
      },
    };
  }
}

/** A running HTTP asking upstream. */
export interface AskingHttpUpstream {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  peer: AskingPeer;
  /** How many of the calls' event streams the client closed before the call's answer. */
  closedEarly(): number;
  stop(): Promise<void>;
}

const encoder = new TextEncoder();
const SSE = { "content-type": "text/event-stream", "cache-control": "no-cache" };
const JSON_TYPE = { "content-type": "application/json" };

function event(message: Message): Uint8Array {
  return encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

/**
 * Start the asking upstream over Streamable HTTP on 127.0.0.1 (see the
 * module doc). Under 2025-11-25 it gives a session id and serves the
 * standalone `GET` stream.
 */
export function startAskingHttpUpstream(
  revision: Revision,
  framing: "sse" | "json",
): AskingHttpUpstream {
  const peer = new AskingPeer(revision);
  let standalone: ReadableStreamDefaultController<Uint8Array> | undefined;
  const standaloneOpen = Promise.withResolvers<void>();
  let closedEarly = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method === "GET" && revision === "2025-11-25") {
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            standalone = controller;
            standaloneOpen.resolve();
          },
          cancel() {
            standalone = undefined;
          },
        }),
        { headers: SSE },
      );
    }
    if (req.method === "DELETE") return new Response(null, { status: 200 });
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const message = await req.json() as Message;
    if (peer.takeAnswer(message)) return new Response(null, { status: 202 });
    if (message.method === "tools/call") {
      if (framing === "json") {
        const answer = await peer.call(message, (request) => {
          // The standalone stream, once the client opened it (bounded by the call's own wait).
          void Promise.race([
            standaloneOpen.promise,
            new Promise((r) => setTimeout(r, ASK_WAIT_MS)),
          ])
            .then(() => standalone?.enqueue(event(request)));
        });
        return new Response(JSON.stringify(answer), { headers: JSON_TYPE });
      }
      let done = false;
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          const answer = await peer.call(message, (request) => controller.enqueue(event(request)));
          if (done) return;
          done = true;
          controller.enqueue(event(answer));
          controller.close();
        },
        cancel() {
          if (!done) closedEarly++;
          done = true;
        },
      });
      return new Response(body, { headers: SSE });
    }
    const answer = peer.answer(message);
    if (answer === null) return new Response(null, { status: 202 });
    const headers: Record<string, string> = { ...JSON_TYPE };
    if (message.method === "initialize" && revision === "2025-11-25") {
      headers["mcp-session-id"] = "asking-session-1";
    }
    const status = "error" in answer && message.method === "initialize" ? 400 : 200;
    return new Response(JSON.stringify(answer), { status, headers });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    peer,
    closedEarly: () => closedEarly,
    stop: async () => {
      try {
        standalone?.close();
      } catch { /* closed */ }
      await server.shutdown();
    },
  };
}

/** The command line of the stdio asking upstream (`tests/fixtures/asking_stdio_upstream.ts`). */
export function askingStdioCommand(revision: Revision): string[] {
  const script = new URL("../fixtures/asking_stdio_upstream.ts", import.meta.url).pathname;
  return [Deno.execPath(), "run", "--quiet", "--no-config", script, revision];
}
