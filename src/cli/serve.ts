/**
 * `weir serve FILE (--stdio | --http [HOST:]PORT) [options]`: flags to
 * {@linkcode runServe} options; SIGTERM and SIGINT drain and stop (src/ops/shutdown.ts).
 *
 * @module
 */
import { lazy } from "../ops/lazy.ts";
import { browserFlagProblem } from "../serving/listen.ts";
import {
  denoResolver,
  errorsOf,
  exchangeOf,
  loadGuardfileFile,
  runServe,
  tokenTable,
} from "../modes/serve.ts";
import { upstreamClientProblem } from "../guard/send.ts";
import { resolveValue } from "../guard/values.ts";
import type { Database } from "../guardfile/model.ts";
import { proxySetting } from "../outbound/proxy.ts";
import {
  authSettings,
  FlagError,
  OPS_FLAGS,
  opsSettings,
  stopSignals,
  TOOL_TOKEN_FLAGS,
  unknownGrantTools,
  weirSecretVariables,
} from "../ops/flags.ts";
import type { TokenGrant } from "../inbound/static_tokens.ts";
import { servedTools, wrapServedTools } from "../modes/lint.ts";
import { OAUTH_FLAGS, oauthSettings } from "../modes/serve_oauth_flags.ts";
import { checkSingleUse, stateSetup } from "../ops/state_keys.ts";
import type { Guardfile } from "../guardfile/model.ts";
import {
  parseFlags,
  parseHttpAddress,
  printDiagnostics,
  surfaceFlags,
  timeoutMs,
  UsageError,
  wholeNumber,
} from "./args.ts";

/**
 * Run `weir serve` until stdin closes (stdio) or a signal arrives (HTTP).
 * @param args the arguments after `serve`
 * @param mode `serve-ssm`/`serve-s3`: refuse a file that is not that AWS policy
 * @returns 0 after a clean stop; 1 when the guardfile has errors, the inbound
 *   token variable is unset, or serving failed
 * @throws {UsageError} on a bad command line
 */
export async function run(args: string[], mode?: "ssm" | "s3"): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    stdio: { type: "boolean" },
    http: { type: "string" },
    "allow-origin": { type: "string", multiple: true },
    "allow-host": { type: "string", multiple: true },
    "upstream-timeout": { type: "string" },
    "max-response-bytes": { type: "string" },
    "read-only": { type: "boolean" },
    "schema-profile": { type: "string" },
    "max-staleness": { type: "string" },
    ...OPS_FLAGS,
    ...TOOL_TOKEN_FLAGS,
    ...OAUTH_FLAGS,
  });
  if (positionals.length !== 1) throw new UsageError("serve takes exactly one FILE");
  let ops;
  try {
    ops = opsSettings(values);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const log = ops.log;
  if (Boolean(values.stdio) === (values.http !== undefined)) {
    throw new UsageError("serve needs exactly one of --stdio or --http [HOST:]PORT");
  }
  const limits = {
    timeoutMs: timeoutMs("--upstream-timeout", values["upstream-timeout"], 30_000),
    maxResponseBytes: wholeNumber(
      "--max-response-bytes",
      values["max-response-bytes"],
      8 * 1024 * 1024,
    ),
  };
  const browser = browserFlagProblem(values["allow-origin"], values["allow-host"]);
  if (browser) throw new UsageError(browser);
  const transport = values.stdio
    ? { kind: "stdio" as const }
    : { kind: "http" as const, ...parseHttpAddress(values.http as string) };
  let oauth;
  try {
    oauth = await oauthSettings(values);
  } catch (error) {
    if (error instanceof FlagError) throw new UsageError(error.message);
    throw error;
  }
  const surface = surfaceFlags(values);
  const loaded = await loadGuardfileFile(positionals[0], surface);
  printDiagnostics(loaded);
  if (mode && loaded.policy?.mode !== mode && errorsOf(loaded.diagnostics).length === 0) {
    console.error(
      `weir: ${loaded.file} is not an AWS ${mode.toUpperCase()} policy: it must read ` +
        `wrap ward mcp aws ${mode} { … } (see "weir help serve-${mode}")`,
    );
    return 1;
  }
  if (
    !(loaded.guardfile ?? loaded.policy ?? loaded.mcpWrap) ||
    errorsOf(loaded.diagnostics).length > 0
  ) return 1;
  const wrap = loaded.mcpWrap;
  if (wrap) {
    for (const flag of ["upstream-timeout", "max-response-bytes"] as const) {
      if (values[flag] !== undefined) {
        throw new UsageError(
          `--${flag} applies to a guardfile of an HTTP API; ${loaded.file} wraps an MCP ` +
            `server: set request-timeout or max-response-bytes in its mcp-server block`,
        );
      }
    }
  } else if (values["max-staleness"] !== undefined) {
    throw new UsageError(
      `--max-staleness applies to a guardfile that wraps an MCP server (and to serve-upstream)`,
    );
  }
  const maxStalenessMs = values["max-staleness"] === undefined
    ? undefined
    : timeoutMs("--max-staleness", values["max-staleness"], 0);
  if (loaded.policy && oauth) {
    throw new UsageError("--oauth-issuer applies to guardfiles, not to AWS policies");
  }
  // A proxy or client setting weir cannot use would refuse every call: refuse to start instead.
  const clientProblem = loaded.guardfile
    ? upstreamClientProblem()
    : wrap?.server.transport === "stdio"
    ? undefined
    : proxySetting().problem;
  if (clientProblem) throw new UsageError(clientProblem);
  // So would a database URL the driver cannot read (checked when it can be read now).
  const database = loaded.guardfile?.database;
  if (database) {
    const problem = await startupDsnProblem(database);
    if (problem) throw new UsageError(problem);
  }
  // The guardfile's `oauth` node, unless the flags say otherwise (they win).
  const fromFile = (loaded.guardfile ?? wrap)?.oauth;
  if (!oauth && fromFile) {
    const at = `${loaded.file}:${fromFile.position?.line ?? 0}:${fromFile.position?.column ?? 0}`;
    if (values.stdio) throw new UsageError(`${at}: "oauth" applies to --http only, not --stdio`);
    if (values["inbound-token-env"] !== undefined || values["tool-token-env"] !== undefined) {
      throw new UsageError(
        `${at}: the guardfile asks for OAuth, which cannot be combined with ` +
          `--inbound-token-env or --tool-token-env: choose static tokens or OAuth`,
      );
    }
    oauth = {
      issuer: fromFile.issuer,
      resource: fromFile.resource,
      ...(fromFile.profile ? { profile: fromFile.profile } : {}),
      ...(fromFile.audience ? { audience: fromFile.audience } : {}),
    };
  }
  // The caller's identity upstream: it needs OAuth, a target the profile can ask for, and a
  // readable secret or key (exit 2 otherwise, before anything is served).
  const exchange = loaded.guardfile
    ? exchangeOf(loaded.guardfile)
    : wrap?.server.transport === "http"
    ? wrap.server.exchange
    : undefined;
  if (exchange) {
    const at = `${loaded.file}:${exchange.position?.line ?? 0}:${exchange.position?.column ?? 0}`;
    const { exchangeStartProblem } = await lazy<typeof import("../modes/serve_exchange_flags.ts")>(
      "serve_exchange_flags",
    );
    const problem = await exchangeStartProblem(exchange, oauth, at);
    if (problem) throw new UsageError(problem);
  }
  const fileTokens = (loaded.guardfile ?? wrap)?.inboundTokens ?? [];
  if (fileTokens.length > 0) {
    const first = fileTokens[0];
    const at = `${loaded.file}:${first.position?.line ?? 0}:${first.position?.column ?? 0}`;
    if (values.stdio) {
      throw new UsageError(`${at}: "inbound-token" applies to --http only, not --stdio`);
    }
    if (oauth) {
      throw new UsageError(
        `${at}: "inbound-token" cannot be combined with OAuth: choose static tokens or OAuth`,
      );
    }
    if (values["no-inbound-auth"]) {
      throw new UsageError(`${at}: "inbound-token" and --no-inbound-auth contradict each other`);
    }
  }
  let auth;
  let state;
  let flagTokens: TokenGrant[] = [];
  try {
    // OAuth, from the flags or the guardfile, is inbound authentication; so
    // are the guardfile's inbound-token nodes.
    const flags = oauth ? { ...values, "oauth-issuer": oauth.issuer } : values;
    auth = authSettings(flags, transport.kind === "http" ? transport : undefined, undefined, {
      guardfileTokens: fileTokens.length > 0,
    });
    flagTokens = [
      ...(auth.inboundTokens ? [{ tokens: auth.inboundTokens }] : []),
      ...(auth.toolTokens ?? []),
    ];
    // Each mode's modules are loaded only when a file of that mode is served.
    const served = loaded.policy
      ? (await lazy<typeof import("../modes/serve_aws.ts")>("serve_aws")).awsServedTools(
        loaded.policy,
      ).map((t) => t.name)
      : wrap
      ? wrapServedTools(wrap).map((t) => t.name)
      : servedTools(loaded.guardfile!).map((t) => t.name);
    const unknown = unknownGrantTools(auth.toolTokens ?? [], served);
    if (unknown.length > 0) {
      throw new UsageError(
        `--tool-token-env names tools ${loaded.file} does not serve: ${
          unknown.join(", ")
        }; served: ${served.join(", ")}`,
      );
    }
    // Signed state: the keys, and where single use is recorded (src/ops/state_keys.ts).
    state = await stateSetup(values, rateLimitStore(loaded.guardfile ?? wrap));
    checkSingleUse(state, Object.keys((loaded.guardfile ?? wrap)?.controls.confirm ?? {}));
  } catch (error) {
    // A start-up configuration refusal (a flag, or the variable or file it names: unset,
    // too short, unreadable) is exit 2, as every other wrong setting is (FlagError is one).
    if (error instanceof RangeError || error instanceof UsageError) {
      throw new UsageError((error as Error).message);
    }
    console.error(`weir: ${(error as Error).message}`);
    return 1;
  }
  const stop = stopSignals();
  try {
    const options = {
      transport,
      allowedOrigins: values["allow-origin"],
      allowedHosts: values["allow-host"],
      // The token table (and its SHA-256) loads only when there are tokens.
      inboundToken: flagTokens.length > 0
        ? new (await tokenTable()).TokenTable(flagTokens)
        : undefined,
      flagTokens,
      adminTokens: auth.adminTokens,
      file: positionals[0],
      oauth,
      limits,
      signal: stop.signal,
      log,
      drainMs: ops.drainMs,
      shutdownGraceMs: ops.shutdownGraceMs,
      bodyDeadlineMs: ops.bodyDeadlineMs,
      maxConcurrent: ops.maxConcurrent,
      state,
      surface,
    };
    if (loaded.policy) {
      const { runServeAws } = await lazy<typeof import("../modes/serve_aws.ts")>("serve_aws");
      await runServeAws(loaded.policy, options);
    } else if (wrap) {
      const { runServeWrap } = await lazy<typeof import("../modes/serve_mcp_wrap.ts")>(
        "serve_mcp_wrap",
      );
      await runServeWrap(wrap, {
        ...options,
        flags: { maxStalenessMs },
        // weir's own secrets stay weir's: a stdio MCP server does not inherit them.
        withoutEnv: [
          ...weirSecretVariables(values),
          ...wrap.inboundTokens.flatMap((t) =>
            t.source.chain.flatMap((c) => c.provider === "env" ? [c.address] : [])
          ),
        ],
      });
    } else await runServe(loaded.guardfile!, options);
  } catch (error) {
    console.error(`weir: serve: ${(error as Error).message}`);
    return 1;
  } finally {
    // The signal listeners stay until the process exits: a second SIGTERM
    // while the last lines are written must not end it with status 143.
    await log.flush();
  }
  return 0;
}

/**
 * The guardfile's shared rate-limit store, which also records spent
 * confirmations when `--state-store-env` is not given.
 */
function rateLimitStore(
  guardfile?: { controls: Pick<Guardfile["controls"], "rateLimit"> },
): { what: string; url: string | undefined } | undefined {
  const store = guardfile?.controls.rateLimit?.store;
  if (!store) return undefined;
  return store.url.provider === "env"
    ? {
      what: `the rate-limit store (env "${store.url.address}")`,
      url: Deno.env.get(store.url.address),
    }
    : { what: "the rate-limit store (a literal URL)", url: store.url.address };
}

/**
 * Why the guardfile's database URL would refuse every call, naming where it
 * comes from but never its value (it holds a password); `undefined` when it is
 * usable or cannot be read yet (then each call says so, as for a credential).
 */
async function startupDsnProblem(database: Database): Promise<string | undefined> {
  let dsn: string;
  try {
    dsn = (await resolveValue(database.dsn, denoResolver, "the database DSN")).value;
  } catch {
    return undefined;
  }
  const { dsnOrigin, dsnProblem } = await lazy<typeof import("../guard/sql.ts")>("guard_sql");
  const problem = dsnProblem(dsn);
  return problem && `the database DSN (from ${dsnOrigin(database)}) ${problem}`;
}
