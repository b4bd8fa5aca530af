/**
 * The guard as a host of the MCP core: a {@link Guardfile} becomes a catalog
 * (one tool per grant, one stub per `withhold`, the info tool) and a dispatch
 * that passes each call through the control pipeline (src/guard/pipeline.ts)
 * with spec mode's stages (src/guard/spec_call.ts): exactly the granted
 * request is planned, checked and sent. Nothing else exists: a tool the
 * guardfile does not name is not in the catalog, so the core refuses it
 * before any code here runs.
 *
 * @module
 */
import { readOnlyView } from "../guardfile/surface.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import { type Logger, type ServerOptions, stderrLogger, type ToolAccess } from "../mcp/server.ts";
import type { ToolSpec } from "../mcp/types.ts";
import type { Guardfile } from "../guardfile/model.ts";
import { grantTool, infoTool, INSTRUCTIONS_PREAMBLE, withheldTool } from "./tools.ts";
import type { UpstreamCredential, UpstreamLimits } from "./send.ts";
import type { ValueResolver } from "./values.ts";
import { StateKeys } from "../mcp/signed_state.ts";
import { promptReader, promptSpecs, resourceReader, resourceSpecs } from "./prompts_resources.ts";
import { createPipeline, pipelineDispatch } from "./pipeline.ts";
import { SpecMode } from "./spec_call.ts";

/** Options of {@link createGuard}. */
export interface GuardOptions {
  /** How secrets and settings are read at call time. */
  resolver: ValueResolver;
  /** Upstream deadline and size cap (defaults: 30 s, 8 MiB). */
  limits?: Partial<UpstreamLimits>;
  /** Per-call log lines (tool, outcome, status, duration); never arguments or values. */
  log?: Logger;
  /**
   * The key service that signs a confirmation's `requestState` and spends its
   * answer once (src/mcp/signed_state.ts). Returned in the server options too,
   * so the core signs cursors with the same keys. Default: a per-process key.
   */
  stateKeys?: StateKeys;
  /** Required by `auth token-exchange`: the token sent upstream for a call (see the type). */
  upstreamCredential?: UpstreamCredential;
}

/** Default upstream limits. */
export const DEFAULT_LIMITS: UpstreamLimits = {
  timeoutMs: 30_000,
  maxResponseBytes: 8 * 1024 * 1024,
};

export { INSTRUCTIONS_PREAMBLE };

/** The info tool's answers kept, one per caller access set (a few static tokens). */
const MAX_INFO_ANSWERS = 64;

/**
 * Build the core's host contract for a guardfile.
 *
 * A guardfile whose `surface` says `read-only=#true` is served read-only
 * (src/guardfile/surface.ts `readOnlyView`), and its `schema-profile` is passed on.
 *
 * @returns the server options (name, instructions, catalog, dispatch, schema profile) to pass to `McpServer`
 */
export function createGuard(
  given: Guardfile,
  options: GuardOptions,
): Pick<
  ServerOptions,
  | "name"
  | "version"
  | "instructions"
  | "catalog"
  | "dispatch"
  | "cache"
  | "readResource"
  | "getPrompt"
  | "icons"
  | "stateKeys"
  | "schemaProfile"
> {
  // `surface read-only=#true`: the writes become withheld stubs (a no-op when
  // the loader already applied it).
  const guardfile = given.surface?.readOnly ? readOnlyView(given) : given;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const log = options.log ?? stderrLogger;
  const tools: ToolSpec[] = [
    ...guardfile.grants.map((g) => grantTool(g, guardfile)),
    ...guardfile.withholds.map(withheldTool),
  ];
  if (guardfile.infoTool) tools.push(infoTool(guardfile.infoTool, guardfile));
  // The info tool's answer, per caller: the tools and stubs that caller may list
  // (ctx.tools), never more than tools/list tells it. One answer per access set,
  // kept while few sets are seen (static tokens); past that, built per call.
  const allNames = tools.map((t) => t.name).sort();
  const infoFor = (access: ToolAccess | undefined): JsonObject => {
    const names = access ? allNames.filter((n) => access.allows(n)) : allNames;
    return {
      status: "ok",
      server: guardfile.name,
      mode: "spec",
      toolCount: names.length,
      tools: names,
      withheld: guardfile.withholds.map((w) => w.tool).filter((n) => !access || access.allows(n)),
      resourceCount: guardfile.resources.length,
      promptCount: guardfile.prompts.length,
    };
  };
  const infoByAccess = new Map<string, JsonObject>();
  const everyone = infoFor(undefined);
  const info = (access: ToolAccess | undefined): JsonObject => {
    if (!access) return everyone;
    let answer = infoByAccess.get(access.key);
    if (!answer) {
      answer = infoFor(access);
      if (infoByAccess.size < MAX_INFO_ANSWERS) infoByAccess.set(access.key, answer);
    }
    return answer;
  };
  const stateKeys = options.stateKeys ?? new StateKeys();
  const pipeline = createPipeline({
    mode: new SpecMode(guardfile, {
      resolver: options.resolver,
      limits,
      log,
      upstreamCredential: options.upstreamCredential,
    }),
    controls: guardfile.controls,
    server: guardfile.name,
    withholds: guardfile.withholds,
    info: guardfile.infoTool ? { name: guardfile.infoTool, answer: info } : undefined,
    resolver: options.resolver,
    log,
    stateKeys,
    // With the caller's identity upstream, the upstream may answer each caller otherwise.
    perCaller: guardfile.auth.scheme === "token-exchange",
  });
  const dispatch = pipelineDispatch(pipeline);

  return {
    name: guardfile.name,
    version: "0.1.0",
    instructions: guardfile.instructions
      ? `${INSTRUCTIONS_PREAMBLE}\n\n${guardfile.instructions}`
      : INSTRUCTIONS_PREAMBLE,
    catalog: {
      tools,
      resources: resourceSpecs(guardfile.resources),
      prompts: promptSpecs(guardfile.prompts),
    },
    dispatch,
    stateKeys,
    icons: guardfile.icons,
    schemaProfile: guardfile.surface?.schemaProfile,
    readResource: guardfile.resources.length > 0
      ? resourceReader(guardfile.resources, log)
      : undefined,
    getPrompt: guardfile.prompts.length > 0 ? promptReader(guardfile.prompts, log) : undefined,
    cache: {
      tools: { ttlMs: 300_000, cacheScope: "public" },
      discover: { ttlMs: 300_000, cacheScope: "public" },
    },
  };
}
