/**
 * `weir serve-upstream`: an exact tool allowlist in front of an existing MCP
 * server (an HTTP URL, or a command run as a stdio child).
 *
 * Start-up: connect (retrying until `--connect-timeout`), list every page of
 * the upstream's tools, require every allowlisted tool (missing ones are named
 * with the nearest names the upstream has), record each one's SHA-256
 * fingerprint, check the pins against the tools' schemas, and build a weir
 * {@link McpServer} whose catalog is exactly the allowlisted definitions as
 * the upstream wrote them. (One change: a pinned argument is dropped from the
 * served `required` list, since weir supplies it.) The server answers both
 * revisions over stdio or HTTP with serve's transports and inbound options.
 *
 * One call: the core checks the name against the catalog (only allowlisted
 * tools exist in it) and the arguments against the advertised schema; then
 * dispatch re-checks the allowlist, refuses a tool that drifted before, lists
 * the upstream's tools again and compares every allowlisted definition with its
 * fingerprint (a change is a sticky refusal of that tool until restart, logged
 * once), checks and injects pins, and sends `tools/call` once, carrying the
 * caller's cancellation and the request timeout. The result comes back as the
 * upstream sent it, with header secrets redacted.
 *
 * Why list per call: the upstream is under no obligation to send
 * `notifications/tools/list_changed` (weir's own core never does), and a
 * stdio or HTTP upstream may be swapped between two calls; a listing per call
 * is the only check that sees every change. It costs one extra round trip,
 * which the benchmark (`bench/upstream.ts`) measures.
 *
 * @module
 */
import type { StateKeys } from "../mcp/signed_state.ts";
import { type StateSetup, stateSetup } from "../ops/state_keys.ts";
import { McpServer, stderrLogger, ToolError } from "../mcp/server.ts";
import type { Logger, RequestWrapper } from "../mcp/server.ts";
import { CatalogError } from "../mcp/catalog.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { CallToolResult, ToolSpec } from "../mcp/types.ts";
import {
  MAX_ANSWER_DEPTH,
  MIN_SECRET_LENGTH,
  nestsDeeperThan,
  Redactor,
} from "../guard/secrets.ts";
import { cleanDeep, cleanText } from "../mcp/text.ts";
import { AllowlistError, parsePins } from "../mcp_upstream/allowlist.ts";
import { HeaderError, type HeaderTemplate, resolveHeaders } from "../mcp_upstream/headers.ts";
import {
  UpstreamConnection,
  UpstreamRefused,
  type UpstreamTarget,
  UpstreamTimeout,
  UpstreamUnavailable,
} from "../mcp_upstream/connection.ts";
import { type BaselineTool, driftOf, matchAllowlist } from "../mcp_upstream/surface.ts";
import { canonicalJson } from "../mcp_upstream/fingerprint.ts";
import { CoalescedCheck } from "../mcp_upstream/coalesced_check.ts";
import { untilAborted } from "../outbound/deadline.ts";
import { browserFlagProblem, parseListenAddress, runOn, type RunOnOptions } from "./listen.ts";
import { auditAllowed, auditRefused } from "../ops/audit.ts";
import { startTelemetry, TelemetryConfigError } from "../ops/telemetry.ts";
import {
  type AuthSettings,
  authSettings,
  FlagError,
  OPS_FLAGS,
  type OpsSettings,
  opsSettings,
  stopSignals,
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
}

/** Start-up failed: exit 1 with this message. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

/** A pin as injected: the value converted to the argument's JSON type. */
interface InjectedPin {
  arg: string;
  written: string;
  value: string | number | boolean;
}

/** A running wrapper: the server to put behind a transport, and its upstream. */
export interface UpstreamServer {
  server: McpServer;
  connection: UpstreamConnection;
  /** The served definitions (allowlisted, in allowlist order). */
  tools: ToolSpec[];
  baseline: ReadonlyMap<string, BaselineTool>;
}

/**
 * Connect, check the surface, and build the wrapper's MCP server.
 * @throws {StartupError} naming what is wrong: missing tools (with the nearest
 *   names), an unusable pin, an unreadable header secret, an unreachable upstream
 */
export async function buildUpstreamServer(
  config: ServeUpstreamConfig,
  options: {
    log?: Logger;
    signal?: AbortSignal;
    around?: RequestWrapper;
    /** The key service that signs cursors (src/mcp/signed_state.ts). */
    stateKeys?: StateKeys;
  } = {},
): Promise<UpstreamServer> {
  const log = options.log ?? stderrLogger;
  let pins: Map<string, Map<string, string>>;
  try {
    pins = parsePins(config.pins, config.allowlist);
    // Pre-flight: a header secret that cannot be read stops start-up before any retry loop.
    secretsOf(config.headers);
  } catch (error) {
    if (error instanceof AllowlistError || error instanceof HeaderError) {
      throw new StartupError(error.message);
    }
    throw error;
  }
  let connection: UpstreamConnection;
  try {
    connection = await UpstreamConnection.open({
      target: config.target,
      headers: () => resolveHeaders(config.headers).headers,
      requestTimeoutMs: config.requestTimeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      connectTimeoutMs: config.connectTimeoutMs,
      signal: options.signal,
      onRetry: (error, attempt) =>
        log({
          level: "warn",
          event: "upstream_connect_retry",
          attempt,
          error: clip(error.message),
        }),
      onToolsChanged: () => log({ level: "info", event: "upstream_tools_changed" }),
    });
  } catch (error) {
    throw new StartupError(
      `upstream ${describeTarget(config.target)}: ${(error as Error).message}`,
    );
  }
  try {
    let listed: ToolSpec[];
    try {
      listed = await connection.listTools(options.signal);
    } catch (error) {
      throw new StartupError(
        `upstream ${describeTarget(config.target)}: tools/list failed: ${(error as Error).message}`,
      );
    }
    const report = await matchAllowlist(config.allowlist, listed);
    const problems: string[] = [];
    for (const m of report.missing) {
      problems.push(
        `tool ${JSON.stringify(m.name)} is not listed by the upstream` +
          (m.nearest.length ? ` (nearest: ${m.nearest.join(", ")})` : " (it lists no tools)"),
      );
    }
    for (const name of report.ambiguous) {
      problems.push(`tool "${name}" is listed more than once with different definitions`);
    }
    if (problems.length > 0) throw new StartupError(problems.join("; "));

    const injected = new Map<string, InjectedPin[]>();
    const served: ToolSpec[] = [];
    for (const name of config.allowlist) {
      const definition = report.present.get(name)!.definition;
      const toolPins = pinsFor(name, definition, pins.get(name));
      if (toolPins.length > 0) injected.set(name, toolPins);
      // Clean text out: an upstream's description or title is text weir emits.
      served.push(cleanDeep(servedDefinition(definition, toolPins)));
    }
    const dispatch = upstreamDispatch({
      allowlist: new Set(config.allowlist),
      baseline: report.present,
      pins: injected,
      connection,
      headers: config.headers,
      log,
    });
    let server: McpServer;
    try {
      server = new McpServer({
        name: config.name,
        version: "0.1.0",
        catalog: { tools: served, resources: [], prompts: [] },
        dispatch,
        log,
        around: options.around,
        stateKeys: options.stateKeys,
      });
    } catch (error) {
      if (error instanceof CatalogError) {
        throw new StartupError(`weir cannot serve the upstream's definition: ${error.message}`);
      }
      throw error;
    }
    return { server, connection, tools: served, baseline: report.present };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

function pinsFor(
  tool: string,
  definition: ToolSpec,
  pins: Map<string, string> | undefined,
): InjectedPin[] {
  if (!pins) return [];
  const properties = (definition.inputSchema?.properties ?? {}) as Record<string, unknown>;
  return [...pins].map(([arg, written]) => {
    const property = properties[arg] as Record<string, unknown> | undefined;
    if (!property || typeof property !== "object") {
      const declared = Object.keys(properties);
      throw new StartupError(
        `--pin ${tool}.${arg}: tool "${tool}" declares no argument "${arg}" ` +
          `(it declares: ${declared.length ? declared.join(", ") : "none"})`,
      );
    }
    const types = [property.type].flat().filter((t) => typeof t === "string");
    let value: string | number | boolean = written;
    if (types.includes("string") || types.length === 0) value = written;
    else if (types.includes("integer") || types.includes("number")) {
      value = Number(written);
      if (!Number.isFinite(value) || (!types.includes("number") && !Number.isInteger(value))) {
        throw new StartupError(
          `--pin ${tool}.${arg}=${written}: the argument is ${types.join(" or ")}, ` +
            `and ${JSON.stringify(written)} is not one`,
        );
      }
    } else if (types.includes("boolean")) {
      if (written !== "true" && written !== "false") {
        throw new StartupError(`--pin ${tool}.${arg}: the argument is boolean; pin true or false`);
      }
      value = written === "true";
    } else {
      throw new StartupError(
        `--pin ${tool}.${arg}: the argument is ${types.join(" or ")}; pins hold strings, ` +
          `numbers and booleans`,
      );
    }
    return { arg, written, value };
  });
}

/** The upstream's definition, with pinned arguments no longer required (weir supplies them). */
function servedDefinition(definition: ToolSpec, pins: InjectedPin[]): ToolSpec {
  const required = definition.inputSchema?.required;
  if (pins.length === 0 || !Array.isArray(required)) return definition;
  const pinned = new Set(pins.map((p) => p.arg));
  return {
    ...definition,
    inputSchema: {
      ...definition.inputSchema,
      required: required.filter((r) => !pinned.has(r as string)),
    },
  };
}

/**
 * Resolve the header templates now and return the secrets in them.
 * @throws {HeaderError} when one cannot be read, or is shorter than
 *   {@link MIN_SECRET_LENGTH} characters (too short to redact from answers
 *   without mangling ordinary text, so weir will not send it)
 */
function secretsOf(headers: HeaderTemplate[]): string[] {
  const { secrets } = resolveHeaders(headers);
  if (secrets.some((s) => s.length < MIN_SECRET_LENGTH)) {
    throw new HeaderError(
      `an --upstream-header secret is shorter than ${MIN_SECRET_LENGTH} characters: weir ` +
        `cannot redact so short a value from answers, so it refuses to send it`,
    );
  }
  return secrets;
}

interface DispatchParts {
  allowlist: ReadonlySet<string>;
  baseline: ReadonlyMap<string, BaselineTool>;
  pins: ReadonlyMap<string, InjectedPin[]>;
  connection: UpstreamConnection;
  headers: HeaderTemplate[];
  log: Logger;
}

function upstreamDispatch(parts: DispatchParts) {
  const { allowlist, baseline, pins, connection, headers, log } = parts;
  /** Tools that drifted, with why: refused until restart. */
  const drifted = new Map<string, string>();
  const checks = new CoalescedCheck(async () => {
    const listed = await connection.listTools();
    for (const [tool, reason] of driftOf(baseline, listed)) {
      if (drifted.has(tool)) continue;
      drifted.set(tool, reason);
      log({ level: "error", event: "upstream_drift", tool, reason });
    }
  });
  const refuseDrifted = (name: string): never => {
    auditRefused(log, {
      rule: "fingerprint",
      status: 409,
      tool: name,
      reason: "the definition changed upstream since start-up",
    });
    throw new ToolError(
      `schema_drift: tool "${name}" changed upstream since weir started ` +
        `(${drifted.get(name)}); weir refuses it until restarted (re-review the tool first)`,
      { status: 409 },
    );
  };
  return async (
    name: string,
    args: Record<string, unknown>,
    ctx: { signal: AbortSignal },
  ): Promise<CallToolResult> => {
    const started = performance.now();
    // The allowlist first, whatever the catalog says.
    if (!allowlist.has(name)) {
      auditRefused(log, { rule: "allowlist", status: 403, tool: name });
      throw new ToolError(`policy_denied: tool "${name}" is not on the allowlist`, { status: 403 });
    }
    if (drifted.has(name)) refuseDrifted(name);
    const redactor = new Redactor();
    try {
      for (const secret of secretsOf(headers)) redactor.add(secret);
    } catch (error) {
      throw new ToolError(`upstream_auth: ${(error as Error).message}`, { status: 500 });
    }
    try {
      await untilAborted(checks.check(), ctx.signal);
    } catch (error) {
      throw upstreamFailure(error, "checking the upstream's tool list", redactor, ctx.signal);
    }
    if (drifted.has(name)) refuseDrifted(name);
    const sent: JsonObject = { ...args } as JsonObject;
    for (const pin of pins.get(name) ?? []) {
      if (pin.arg in sent) {
        const given = sent[pin.arg];
        if (canonicalJson(given) !== canonicalJson(pin.value) && String(given) !== pin.written) {
          auditRefused(log, {
            rule: "pin",
            status: 403,
            tool: name,
            reason: `argument ${pin.arg} differs from its pin`,
          });
          throw new ToolError(
            `policy_denied: argument "${pin.arg}" of tool "${name}" is pinned by the operator; ` +
              `leave it out (weir sends the pinned value)`,
            { status: 403 },
          );
        }
      }
      sent[pin.arg] = pin.value;
    }
    let result: CallToolResult;
    try {
      result = await connection.callTool(name, sent, ctx.signal, baseline.get(name)?.definition);
    } catch (error) {
      const failure = upstreamFailure(error, "calling the tool", redactor, ctx.signal);
      auditAllowed(log, {
        tool: name,
        outcome: failure instanceof ToolError ? failure.message.split(":")[0] : "cancelled",
        status: failure instanceof ToolError ? failure.status : 499,
        durationMs: performance.now() - started,
      });
      throw failure;
    }
    if (nestsDeeperThan(result, MAX_ANSWER_DEPTH)) {
      auditAllowed(log, {
        tool: name,
        outcome: "upstream_too_deep",
        status: 502,
        durationMs: performance.now() - started,
      });
      throw new ToolError(
        `upstream_too_deep: the upstream answered a result nested deeper than ` +
          `${MAX_ANSWER_DEPTH} levels; refused`,
        { status: 502 },
      );
    }
    auditAllowed(log, {
      tool: name,
      outcome: result.isError ? "tool_error" : "ok",
      status: result.isError ? 500 : 200,
      durationMs: performance.now() - started,
    });
    // Clean text out (docs/spec-mode.md, "Clean text out"): the upstream's strings
    // are well-formed Unicode without terminal control sequences, as in serve.
    return cleanDeep(redactor.active ? redactor.deep(result) as CallToolResult : result);
  };
}

function upstreamFailure(
  error: unknown,
  doing: string,
  redactor: Redactor,
  signal: AbortSignal,
): Error {
  if (signal.aborted) return new Error("cancelled by the client");
  const detail = redactor.text(clip((error as Error).message ?? String(error)));
  if (error instanceof UpstreamTimeout) {
    return new ToolError(`upstream_timeout: ${doing}: ${detail}`, { status: 504 });
  }
  if (error instanceof UpstreamRefused) {
    return new ToolError(`upstream_error: ${doing}: the upstream answered: ${detail}`, {
      status: 502,
    });
  }
  if (error instanceof UpstreamUnavailable) {
    return new ToolError(
      `upstream_unavailable: ${doing}: ${detail}` +
        (doing === "calling the tool"
          ? " (the call was not retried: it may or may not have run upstream)"
          : ""),
      { status: 502 },
    );
  }
  return new ToolError(`upstream_error: ${doing}: ${detail}`, { status: 502 });
}

function clip(text: string, max = 512): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}...` : t;
}

function describeTarget(target: UpstreamTarget): string {
  return target.kind === "http"
    ? `${target.url.origin}${target.url.pathname}`
    : `command ${JSON.stringify(target.command)}`;
}

/** Options of {@link runServeUpstream} beyond the config. */
export type RunUpstreamOptions = Omit<RunOnOptions, "mode" | "server" | "tools">;

/**
 * Build the wrapper and serve it until `signal` aborts (or stdio input ends).
 * @throws {StartupError}
 */
export async function runServeUpstream(
  config: ServeUpstreamConfig,
  options: RunUpstreamOptions,
): Promise<void> {
  const log = options.log ?? stderrLogger;
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
  }).catch(async (error) => {
    await telemetry?.shutdown();
    throw error;
  });
  try {
    log({
      level: "info",
      event: "upstream_connected",
      upstream: describeTarget(config.target),
      upstream_server: built.connection.serverInfo?.name,
      upstream_revision: built.connection.revision,
      tools: config.allowlist,
    });
    await runOn(built.server, {
      ...options,
      log,
      mode: "upstream",
      server: config.name,
      tools: built.tools.length,
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
      ...OPS_FLAGS,
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
      auth = authSettings(values, transport.kind === "http" ? transport : undefined);
      state = await stateSetup(values);
    } catch (error) {
      if (error instanceof FlagError) throw new UpstreamUsageError(error.message);
      console.error(`weir: serve-upstream: ${(error as Error).message}`);
      return 1;
    }
    const maxBytes = (values["max-response-bytes"] as string | undefined) ?? "8388608";
    if (!/^\d+$/.test(maxBytes) || Number(maxBytes) < 1024) {
      throw new UpstreamUsageError(`--max-response-bytes takes a whole number >= 1024`);
    }
    const name = ((values.name as string | undefined) ?? "weir-upstream").trim();
    if (name === "") throw new UpstreamUsageError("--name must not be empty");
    config = {
      name,
      allowlist: shared.allowlist,
      pins: (values.pin as string[] | undefined) ?? [],
      // weir's inbound token is weir's alone: a stdio upstream does not inherit it.
      target: shared.target.kind === "stdio" && values["inbound-token-env"] !== undefined
        ? { ...shared.target, withoutEnv: [values["inbound-token-env"] as string] }
        : shared.target,
      headers: shared.headers,
      connectTimeoutMs: shared.connectTimeoutMs,
      requestTimeoutMs: durationFlag("--request-timeout", values["request-timeout"], 60_000),
      maxResponseBytes: Number(maxBytes),
    };
  } catch (error) {
    if (error instanceof UpstreamUsageError) {
      console.error(`weir: serve-upstream: ${error.message}\nRun "weir help serve-upstream".`);
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
      inboundToken: auth.inboundTokens,
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
