/**
 * The surface of a guardfile that wraps an MCP server (`mcp-server` in its
 * `wrap`, src/guardfile/mcp_wrap.ts): what `weir serve FILE`, a reload and
 * `weir describe FILE` build from the file.
 *
 * One tool per `proxy` (the MCP server's tool, with the operator's overrides
 * and argument rules, src/mcp_upstream/overrides.ts), decided and
 * re-verified by the same host as the command-line form (`host.ts`, opened
 * by `open.ts`); the withheld stubs and the info tool; the file's static
 * resources and prompts, and the MCP server's resources that served tools
 * link to as their interface (MCP Apps, src/mcp_upstream/apps.ts) or that
 * `proxy-resource` names. Around the host's dispatch, the guard's controls
 * by served name (the control pipeline, `call.ts`).
 *
 * @module
 */
import { McpServer, NotFoundError } from "../mcp/server.ts";
import type { Logger, RequestWrapper, ToolAccess } from "../mcp/server.ts";
import { CatalogError } from "../mcp/catalog.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { Catalog, ResourceContents, ResourceSpec, ToolSpec } from "../mcp/types.ts";
import type { StateKeys } from "../mcp/signed_state.ts";
import { cleanDeep } from "../mcp/text.ts";
import { ErrorCode, McpError } from "../mcp/jsonrpc.ts";
import { WeirError } from "../errors/kinds.ts";
import type { Redactor } from "../guard/secrets.ts";
import { processValues } from "../guard/values.ts";
import {
  promptReader,
  promptSpecs,
  resourceReader,
  resourceSpecs,
} from "../guard/prompts_resources.ts";
import type { McpWrap } from "../guardfile/mcp_wrap.ts";
import { READ_ONLY_REASON } from "../guardfile/surface.ts";
import type { CallOptions, UpstreamConnection } from "../mcp_upstream/connection.ts";
import { UpstreamFailure } from "../mcp_upstream/errors.ts";
import { servedResources, uiResourceOf } from "../mcp_upstream/apps.ts";
import { relayableResource } from "../mcp_upstream/scan.ts";
import { DEFAULT_MAX_STALENESS_MS } from "../mcp_upstream/freshness.ts";
import type { TokenGrant } from "../inbound/static_tokens.ts";
import type { Surface } from "../ops/reload.ts";
import { guardfileTokens } from "../ops/flags.ts";
import { controlledTools, wrapPipeline } from "./call.ts";
import { pipelineDispatch } from "../guard/pipeline.ts";
import { describeWrap } from "./describe.ts";
import {
  checkControls,
  connectionKey,
  entriesOf,
  headerTemplates,
  targetOf,
  WRAP_DEFAULTS as DEFAULTS,
  type WrapFlags,
} from "./config.ts";
import { secretsRedactor, type UpstreamHost } from "./host.ts";
import { openUpstreamHost, StartupError } from "./open.ts";
import { type CallerIdentity, callerRoute } from "./identity.ts";
import { tasksCarried, upstreamTasks } from "./tasks.ts";

/** weir's preamble of the server's `instructions` in this form. */
export const WRAP_INSTRUCTIONS =
  "This server exposes only the policy-approved tools of one MCP server, each as reviewed. A " +
  "tool whose description starts NOT AVAILABLE was withheld on purpose: do not try to reach " +
  "that operation another way.";

/** A built surface of the form, with what a reload reuses and closes. */
export interface WrapSurface extends Surface {
  host: UpstreamHost;
  connection: UpstreamConnection;
  /** Equal for two files that reach the same MCP server the same way (the connection is reused). */
  connectionKey: string;
  /** OAuth scopes by served tool (the proxies' `scope`). */
  scopes: Map<string, string[]>;
  /** The tokens of the file's `inbound-token` nodes. */
  tokenGrants: TokenGrant[];
}

/** Options of {@link buildWrapSurface}. */
export interface WrapBuildOptions {
  log: Logger;
  signal?: AbortSignal;
  around?: RequestWrapper;
  stateKeys?: StateKeys;
  toolAccess?: (auth: unknown) => ToolAccess | undefined;
  flags?: WrapFlags;
  /** Variables a stdio MCP server must not inherit (weir's own secrets). */
  withoutEnv?: readonly string[];
  /**
   * An open connection to reuse when the new file reaches the same server the
   * same way, and the running host, whose fingerprints the new one keeps.
   */
  reuse?: { key: string; connection: UpstreamConnection; host: UpstreamHost };
  /**
   * The `token-exchange` block's per-call credential (built by the command at
   * start-up; src/oauth/upstream_credential.ts): each call carries a token
   * exchanged from its caller's, asking for the proxy's scopes.
   */
  credential?: CallerIdentity["credential"];
  /** The block's `client-credentials`: weir's own token for its own requests (with `credential`). */
  connection?: CallerIdentity["connection"];
}

/**
 * The file as built only to see what it serves (describe, lint-upstream's
 * budget, diff from definitions): who may call and the rate limit decide no
 * tool, so they are left out, and the build reads none of their secrets (an
 * inbound token's variable, the store's URL, the OAuth issuer). The list is
 * the one an unrestricted caller is shown.
 * @example
 * ```ts
 * import { forListing } from "./surface.ts";
 * import { loadGuardfileText } from "../guardfile/load.ts";
 * const { mcpWrap } = loadGuardfileText(
 *   `inbound-token ci { value env "CI_TOKEN"; tools "echo"; }\n` +
 *     `wrap ward mcp e {\n  mcp-server http "http://127.0.0.1:9/mcp"\n  proxy echo\n}`,
 *   "e.mcp.kdl",
 * );
 * if (forListing(mcpWrap!).inboundTokens.length !== 0) throw new Error();
 * ```
 */
export function forListing(wrap: McpWrap): McpWrap {
  const built: McpWrap = {
    ...wrap,
    inboundTokens: [],
    controls: { ...wrap.controls, rateLimit: undefined },
  };
  delete built.oauth;
  return built;
}

/**
 * Connect to the MCP server (or reuse a connection), decide every proxied
 * tool, and build the surface's MCP server.
 * @throws {StartupError} an unreachable server, a missing tool, an unreadable header secret
 */
export async function buildWrapSurface(
  wrap: McpWrap,
  options: WrapBuildOptions,
): Promise<WrapSurface> {
  const { log } = options;
  const flags = options.flags ?? {};
  const key = connectionKey(wrap, flags);
  const reuse = options.reuse?.key === key ? options.reuse : undefined;
  const baseline: ReadonlyMap<string, string> | undefined = reuse?.host.baseline();
  const entries = entriesOf(wrap);
  const allowlist = [...new Set(entries.map((e) => e.upstream))];
  const tokenGrants = guardfileTokensOrThrow(wrap);
  let listedResources: ResourceSpec[] = [];
  const changed = { notify: () => {} };
  const headers = headerTemplates(wrap.server.transport === "http" ? wrap.server.headers : []);
  // What weir writes or answers may quote the MCP server, which may quote weir's credential.
  const redact = (text: string) => secretsRedactor(headers).text(text);
  const scopes = new Map(
    wrap.proxies.filter((p) => p.scopes.length > 0).map((p) => [p.name, p.scopes]),
  );
  const credential = options.credential;
  const identity: CallerIdentity | undefined = credential
    ? {
      credential,
      scopesOf: (n) => scopes.get(n) ?? [],
      ...(options.connection ? { connection: options.connection } : {}),
    }
    : undefined;
  const { connection, host } = await openUpstreamHost({
    target: targetOf(wrap, options.withoutEnv),
    headers,
    connectTimeoutMs: wrap.settings.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    requestTimeoutMs: wrap.settings.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
    maxResponseBytes: wrap.settings.maxResponseBytes ?? DEFAULTS.maxResponseBytes,
    maxStalenessMs: flags.maxStalenessMs ?? wrap.settings.maxStalenessMs ??
      DEFAULT_MAX_STALENESS_MS,
    allowlist,
    entries,
    resourceUris: wrap.resourceUris,
    ...(wrap.surface.readOnly ? { readOnlyReason: READ_ONLY_REASON } : {}),
    schemaProfile: wrap.surface.schemaProfile,
    // A reload on the same connection holds the tools to the definitions weir started with.
    ...(baseline ? { baseline } : {}),
    ...(identity ? { identity } : {}),
    // The file exchanges without client-credentials: a 401 to weir's connection says to add it.
    ...(wrap.server.transport === "http" && wrap.server.exchange &&
        !wrap.server.exchange.clientCredentials
      ? { exchanges: true }
      : {}),
  }, {
    log,
    signal: options.signal,
    onChanged: () => changed.notify(),
    reuse: reuse?.connection,
  });
  try {
    // The file's own rules contradicting the MCP server's definitions stop start-up (and a reload).
    const contradictions = host.served().flatMap((s) =>
      s.kind === "stubbed" && s.byRules ? [`tool "${s.entry.name}": ${s.stub.reason}`] : []
    );
    if (contradictions.length > 0) throw new StartupError(redact(contradictions.join("; ")));
    // Resources: the interfaces served tools link to, and the operator's URIs (apps.ts).
    if (host.readable().size > 0) {
      try {
        listedResources = await connection.listResources(options.signal);
      } catch (error) {
        throw new StartupError(
          `the MCP server's resources/list failed: ${redact((error as Error).message)}`,
        );
      }
    }
    const staticUris = new Set(wrap.resources.map((r) => r.uri));
    const clash = [...host.readable()].find((u) => staticUris.has(u));
    if (clash) {
      throw new StartupError(
        `resource "${clash}" is both a resource of the file and one of the MCP server's it ` +
          `serves: rename the file's resource`,
      );
    }
    const scannedUris = new Set<string>();
    const resources = (): ResourceSpec[] => {
      const readable = host.readable();
      // The MCP server's text about a resource is relayed only when it passes the scan.
      const listed = servedResources(listedResources, readable).map((r) => {
        const { resource, errors } = relayableResource(r);
        if (errors.length > 0 && !scannedUris.has(r.uri)) {
          scannedUris.add(r.uri);
          log({
            level: "error",
            event: "upstream_definition_scan",
            resource: redact(r.uri),
            served: "by its URI only",
            errors: errors.map((f) => `${f.id} ${f.pointer}`),
          });
        }
        return resource;
      });
      const named = new Set(listed.map((r) => r.uri));
      // A readable resource the MCP server does not list is still offered by its URI.
      const unlisted = [...readable].filter((u) => !named.has(u)).sort().map((uri) => ({
        uri,
        name: uri,
      }));
      return [...resourceSpecs(wrap.resources), ...cleanDeep(listed), ...unlisted];
    };
    const withholds = wrap.withholds;
    const info = wrap.infoTool
      ? { name: wrap.infoTool, answer: (access?: ToolAccess) => infoAnswer(wrap, host, access) }
      : undefined;
    const extraTools = controlledTools({ withholds, info });
    const promptList = promptSpecs(wrap.prompts);
    let last: { tools: readonly ToolSpec[]; catalog: Catalog } | undefined;
    const catalog = (): Catalog => {
      const hosted = host.catalog();
      if (last?.tools !== hosted.tools) {
        // The upstream's decisions changed: the readable resources follow the served tools.
        last = {
          tools: hosted.tools,
          catalog: {
            tools: [...hosted.tools, ...extraTools],
            resources: resources(),
            prompts: promptList,
          },
        };
      }
      return last.catalog;
    };
    const dispatch = pipelineDispatch(wrapPipeline(host, {
      server: wrap.name,
      controls: wrap.controls,
      withholds,
      info,
      resolver: processValues,
      log,
      stateKeys: options.stateKeys,
      waitMs: wrap.settings.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      perCaller: credential !== undefined,
    }));
    const staticRead = resourceReader(wrap.resources);
    // An interface belongs to the served tools that link to it: a caller limited to other
    // tools (a token's subset, OAuth scopes) neither lists nor reads it. The file's own
    // resources and its proxy-resource URIs are every caller's.
    const operatorUris = new Set(wrap.resourceUris);
    const resourceTools = (uri: string): readonly string[] | undefined => {
      if (staticUris.has(uri) || operatorUris.has(uri)) return undefined;
      return host.served().flatMap((s) =>
        s.kind === "served" && uiResourceOf(s.spec) === uri ? [s.entry.name] : []
      );
    };
    const hasResources = wrap.resources.length > 0 || host.readable().size > 0;
    let server: McpServer;
    try {
      server = new McpServer({
        name: wrap.name,
        version: "0.1.0",
        // A tool that becomes a stub (drift) is announced to clients that listen.
        toolsListChanged: true,
        instructions: wrap.instructions
          ? `${WRAP_INSTRUCTIONS}\n\n${wrap.instructions}`
          : WRAP_INSTRUCTIONS,
        catalog,
        dispatch,
        // MCP 2025-11-25 tasks, when the MCP server can run them (src/wrap/tasks.ts).
        tasks: tasksCarried(connection, host.served())
          ? upstreamTasks(connection, host, {
            log,
            identity,
            rejectEmpty: wrap.controls.rejectEmpty,
          })
          : undefined,
        icons: wrap.icons,
        readResource: hasResources
          ? async (uri, ctx) => {
            if (staticUris.has(uri)) return staticRead(uri, ctx);
            if (!host.readable().has(uri)) throw new NotFoundError(`no resource ${uri}`);
            const redactor = secretsRedactor(headers);
            // The caller's identity upstream (token exchange), asking for the scopes of the
            // served tools the resource belongs to that this caller may call.
            const access = options.toolAccess?.(ctx.auth);
            const owners = (resourceTools(uri) ?? []).filter((t) => access?.allows(t) ?? true);
            const route = await callerRoute(
              identity,
              uri,
              [...new Set(owners.flatMap((t) => scopes.get(t) ?? []))],
              ctx,
              redactor,
              log,
            ).catch((error) => {
              // Refused (403) or no exchange (503): said as such, nothing was sent.
              if (!(error instanceof WeirError)) throw error;
              // Its message names its kind (`token_exchange_refused: ...`).
              throw new McpError(ErrorCode.InternalError, error.message);
            });
            return await readUpstream(connection, uri, { signal: ctx.signal, ...route }, redactor);
          }
          : undefined,
        resourceTools: hasResources ? resourceTools : undefined,
        getPrompt: wrap.prompts.length > 0 ? promptReader(wrap.prompts) : undefined,
        log,
        around: options.around,
        stateKeys: options.stateKeys,
        heldArguments: (tool) => host.held(tool),
        toolAccess: options.toolAccess,
        schemaProfile: wrap.surface.schemaProfile,
      });
    } catch (error) {
      if (error instanceof CatalogError) {
        throw new StartupError(`weir cannot serve what this file describes: ${error.message}`);
      }
      throw error;
    }
    changed.notify = () => server.toolsChanged();
    const unknownRefs = checkControls(wrap, host);
    for (const problem of unknownRefs) {
      log({ level: "warn", event: "guardfile_control_unapplied", message: problem });
    }
    return {
      server,
      tools: [
        ...wrap.proxies.map((p) => p.name),
        ...withholds.map((w) => w.tool),
        ...(info ? [info.name] : []),
      ].sort(),
      describe: () => describeWrap(wrap, host),
      host,
      connection,
      connectionKey: key,
      scopes,
      tokenGrants,
    };
  } catch (error) {
    if (options.reuse?.connection !== connection) await connection.close();
    throw error;
  }
}

function guardfileTokensOrThrow(wrap: McpWrap): TokenGrant[] {
  try {
    return guardfileTokens(wrap.inboundTokens);
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
}

async function readUpstream(
  connection: UpstreamConnection,
  uri: string,
  options: CallOptions,
  redactor: Redactor,
): Promise<ResourceContents[]> {
  let contents;
  try {
    contents = await connection.readResource(uri, options);
  } catch (error) {
    if (error instanceof UpstreamFailure) {
      throw new NotFoundError(`${uri}: the MCP server did not give it (${error.code})`);
    }
    throw error;
  }
  const out: ResourceContents[] = [];
  for (const c of contents as unknown as Record<string, unknown>[]) {
    // Only the resource asked for: a reader answering other URIs passes nothing of them.
    if (c?.uri !== uri) continue;
    const base = {
      uri,
      ...(typeof c.mimeType === "string" ? { mimeType: c.mimeType } : {}),
      ...(c._meta && typeof c._meta === "object"
        ? { _meta: cleanDeep(redactor.deep(c._meta) as JsonObject) }
        : {}),
    };
    // Header secrets are redacted from text like from tool results; binary contents
    // quoting one (in any form the redactor knows) are withheld whole.
    if (typeof c.text === "string") out.push({ ...base, text: redactor.text(c.text) });
    else if (typeof c.blob === "string") {
      if (redactor.active && redactor.text(c.blob) !== c.blob) {
        throw new NotFoundError(
          `${uri}: the MCP server's contents quote an mcp-server header secret (weir's ` +
            `credential), which weir never passes on`,
        );
      }
      out.push({ ...base, blob: Uint8Array.from(atob(c.blob), (ch) => ch.charCodeAt(0)) });
    }
  }
  if (out.length === 0) throw new NotFoundError(`${uri}: the MCP server gave no contents for it`);
  return out;
}

/**
 * What the info tool answers: the surface now, as one caller may list it
 * (`access`, the core's `ctx.tools`: only the tools it allows; `undefined`:
 * every tool), so it never names a tool `tools/list` hides from that caller.
 */
function infoAnswer(wrap: McpWrap, host: UpstreamHost, access?: ToolAccess): JsonObject {
  const may = (name: string) => !access || access.allows(name);
  const served = host.served().filter((s) => may(s.entry.name));
  const tools = [
    ...served.map((s) => s.entry.name),
    ...wrap.withholds.map((w) => w.tool),
    ...(wrap.infoTool ? [wrap.infoTool] : []),
  ].filter(may).sort();
  return {
    status: "ok",
    server: wrap.name,
    mode: "mcp",
    toolCount: tools.length,
    tools,
    withheld: wrap.withholds.map((w) => w.tool).filter(may),
    unavailable: served.flatMap((s) => s.kind === "stubbed" ? [s.entry.name] : []),
  };
}
