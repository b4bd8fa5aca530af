/**
 * `weir serve-upstream`: an exact tool allowlist in front of an existing MCP
 * server (an HTTP URL, or a command run as a stdio child).
 *
 * Start-up: connect (retrying until `--connect-timeout`), list every page of
 * the upstream's tools, and decide each allowlisted tool
 * (`src/mcp_upstream/decision.ts`, the same decision `lint-upstream`
 * prints): served as the upstream wrote it (a pinned argument no longer
 * `required`), or a `NOT AVAILABLE` stub with the reason and what the
 * operator can do (a schema weir cannot enforce, a pin that does not fit,
 * a tool listed twice). Start-up fails only when the upstream cannot be
 * reached or an allowlisted tool is missing (named with the nearest names
 * the upstream has). The server answers both revisions over stdio or HTTP
 * with serve's transports and inbound options; the calls are the host's
 * (`src/modes/upstream_host.ts`): allowlist, stub, re-verification of the
 * surface (drift), pins, one `tools/call`.
 *
 * Why re-verify per call: the upstream is under no obligation to send
 * `notifications/tools/list_changed` (weir's own core never does), and a
 * stdio or HTTP upstream may be swapped between two calls; a listing per
 * call is the only check that sees every change. It costs one extra round
 * trip, which the benchmark (`bench/upstream.ts`) measures.
 *
 * @module
 */
import { usageLine } from "../errors/usage.ts";
import type { StateKeys } from "../mcp/signed_state.ts";
import { type StateSetup, stateSetup } from "../ops/state_keys.ts";
import { McpServer, stderrLogger } from "../mcp/server.ts";
import type { Logger, RequestWrapper } from "../mcp/server.ts";
import { CatalogError } from "../mcp/catalog.ts";
import { cleanText } from "../mcp/text.ts";
import { AllowlistError, parsePins } from "../mcp_upstream/allowlist.ts";
import { HeaderError, type HeaderTemplate, resolveHeaders } from "../mcp_upstream/headers.ts";
import { UpstreamConnection, type UpstreamTarget } from "../mcp_upstream/connection.ts";
import {
  decideTools,
  stubWords,
  type SurfaceInput,
  type ToolDecision,
} from "../mcp_upstream/decision.ts";
import {
  headerSecrets,
  secretsRedactor,
  type ServedEntry,
  UpstreamHost,
  withholdingSecrets,
} from "./upstream_host.ts";
import { TokenTable } from "../inbound/static_tokens.ts";
import { renamedOntoListed } from "./upstream_entries.ts";
import { DEFAULT_MAX_STALENESS_MS } from "../mcp_upstream/freshness.ts";
import { OAUTH_FLAGS, oauthSettings } from "./oauth_flags.ts";
import { oauthFor, type OAuthServeOptions } from "./serve.ts";
import type { ToolAccess } from "../mcp/server.ts";
import { isSchemaProfile, SCHEMA_PROFILES, type SchemaProfile } from "../mcp/schema_profile.ts";
import { READ_ONLY_REASON } from "../guardfile/surface.ts";
import { browserFlagProblem, parseListenAddress, runOn, type RunOnOptions } from "./listen.ts";
import { startTelemetry, TelemetryConfigError } from "../ops/telemetry.ts";
import {
  type AuthSettings,
  authSettings,
  OPS_FLAGS,
  type OpsSettings,
  opsSettings,
  stopSignals,
  TOOL_TOKEN_FLAGS,
  unknownGrantTools,
  weirSecretVariables,
} from "../ops/flags.ts";
import {
  durationFlag,
  parseUpstreamArgs,
  sharedConfig,
  UpstreamUsageError,
} from "./mcp_upstream_flags.ts";

/** What `serve-upstream` was asked to do. */
export interface ServeUpstreamConfig {
  name: string;
  allowlist: string[];
  /** `--pin` values as written. */
  pins: string[];
  target: UpstreamTarget;
  headers: HeaderTemplate[];
  connectTimeoutMs: number;
  /** Bound on each upstream request (0: none). */
  requestTimeoutMs: number;
  maxResponseBytes: number;
  /** See `UpstreamHostOptions.maxStalenessMs` (src/modes/upstream_host.ts) (`--max-staleness`). */
  maxStalenessMs: number;
  /**
   * `--read-only`: a tool whose definition lacks `annotations.readOnlyHint:
   * true` is served as a withheld stub (the reason is `READ_ONLY_REASON`).
   */
  readOnly?: boolean;
  /** `--schema-profile`: how `tools/list` shapes input schemas (src/mcp/schema_profile.ts). */
  schemaProfile?: SchemaProfile;
}

/** Start-up failed: exit 1 with this message. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

/** A running wrapper: the server to put behind a transport, and its upstream. */
export interface UpstreamServer {
  server: McpServer;
  connection: UpstreamConnection;
  host: UpstreamHost;
}

/** Everything {@link openUpstreamHost} needs. */
export interface UpstreamSetup {
  target: UpstreamTarget;
  headers: HeaderTemplate[];
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  maxResponseBytes: number;
  /** See `UpstreamHostOptions.maxStalenessMs` (src/modes/upstream_host.ts). */
  maxStalenessMs: number;
  /** The MCP server's tools to decide. */
  allowlist: string[];
  /** `--pin` values, by tool and argument. */
  pins?: Map<string, Map<string, string>>;
  /** What is served under which name (the guardfile form). */
  entries?: ServedEntry[];
  /** See `UpstreamHostOptions.resourceUris`. */
  resourceUris?: readonly string[];
  /** See `UpstreamHostOptions.readOnlyReason`. */
  readOnlyReason?: string;
  /** See `UpstreamHostOptions.schemaProfile`. */
  schemaProfile?: SchemaProfile;
  /** A further policy after the header-secret one (`decideTools`' `withhold`). */
  withhold?: SurfaceInput["withhold"];
  /**
   * The fingerprints a running surface holds its tools to (a reload that
   * keeps the connection: `UpstreamHost.baseline()`): a tool whose
   * definition changed since weir started stays a `drifted` stub, as the
   * stub's remedy says, until weir restarts; a reload does not take the
   * changed definition as reviewed.
   */
  baseline?: ReadonlyMap<string, string>;
}

/**
 * The hosts built on each connection: a reload that keeps the connection
 * builds another host on it, and the MCP server's list_changed must reach
 * the host that serves (and is harmless to one that no longer does).
 */
const hostsOf = new WeakMap<UpstreamConnection, Set<WeakRef<UpstreamHost>>>();

function toolsChangedOn(connection: UpstreamConnection): void {
  for (const ref of hostsOf.get(connection) ?? []) {
    const host = ref.deref();
    if (host) host.toolsChanged();
    else hostsOf.get(connection)!.delete(ref);
  }
}

/**
 * Connect to the MCP server, list its tools, decide each one, and build the
 * host of the surface (src/modes/upstream_host.ts).
 * @param reuse an open connection to the same server (a reload): it is not closed on failure
 * @throws {StartupError} naming what is wrong: missing tools (with the nearest
 *   names), an unreadable header secret, an unreachable upstream
 */
export async function openUpstreamHost(
  setup: UpstreamSetup,
  options: {
    log: Logger;
    signal?: AbortSignal;
    onChanged?: () => void;
    reuse?: UpstreamConnection;
  },
): Promise<{ connection: UpstreamConnection; host: UpstreamHost }> {
  const { log } = options;
  // What weir writes may quote the upstream, which may quote weir's credential.
  const redact = (text: string) => secretsRedactor(setup.headers).text(text);
  // One policy for start-up and every re-verification (lint-upstream decides with it too).
  const withhold = withholdingSecrets(setup.headers, setup.withhold);
  try {
    // Pre-flight: a header secret that cannot be read stops start-up before any retry loop.
    headerSecrets(setup.headers);
  } catch (error) {
    if (error instanceof HeaderError) throw new StartupError(error.message);
    throw error;
  }
  let connection = options.reuse;
  let opened: UpstreamConnection | undefined;
  if (!connection) {
    try {
      connection = await UpstreamConnection.open({
        target: setup.target,
        headers: () => resolveHeaders(setup.headers).headers,
        requestTimeoutMs: setup.requestTimeoutMs,
        maxResponseBytes: setup.maxResponseBytes,
        connectTimeoutMs: setup.connectTimeoutMs,
        signal: options.signal,
        onRetry: (error, attempt) =>
          log({
            level: "warn",
            event: "upstream_connect_retry",
            attempt,
            error: clip(redact(error.message)),
          }),
        onToolsChanged: () => {
          log({ level: "info", event: "upstream_tools_changed" });
          // The next call verifies the definitions again before it is forwarded.
          if (opened) toolsChangedOn(opened);
        },
      });
    } catch (error) {
      throw new StartupError(
        `upstream ${describeTarget(setup.target)}: ${redact((error as Error).message)}`,
      );
    }
    opened = connection;
  }
  try {
    let decisions: ToolDecision[];
    const startedAt = performance.now();
    let ttlMs: number | undefined;
    let listedNames: string[] = [];
    try {
      const listed = await connection.listToolsWithTtl(options.signal);
      ttlMs = listed.ttlMs;
      listedNames = listed.tools.map((t) => t.name);
      decisions = await decideTools({
        allowlist: setup.allowlist,
        listed: listed.tools,
        pins: setup.pins,
        withhold,
        ...(setup.baseline
          ? { baseline: { fingerprints: setup.baseline, since: "weir started", running: true } }
          : {}),
      });
    } catch (error) {
      throw new StartupError(
        `upstream ${describeTarget(setup.target)}: tools/list failed: ${
          redact((error as Error).message)
        }`,
      );
    }
    const missing = decisions.flatMap((d) =>
      d.status === "missing"
        ? [
          `tool ${JSON.stringify(d.name)} is not listed by the upstream` +
          (d.nearest.length ? ` (nearest: ${d.nearest.join(", ")})` : " (it lists no tools)"),
        ]
        : []
    );
    if (missing.length > 0) throw new StartupError(redact(missing.join("; ")));
    const renamed = renamedOntoListed(setup.entries ?? [], listedNames);
    if (renamed.length > 0) throw new StartupError(redact(renamed.join("; ")));
    for (const d of decisions) {
      if (d.status !== "stubbed") continue;
      // Served as a stub: the other tools keep serving; the operator hears why.
      log({ level: "warn", event: "upstream_tool_stubbed", tool: d.name, reason: stubWords(d) });
    }
    const host = new UpstreamHost(decisions, {
      connection,
      allowlist: setup.allowlist,
      entries: setup.entries,
      pins: setup.pins,
      withhold,
      headers: setup.headers,
      log,
      onChanged: options.onChanged,
      maxStalenessMs: setup.maxStalenessMs,
      resourceUris: setup.resourceUris,
      readOnlyReason: setup.readOnlyReason,
      schemaProfile: setup.schemaProfile,
      baseline: setup.baseline,
    }, { at: startedAt, ttlMs });
    // Stubs of the served entries the decisions above did not announce (the
    // guardfile's rules, read-only mode, the schema profile).
    const announced = new Set(decisions.flatMap((d) => d.status === "stubbed" ? [d.name] : []));
    for (const state of host.served()) {
      if (state.kind === "stubbed" && !announced.has(state.entry.upstream)) {
        log({
          level: "warn",
          event: "upstream_tool_stubbed",
          tool: state.entry.name,
          reason: stubWords(state.stub),
        });
      }
    }
    let hosts = hostsOf.get(connection);
    if (!hosts) hostsOf.set(connection, hosts = new Set());
    hosts.add(new WeakRef(host));
    return { connection, host };
  } catch (error) {
    if (!options.reuse) await connection.close();
    throw error;
  }
}

/**
 * Connect, decide the surface, and build the wrapper's MCP server.
 * @throws {StartupError} naming what is wrong: missing tools (with the nearest
 *   names), an unusable pin, an unreadable header secret, an unreachable upstream
 */
export async function buildUpstreamServer(
  config: ServeUpstreamConfig,
  options: {
    log?: Logger;
    signal?: AbortSignal;
    around?: RequestWrapper;
    /** Told when the listed surface changed. */
    onChanged?: () => void;
    /** The key service that signs cursors (src/mcp/signed_state.ts). */
    stateKeys?: StateKeys;
    /** OAuth: what a caller's token may see and call. */
    toolAccess?: (auth: unknown) => ToolAccess | undefined;
  } = {},
): Promise<UpstreamServer> {
  const log = options.log ?? stderrLogger;
  let pins: Map<string, Map<string, string>>;
  try {
    pins = parsePins(config.pins, config.allowlist);
  } catch (error) {
    if (error instanceof AllowlistError) throw new StartupError(error.message);
    throw error;
  }
  let server: McpServer | undefined;
  const { connection, host } = await openUpstreamHost({
    ...config,
    pins,
    ...(config.readOnly ? { readOnlyReason: READ_ONLY_REASON } : {}),
  }, {
    log,
    signal: options.signal,
    // A tool became a stub: clients that listen hear the list changed.
    onChanged: () => {
      server?.toolsChanged();
      options.onChanged?.();
    },
  });
  try {
    server = new McpServer({
      name: config.name,
      version: "0.1.0",
      toolsListChanged: true,
      catalog: () => host.catalog(),
      dispatch: host.dispatch,
      log,
      around: options.around,
      stateKeys: options.stateKeys,
      toolAccess: options.toolAccess,
      schemaProfile: config.schemaProfile,
    });
  } catch (error) {
    await connection.close();
    if (error instanceof CatalogError) {
      throw new StartupError(`weir cannot serve the upstream's tools: ${error.message}`);
    }
    throw error;
  }
  return { server, connection, host };
}

function clip(text: string, max = 512): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}...` : t;
}

/** The upstream for a message: `http://host/path` (no query) or `command "name"`. */
export function describeTarget(target: UpstreamTarget): string {
  return target.kind === "http"
    ? `${target.url.origin}${target.url.pathname}`
    : `command ${JSON.stringify(target.command)}`;
}

/** Options of {@link runServeUpstream} beyond the config. */
export type RunUpstreamOptions = Omit<RunOnOptions, "mode" | "server" | "tools" | "oauth">;

/**
 * Build the wrapper and serve it until `signal` aborts (or stdio input ends).
 * @throws {StartupError}
 */
export async function runServeUpstream(
  config: ServeUpstreamConfig,
  options: RunUpstreamOptions & { oauth?: OAuthServeOptions },
): Promise<void> {
  const log = options.log ?? stderrLogger;
  if (options.oauth && options.transport.kind !== "http") {
    throw new StartupError("OAuth applies to --http only");
  }
  // The command-line form has no per-tool scope: any valid access token may call.
  const oauth = options.oauth ? await oauthFor(() => new Map(), options.oauth, log) : undefined;
  // OpenTelemetry SERVER spans and the duration metric when OTEL_* turn it on (src/ops/telemetry.ts).
  let telemetry;
  try {
    telemetry = await startTelemetry(config.name, () => config.allowlist);
  } catch (error) {
    if (error instanceof TelemetryConfigError) throw new StartupError(error.message);
    throw error;
  }
  const built = await buildUpstreamServer(config, {
    log,
    signal: options.signal,
    around: telemetry?.around,
    stateKeys: options.state?.keys,
    toolAccess: oauth?.toolAccess,
  }).catch(async (error) => {
    await telemetry?.shutdown();
    throw error;
  });
  try {
    log({
      level: "info",
      event: "upstream_connected",
      upstream: describeTarget(config.target),
      upstream_server: built.connection.serverInfo?.name === undefined
        ? undefined
        : secretsRedactor(config.headers).text(built.connection.serverInfo.name),
      upstream_revision: built.connection.revision,
      tools: config.allowlist,
    });
    await runOn(built.server, {
      ...options,
      oauth,
      log,
      mode: "upstream",
      server: config.name,
      tools: config.allowlist.length,
    });
  } finally {
    await built.connection.close();
    await telemetry?.shutdown();
  }
}

/**
 * `weir serve-upstream ARGS`: parse, start, serve; messages on stderr.
 * @returns the exit code (0, 1, 2)
 */
export async function serveUpstreamMain(args: string[]): Promise<number> {
  let config: ServeUpstreamConfig;
  let transport: RunOnOptions["transport"];
  let values: Record<string, unknown>;
  let ops: OpsSettings;
  let auth: AuthSettings;
  let state: StateSetup;
  let oauth: OAuthServeOptions | undefined;
  try {
    const parsed = parseUpstreamArgs(args, {
      name: { type: "string" },
      pin: { type: "string", multiple: true },
      "request-timeout": { type: "string" },
      "max-response-bytes": { type: "string" },
      stdio: { type: "boolean" },
      http: { type: "string" },
      "allow-origin": { type: "string", multiple: true },
      "allow-host": { type: "string", multiple: true },
      "max-staleness": { type: "string" },
      "read-only": { type: "boolean" },
      "schema-profile": { type: "string" },
      ...OPS_FLAGS,
      ...TOOL_TOKEN_FLAGS,
      ...OAUTH_FLAGS,
    });
    values = parsed.values;
    try {
      ops = opsSettings(values);
    } catch (error) {
      throw new UpstreamUsageError((error as Error).message);
    }
    const shared = sharedConfig(values, parsed.command);
    if (!shared.target) {
      throw new UpstreamUsageError("serve-upstream needs --upstream URL or -- CMD [ARG...]");
    }
    if (Boolean(values.stdio) === (values.http !== undefined)) {
      throw new UpstreamUsageError("serve-upstream needs exactly one of --stdio or --http");
    }
    const browser = browserFlagProblem(
      values["allow-origin"] as string[] | undefined,
      values["allow-host"] as string[] | undefined,
    );
    if (browser) throw new UpstreamUsageError(browser);
    if (values.http !== undefined) {
      const addr = parseListenAddress(values.http as string);
      if (typeof addr === "string") throw new UpstreamUsageError(addr);
      transport = { kind: "http", ...addr };
    } else transport = { kind: "stdio" };
    if (values["admin-token-env"] !== undefined) {
      throw new UpstreamUsageError(
        "serve-upstream has no admin endpoints (there is no guardfile to reload)",
      );
    }
    try {
      oauth = oauthSettings(values);
      auth = authSettings(values, transport.kind === "http" ? transport : undefined);
      state = await stateSetup(values);
    } catch (error) {
      // A start-up configuration refusal (the variable or file a flag names: unset, too
      // short, unreadable) is exit 2, like any other wrong setting (FlagError is one).
      if (error instanceof RangeError) throw new UpstreamUsageError(error.message);
      console.error(`weir: serve-upstream: ${(error as Error).message}`);
      return 1;
    }
    const unknown = unknownGrantTools(auth.toolTokens ?? [], shared.allowlist);
    if (unknown.length > 0) {
      throw new UpstreamUsageError(
        `--tool-token-env names tools not on the allowlist: ${unknown.join(", ")}`,
      );
    }
    const maxBytes = (values["max-response-bytes"] as string | undefined) ?? "8388608";
    if (!/^\d+$/.test(maxBytes) || Number(maxBytes) < 1024) {
      throw new UpstreamUsageError(`--max-response-bytes takes a whole number >= 1024`);
    }
    const profile = values["schema-profile"] as string | undefined;
    if (profile !== undefined && !isSchemaProfile(profile)) {
      throw new UpstreamUsageError(
        `--schema-profile must be one of ${SCHEMA_PROFILES.join(", ")}, not ${profile}`,
      );
    }
    const name = ((values.name as string | undefined) ?? "weir-upstream").trim();
    if (name === "") throw new UpstreamUsageError("--name must not be empty");
    config = {
      name,
      allowlist: shared.allowlist,
      pins: (values.pin as string[] | undefined) ?? [],
      // weir's own secrets (inbound and admin tokens, state keys, the store's URL)
      // are weir's alone: a stdio upstream does not inherit them.
      target: shared.target.kind === "stdio"
        ? { ...shared.target, withoutEnv: weirSecretVariables(values) }
        : shared.target,
      headers: shared.headers,
      connectTimeoutMs: shared.connectTimeoutMs,
      requestTimeoutMs: durationFlag("--request-timeout", values["request-timeout"], 60_000),
      maxResponseBytes: Number(maxBytes),
      maxStalenessMs: durationFlag(
        "--max-staleness",
        values["max-staleness"],
        DEFAULT_MAX_STALENESS_MS,
      ),
      readOnly: values["read-only"] === true,
      ...(profile !== undefined ? { schemaProfile: profile as SchemaProfile } : {}),
    };
  } catch (error) {
    if (error instanceof UpstreamUsageError) {
      console.error(usageLine("serve-upstream", error.message));
      return 2;
    }
    throw error;
  }
  const stop = stopSignals();
  try {
    await runServeUpstream(config, {
      transport,
      allowedOrigins: values["allow-origin"] as string[] | undefined,
      allowedHosts: values["allow-host"] as string[] | undefined,
      inboundToken: tokenTable(auth),
      oauth,
      signal: stop.signal,
      log: ops.log,
      drainMs: ops.drainMs,
      shutdownGraceMs: ops.shutdownGraceMs,
      bodyDeadlineMs: ops.bodyDeadlineMs,
      maxConcurrent: ops.maxConcurrent,
      state,
    });
    return 0;
  } catch (error) {
    if (
      error instanceof StartupError || error instanceof Deno.errors.AddrInUse ||
      error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.NotFound
    ) {
      // The message can quote the upstream (its tool names, its error text).
      console.error(`weir: serve-upstream: ${cleanText(error.message)}`);
      return 1;
    }
    throw error;
  } finally {
    // The signal listeners stay until the process exits (as serve's do).
    await ops.log.flush();
  }
}

/** The token table of the command line's tokens, or `undefined` when there are none. */
function tokenTable(auth: AuthSettings): TokenTable | undefined {
  const grants = [
    ...(auth.inboundTokens ? [{ tokens: auth.inboundTokens }] : []),
    ...(auth.toolTokens ?? []),
  ];
  return grants.length > 0 ? new TokenTable(grants) : undefined;
}
