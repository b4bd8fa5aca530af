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
import { type Diagnostic, printable } from "../guardfile/diagnostics.ts";
import type { Guardfile, OAuthSetting, TokenExchangeSetting } from "../guardfile/model.ts";
import type { ProfileName } from "../guardfile/idp_profiles.ts";
import { type LoadedDocument, loadGuardfile } from "../guardfile/document.ts";
import { checkBacktracking } from "../ops/pattern_check.ts";
import { isRedisUrl } from "../guardfile/siblings.ts";
import { readOnlyView, type SurfaceOverrides, withOverrides } from "../guardfile/surface.ts";
import { createGuard, type GuardOptions } from "../guard/host.ts";
import type { UpstreamCredential, UpstreamLimits } from "../guard/send.ts";
import { processValues, resolveValue, type ValueResolver } from "../guard/values.ts";
import { FileRefused, readBoundedText } from "../ops/bounded_file.ts";
import { runOn, type RunOnOptions } from "../serving/listen.ts";
import { buildRefusal } from "./lint_build.ts";
import { lintWarnings, servedTools } from "./lint.ts";
import { formatDiagnostic } from "../guardfile/diagnostics.ts";
import { type LoadOutcome, Reloader, type Surface } from "../ops/reload.ts";
import { telemetryWanted } from "../ops/telemetry_env.ts";
import { guardfileTokens, unknownGrantTools } from "../ops/flags.ts";
import { singleUseProblem } from "../ops/state_keys.ts";
import type { RequestWrapper, ToolAccess } from "../mcp/server.ts";
import type { OAuthResourceServer } from "../oauth/resource_server.ts";
import type { ConnectionToken } from "../oauth/client_credentials.ts";
import type { IssuerMetadata } from "../oauth/access_tokens.ts";
import type { StateKeys } from "../mcp/signed_state.ts";
import type { TokenGrant } from "../inbound/static_tokens.ts";
import type { TokenTable } from "../inbound/token_table.ts";
import { lazy } from "../ops/lazy.ts";
import { loadReader } from "../ops/load_reader.ts";

export { runOn, type RunOnOptions } from "../serving/listen.ts";

/**
 * The process environment and file system, read at call time (value files
 * bounded: `processValues`, src/guard/values.ts).
 */
export const denoResolver: ValueResolver = processValues;

/**
 * A guardfile read from disk and loaded (src/guardfile/load.ts): its mode,
 * the spec-mode model or the AWS policy (`wrap ward mcp aws ssm|s3`), and
 * every diagnostic.
 */
export interface LoadedFile extends LoadedDocument {
  file: string;
  /** Set when the file could not be read at all. */
  readError?: string;
}

/**
 * Read and load a guardfile.
 * @param overrides the command line's surface flags (`--read-only`,
 *   `--schema-profile`, the budgets), folded into the model's `surface`; a
 *   read-only surface is applied here ({@link readOnlyView}), so lint, describe,
 *   serve and a reload all see the same tools
 * @param options `storeUrl: false` skips reading the rate-limit store's URL
 *   from the environment (`weir diff` and `describe` compare and print where
 *   it comes from, never connect: a CI job holds no production variable)
 * @returns never throws: a read failure is reported in `readError`
 */
export async function loadGuardfileFile(
  file: string,
  overrides: SurfaceOverrides = {},
  options: { storeUrl?: boolean; lint?: boolean } = {},
): Promise<LoadedFile> {
  let text: string;
  try {
    text = await readGuardfileText(file);
  } catch (error) {
    const reason = error instanceof FileRefused ? error.reason : (error as Error).message;
    // The path is the caller's text: escaped as diagnostics are, so it cannot drive a terminal.
    return { file, diagnostics: [], readError: printable(`read guardfile "${file}": ${reason}`) };
  }
  const loaded: LoadedFile = { file, ...(await loadGuardfile(text, file, loadReader)) };
  await checkBacktracking(loaded, options.lint === true);
  if (loaded.mcpWrap) {
    // A read-only wrap is applied when the tools' annotations are known (the host).
    loaded.mcpWrap = {
      ...loaded.mcpWrap,
      surface: withOverrides(loaded.mcpWrap.surface, overrides),
    };
    if (options.storeUrl !== false) checkStoreUrl(loaded);
  }
  if (loaded.policy) {
    loaded.policy = {
      ...loaded.policy,
      surface: withOverrides(loaded.policy.surface, overrides),
    };
  }
  if (loaded.guardfile) {
    const surface = withOverrides(loaded.guardfile.surface, overrides);
    loaded.guardfile = surface.readOnly
      ? readOnlyView({ ...loaded.guardfile, surface })
      : { ...loaded.guardfile, surface };
  }
  if (loaded.mode !== "spec") return loaded;
  if (loaded.guardfile && options.storeUrl !== false) checkStoreUrl(loaded);
  if (loaded.guardfile) {
    // lint is serve minus the listener: build the very server serve would run,
    // so a catalog the MCP core refuses is a lint error too (src/modes/lint_build.ts).
    const guardfile = loaded.guardfile;
    const refused = buildRefusal(guardfile, () => guardedServer(guardfile, { log: () => {} }));
    if (refused) {
      loaded.diagnostics.push(refused);
      loaded.guardfile = undefined;
    }
  }
  return loaded;
}

/**
 * The one value read when the server is built rather than per call, as in the
 * reference: the URL of a shared rate-limit store (`store redis env "X"`), so
 * `lint` and `serve` fail at once when it is unset or not a redis URL. The
 * message names the variable, never its value.
 */
function checkStoreUrl(loaded: LoadedFile): void {
  const store = (loaded.guardfile ?? loaded.mcpWrap)!.controls.rateLimit?.store;
  if (!store || store.url.provider !== "env") return;
  const name = store.url.address;
  const value = Deno.env.get(name);
  const problem = value === undefined || value === ""
    ? `the environment variable ${name} is unset; set it to the Redis URL (redis://host:port)`
    : !isRedisUrl(value)
    ? `the environment variable ${name} does not hold a redis URL; write redis://host:port ` +
      `(or rediss://)`
    : undefined;
  if (!problem) return;
  loaded.diagnostics.push({
    severity: "error",
    path: "rate-limit > store",
    position: store.position,
    message: problem,
  });
  loaded.guardfile = undefined;
  loaded.mcpWrap = undefined;
}

/** Guardfiles larger than this are refused unread (a guardfile is a few KiB). */
export const MAX_GUARDFILE_BYTES = 1024 * 1024;

/**
 * Read a guardfile as UTF-8, at most {@link MAX_GUARDFILE_BYTES}, from a
 * regular file only (src/ops/bounded_file.ts: plain reads into one buffer, not
 * a web stream, whose first use costs start-up a few milliseconds; see
 * bench/README.md, "Cold start").
 * @throws {FileRefused} when the file is missing, not regular (a FIFO,
 *   /dev/zero, a directory), larger than the cap or not UTF-8
 */
function readGuardfileText(file: string): Promise<string> {
  return readBoundedText(file, {
    what: "guardfile",
    maxBytes: MAX_GUARDFILE_BYTES,
    sizeHint: "a guardfile is a few KiB",
  });
}

/** The token table's module (and its SHA-256), loaded only where tokens are (never on stdio). */
export function tokenTable(): Promise<typeof import("../inbound/token_table.ts")> {
  return lazy<typeof import("../inbound/token_table.ts")>("token_table");
}

/** Errors only. */
export function errorsOf(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity === "error");
}

/** Build the guarded MCP server for a loaded guardfile. */
export function guardedServer(
  guardfile: Guardfile,
  options: Partial<GuardOptions> & {
    log?: Logger;
    toolAccess?: (auth: unknown) => ToolAccess | undefined;
    /** Telemetry's request wrapper (src/ops/telemetry.ts), when on. */
    around?: RequestWrapper;
  } = {},
): McpServer {
  const log = options.log ?? stderrLogger;
  const guard = createGuard(guardfile, {
    resolver: options.resolver ?? denoResolver,
    limits: options.limits,
    log,
    stateKeys: options.stateKeys,
    upstreamCredential: options.upstreamCredential,
  });
  return new McpServer({
    ...guard,
    log,
    toolAccess: options.toolAccess,
    around: options.around,
    schemaProfile: guardfile.surface.schemaProfile,
  });
}

/** Tool name -> the scopes its grant declares (grants without `scope` are left out). */
export function toolScopesOf(guardfile: Guardfile): Map<string, string[]> {
  return new Map(
    guardfile.grants.filter((g) => g.scopes.length > 0).map((g) => [g.tool, g.scopes]),
  );
}

/** OAuth settings of {@link ServeOptions}. */
export interface OAuthServeOptions {
  /** The authorization server's issuer identifier. */
  issuer: string;
  /** This server's canonical URI, the audience tokens must carry. */
  resource: string;
  /** RFC 7662 client credentials, to accept opaque tokens by introspection. */
  introspection?: { clientId: string; clientSecret: string };
  /** The identity provider's profile (src/oauth/profiles.ts); absent: generic. */
  profile?: ProfileName;
  /** The provider's own audience for this server (see the profile). */
  audience?: string;
}

/** The OAuth weir serves with, and the caller's identity upstream when a token exchange is set. */
export interface OAuthSetup {
  server: OAuthResourceServer;
  /** Each call's exchanged token (src/oauth/upstream_credential.ts), when `exchange` was given. */
  upstreamCredential?: UpstreamCredential;
  /** `client-credentials`: weir's own token for its connection (src/oauth/client_credentials.ts). */
  connectionToken?: ConnectionToken;
}

/**
 * Build the OAuth resource server for a guardfile: read the issuer's metadata
 * (RFC 8414 / OpenID discovery) and set up the token check in the identity
 * provider's profile; with `exchange`, the per-call token exchange too. The
 * token modules (and `npm:jose`) are loaded only here.
 * @param given `weir verify`'s stand-ins: the issuer's metadata (not read from
 *   the issuer) and where the exchange's secret or key is read from
 * @throws {Error} when the metadata cannot be read or offers no way to check
 *   tokens, or the exchange cannot work (no token endpoint, an unreadable secret)
 */
export async function oauthFor(
  toolScopes: () => ReadonlyMap<string, readonly string[]>,
  options: OAuthServeOptions,
  log: Logger,
  exchange?: TokenExchangeSetting,
  given: { metadata?: IssuerMetadata; resolver?: ValueResolver } = {},
): Promise<OAuthSetup> {
  const { createOAuthResourceServer } = await lazy<typeof import("../oauth/resource_server.ts")>(
    "oauth_resource_server",
  );
  const { createTokenVerifier, discoverIssuer } = await lazy<
    typeof import("../oauth/access_tokens.ts")
  >("oauth_access_tokens");
  const { profileOf } = await lazy<typeof import("../oauth/profiles.ts")>("oauth_profiles");
  const metadata = given.metadata ?? await discoverIssuer(options.issuer);
  const profile = profileOf(options.profile);
  const verify = createTokenVerifier({
    metadata,
    resource: options.resource,
    introspection: options.introspection,
    profile,
    ...(options.audience === undefined ? {} : { audience: options.audience }),
  });
  const settings = {
    issuer: options.issuer,
    resource: options.resource,
    audience: options.audience,
  };
  const server = createOAuthResourceServer({
    resource: options.resource,
    issuer: options.issuer,
    verify,
    toolScopes,
    log,
    requestScope: (scope) => profile.requestScope(scope, settings),
    keepCallerToken: exchange !== undefined,
  });
  if (!exchange) return { server };
  const { exchangeCredential } = await lazy<typeof import("../oauth/exchange_setup.ts")>(
    "oauth_exchange_setup",
  );
  const { perCall, connection } = await exchangeCredential(exchange, {
    metadata,
    profile,
    read: async (source, what) =>
      (await resolveValue(source, given.resolver ?? processValues, what)).value,
    log,
  });
  return {
    server,
    upstreamCredential: perCall,
    ...(connection ? { connectionToken: connection } : {}),
  };
}

/** Options of {@link runServe}. */
export type ServeOptions = Omit<RunOnOptions, "mode" | "server" | "tools" | "oauth"> & {
  limits?: Partial<UpstreamLimits>;
  /**
   * The guardfile's path: when given, SIGHUP (and `POST /admin/reload` with
   * `adminTokens`) re-reads it, lints it as `weir lint` does, and swaps only
   * when it has no error (src/ops/reload.ts).
   */
  file?: string;
  /**
   * HTTP only: serve as an OAuth 2.1 resource server for tokens from `issuer`
   * bound to `resource` (see `src/oauth/resource_server.ts`). The issuer's metadata
   * is read at start-up; serving fails when it cannot be.
   */
  oauth?: OAuthServeOptions;
  /**
   * The static tokens the command line gave (`--inbound-token-env`,
   * `--tool-token-env`): with the guardfile's `inbound-token` nodes they make
   * the token table, rebuilt when a reload changes those nodes.
   */
  flagTokens?: TokenGrant[];
  /** The command line's surface flags, applied again to the file a reload reads. */
  surface?: SurfaceOverrides;
};

/** The scopes per tool of each built server (read when a reload swaps it in). */
const SCOPES = new WeakMap<McpServer, Map<string, string[]>>();

/** The surface of a loaded guardfile: its server, tool names and description. */
export function guardfileSurface(
  guardfile: Guardfile,
  options: {
    limits?: Partial<UpstreamLimits>;
    log?: Logger;
    toolAccess?: (auth: unknown) => ToolAccess | undefined;
    around?: RequestWrapper;
    /** The key service every surface of this process signs with (reloads keep it). */
    stateKeys?: StateKeys;
    /** `auth token-exchange`: each call's exchanged token (built at start). */
    upstreamCredential?: UpstreamCredential;
  },
): Surface {
  const server = guardedServer(guardfile, options);
  SCOPES.set(server, toolScopesOf(guardfile));
  return {
    server,
    tools: servedTools(guardfile).map((t) => t.name),
    // The surface model is loaded only when `GET /admin/describe` asks.
    describe: async () => (await import("../surface/spec.ts")).surfaceOfGuardfile(guardfile),
  };
}

/**
 * Why a reload cannot take the new file's `oauth` node: OAuth is set up when
 * weir starts (the issuer's metadata read, the listener's token check), so a
 * node added, removed or changed needs a restart; a reload that took the file
 * would log "reloaded" while serving exactly as before. When flags set OAuth
 * (they win over the file), the node is not what serves, and its changes
 * stop nothing.
 * @param started the file's node when weir started
 * @param next the new file's node
 * @param serving the OAuth weir serves with (flags or the file at start), if any
 * @returns the error line, or `undefined` when the reload may go on
 */
export function oauthReloadProblem(
  file: string,
  started: OAuthSetting | undefined,
  next: OAuthSetting | undefined,
  serving: Pick<OAuthServeOptions, "issuer" | "resource" | "profile" | "audience"> | undefined,
): string | undefined {
  type Compared = Pick<OAuthSetting, "issuer" | "resource" | "profile" | "audience">;
  const same = (a: Compared | undefined, b: Compared | undefined) =>
    a?.issuer === b?.issuer && a?.resource === b?.resource &&
    (a?.profile ?? "generic") === (b?.profile ?? "generic") && a?.audience === b?.audience;
  if (same(started, next)) return undefined;
  if (serving && !same(serving, started)) return undefined;
  const what = !started ? "was added" : !next ? "was removed" : "changed";
  return `${file}: the oauth node ${what}, and weir sets up OAuth only when it starts: ` +
    `restart weir to apply it (weir keeps serving the file it has)`;
}

/** A guardfile's token exchange (spec mode's `auth token-exchange`), if any. */
export function exchangeOf(guardfile: Guardfile): TokenExchangeSetting | undefined {
  return guardfile.auth.scheme === "token-exchange" ? guardfile.auth.exchange : undefined;
}

/**
 * Why a reload cannot take the new file's token exchange: weir builds it
 * (its client, its secret's pre-flight, its cache) when it starts.
 * @returns the problem, or `undefined` when the setting is unchanged
 */
export function exchangeReloadProblem(
  file: string,
  started: TokenExchangeSetting | undefined,
  next: TokenExchangeSetting | undefined,
): string | undefined {
  // Where the block and its client-credentials sit in the file is no change of it.
  const text = (s: TokenExchangeSetting | undefined) =>
    s && JSON.stringify({
      ...s,
      position: undefined,
      clientCredentials: s.clientCredentials && { scopes: s.clientCredentials.scopes },
    });
  if (text(started) === text(next)) return undefined;
  const what = !started ? "was added" : !next ? "was removed" : "changed";
  return `${file}: the token exchange ${what}, and weir sets it up only when it starts: ` +
    `restart weir to apply it (weir keeps serving the file it has)`;
}

/**
 * Load a guardfile for a reload, exactly as `weir lint FILE` does: the same
 * loader, the same warnings, errors formatted `file:line:column: message`.
 */
export async function reloadGuardfile(
  file: string,
  options: Parameters<typeof guardfileSurface>[1] & {
    /** The token table serving now, and the command line's part of it. */
    tokens?: { table: TokenTable; flagTokens: TokenGrant[] };
    /** The file's `oauth` node at start, and the OAuth weir serves with ({@link oauthReloadProblem}). */
    oauth?: { started?: OAuthSetting; serving?: OAuthServeOptions };
    /** The token exchange weir started with ({@link exchangeReloadProblem}). */
    exchange?: TokenExchangeSetting;
  },
  overrides: SurfaceOverrides = {},
): Promise<LoadOutcome> {
  const loaded = await loadGuardfileFile(file, overrides);
  const warnings = loaded.guardfile ? lintWarnings(loaded.guardfile) : [];
  const all = [...loaded.diagnostics, ...warnings];
  const errors = [
    ...(loaded.readError ? [loaded.readError] : []),
    ...errorsOf(all).map((d) => formatDiagnostic(file, d)),
    ...(loaded.policy
      ? [
        `${file}: is now an AWS ${loaded.policy.mode.toUpperCase()} policy; restart weir to serve it`,
      ]
      : []),
  ];
  const warningLines = all.filter((d) => d.severity === "warning").map((d) =>
    formatDiagnostic(file, d)
  );
  if (!loaded.guardfile || errors.length > 0) return { errors, warnings: warningLines };
  const oauthProblem = oauthReloadProblem(
    file,
    options.oauth?.started,
    loaded.guardfile.oauth,
    options.oauth?.serving,
  );
  if (oauthProblem) return { errors: [oauthProblem], warnings: warningLines };
  const exchangeProblem = exchangeReloadProblem(
    file,
    options.exchange,
    exchangeOf(loaded.guardfile),
  );
  if (exchangeProblem) return { errors: [exchangeProblem], warnings: warningLines };
  // A first `confirm` under shared keys needs the shared store weir started without.
  const unsafe = options.stateKeys &&
    singleUseProblem(options.stateKeys, Object.keys(loaded.guardfile.controls.confirm ?? {}));
  if (unsafe) {
    return {
      errors: [`${file}: ${unsafe}; restart weir with it to serve this file`],
      warnings: warningLines,
    };
  }
  // The inbound-token nodes: read their tokens now; the table is swapped with the surface.
  const fileTokens = loaded.guardfile.inboundTokens ?? [];
  let grants: TokenGrant[] | undefined;
  if (options.tokens) {
    try {
      grants = [...options.tokens.flagTokens, ...guardfileTokens(fileTokens)];
      new (await tokenTable()).TokenTable(grants);
    } catch (error) {
      return { errors: [`${file}: ${(error as Error).message}`], warnings: warningLines };
    }
    const unknown = unknownGrantTools(
      options.tokens.flagTokens,
      servedTools(loaded.guardfile).map((t) => t.name),
    );
    if (unknown.length > 0) {
      return {
        errors: [
          `${file}: --tool-token-env names tools the new file does not serve: ` +
          `${unknown.join(", ")}; keep serving them, or restart weir with other flags`,
        ],
        warnings: warningLines,
      };
    }
    if (grants.length === 0) {
      return {
        errors: [
          `${file}: the new file declares no inbound-token, and no token is given on the ` +
          `command line, so no caller could get in; restart weir to serve it without tokens`,
        ],
        warnings: warningLines,
      };
    }
  } else if (fileTokens.length > 0) {
    return {
      errors: [
        `${file}: inbound-token nodes were added, but weir started without inbound tokens; ` +
        `restart weir to require them`,
      ],
      warnings: warningLines,
    };
  }
  const surface = guardfileSurface(loaded.guardfile, options);
  if (grants) TOKENS.set(surface.server, grants);
  return { surface, warnings: warningLines };
}

/** The token grants of each surface built by a reload (set on the table when it swaps in). */
const TOKENS = new WeakMap<McpServer, TokenGrant[]>();

/** Serve a loaded guardfile until `signal` aborts (or, on stdio, input ends). */
export async function runServe(guardfile: Guardfile, options: ServeOptions): Promise<void> {
  const log = options.log ?? stderrLogger;
  if (options.oauth && options.transport.kind !== "http") {
    throw new Error("OAuth applies to HTTP only; stdio takes its credentials from the environment");
  }
  // The scopes of the surface serving now: a reload swaps them with the surface.
  const scopes = { current: toolScopesOf(guardfile) };
  const exchange = exchangeOf(guardfile);
  if (exchange && !options.oauth) {
    throw new Error(
      "auth token-exchange exchanges each caller's OAuth access token: serve over --http with " +
        "--oauth-issuer and --oauth-resource (or an oauth node)",
    );
  }
  const oauth = options.oauth
    ? await oauthFor(() => scopes.current, options.oauth, log, exchange)
    : undefined;
  if (!oauth && guardfile.grants.some((g) => g.scopes.length > 0)) {
    log({
      level: "warn",
      event: "scopes_unenforced",
      message: "grants declare scopes, but weir is not serving as an OAuth resource server " +
        "(--oauth-issuer and --oauth-resource): every caller may call every granted tool",
    });
  }
  // OpenTelemetry, when the OTEL_* variables turn it on (src/ops/telemetry.ts, loaded only then).
  const servedNames = { current: new Set<string>() };
  const telemetry = telemetryWanted((name) => Deno.env.get(name))
    ? await (await lazy<typeof import("../ops/telemetry.ts")>("telemetry")).startTelemetry(
      guardfile.name,
      () => servedNames.current,
      undefined,
      log,
    )
    : undefined;
  const build = {
    limits: options.limits,
    log: options.log,
    toolAccess: oauth?.server.toolAccess,
    around: telemetry?.around,
    stateKeys: options.state?.keys,
    upstreamCredential: oauth?.upstreamCredential,
  };
  const surface = guardfileSurface(guardfile, build);
  servedNames.current = new Set(surface.tools);
  // The token table: the command line's tokens and the guardfile's inbound-token nodes.
  const flagTokens = options.flagTokens ?? [];
  let tokens = options.inboundToken;
  const fileTokens = guardfile.inboundTokens ?? [];
  if (fileTokens.length > 0) {
    tokens = new (await tokenTable()).TokenTable([...flagTokens, ...guardfileTokens(fileTokens)]);
  }
  const about = { mode: "spec", server: guardfile.name, tools: surface.tools.length };
  const file = options.file;
  let served: McpServer | Reloader = surface.server;
  if (file !== undefined) {
    const table = tokens !== undefined && typeof tokens !== "string" && "callerOf" in tokens
      ? tokens
      : undefined;
    const reloader = new Reloader(
      surface,
      () =>
        reloadGuardfile(
          file,
          {
            ...build,
            tokens: table && { table, flagTokens },
            oauth: { started: guardfile.oauth, serving: options.oauth },
            exchange,
          },
          options.surface,
        ),
      log,
    );
    reloader.onSwap((next) => {
      scopes.current = SCOPES.get(next.server) ?? new Map();
      servedNames.current = new Set(next.tools);
      const grants = TOKENS.get(next.server);
      if (grants && table) table.set(grants);
    });
    served = reloader;
  }
  try {
    await runOn(served, { ...options, inboundToken: tokens, oauth: oauth?.server, ...about });
  } finally {
    await telemetry?.shutdown();
  }
}
