/**
 * MCP over stdio: newline-delimited JSON-RPC, one message per line (the
 * "stdio" section of the transports page, both revisions). stdout carries
 * nothing but responses; logs belong on stderr.
 *
 * Requests are answered concurrently, in completion order, each on its own
 * line. On end of input, or when `signal` aborts (SIGTERM), reading stops,
 * requests in flight finish and are answered, and the returned promise
 * resolves. One connection is one {@link Session}: an `initialize` puts it
 * on the handshake revision for later requests without `_meta`.
 *
 * @module
 */
import { type Logger, type McpServer, Session } from "../mcp/server.ts";
import { idKey, parseMessage, type RequestId } from "../mcp/jsonrpc.ts";

/** A plain byte source, as `Deno.stdin` is. */
export interface ByteReader {
  /**
   * Fill some of `p`.
   * @returns how many bytes were read (at most `p.length`), or `null` at end of input
   */
  read(p: Uint8Array): Promise<number | null>;
}

/** A plain byte sink, as `Deno.stdout` is. */
export interface ByteWriter {
  /**
   * Write some of `p` (the caller writes the rest).
   * @returns how many bytes of `p` were written
   */
  write(p: Uint8Array): Promise<number>;
}

/** Options of {@link serveStdio}. */
export interface StdioOptions {
  /**
   * Where messages come from: a stream, or a plain reader. The CLI passes
   * `Deno.stdin` itself: its `readable` stream costs a cold start a few
   * milliseconds on first use (bench/README.md, "Cold start").
   */
  readable: ReadableStream<Uint8Array> | ByteReader;
  /** Where responses go: a stream, or a plain writer (the CLI passes `Deno.stdout`). */
  writable: WritableStream<Uint8Array> | ByteWriter;
  /** Abort to stop reading and drain (e.g. on SIGTERM). */
  signal?: AbortSignal;
  /** Longest accepted line in bytes (default 1 MiB); longer lines are refused and skipped. */
  maxLineBytes?: number;
  /**
   * Aborts every request in flight (e.g. at a shutdown's drain deadline),
   * with its reason (a `ToolError` becomes the call's result).
   */
  cancel?: AbortSignal;
  /**
   * Called once when reading stops (end of input, `signal`, or a broken
   * input), before waiting for requests in flight; `pending()` counts them.
   */
  onStop?: (pending: () => number) => void;
  /** Receives the audit line of a refused over-long line (rule `size`). */
  log?: Logger;
}

const NEWLINE = 0x0a;

/**
 * Serve one stdio connection until end of input or `signal`.
 *
 * @returns when input has ended and every request read has been answered
 *
 * @example One ping over a stdio connection
 * ```ts
 * import { serveStdio } from "./stdio.ts";
 * import { McpServer } from "../mcp/server.ts";
 * const server = new McpServer({
 *   name: "x",
 *   version: "1.0.0",
 *   catalog: { tools: [], resources: [], prompts: [] },
 * });
 * const input = new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
 * let out = "";
 * await serveStdio(server, {
 *   readable: new Blob([input]).stream(),
 *   writable: new WritableStream({ write: (chunk) => void (out += new TextDecoder().decode(chunk)) }),
 * });
 * if (JSON.parse(out).id !== 1) throw new Error(out);
 * ```
 */
export async function serveStdio(
  server: Pick<McpServer, "handle" | "parseError">,
  options: StdioOptions,
): Promise<void> {
  const max = options.maxLineBytes ?? 1024 * 1024;
  const session = new Session();
  const output = options.writable;
  // Told apart by shape: naming the stream classes would load them.
  const writer = "getWriter" in output ? output.getWriter() : undefined;
  const writeBytes = writer
    ? (bytes: Uint8Array) => writer.write(bytes)
    : async (bytes: Uint8Array) => {
      for (let at = 0; at < bytes.length;) {
        at += await (output as ByteWriter).write(bytes.subarray(at));
      }
    };
  const encoder = new TextEncoder();
  // Invalid UTF-8 is a parse error (as over HTTP), never silently replaced.
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let writing: Promise<void> = Promise.resolve();
  const write = (line: string) => {
    writing = writing.then(() => writeBytes(encoder.encode(line + "\n"))).catch(() => {});
    return writing;
  };
  // stdio carries server-to-client requests (2025-11-25 elicitation): the
  // client's responses come back on stdin and settle in the session.
  session.send = (line) => void write(line);
  const inFlight = new Set<Promise<void>>();
  // The last task read for each request id still in flight: a request reusing
  // the id of one in flight waits for it, so answers come in request order.
  const byId = new Map<string | number, Promise<void>>();

  const answer = (bytes: Uint8Array) => {
    let text: string;
    try {
      text = decoder.decode(bytes).replace(/\r$/, "");
    } catch {
      write(server.parseError("the message is not valid UTF-8").body!);
      return;
    }
    if (text.trim() === "") return;
    let message: unknown;
    try {
      message = parseMessage(text);
    } catch {
      write(server.parseError().body!);
      return;
    }
    const id = requestIdOf(message);
    const key = id === undefined ? undefined : idKey(id);
    const before = key === undefined ? undefined : byId.get(key);
    const task = (async () => {
      if (before) await before;
      let body: string | null;
      try {
        body = (await server.handle(message, { session })).body;
      } catch {
        // handle() answers every failure itself; this is the last net: never die, never go silent.
        body = JSON.stringify({
          jsonrpc: "2.0",
          error: { code: -32603, message: "Internal error" },
        });
      }
      if (body !== null) await write(body);
    })();
    inFlight.add(task);
    if (key !== undefined) byId.set(key, task);
    task.finally(() => {
      inFlight.delete(task);
      if (key !== undefined && byId.get(key) === task) byId.delete(key);
    });
  };

  const tooLong = () => {
    options.log?.({
      level: "warn",
      event: "refused",
      decision: "refuse",
      rule: "size",
      status: 413,
      reason: `line over ${max} bytes`,
    });
    return write(JSON.stringify({
      jsonrpc: "2.0",
      error: { code: -32600, message: `Message exceeds ${max} bytes; skipped` },
    }));
  };

  const input = chunksOf(options.readable);
  const stop = () => input.cancel();
  options.signal?.addEventListener("abort", stop, { once: true });
  // The unfinished line, in one buffer that grows by doubling (never past
  // max + 1): a line that arrives one byte per read costs its size, not a
  // list of a million one-byte arrays.
  const pending = new LineBuffer(max);
  let skipping = false;
  try {
    while (!options.signal?.aborted) {
      const value = await input.next();
      if (value === null) break;
      let start = 0;
      for (let i = value.indexOf(NEWLINE); i !== -1; i = value.indexOf(NEWLINE, start)) {
        if (skipping) {
          // The rest of a line already refused.
        } else if (pending.length + (i - start) > max) tooLong();
        else answer(pending.take(value.subarray(start, i)));
        pending.clear();
        skipping = false;
        start = i + 1;
      }
      if (start < value.length && !skipping) {
        if (pending.length + (value.length - start) > max) {
          skipping = true;
          pending.clear();
          tooLong();
        } else pending.append(value.subarray(start));
      }
    }
    if (pending.length > 0 && !skipping) answer(pending.take(new Uint8Array(0)));
  } catch {
    // The input broke (closed under us): answer what was read, then stop.
  } finally {
    options.signal?.removeEventListener("abort", stop);
  }
  // Nothing more can come from the client: a request waiting for its answer
  // (an elicitation) fails now rather than holding the drain forever.
  session.abandon();
  const cancelAll = () => {
    for (const controller of session.inFlight.values()) controller.abort(options.cancel!.reason);
  };
  if (options.cancel?.aborted) cancelAll();
  else options.cancel?.addEventListener("abort", cancelAll, { once: true });
  options.onStop?.(() => inFlight.size);
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  options.cancel?.removeEventListener("abort", cancelAll);
  await writing;
  await writer?.close().catch(() => {});
}

/** The bytes of an unfinished line, in one buffer that grows by doubling up to a cap. */
class LineBuffer {
  #bytes = new Uint8Array(0);
  length = 0;

  /** @param max the most it will hold (the line cap) */
  constructor(readonly max: number) {}

  /** Add bytes (the caller keeps the total within `max`). */
  append(more: Uint8Array): void {
    const needed = this.length + more.length;
    if (needed > this.#bytes.length) {
      let size = Math.max(this.#bytes.length, 1024);
      while (size < needed) size *= 2;
      const next = new Uint8Array(Math.min(size, this.max + 1));
      next.set(this.#bytes.subarray(0, this.length));
      this.#bytes = next;
    }
    this.#bytes.set(more, this.length);
    this.length = needed;
  }

  /** The line so far followed by `tail`, as a new array (the buffer is left as it was). */
  take(tail: Uint8Array): Uint8Array {
    if (this.length === 0) return tail.slice();
    const out = new Uint8Array(this.length + tail.length);
    out.set(this.#bytes.subarray(0, this.length));
    out.set(tail, this.length);
    return out;
  }

  /** Forget the line (a large buffer is let go). */
  clear(): void {
    this.length = 0;
    if (this.#bytes.length > 64 * 1024) this.#bytes = new Uint8Array(0);
  }
}

/** The chunks of a stream or a plain reader; `cancel` makes a pending `next` end input. */
function chunksOf(source: ReadableStream<Uint8Array> | ByteReader): {
  next(): Promise<Uint8Array | null>;
  cancel(): void;
} {
  if ("getReader" in source) {
    const reader = source.getReader();
    return {
      next: async () => {
        const { done, value } = await reader.read();
        return done ? null : value;
      },
      cancel: () => void reader.cancel().catch(() => {}),
    };
  }
  // A plain read cannot be withdrawn: cancelling ends input at once and the
  // pending read's bytes, if any ever come, are dropped.
  let cancel!: () => void;
  const cancelled = new Promise<null>((resolve) => (cancel = () => resolve(null)));
  const buffer = new Uint8Array(64 * 1024);
  return {
    next: async () => {
      const n = await Promise.race([source.read(buffer), cancelled]);
      return n === null ? null : buffer.slice(0, n);
    },
    cancel,
  };
}

/** The id of a request (a message with a method and an id), else undefined. */
function requestIdOf(message: unknown): RequestId | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  if (!("method" in m) || !("id" in m)) return undefined;
  const id = m.id;
  return typeof id === "string" || typeof id === "number" || (typeof id === "object" && id !== null)
    ? id as RequestId
    : undefined;
}
