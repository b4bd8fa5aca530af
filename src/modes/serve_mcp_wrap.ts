/**
 * `weir serve FILE` of a guardfile that wraps an MCP server: the surface
 * (src/wrap/surface.ts) served over stdio or HTTP like any guardfile,
 * reloaded on SIGHUP and `POST /admin/reload`, described by
 * `weir describe FILE` and `GET /admin/describe`.
 *
 * @module
 */
import { type Logger, type McpServer, stderrLogger } from "../mcp/server.ts";
import type { McpWrap } from "../guardfile/mcp_wrap.ts";
import type { OAuthSetting, TokenExchangeSetting } from "../guardfile/model.ts";
import { formatDiagnostic } from "../guardfile/diagnostics.ts";
import type { UpstreamConnection } from "../mcp_upstream/connection.ts";
import type { ConnectionToken } from "../oauth/client_credentials.ts";
import { TokenTable } from "../inbound/token_table.ts";
import type { TokenGrant } from "../inbound/static_tokens.ts";
import { type LoadOutcome, Reloader } from "../ops/reload.ts";
import { startTelemetry } from "../ops/telemetry.ts";
import { unknownGrantTools } from "../ops/flags.ts";
import { describeServer, describeWrap } from "../wrap/describe.ts";
import { headerTemplates, WRAP_DEFAULTS as DEFAULTS, type WrapFlags } from "../wrap/config.ts";
import { connectionSecrets } from "../wrap/host.ts";
import { StartupError } from "../wrap/open.ts";
import {
  buildWrapSurface,
  forListing,
  type WrapBuildOptions,
  type WrapSurface,
} from "../wrap/surface.ts";
import type { Surface as Described } from "../surface/model.ts";
import { listedSurface, measureSurface, type SurfaceSize } from "../surface/size.ts";
import { runOn } from "../serving/listen.ts";
import {
  errorsOf,
  exchangeReloadProblem,
  loadGuardfileFile,
  oauthFor,
  oauthReloadProblem,
  type OAuthServeOptions,
  type ServeOptions,
} from "./serve.ts";
/**
 * Load the file again for a reload, exactly as `weir lint FILE` does, and
 * build the next surface (the connection is kept when the MCP server and
 * its settings are unchanged).
 */
export async function reloadWrap(
  file: string,
  build: Omit<WrapBuildOptions, "reuse">,
  current: () => WrapSurface,
  flagTokens: { table?: TokenTable; grants: TokenGrant[] },
  oauth: {
    started?: OAuthSetting;
    serving?: OAuthServeOptions;
    exchange?: TokenExchangeSetting;
  } = {},
): Promise<LoadOutcome> {
  const loaded = await loadGuardfileFile(file);
  const errors = [
    ...(loaded.readError ? [loaded.readError] : []),
    ...errorsOf(loaded.diagnostics).map((d) => formatDiagnostic(file, d)),
  ];
  const warnings = loaded.diagnostics.filter((d) => d.severity === "warning").map((d) =>
    formatDiagnostic(file, d)
  );
  if (errors.length > 0) return { errors, warnings };
  if (!loaded.mcpWrap) {
    return {
      errors: [`${file}: no longer wraps an MCP server; restart weir to serve it`],
      warnings,
    };
  }
  const oauthProblem = oauthReloadProblem(
    file,
    oauth.started,
    loaded.mcpWrap.oauth,
    oauth.serving,
  );
  if (oauthProblem) return { errors: [oauthProblem], warnings };
  const exchangeProblem = exchangeReloadProblem(file, oauth.exchange, wrapExchange(loaded.mcpWrap));
  if (exchangeProblem) return { errors: [exchangeProblem], warnings };
  const now = current();
  let next: WrapSurface;
  try {
    next = await buildWrapSurface(loaded.mcpWrap, {
      ...build,
      reuse: { key: now.connectionKey, connection: now.connection, host: now.host },
    });
  } catch (error) {
    const message = error instanceof StartupError ? error.message : (error as Error).message;
    return { errors: [`${file}: ${message}`], warnings };
  }
  const grants = [...flagTokens.grants, ...next.tokenGrants];
  const problem = tokenProblem(
    file,
    flagTokens,
    grants,
    next.tools,
    loaded.mcpWrap.inboundTokens.length,
  );
  if (problem) {
    if (next.connection !== now.connection) await next.connection.close();
    return { errors: [problem], warnings };
  }
  return { surface: next, warnings };
}

function tokenProblem(
  file: string,
  flagTokens: { table?: TokenTable; grants: TokenGrant[] },
  grants: TokenGrant[],
  served: string[],
  fileTokens: number,
): string | undefined {
  if (!flagTokens.table) {
    return fileTokens > 0
      ? `${file}: inbound-token nodes were added, but weir started without inbound tokens; ` +
        `restart weir to require them`
      : undefined;
  }
  const unknown = unknownGrantTools(flagTokens.grants, served);
  if (unknown.length > 0) {
    return `${file}: --tool-token-env names tools the new file does not serve: ${
      unknown.join(", ")
    }; keep serving them, or restart weir with other flags`;
  }
  if (grants.length === 0) {
    return `${file}: the new file declares no inbound-token, and no token is given on the ` +
      `command line, so no caller could get in; restart weir to serve it without tokens`;
  }
  try {
    new TokenTable(grants);
  } catch (error) {
    return `${file}: ${(error as Error).message}`;
  }
  return undefined;
}

/** Options of {@link runServeWrap}. */
export type WrapServeOptions = ServeOptions & {
  flags?: WrapFlags;
  /** Variables a stdio MCP server must not inherit (weir's own secrets). */
  withoutEnv?: readonly string[];
};

/**
 * Serve a guardfile that wraps an MCP server until `signal` aborts (or, on
 * stdio, input ends); SIGHUP and `POST /admin/reload` reload it.
 * @throws {StartupError} as {@link buildWrapSurface}
 */
export async function runServeWrap(wrap: McpWrap, options: WrapServeOptions): Promise<void> {
  const log = options.log ?? stderrLogger;
  if (options.oauth && options.transport.kind !== "http") {
    throw new StartupError(
      "OAuth applies to HTTP only; stdio takes its credentials from the environment",
    );
  }
  const scopes = {
    current: new Map(
      wrap.proxies.filter((p) => p.scopes.length > 0).map((p) => [p.name, p.scopes]),
    ),
  };
  const exchange = wrapExchange(wrap);
  if (exchange && !options.oauth) {
    throw new StartupError(
      "token-exchange exchanges each caller's OAuth access token: serve over --http with " +
        "--oauth-issuer and --oauth-resource (or an oauth node)",
    );
  }
  const oauth = options.oauth
    ? await oauthFor(() => scopes.current, options.oauth, log, exchange)
    : undefined;
  if (!oauth && scopes.current.size > 0) {
    log({
      level: "warn",
      event: "scopes_unenforced",
      message: "proxies declare scopes, but weir is not serving as an OAuth resource server " +
        "(--oauth-issuer and --oauth-resource, or the oauth node): every caller may call every " +
        "served tool",
    });
  }
  const servedNames = { current: new Set<string>() };
  const telemetry = await startTelemetry(wrap.name, () => servedNames.current);
  const build: Omit<WrapBuildOptions, "reuse"> = {
    log,
    signal: options.signal,
    around: telemetry?.around,
    stateKeys: options.state?.keys,
    toolAccess: oauth?.server.toolAccess,
    flags: options.flags,
    withoutEnv: options.withoutEnv,
    credential: oauth?.upstreamCredential,
    connection: oauth?.connectionToken,
  };
  let surface: WrapSurface;
  try {
    surface = await buildWrapSurface(wrap, build);
  } catch (error) {
    await telemetry?.shutdown();
    throw error;
  }
  servedNames.current = new Set(surface.tools);
  const flagTokens = options.flagTokens ?? [];
  let tokens = options.inboundToken;
  if (surface.tokenGrants.length > 0) {
    tokens = new TokenTable([...flagTokens, ...surface.tokenGrants]);
  }
  const table = tokens instanceof TokenTable ? tokens : undefined;
  log({
    level: "info",
    event: "upstream_connected",
    upstream: describeServer(wrap),
    upstream_server: surface.connection.serverInfo?.name === undefined
      ? undefined
      : connectionSecrets(headerTemplates(
        wrap.server.transport === "http" ? wrap.server.headers : [],
      ))(surface.connection.ownTokensSent).text(surface.connection.serverInfo.name),
    upstream_revision: surface.connection.revision,
    tools: surface.tools,
  });
  const about = { mode: "mcp", server: wrap.name, tools: surface.tools.length };
  let served: McpServer | Reloader = surface.server;
  const connections = new Set<UpstreamConnection>([surface.connection]);
  let reloader: Reloader | undefined;
  if (options.file !== undefined) {
    const file = options.file;
    reloader = new Reloader(
      surface,
      () =>
        reloadWrap(file, build, () => reloader!.current as WrapSurface, {
          table,
          grants: flagTokens,
        }, { started: wrap.oauth, serving: options.oauth, exchange }),
      log,
    );
    reloader.onSwap((next) => {
      const wrapped = next as WrapSurface;
      scopes.current = wrapped.scopes;
      servedNames.current = new Set(next.tools);
      if (table) table.set([...flagTokens, ...wrapped.tokenGrants]);
      // A connection no surface uses any more is closed once calls in flight have had their time.
      connections.add(wrapped.connection);
      for (const c of connections) {
        if (c === wrapped.connection) continue;
        connections.delete(c);
        const grace = wrap.settings.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
        Deno.unrefTimer(setTimeout(() => void c.close(), Math.min(grace, 60_000) + 1_000));
      }
    });
    served = reloader;
  }
  try {
    await runOn(served, { ...options, inboundToken: tokens, oauth: oauth?.server, ...about });
  } finally {
    for (const c of connections) await c.close();
    await telemetry?.shutdown();
  }
}

/** The `token-exchange` block of the file's `mcp-server http`, if any. */
function wrapExchange(wrap: McpWrap): TokenExchangeSetting | undefined {
  return wrap.server.transport === "http" ? wrap.server.exchange : undefined;
}

/**
 * Build this form's server as serve does (connect, list, decide; no listener,
 * no tool called), hand it to `use`, disconnect.
 * @returns what `use` returns, or why the server could not be built
 */
async function withWrapSurface<T>(
  wrap: McpWrap,
  use: (surface: WrapSurface) => Promise<T> | T,
): Promise<T | string> {
  let surface: WrapSurface;
  try {
    const connection = await listingToken(wrap);
    surface = await buildWrapSurface(forListing(wrap), {
      log: quietWarnings,
      // No caller here: only weir's own requests (the handshake, the listings) are made.
      ...(connection ? { connection, credential: () => Promise.reject(NO_CALLER) } : {}),
    });
  } catch (error) {
    return error instanceof StartupError ? error.message : (error as Error).message;
  }
  try {
    return await use(surface);
  } finally {
    await surface.connection.close();
  }
}

const NO_CALLER = new Error("no caller: weir only lists the MCP server's tools here");

/**
 * With `client-credentials`, weir's own token for listing the MCP server's
 * tools as serve would (a protected server wants one on every request): the
 * token endpoint the block names, else the file's `oauth` issuer's. Reads
 * weir's client secret or key, as serve does.
 * @throws {Error} naming what to add when the file names no token endpoint
 */
export async function listingToken(wrap: McpWrap): Promise<ConnectionToken | undefined> {
  const exchange = wrapExchange(wrap);
  if (!exchange?.clientCredentials) return undefined;
  const issuer = wrap.oauth?.issuer;
  if (exchange.tokenEndpoint === undefined && issuer === undefined) {
    throw new Error(
      "weir's own token (client-credentials) is asked at the issuer's token endpoint, which " +
        "this file does not name (serve reads --oauth-issuer): add token-endpoint to the " +
        "token-exchange block, or an oauth node with issuer=",
    );
  }
  const { discoverIssuer } = await import("../oauth/access_tokens.ts");
  const { profileOf } = await import("../oauth/profiles.ts");
  const { exchangeCredential } = await import("../oauth/exchange_setup.ts");
  const { resolveValue, processValues } = await import("../guard/values.ts");
  const metadata = exchange.tokenEndpoint === undefined
    ? await discoverIssuer(issuer!)
    : { issuer: issuer ?? exchange.tokenEndpoint, source: "the token-exchange block" };
  const { connection } = await exchangeCredential(exchange, {
    metadata,
    profile: profileOf(wrap.oauth?.profile),
    read: async (source, what) => (await resolveValue(source, processValues, what)).value,
    log: quietWarnings,
  });
  return connection;
}

/**
 * `weir describe FILE` of this form: the surface served now.
 * @returns the surface, or why it could not be built
 */
export function describeWrapFile(wrap: McpWrap): Promise<Described | string> {
  return withWrapSurface(wrap, (surface) => describeWrap(wrap, surface.host));
}

/**
 * The size of the tools list this form serves now (what `max-tokens` and
 * `max-tool-tokens` hold): the very server serve builds, asked in process.
 * @returns the size, or why the server could not be built
 */
export function measureWrapFile(wrap: McpWrap): Promise<SurfaceSize | string> {
  return withWrapSurface(
    wrap,
    async (surface) => await measureSurface(await listedSurface(surface.server)),
  );
}

/** Warnings and errors to stderr as JSON lines; nothing else. */
const quietWarnings: Logger = (event) => {
  if (event.level === "warn" || event.level === "error") console.error(JSON.stringify(event));
};
