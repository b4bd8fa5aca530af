/**
 * Spec mode: a guardfile on disk becomes a guarded MCP server, served over
 * stdio or HTTP (MCP at `POST /mcp`, the tool API at `POST /api/<tool>`,
 * liveness at `GET /healthz`, everything else 404).
 *
 * This is the edge where `Deno.*` is allowed: reading the file, the
 * environment, signals and the listener.
 *
 * @module
 */
import { type Logger, McpServer, stderrLogger } from "../mcp/server.ts";
import { CatalogError } from "../mcp/catalog.ts";
import type { Diagnostic } from "../guardfile/diagnostics.ts";
import type { Guardfile } from "../guardfile/model.ts";
import { type LoadResult, parseGuardfile } from "../guardfile/parse.ts";
import { createGuard, type GuardOptions } from "../guard/host.ts";
import type { UpstreamLimits } from "../guard/upstream.ts";
import type { ValueResolver } from "../guard/values.ts";
import { createHttpHandler, isLoopback, loopbackHosts } from "../transport/http.ts";
import { beforeBody, pathOf, refuse } from "../transport/inbound.ts";
import { readAtMost } from "../transport/bytes.ts";
import { createToolApiHandler } from "../transport/tool_api.ts";
import { serveStdio } from "../transport/stdio.ts";
import type { InboundOptions } from "../transport/inbound.ts";

/** The process environment and file system, read at call time. */
export const denoResolver: ValueResolver = {
  env: (name) => Deno.env.get(name),
  readFile: (path) => Deno.readTextFile(path),
};

/** A guardfile read from disk: the text (when readable) and the load result. */
export interface LoadedFile extends LoadResult {
  file: string;
  /** Set when the file could not be read at all. */
  readError?: string;
}

/**
 * Read and load a guardfile.
 * @returns never throws: a read failure is reported in `readError`
 */
export async function loadGuardfileFile(file: string): Promise<LoadedFile> {
  let text: string;
  try {
    text = await readGuardfileText(file);
  } catch (error) {
    const reason = error instanceof RangeError
      ? error.message
      : error instanceof TypeError
      ? "not UTF-8 text"
      : error instanceof Deno.errors.NotFound
      ? "no such file"
      : error instanceof Deno.errors.PermissionDenied
      ? "permission denied"
      : error instanceof Deno.errors.IsADirectory
      ? "is a directory"
      : (error as Error).message;
    return { file, diagnostics: [], readError: `read guardfile "${file}": ${reason}` };
  }
  const loaded: LoadedFile = { file, ...parseGuardfile(text, file) };
  if (loaded.guardfile) {
    // lint is serve minus the listener: build the very server serve would run,
    // so a catalog the MCP core refuses is a lint error too.
    try {
      guardedServer(loaded.guardfile, { log: () => {} });
    } catch (error) {
      if (!(error instanceof CatalogError)) throw error;
      loaded.diagnostics.push({
        severity: "error",
        path: "",
        message: `the MCP server core refuses what this guardfile describes: ${error.message}`,
      });
      loaded.guardfile = undefined;
    }
  }
  return loaded;
}

/** Guardfiles larger than this are refused unread (a guardfile is a few KiB). */
export const MAX_GUARDFILE_BYTES = 1024 * 1024;

/**
 * Read a guardfile as UTF-8, at most {@link MAX_GUARDFILE_BYTES}.
 * @throws {RangeError} when the file is larger (or endless, like /dev/zero)
 * @throws {TypeError} when it is not valid UTF-8
 */
async function readGuardfileText(file: string): Promise<string> {
  using handle = await Deno.open(file, { read: true });
  const bytes = await readAtMost(handle.readable, MAX_GUARDFILE_BYTES);
  if (bytes === null) {
    throw new RangeError(`larger than ${MAX_GUARDFILE_BYTES} bytes; a guardfile is a few KiB`);
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}

/** Errors only. */
export function errorsOf(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity === "error");
}

/** Build the guarded MCP server for a loaded guardfile. */
export function guardedServer(
  guardfile: Guardfile,
  options: Partial<GuardOptions> & { log?: Logger } = {},
): McpServer {
  const log = options.log ?? stderrLogger;
  const guard = createGuard(guardfile, {
    resolver: options.resolver ?? denoResolver,
    limits: options.limits,
    log,
  });
  return new McpServer({ ...guard, log });
}

/** Options of the HTTP app. */
export interface HttpAppOptions {
  /** The bound port, for the loopback `Host` check. */
  port: number;
  /** The bound hostname. When loopback, `Host` must name loopback (DNS rebinding). */
  hostname: string;
  /** Browser origins allowed to call (default none). */
  allowedOrigins?: readonly string[];
  /** Require `Authorization: Bearer <token>` from callers (default: no inbound auth). */
  inboundToken?: string;
  log?: Logger;
}

/**
 * The HTTP routes of `weir serve --http`, as one Web-standard handler.
 */
export function guardedHttpApp(
  server: McpServer,
  options: HttpAppOptions,
): (request: Request) => Promise<Response> {
  const inbound: InboundOptions = {
    authorize: options.inboundToken === undefined ? () => true : bearerCheck(options.inboundToken),
    allowedOrigins: options.allowedOrigins ?? [],
    allowedHosts: isLoopback(options.hostname) ? loopbackHosts(options.port) : "any",
    log: options.log ?? stderrLogger,
  };
  const mcp = createHttpHandler(server, inbound);
  const api = createToolApiHandler(server, { ...inbound, prefix: "/api/" });
  return (request) => {
    const pathname = pathOf(request);
    if (pathname === null) {
      return Promise.resolve(refuse(400, "Bad Request: invalid Host", beforeBody(request)));
    }
    if (pathname === "/mcp") return mcp(request);
    if (pathname.startsWith("/api/")) return api(request);
    if (pathname === "/healthz" && beforeBody(request) === "close") {
      return Promise.resolve(
        new Response(JSON.stringify({ status: "ok" }), {
          headers: { "content-type": "application/json", "cache-control": "no-store" },
        }),
      );
    }
    // Unknown routes (and a health check carrying a body) read no body.
    return Promise.resolve(refuse(404, "Not Found", beforeBody(request)));
  };
}

function bearerCheck(token: string): InboundOptions["authorize"] {
  const expected = new TextEncoder().encode(`Bearer ${token}`);
  return (request) => {
    const got = new TextEncoder().encode(request.headers.get("authorization") ?? "");
    let diff = got.length ^ expected.length;
    for (let i = 0; i < expected.length; i++) diff |= (got[i] ?? 0) ^ expected[i];
    return diff === 0 ? true : { allow: false, reason: "missing or wrong bearer token" };
  };
}

/** Options of {@link runServe}. */
export interface ServeOptions {
  transport: { kind: "stdio" } | { kind: "http"; hostname: string; port: number };
  allowedOrigins?: string[];
  inboundToken?: string;
  limits?: Partial<UpstreamLimits>;
  /** Stop serving (drain and return) when aborted. */
  signal?: AbortSignal;
  /** Called once listening (HTTP) with the actual address. */
  onListen?: (addr: { hostname: string; port: number }) => void;
  log?: Logger;
}

/** Serve a loaded guardfile until `signal` aborts (or, on stdio, input ends). */
export async function runServe(guardfile: Guardfile, options: ServeOptions): Promise<void> {
  const log = options.log ?? stderrLogger;
  const server = guardedServer(guardfile, { limits: options.limits, log });
  const tools = guardfile.grants.length + guardfile.withholds.length +
    (guardfile.infoTool ? 1 : 0);
  if (options.transport.kind === "stdio") {
    log({ level: "info", event: "serving", transport: "stdio", server: guardfile.name, tools });
    await serveStdio(server, {
      readable: Deno.stdin.readable,
      writable: Deno.stdout.writable,
      signal: options.signal,
    });
    return;
  }
  const { hostname, port } = options.transport;
  const http = await listenHttp(server, {
    hostname,
    port,
    signal: options.signal,
    allowedOrigins: options.allowedOrigins,
    inboundToken: options.inboundToken,
    log,
  });
  log({
    level: "info",
    event: "serving",
    transport: "http",
    server: guardfile.name,
    tools,
    addr: `${http.hostname}:${http.port}`,
    mcp: `http://${http.hostname}:${http.port}/mcp`,
  });
  if (!isLoopback(http.hostname) && options.inboundToken === undefined) {
    log({
      level: "warn",
      event: "no_inbound_auth",
      message: "listening beyond loopback with no inbound authentication: anyone who can " +
        "reach this port can call every granted tool (set --inbound-token-env)",
    });
  }
  options.onListen?.({ hostname: http.hostname, port: http.port });
  await http.finished;
}

/** A listening HTTP server. */
export interface Listening {
  hostname: string;
  port: number;
  /** Resolves when the server has shut down (after `signal` aborts). */
  finished: Promise<void>;
}

/**
 * Listen with `Deno.serve` and serve the HTTP app; resolves once bound.
 * @throws when the address cannot be bound
 */
export function listenHttp(
  server: McpServer,
  options: Omit<HttpAppOptions, "port"> & { port: number; signal?: AbortSignal },
): Promise<Listening> {
  // The app needs the bound port (for the Host check), known only once bound.
  const bound: { app?: (request: Request) => Promise<Response> } = {};
  const http = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    signal: options.signal,
    onListen: () => {},
  }, (request) => bound.app!(request));
  const addr = http.addr as Deno.NetAddr;
  // The Host check follows the address actually bound, however it was spelled.
  bound.app = guardedHttpApp(server, { ...options, hostname: addr.hostname, port: addr.port });
  return Promise.resolve({ hostname: addr.hostname, port: addr.port, finished: http.finished });
}
