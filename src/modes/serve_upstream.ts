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
 * (`src/wrap/host.ts`, opened by `src/wrap/open.ts`): allowlist, stub, re-verification of the
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
import { type StateSetup, stateSetup } from "../ops/state_keys.ts";
import { stderrLogger } from "../mcp/server.ts";
import { cleanText } from "../mcp/text.ts";
import { TokenTable } from "../inbound/token_table.ts";
import { DEFAULT_MAX_STALENESS_MS } from "../mcp_upstream/freshness.ts";
import { isSchemaProfile, SCHEMA_PROFILES, type SchemaProfile } from "../mcp/schema_profile.ts";
import { connectionSecrets } from "../wrap/host.ts";
import {
  buildUpstreamServer,
  describeTarget,
  type ServeUpstreamConfig,
  StartupError,
} from "../wrap/open.ts";
import {
  durationFlag,
  parseUpstreamArgs,
  sharedConfig,
  UpstreamUsageError,
} from "../wrap/flags.ts";
import { OAUTH_FLAGS, oauthSettings } from "./serve_oauth_flags.ts";
import {
  exchangeFlags,
  exchangeStartProblem,
  IDENTITY_FLAGS,
  toolScopesFlag,
} from "./serve_exchange_flags.ts";
import type { TokenExchangeSetting } from "../guardfile/model.ts";
import { oauthFor, type OAuthServeOptions } from "./serve.ts";
import {
  browserFlagProblem,
  parseListenAddress,
  runOn,
  type RunOnOptions,
} from "../serving/listen.ts";
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

/** Options of {@link runServeUpstream} beyond the config. */
export type RunUpstreamOptions = Omit<RunOnOptions, "mode" | "server" | "tools" | "oauth">;

/**
 * Build the wrapper and serve it until `signal` aborts (or stdio input ends).
 * @throws {StartupError}
 */
export async function runServeUpstream(
  config: ServeUpstreamConfig,
  options: RunUpstreamOptions & {
    oauth?: OAuthServeOptions;
    /** `--tool-scope`: the scopes a caller's token must carry, by tool. */
    toolScopes?: ReadonlyMap<string, readonly string[]>;
    /** `--token-exchange-*`: each call carries a token exchanged from its caller's. */
    exchange?: TokenExchangeSetting;
  },
): Promise<void> {
  const log = options.log ?? stderrLogger;
  if (options.oauth && options.transport.kind !== "http") {
    throw new StartupError("OAuth applies to --http only");
  }
  const toolScopes = options.toolScopes ?? new Map<string, readonly string[]>();
  // The issuer's metadata unreadable, an exchange that cannot work: a start-up error, said as such.
  const oauth = options.oauth
    ? await oauthFor(() => toolScopes, options.oauth, log, options.exchange).catch((error) => {
      throw new StartupError((error as Error).message);
    })
    : undefined;
  // OpenTelemetry SERVER spans and the duration metric when OTEL_* turn it on (src/ops/telemetry.ts).
  let telemetry;
  try {
    telemetry = await startTelemetry(config.name, () => config.allowlist, undefined, log);
  } catch (error) {
    if (error instanceof TelemetryConfigError) throw new StartupError(error.message);
    throw error;
  }
  const built = await buildUpstreamServer(config, {
    log,
    signal: options.signal,
    around: telemetry?.around,
    stateKeys: options.state?.keys,
    toolAccess: oauth?.server.toolAccess,
    ...(oauth?.upstreamCredential
      ? {
        identity: {
          credential: oauth.upstreamCredential,
          scopesOf: (name: string) => toolScopes.get(name) ?? [],
          ...(oauth.connectionToken ? { connection: oauth.connectionToken } : {}),
        },
      }
      : {}),
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
        : connectionSecrets(config.headers)(built.connection.ownTokensSent)
          .text(built.connection.serverInfo.name),
      upstream_revision: built.connection.revision,
      tools: config.allowlist,
    });
    await runOn(built.server, {
      ...options,
      oauth: oauth?.server,
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
  let toolScopes: Map<string, string[]>;
  let exchange: TokenExchangeSetting | undefined;
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
      ...IDENTITY_FLAGS,
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
      oauth = await oauthSettings(values);
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
    try {
      toolScopes = toolScopesFlag(values["tool-scope"] as string[] | undefined, shared.allowlist);
      exchange = exchangeFlags(values);
    } catch (error) {
      if (error instanceof RangeError) throw new UpstreamUsageError(error.message);
      throw error;
    }
    if (toolScopes.size > 0 && !oauth) {
      throw new UpstreamUsageError("--tool-scope needs --oauth-issuer and --oauth-resource");
    }
    if (exchange && shared.target.kind !== "http") {
      throw new UpstreamUsageError(
        "token exchange sends each caller's exchanged token in an HTTP header: it applies to " +
          "--upstream URL, not to a stdio command",
      );
    }
    const refused = exchange && await exchangeStartProblem(exchange, oauth, "--token-exchange-*");
    if (refused) throw new UpstreamUsageError(refused);
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
      accept: shared.accept,
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
      toolScopes,
      exchange,
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
