/**
 * The client side of the MCP stdio transport (newline-delimited JSON-RPC on a
 * child process's stdin/stdout, the "stdio" section of the MCP transports
 * page), as a `Transport` the official SDK `Client` drives.
 *
 * weir owns its transports: this one is Deno-native (`Deno.Command`), gives
 * the child weir's whole environment (a wrapped server usually needs its own
 * credentials from it) except the variables named in `withoutEnv` (weir's own
 * inbound token), lets the child's stderr through to weir's stderr, and
 * caps each line: a line longer than `maxLineBytes` fails every request in
 * flight at once as over the cap (the answer in it cannot be matched to a
 * request without reading it) and closes the connection, so the next call
 * starts a new child. Memory stays bounded by the cap: an over-long line is
 * not kept.
 *
 * @module
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { exactResult } from "./exact.ts";
import { UpstreamTooLarge, UpstreamUnavailable } from "./errors.ts";
import { type RequestScope, requestScopes } from "./scope.ts";

/** Options of {@link ChildStdioTransport}. */
export interface ChildStdioOptions {
  command: string;
  args: readonly string[];
  /** Longest accepted line from the child, in bytes. */
  maxLineBytes: number;
  /**
   * Variables of weir's environment the child does not get: weir's own
   * secrets (the inbound token), which the wrapped server has no use for.
   */
  withoutEnv?: readonly string[];
}

const NEWLINE = 0x0a;

/** A child process speaking MCP over its stdin/stdout. */
export class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #options: ChildStdioOptions;
  #child?: Deno.ChildProcess;
  #writer?: WritableStreamDefaultWriter<Uint8Array>;
  #closed = false;
  /** Requests in flight sent from a request scope, by id. */
  readonly #scopes = new Map<string | number, RequestScope>();

  constructor(options: ChildStdioOptions) {
    this.#options = options;
  }

  /**
   * Spawn the child and start reading its stdout.
   * @throws when the command cannot be started (not found, no `--allow-run`)
   */
  start(): Promise<void> {
    const withheld = this.#options.withoutEnv ?? [];
    let env: { env: Record<string, string>; clearEnv: true } | undefined;
    if (withheld.length > 0) {
      const vars = Deno.env.toObject();
      for (const name of withheld) delete vars[name];
      env = { env: vars, clearEnv: true };
    }
    try {
      this.#child = new Deno.Command(this.#options.command, {
        ...env,
        args: [...this.#options.args],
        stdin: "piped",
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      const name = this.#options.command;
      throw new UpstreamUnavailable(
        name.includes("/")
          ? `the command ${JSON.stringify(name)} does not exist; check its path`
          : `the command ${JSON.stringify(name)} was not found on PATH; install it, or give ` +
            `its full path`,
        { cause: error },
      );
    }
    this.#writer = this.#child.stdin.getWriter();
    this.#read(this.#child.stdout).catch((error) => this.onerror?.(error as Error));
    this.#child.status.then(() => this.#finish());
    return Promise.resolve();
  }

  async #read(stdout: ReadableStream<Uint8Array>): Promise<void> {
    const max = this.#options.maxLineBytes;
    const decoder = new TextDecoder();
    let pending: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of stdout) {
      let start = 0;
      for (let i = chunk.indexOf(NEWLINE); i >= 0; i = chunk.indexOf(NEWLINE, start)) {
        pending.push(chunk.subarray(start, i));
        size += i - start;
        if (size > max) break;
        this.#deliver(decoder.decode(join(pending, size)));
        pending = [];
        size = 0;
        start = i + 1;
      }
      if (size <= max && start < chunk.length) {
        pending.push(chunk.slice(start));
        size += chunk.length - start;
      }
      if (size > max) {
        this.onerror?.(new Error(`the upstream sent a message longer than ${max} bytes`));
        for (const scope of this.#scopes.values()) scope.fail(new UpstreamTooLarge(max));
        this.#scopes.clear();
        await this.close();
        return;
      }
    }
  }

  #deliver(line: string): void {
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch {
      this.onerror?.(new Error("the upstream wrote a line that is not a JSON-RPC message"));
      return;
    }
    const id = (message as { id?: unknown }).id;
    const answer = "result" in message || "error" in message;
    const scope = answer && (typeof id === "string" || typeof id === "number")
      ? this.#scopes.get(id)
      : undefined;
    if (scope) {
      this.#scopes.delete(id as string | number);
      // A tools/call: keep its answer's exact numbers.
      if (scope.method === "tools/call") scope.result = exactResult(line, id as string | number);
    }
    this.onmessage?.(message);
  }

  /** Write one message as one line. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed || !this.#writer) throw new Error("the upstream process has exited");
    const scope = requestScopes.getStore();
    const m = message as { method?: unknown; id?: unknown };
    if (
      scope && scope.id === undefined && m.method === scope.method &&
      (typeof m.id === "string" || typeof m.id === "number")
    ) {
      scope.id = m.id;
      this.#scopes.set(m.id, scope);
    }
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  }

  /** Close stdin, give the child a moment, then kill it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    const child = this.#child;
    try {
      await this.#writer?.close();
    } catch { /* already closed */ }
    if (child) {
      const timer = setTimeout(() => {
        try {
          child.kill("SIGTERM");
        } catch { /* gone */ }
      }, 2000);
      await child.status;
      clearTimeout(timer);
    }
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}

function join(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
