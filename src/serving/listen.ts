/**
 * The serving glue every mode shares: stdio, and the `Deno.serve` listener
 * around the HTTP app (src/serving/listen_http.ts, loaded only to listen). A
 * mode builds an {@link McpServer} and hands it to {@link runOn}.
 *
 * @module
 */
import { type Logger, type McpServer, stderrLogger } from "../mcp/server.ts";
import { serveStdio } from "../transport/stdio.ts";
import { DEFAULT_DRAIN_MS, Drain, stopReason } from "../ops/shutdown.ts";
import { Reloader } from "../ops/reload.ts";
import { logStateSetup, type StateSetup } from "../ops/state_keys.ts";
import type { OAuthResourceServer } from "../oauth/resource_server.ts";
import type { TokenTable } from "../inbound/token_table.ts";
import { lazy } from "../ops/lazy.ts";

/**
 * Parse a listen address as `--http` takes it: `[HOST:]PORT` (HOST defaults
 * to 127.0.0.1; an IPv6 host in brackets).
 * @returns the address, or a message saying what is wrong
 */
export function parseListenAddress(text: string): { hostname: string; port: number } | string {
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[^:]*):)?(\d{1,5})$/.exec(text);
  if (!m) return `--http takes [HOST:]PORT, e.g. 127.0.0.1:8080 or 8080; got ${text}`;
  const port = Number(m[2]);
  if (port > 65535) return `--http port ${port} is out of range`;
  const hostname = (m[1] || "127.0.0.1").replace(/^\[(.*)\]$/, "$1");
  return { hostname, port };
}

/** Options of {@link runOn}. */
export interface RunOnOptions {
  transport: { kind: "stdio" } | { kind: "http"; hostname: string; port: number };
  allowedOrigins?: string[];
  /** More `Host` values to answer (`allowedHosts` in src/serving/http_app.ts). */
  allowedHosts?: string[];
  inboundToken?: string | readonly string[] | TokenTable;
  /**
   * Enables `POST /admin/reload` and `GET /admin/describe` (HTTP, when
   * serving a {@link Reloader}), each requiring one of these tokens.
   */
  adminTokens?: readonly string[];
  /** HTTP only: the OAuth resource server to serve as (`oauth` in src/serving/http_app.ts). */
  oauth?: OAuthResourceServer;
  /**
   * Stop serving when aborted: new requests are refused, calls in flight get
   * `drainMs` to finish, then are cancelled; one `shutdown` line is logged.
   * The abort reason, when a string (`"SIGTERM"`), is the line's `reason`.
   */
  signal?: AbortSignal;
  /** Largest request body (HTTP) or line (stdio), in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** The drain deadline in milliseconds (default 10,000). */
  drainMs?: number;
  /**
   * HTTP: once `signal` aborts, milliseconds to keep serving everything while
   * `GET /readyz` answers 503 (so load balancers stop routing here), before
   * the drain (default 0).
   */
  shutdownGraceMs?: number;
  /** HTTP: whole-body deadline in milliseconds (default 15,000). */
  bodyDeadlineMs?: number;
  /** HTTP: requests handled at once (default none); 503 with `Retry-After` past it. */
  maxConcurrent?: number;
  /**
   * The key service the served servers sign state with (`src/ops/state_keys.ts`):
   * its start-up line is logged here, and its store closed when serving ends.
   * The mode builds its servers with `state.keys`.
   */
  state?: StateSetup;
  /** Called once listening (HTTP) with the actual address. */
  onListen?: (addr: { hostname: string; port: number }) => void;
  log?: Logger;
  /** For the `serving` log line: the mode (`spec`, `upstream`, ...). */
  mode: string;
  /** For the `serving` log line: the server name. */
  server: string;
  /** For the `serving` log line: how many tools are served. */
  tools: number;
}

/**
 * Serve `server` over stdio or HTTP until `signal` aborts (or, on stdio, input
 * ends). Given a {@link Reloader}, SIGHUP reloads it (and, with `adminTokens`,
 * `POST /admin/reload`); each request is answered by the surface current when
 * it arrived.
 */
export async function runOn(
  served: McpServer | Reloader,
  options: RunOnOptions,
): Promise<void> {
  const log = options.log ?? stderrLogger;
  const reloader = served instanceof Reloader ? served : undefined;
  const server = reloader ? reloader.current.server : served as McpServer;
  // SIGHUP never ends the process: it reloads, or says this mode cannot.
  const onHangup = () =>
    reloader ? void reloader.reload("SIGHUP") : log({
      level: "warn",
      event: "reload_unsupported",
      mode: options.mode,
      message: "this mode does not reload; restart the process to serve a changed file",
    });
  Deno.addSignalListener("SIGHUP", onHangup);
  if (options.state) logStateSetup(log, options.state);
  try {
    await runOnce(server, reloader, options, log);
  } finally {
    Deno.removeSignalListener("SIGHUP", onHangup);
    await options.state?.keys.close();
  }
}

async function runOnce(
  server: McpServer,
  reloader: Reloader | undefined,
  options: RunOnOptions,
  log: Logger,
): Promise<void> {
  const about = {
    mode: options.mode,
    server: options.server,
    tools: options.tools,
    ...await surfaces(server, options.inboundToken),
  };
  const drain = new Drain(options.drainMs ?? DEFAULT_DRAIN_MS, log);
  if (options.transport.kind === "stdio") {
    if (options.oauth) throw new Error("OAuth applies to HTTP only");
    log({ level: "info", event: "serving", transport: "stdio", ...about });
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let drained: Promise<unknown> = Promise.resolve();
    const current = reloader
      ? {
        handle: (...a: Parameters<McpServer["handle"]>) => reloader.current.server.handle(...a),
        parseError: (detail?: string) => reloader.current.server.parseError(detail),
      }
      : server;
    await serveStdio(current, {
      // The plain handles, not their web streams (a cold start's few milliseconds).
      readable: Deno.stdin,
      writable: Deno.stdout,
      signal: options.signal,
      cancel: drain.cancel,
      onStop: (pending) => {
        const reason = options.signal?.aborted ? stopReason(options.signal) : "end of input";
        drained = drain.run(reason, finished, pending);
      },
      maxLineBytes: options.maxBodyBytes,
      log,
    });
    finish();
    await drained;
    return;
  }
  // HTTP's modules (the app, its routes and checks, admin) are loaded only to listen.
  const { serveHttp } = await lazy<typeof import("./listen_http.ts")>("listen_http");
  await serveHttp(
    server,
    reloader,
    { ...options, transport: options.transport },
    log,
    drain,
    about,
  );
}

/**
 * The `serving` line's digests of the surface (`McpServer.surfaceDigest`):
 * `surface`, the whole; `surfaces`, one per set of tools a static token is
 * limited to, by the token's name (or its caller id), when any is limited.
 * OAuth scopes narrow per token: a caller reads its own in `server/discover`.
 */
async function surfaces(
  server: McpServer,
  inbound: RunOnOptions["inboundToken"],
): Promise<{ surface?: string; surfaces?: Record<string, string> }> {
  try {
    const out: { surface?: string; surfaces?: Record<string, string> } = {
      surface: await server.surfaceDigest(),
    };
    // A TokenTable (its type only is imported: its module loads only where tokens are).
    const limited =
      inbound !== undefined && typeof inbound !== "string" && "limitedCallers" in inbound
        ? inbound.limitedCallers()
        : [];
    if (limited.length > 0) {
      out.surfaces = {};
      for (const caller of limited) {
        out.surfaces[caller.subject ?? caller.caller] = await server.surfaceDigest({
          auth: caller,
        });
      }
    }
    return out;
  } catch {
    // A host's catalog that cannot be read yet: the line goes out without it.
    return {};
  }
}

/**
 * Check `--allow-origin` (exact origins, `scheme://host[:port]`, RFC 6454: no
 * path, no trailing slash) and `--allow-host` (Host header values, `host[:port]`).
 * @returns a message naming the flag and the value, or `null` when both are fine
 */
export function browserFlagProblem(origins: string[] = [], hosts: string[] = []): string | null {
  const host = String.raw`(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?`;
  for (const origin of origins) {
    if (!new RegExp(`^https?://${host}$`).test(origin)) {
      return `--allow-origin takes an origin, scheme://host[:port] with no path ` +
        `(e.g. http://app.test:8080); got ${JSON.stringify(origin)}`;
    }
  }
  for (const value of hosts) {
    if (!new RegExp(`^${host}$`).test(value)) {
      return `--allow-host takes a Host header value, host[:port] (e.g. mcp.example.com); ` +
        `got ${JSON.stringify(value)}`;
    }
  }
  return null;
}
