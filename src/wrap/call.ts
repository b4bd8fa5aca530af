/**
 * The wrap mode's part of the control pipeline (src/guard/pipeline.ts): how
 * a call of a wrapped tool is checked, sent and answered, for both forms
 * (`serve-upstream`'s flags and a guardfile with `mcp-server`).
 *
 * - (a) {@link WrapMode.check}: the served entries, whatever the catalog says
 *   (`policy_denied`, rule `allowlist`); a stub refuses (`schema_drift` for a
 *   drifted tool, `tool_unavailable` otherwise); the header secrets are read;
 *   then the arguments against the entry as reviewed (so a refused call sends
 *   nothing upstream): none may hold a header secret or a
 *   secret pin (src/guard/secret_arguments.ts), each `restrict` in every form it
 *   decodes to (src/guard/restricted_value.ts), the file's overrides and
 *   pins (`entries.ts`, src/mcp_upstream/overrides.ts) or the command line's
 *   `--pin` values (src/mcp_upstream/pins.ts); then no key of what would be
 *   sent may be a twin of an argument (src/guard/name_twins.ts); last, the
 *   MCP server's definitions are verified again when the last verification
 *   is too old (src/mcp_upstream/freshness.ts), and the stub check repeated.
 *   Nothing of the call is sent.
 * - (e) {@link WrapMode.send}: `tools/call` once, with the arguments as the
 *   caller spelled them (`spelledArguments`), the caller's cancellation and
 *   the request timeout, or as a task when the caller asked for one
 *   (`tasks.ts`); the MCP server's progress for it goes to the caller
 *   (`CallContext.progress`, `progress.ts`). A failure is named by its kind
 *   (`upstream_unavailable`, `upstream_cut_off`, `upstream_redirect`,
 *   `upstream_too_large`, `upstream_timeout`, `upstream_error`).
 * - (f) {@link WrapMode.answer}: a result nested too deep is refused, header
 *   secrets are redacted and text cleaned; `reject-empty` refuses an empty one.
 *
 * @module
 */
import { type JsonObject, spelledArguments } from "../mcp/jsonrpc.ts";
import type { CallContext, Logger, ToolAccess } from "../mcp/server.ts";
import type { CallToolResult, ToolSpec } from "../mcp/types.ts";
import type { StateKeys } from "../mcp/signed_state.ts";
import type { Withhold } from "../guardfile/model.ts";
import { WeirError } from "../errors/kinds.ts";
import { checkRestrictedValue } from "../guard/restricted_value.ts";
import { Redactor } from "../guard/secrets.ts";
import { withheldTool } from "../guard/tools.ts";
import type { ValueResolver } from "../guard/values.ts";
import {
  type CallControls,
  type CallMode,
  createPipeline,
  type Pipeline,
  type ShownCall,
  UnboundedCall,
} from "../guard/pipeline.ts";
import { withPins } from "../mcp_upstream/pins.ts";
import { toUpstreamArguments } from "../mcp_upstream/overrides.ts";
import { argumentNames, type EntryState, pinValues } from "./entries.ts";
import { clip, failureOf } from "./failures.ts";
import { sendCall } from "./tasks.ts";
import { wrapAnswer } from "./answer.ts";
import { forwarder } from "./progress.ts";
import { declaredArguments, nameTwinRefusal } from "../guard/name_twins.ts";
import { refuseSecretArguments } from "../guard/secret_arguments.ts";
import { headerSecrets, type UpstreamHost } from "./host.ts";
import { type CallerRoute, routeOf } from "./identity.ts";

/** One call of a wrapped tool, as the stages fill it in. */
export class WrapCall extends UnboundedCall {
  /** (a) The served entry's state. */
  state?: Extract<EntryState, { kind: "served" }>;
  /** (a) The arguments sent to the MCP server (overrides applied, pins added). */
  sent?: JsonObject;
  /** (a) Holds the header secrets and secret pins; (f) redacts them from the result. */
  readonly redactor = new Redactor();
  /** (b) The caller's identity upstream (token exchange): its header fields and session. */
  route?: CallerRoute;
  /** (e) What the MCP server answered. */
  result?: CallToolResult;
}

/** The wrap mode's stages over one host (built once per surface). */
export class WrapMode implements CallMode<WrapCall> {
  readonly #host: UpstreamHost;
  readonly #rejectEmpty: ReadonlySet<string>;
  readonly #waitMs: number;

  /**
   * @param rejectEmpty served tools whose empty result is an error (`reject-empty`)
   * @param waitMs longest wait for a rate-limit slot, in ms (0: none)
   */
  constructor(host: UpstreamHost, rejectEmpty: readonly string[], waitMs: number) {
    this.#host = host;
    this.#rejectEmpty = new Set(rejectEmpty);
    this.#waitMs = waitMs;
  }

  begin(name: string, args: Record<string, unknown>, ctx: CallContext, started: number): WrapCall {
    return new WrapCall(name, args, ctx, started, this.#waitMs);
  }

  /** (a) See the module doc. Synchronous unless the MCP server's tools must be listed first. */
  check(call: WrapCall, ctx: CallContext): void | Promise<void> {
    const host = this.#host;
    // The served entries first, whatever the catalog says.
    host.servedState(call.tool);
    try {
      for (const secret of headerSecrets(host.headers)) call.redactor.add(secret);
    } catch (error) {
      throw new WeirError("upstream_auth", (error as Error).message, { cause: error });
    }
    // The arguments against the entry as reviewed: a call refused here sends
    // nothing upstream, not even the listing below.
    this.#checkArguments(call);
    // Re-verify the definitions when the last verification is too old (or
    // voided by the upstream's list_changed); in the background when it is
    // getting old (src/mcp_upstream/freshness.ts).
    const freshness = host.freshness();
    if (freshness === "stale") return this.#checkListed(call, ctx);
    if (freshness === "refresh") host.reverify().catch((error) => refreshFailed(host.log, error));
  }

  /** (a) once the MCP server's tools were listed again: still served, and as checked. */
  async #checkListed(call: WrapCall, ctx: CallContext): Promise<void> {
    try {
      await this.#host.reverify(ctx.signal);
    } catch (error) {
      throw failureOf(error, "checking the upstream's tool list", call.redactor, ctx);
    }
    // A drifted tool is a stub now (refused); an entry built anew is checked anew.
    if (this.#host.servedState(call.tool) !== call.state) this.#checkArguments(call);
  }

  /** (a) The entry still served, then its arguments: `restrict`, overrides and pins. */
  #checkArguments(call: WrapCall): void {
    const host = this.#host;
    const name = call.tool;
    const args = call.args;
    const state = host.servedState(name);
    call.state = state;
    // The file's pins read (a secret one registered), then no argument may hold a secret
    // (before any check that may quote a value).
    const pins = state.translation ? pinValues(state, call.redactor) : undefined;
    refuseSecretArguments(name, call.redactor, args);
    if (state.translation) {
      for (const [key, globs] of state.translation.restricted) {
        if (!Object.hasOwn(args, key)) continue;
        // The served schema takes strings only here; anything else is refused too.
        checkRestrictedValue(`argument "${key}" of "${name}"`, args[key], globs);
      }
      const translated = toUpstreamArguments(
        args,
        spelledArguments(args),
        state.translation,
        pins!,
      );
      if (!translated.ok) {
        throw new WeirError("policy_denied", translated.message, {
          rule: "pin",
          reason: "arguments",
        });
      }
      call.sent = translated.arguments;
    } else {
      const pinned = withPins(name, args, spelledArguments(args), host.pinsOf(state.decision));
      if (!pinned.ok) {
        throw new WeirError("policy_denied", pinned.message, {
          rule: "pin",
          reason: pinned.arg ? `argument ${pinned.arg} differs from its pin` : "pinned arguments",
        });
      }
      call.sent = pinned.sent;
    }
    // No key the MCP server could read as one of its arguments, past its rules (name twins).
    const twin = nameTwinRefusal(name, call.sent, ...argumentNames(state));
    if (twin) throw twin;
  }

  /** (b) With token exchange, the caller's token exchanged for the MCP server's. */
  identify(call: WrapCall, ctx: CallContext): void | Promise<void> {
    const identity = this.#host.identity;
    if (identity) return this.#exchange(call, ctx);
  }

  /** The exchange itself; a refusal is audited by the pipeline (g), nothing is sent. */
  async #exchange(call: WrapCall, ctx: CallContext): Promise<void> {
    const identity = this.#host.identity!;
    const scopes = identity.scopesOf(call.tool);
    const token = await identity.credential(ctx.auth, call.tool, scopes, ctx.signal);
    call.redactor.add(token);
    call.route = routeOf(ctx.auth, token);
    refuseSecretArguments(call.tool, call.redactor, call.args);
  }

  /**
   * (d) The MCP server's tool, the values weir pins (a secret one by name
   * only); the restricted arguments first, and any key the served schema does
   * not declare after every declared one.
   */
  shown(call: WrapCall): ShownCall {
    const state = call.state!;
    return {
      request: `tools/call ${state.entry.upstream}`,
      identifying: state.translation ? [...state.translation.restricted.keys()] : [],
      declared: new Set(declaredArguments(state.spec.inputSchema)),
      pinned: state.translation
        ? (state.entry.pins ?? []).map((p) => [p.name, p.secret ? undefined : call.sent![p.name]])
        : this.#host.pinsOf(state.decision).pins.map((p) => [p.arg, p.value]),
    };
  }

  /** (e) `tools/call`, once. */
  async send(call: WrapCall, ctx: CallContext): Promise<void> {
    const state = call.state!;
    // The upstream's progress for this call, to the caller's stream when it asked (rate-bounded).
    const progress = ctx.progress ? forwarder(ctx.progress, call.redactor) : undefined;
    try {
      // A task, or a plain call (src/wrap/tasks.ts).
      call.result = await sendCall(
        this.#host.connection,
        state.entry.upstream,
        call.sent!,
        state.decision,
        ctx,
        { onProgress: progress?.forward, ...call.route },
      );
    } catch (error) {
      throw failureOf(error, "calling the tool", call.redactor, ctx);
    } finally {
      // The newest progress still waiting goes out before the result (not after a cancellation).
      progress?.stop(!ctx.signal?.aborted);
    }
  }

  /** (f) Depth, redaction, clean text, `reject-empty` (not of a task's creation): answer.ts. */
  answer(call: WrapCall, ctx: CallContext): CallToolResult {
    const rejectEmpty = this.#rejectEmpty.has(call.tool) && !ctx.task;
    return wrapAnswer(call.tool, call.result!, call.redactor, rejectEmpty);
  }
}

/** What {@link wrapPipeline} is built from. */
export interface WrapPipelineOptions {
  /** The server name (the rate limit's default shared bucket). */
  server: string;
  /** The guardfile form's controls, by served name (none for the command-line form). */
  controls?: CallControls & { rejectEmpty: readonly string[] };
  /** Withheld stubs (listed by {@link controlledTools}, refused before (a)). */
  withholds?: readonly Withhold[];
  /** The info tool: its name and what it answers a caller whose tools `access` narrows. */
  info?: { name: string; answer: (access: ToolAccess | undefined) => JsonObject };
  /** How the rate-limit store's URL is read. */
  resolver: ValueResolver;
  log: Logger;
  /** Signs a confirmation's state (the server's key service). */
  stateKeys?: StateKeys;
  /** Longest wait for a rate-limit slot, in ms (0: none). */
  waitMs: number;
  /** Cached answers are each caller's own (token exchange). */
  perCaller?: boolean;
}

const NO_CONTROLS: CallControls = { confirm: {}, cache: {}, rejectEmptyArguments: {} };

/** The control pipeline of a wrapped server: the host's stages under the file's controls. */
export function wrapPipeline(host: UpstreamHost, options: WrapPipelineOptions): Pipeline<WrapCall> {
  return createPipeline({
    mode: new WrapMode(host, options.controls?.rejectEmpty ?? [], options.waitMs),
    controls: options.controls ?? NO_CONTROLS,
    server: options.server,
    withholds: options.withholds,
    info: options.info,
    resolver: options.resolver,
    log: options.log,
    stateKeys: options.stateKeys,
    perCaller: options.perCaller,
  });
}

/** The tools the pipeline itself answers: the withheld stubs and the info tool. */
export function controlledTools(
  options: Pick<WrapPipelineOptions, "withholds" | "info">,
): ToolSpec[] {
  const tools = (options.withholds ?? []).map(withheldTool);
  if (options.info) {
    tools.push({
      name: options.info.name,
      description: "This server's tools and withheld operations; reads nothing upstream.",
      inputSchema: { type: "object", additionalProperties: false },
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
  }
  return tools;
}

function refreshFailed(log: Logger, error: unknown): void {
  log({
    level: "warn",
    event: "upstream_reverify_failed",
    error: clip(String((error as Error)?.message ?? error)),
  });
}
