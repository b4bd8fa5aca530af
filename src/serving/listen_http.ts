/**
 * The HTTP side of {@link runOn} (src/serving/listen.ts): the `Deno.serve`
 * listener around the HTTP app (src/serving/http_app.ts: the routes and their
 * checks), the admin endpoints and the shutdown grace. Loaded only when a
 * mode listens, so a stdio server's start loads none of it.
 *
 * @module
 */
import type { Logger, McpServer } from "../mcp/server.ts";
import { isLoopback } from "../transport/http.ts";
import { withConnectionDrop } from "../inbound/refusal.ts";
import { type Drain, stopReason } from "../ops/shutdown.ts";
import type { Reloader } from "../ops/reload.ts";
import { createAdminHandler } from "../ops/admin.ts";
import { guardedHttpApp, type HttpAppOptions } from "./http_app.ts";
import type { OAuthResourceServer } from "../oauth/resource_server.ts";
import type { TokenTable } from "../inbound/token_table.ts";

/** What {@link serveHttp} reads of `runOn`'s options (src/serving/listen.ts). */
export interface HttpServeOptions {
  transport: { kind: "http"; hostname: string; port: number };
  allowedOrigins?: string[];
  allowedHosts?: string[];
  inboundToken?: string | readonly string[] | TokenTable;
  adminTokens?: readonly string[];
  oauth?: OAuthResourceServer;
  signal?: AbortSignal;
  maxBodyBytes?: number;
  shutdownGraceMs?: number;
  bodyDeadlineMs?: number;
  maxConcurrent?: number;
  onListen?: (addr: { hostname: string; port: number }) => void;
}

/**
 * Listen on `options.transport` (HTTP) and serve until `options.signal`
 * aborts: `GET /readyz` turns 503 for the shutdown grace, then the drain.
 * `about` goes into the `serving` line (mode, server, tools, surface digests).
 */
export async function serveHttp(
  server: McpServer,
  reloader: Reloader | undefined,
  options: HttpServeOptions,
  log: Logger,
  drain: Drain,
  about: Record<string, unknown>,
): Promise<void> {
  const { hostname, port } = options.transport;
  const http = await listenHttp(server, {
    hostname,
    port,
    allowedOrigins: options.allowedOrigins,
    allowedHosts: options.allowedHosts,
    inboundToken: options.inboundToken,
    maxBodyBytes: options.maxBodyBytes,
    oauth: options.oauth,
    bodyDeadlineMs: options.bodyDeadlineMs,
    maxConcurrent: options.maxConcurrent,
    log,
    drain,
    reloader,
    admin: reloader && options.adminTokens?.length
      ? createAdminHandler(reloader, { tokens: options.adminTokens, log })
      : undefined,
  });
  log({
    level: "info",
    event: "serving",
    transport: "http",
    ...about,
    // An IPv6 literal is bracketed in an authority (RFC 3986 section 3.2.2).
    addr: `${authorityHost(http.hostname)}:${http.port}`,
    mcp: `http://${authorityHost(http.hostname)}:${http.port}/mcp`,
    ...(options.oauth
      ? {
        oauth: { resource: options.oauth.metadata.resource, metadata: options.oauth.metadataUrl },
      }
      : {}),
  });
  if (!isLoopback(http.hostname) && options.inboundToken === undefined && !options.oauth) {
    log({
      level: "warn",
      event: "no_inbound_auth",
      message: "listening beyond loopback with no inbound authentication: anyone who can " +
        "reach this port can call every served tool (set --inbound-token-env)",
    });
  }
  options.onListen?.({ hostname: http.hostname, port: http.port });
  const signal = options.signal;
  if (signal) {
    const stopped = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    if (await Promise.race([stopped.then(() => true), http.finished.then(() => false)])) {
      drain.unready();
      const grace = options.shutdownGraceMs ?? 0;
      if (grace > 0) {
        log({
          level: "info",
          event: "shutdown_grace",
          reason: stopReason(signal),
          grace_ms: grace,
          message: "GET /readyz answers 503; still serving until the grace ends, then draining",
        });
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          new Promise((resolve) => (timer = setTimeout(resolve, grace))),
          http.finished,
        ]);
        clearTimeout(timer);
      }
      await drain.run(stopReason(signal), http.shutdown());
    }
  }
  await http.finished;
}

/** A listening HTTP server. */
export interface Listening {
  hostname: string;
  port: number;
  /** Resolves when the server has shut down (after `signal` aborts or `shutdown`). */
  finished: Promise<void>;
  /** Stop accepting; resolves once requests in flight are answered. */
  shutdown(): Promise<void>;
}

/**
 * Listen with `Deno.serve` and serve the HTTP app; resolves once bound.
 * @throws {Deno.errors.AddrInUse} (or the runtime's other bind errors, same
 *   class) when the address cannot be bound, the message naming
 *   `HOST:PORT` and what to do
 */
export function listenHttp(
  server: McpServer,
  options: Omit<HttpAppOptions, "port"> & {
    port: number;
    signal?: AbortSignal;
    /** When given, the routes are rebuilt on each swap (requests in flight keep theirs). */
    reloader?: Reloader;
  },
): Promise<Listening> {
  // The app needs the bound port (for the Host check), known only once bound.
  const bound: { app?: (request: Request) => Promise<Response> } = {};
  let http: Deno.HttpServer;
  try {
    // Refusals marked to drop their connection are ended so here, at the
    // listener (src/inbound/refusal.ts): the app's Responses stay ordinary.
    const app = withConnectionDrop((request) => bound.app!(request));
    http = Deno.serve({
      hostname: options.hostname,
      port: options.port,
      signal: options.signal,
      onListen: () => {},
    }, app);
  } catch (error) {
    throw bindError(error, options.hostname, options.port);
  }
  const addr = http.addr as Deno.NetAddr;
  // The Host check follows the address actually bound, however it was spelled.
  const appOptions = { ...options, hostname: addr.hostname, port: addr.port };
  bound.app = guardedHttpApp(server, appOptions);
  options.reloader?.onSwap((next) => (bound.app = guardedHttpApp(next.server, appOptions)));
  return Promise.resolve({
    hostname: addr.hostname,
    port: addr.port,
    finished: http.finished,
    shutdown: () => http.shutdown(),
  });
}

/**
 * The runtime's bind error (`Address already in use (os error 98)`) names
 * neither the address nor a way out: the same error class, with both.
 */
function bindError(error: unknown, hostname: string, port: number): unknown {
  const at = `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  if (error instanceof Deno.errors.AddrInUse) {
    return new Deno.errors.AddrInUse(
      `cannot listen on ${at}: another process is using that port; stop it, or pick another ` +
        `port (--http ${at.slice(0, at.lastIndexOf(":"))}:0 takes any free one and logs it)`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.AddrNotAvailable) {
    return new Deno.errors.AddrNotAvailable(
      `cannot listen on ${at}: no network interface of this machine has that address`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return new Deno.errors.PermissionDenied(
      `cannot listen on ${at}: the system refused (ports below 1024 need privileges); ` +
        `pick a port of 1024 or more`,
      { cause: error },
    );
  }
  return error;
}

/** A host as it is written in a URL's authority: an IPv6 literal in brackets. */
function authorityHost(hostname: string): string {
  return hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
}
