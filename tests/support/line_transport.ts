/**
 * An official client's transport over a pair of in-memory byte streams,
 * speaking MCP's stdio framing (one JSON-RPC message per line), for tests
 * that serve weir's core with `serveStdio` in the same process: the stdio
 * path without spawning a process. It has the shape both SDKs' clients
 * (v1 and v2) call: `start`, `send`, `close`, `onmessage`, `onclose`,
 * `onerror`.
 */

/** One JSON-RPC message (either SDK's type). */
type Message = Record<string, unknown>;

/** Reads lines from `incoming`, writes each sent message as a line to `outgoing`. */
export class MemoryLineTransport {
  onmessage?: (message: Message) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #incoming: ReadableStream<Uint8Array>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  #reading?: Promise<void>;
  #closed = false;

  constructor(incoming: ReadableStream<Uint8Array>, outgoing: WritableStream<Uint8Array>) {
    this.#incoming = incoming;
    this.#writer = outgoing.getWriter();
  }

  start(): Promise<void> {
    this.#reading = this.#read();
    return Promise.resolve();
  }

  async send(message: Message): Promise<void> {
    await this.#writer.write(this.#encoder.encode(`${JSON.stringify(message)}\n`));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // End of input: the server answers what it read, then its output ends.
    await this.#writer.close().catch(() => {});
    await this.#reading;
    this.onclose?.();
  }

  async #read(): Promise<void> {
    let buffer = "";
    try {
      for await (const chunk of this.#incoming.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        let nl;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line) this.onmessage?.(JSON.parse(line));
        }
      }
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }
}
