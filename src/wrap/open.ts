/**
 * Opening the wrap mode's host: connect to the MCP server (retrying until the
 * connect timeout), list every page of its tools, decide each allowlisted
 * tool (`src/mcp_upstream/decision.ts`, the same decision `lint-upstream`
 * prints) and build the host that serves them (`host.ts`). Start-up fails
 * only when the server cannot be reached or an allowlisted tool is missing
 * (named with the nearest names it has); a tool weir cannot serve as written
 * becomes a `NOT AVAILABLE` stub with the reason and what the operator can do.
 *
 * Both forms open their host here: `weir serve-upstream`'s flags
 * ({@link buildUpstreamServer}) and a guardfile that wraps an MCP server
 * (`surface.ts`).
 *
 * @module
 */
import { McpServer, stderrLogger } from "../mcp/server.ts";
import type { Logger, RequestWrapper, ToolAccess } from "../mcp/server.ts";
import type { StateKeys } from "../mcp/signed_state.ts";
import { CatalogError } from "../mcp/catalog.ts";
import type { SchemaProfile } from "../mcp/schema_profile.ts";
import { READ_ONLY_REASON } from "../guardfile/surface.ts";
import { AllowlistError, parsePins } from "../mcp_upstream/allowlist.ts";
import { HeaderError, type HeaderTemplate, resolveHeaders } from "../mcp_upstream/headers.ts";
import {
  operatorMessage,
  UpstreamConnection,
  type UpstreamTarget,
} from "../mcp_upstream/connection.ts";
import {
  decideTools,
  stubWords,
  type SurfaceInput,
  type ToolDecision,
} from "../mcp_upstream/decision.ts";
import {
  connectionSecrets,
  headerSecrets,
  secretsRedactor,
  type ServedEntry,
  UpstreamHost,
  withholdingSecrets,
} from "./host.ts";
import { UpstreamHttpRefusal } from "../mcp_upstream/errors.ts";
import { renamedOntoListed } from "./entries.ts";
import type { CallerIdentity } from "./identity.ts";
import { MAX_CALLER_SESSIONS } from "../mcp_upstream/caller_sessions.ts";
import { tasksCarried, upstreamTasks } from "./tasks.ts";
import { wrapPipeline } from "./call.ts";
import { pipelineDispatch } from "../guard/pipeline.ts";
import { processValues } from "../guard/values.ts";

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
  /** See `UpstreamHostOptions.maxStalenessMs` (src/wrap/host.ts) (`--max-staleness`). */
  maxStalenessMs: number;
  /**
   * `--read-only`: a tool whose definition lacks `annotations.readOnlyHint:
   * true` is served as a withheld stub (the reason is `READ_ONLY_REASON`).
   */
  readOnly?: boolean;
  /** `--schema-profile`: how `tools/list` shapes input schemas (src/mcp/schema_profile.ts). */
  schemaProfile?: SchemaProfile;
  /** `--accept-finding TOOL=ID`: accepted findings of the definition scan, by tool. */
  accept?: ReadonlyMap<string, readonly string[]>;
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
  /** See `UpstreamHostOptions.maxStalenessMs` (src/wrap/host.ts). */
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
  /** Token exchange: the caller's identity on each call (src/wrap/identity.ts). */
  identity?: CallerIdentity;
  /**
   * The file exchanges callers' tokens, though this build serves no caller
   * (describe): a 401 to weir's connection is said as {@link connectionRefusal}.
   */
  exchanges?: boolean;
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
 * host of the surface (src/wrap/host.ts).
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
  const secrets = () => secretsRedactor(setup.headers);
  const redact = (text: string) => secrets().text(text);
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
        secrets: connectionSecrets(setup.headers),
        requestTimeoutMs: setup.requestTimeoutMs,
        maxResponseBytes: setup.maxResponseBytes,
        connectTimeoutMs: setup.connectTimeoutMs,
        signal: options.signal,
        // Token exchange: weir's own token on its own requests (client-credentials), and a
        // session of each caller's own where the MCP server keeps sessions.
        ...(setup.identity?.connection ? { ownToken: setup.identity.connection } : {}),
        ...(setup.identity ? { callerSessions: MAX_CALLER_SESSIONS } : {}),
        onRetry: (error, attempt) =>
          log({
            level: "warn",
            event: "upstream_connect_retry",
            attempt,
            error: clip(redact(operatorMessage(error, secrets()))),
          }),
        onToolsChanged: () => {
          log({ level: "info", event: "upstream_tools_changed" });
          // The next call verifies the definitions again before it is forwarded.
          if (opened) toolsChangedOn(opened);
        },
      });
    } catch (error) {
      const exchanges = setup.identity !== undefined || setup.exchanges === true;
      throw new StartupError(
        `upstream ${describeTarget(setup.target)}: ${
          connectionRefusal(error, exchanges && !setup.identity?.connection) ??
            redact((error as Error).message)
        }`,
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
      identity: setup.identity,
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
    /** Token exchange: the caller's identity on each call. */
    identity?: CallerIdentity;
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
    // Each tool under its own name, with the findings the operator accepted.
    entries: config.allowlist.map((name) => ({
      name,
      upstream: name,
      ...(config.accept?.has(name) ? { accept: config.accept.get(name) } : {}),
    })),
    ...(config.readOnly ? { readOnlyReason: READ_ONLY_REASON } : {}),
    ...(options.identity ? { identity: options.identity } : {}),
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
      dispatch: pipelineDispatch(wrapPipeline(host, {
        server: config.name,
        resolver: processValues,
        log,
        stateKeys: options.stateKeys,
        waitMs: config.requestTimeoutMs,
      })),
      // MCP 2025-11-25 tasks, when the MCP server can run them (src/wrap/tasks.ts).
      tasks: tasksCarried(connection, host.served())
        ? upstreamTasks(connection, host, { log, identity: options.identity })
        : undefined,
      log,
      around: options.around,
      stateKeys: options.stateKeys,
      heldArguments: (tool) => host.held(tool),
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

/**
 * With token exchange and no token of weir's own (`withoutOwnToken`), an MCP
 * server's 401 or 403 to weir's connection said with what to add (see
 * `identityFirst`), else `undefined`.
 */
export function connectionRefusal(
  error: unknown,
  withoutOwnToken: boolean,
  /** The file has client-credentials, but weir's own token could not be had (said apart). */
  ownTokenMissing = false,
): string | undefined {
  const refused = withoutOwnToken ? refusedStatus(error) : undefined;
  if (!refused) return undefined;
  if (!ownTokenMissing) return identityFirst(refused);
  return `the MCP server answered ${refused} to weir's connection, made without weir's own ` +
    `token (client-credentials), which could not be had: fix what the problem about it says`;
}

/** The 401 or 403 an MCP server answered, somewhere in an error's causes. */
function refusedStatus(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; depth++) {
    if (e instanceof UpstreamHttpRefusal && (e.status === 401 || e.status === 403)) return e.status;
    e = e.cause;
  }
  return undefined;
}

/**
 * With token exchange and no token of weir's own, an MCP server refusing
 * weir's connection: it wants a token on every request (as the MCP
 * authorization spec asks of a protected server), and weir connects and
 * lists the tools before any caller is there.
 */
function identityFirst(status: number): string {
  return `the MCP server answered ${status} to weir's connection, which carries no caller: with ` +
    `token-exchange, weir connects and lists the tools before any call, and only a caller's ` +
    `own requests carry its exchanged token; this server wants a token on every request: add ` +
    `client-credentials to the token-exchange block (weir's own token from the identity ` +
    `provider, client credentials grant, for its own requests; --token-exchange-client-` +
    `credentials for serve-upstream), and allow weir's client that grant for the MCP server`;
}
