/**
 * The one control pipeline: every mode that serves tools (spec mode and its
 * sql grants, `src/guard/spec_call.ts`; both forms of wrapping an MCP server,
 * `src/wrap/host.ts`) passes each `tools/call` through the same named stages,
 * in this order, and differs only in what it plugs into them (a
 * {@link CallMode}):
 *
 * - (a) {@link checkCall}: everything decided from the call alone, before
 *   anything is spent: the mode's checks (spec mode: the request planned,
 *   path values in every decoded form, `restrict`, metacharacters, exclusive
 *   inputs, the body; a wrapped tool: still the reviewed definition,
 *   `restrict` and pins), then the file's `reject-empty-argument`. The core
 *   checked the arguments against the tool's schema before dispatch.
 * - (b) {@link checkCaller}: the caller may call this tool (the core's tool
 *   access, held again here for a host that dispatches directly), and, with
 *   token exchange, its token exchanged for the upstream's (`identify`).
 * - (c) {@link takeBudget}: a rate-limit slot, reserved; it is given back
 *   unless the call reaches (e), so a call refused or declined spends no
 *   budget. From (e) on it is spent whatever comes of the send, an upstream
 *   that cannot be reached included (the limit also paces an agent retrying
 *   a down upstream). A call whose answer is cached (`cache`) needs no slot.
 * - (d) {@link askPerson}: `confirm`; the person sees the tool, the upstream
 *   request and the arguments (src/guard/confirm.ts).
 * - (e) {@link sendOnce}: the cached answer, or the mode's request, sent at
 *   most once.
 * - (f) {@link answerOf}: the mode's answer: status, caps, redaction,
 *   extraction, coverage, `reject-empty`; a successful one is then cached.
 * - (g) {@link auditCall}: one audit line per call, whatever stage ended it.
 *
 * A call refused at any stage never reaches a later one: it asks no person
 * and spends no budget. The withheld stubs and the info tool answer before
 * (a). One deadline (the mode's {@link CallState}) spans every wait.
 *
 * @module
 */
import { ErrorCode, type JsonObject, McpError } from "../mcp/jsonrpc.ts";
import {
  type CallContext,
  type Dispatch,
  InputRequiredError,
  type Logger,
  type ToolAccess,
  ToolError,
} from "../mcp/server.ts";
import type { CallToolResult } from "../mcp/types.ts";
import { structuredResult } from "../mcp/results.ts";
import type { StateKeys } from "../mcp/signed_state.ts";
import { forTool, type RateLimit, type Withhold } from "../guardfile/model.ts";
import type { RateLimiter } from "../store/mod.ts";
import { auditAllowed, auditRefused, locationOf, subjectOf } from "../ops/audit.ts";
import {
  type ErrorKind,
  isErrorKind,
  kindOf,
  type KindRule,
  reasonOfError,
  ruleOf,
  ruleOfError,
  WeirError,
} from "../errors/kinds.ts";
import { checkBlankArguments, ResponseCache } from "./controls.ts";
import { ConfirmGate, type ShownCall } from "./confirm.ts";

export type { ShownCall };
import { rateLimiter } from "./rate_limit.ts";
import type { ValueResolver } from "./values.ts";
import { withheldCallError } from "./tools.ts";

/** The controls a file puts on its tools, by served name (spec mode and the wrap form alike). */
export interface CallControls {
  /** Tool -> the question a person answers before each call. */
  confirm: Readonly<Record<string, string>>;
  /** Tool -> milliseconds a successful answer is reused. */
  cache: Readonly<Record<string, number>>;
  /** Tool -> argument names refused when present but blank. */
  rejectEmptyArguments: Readonly<Record<string, readonly string[]>>;
  /** One bucket for every call sent. */
  rateLimit?: RateLimit;
}

/**
 * One call as it passes the stages: made by the mode ({@link CallMode.begin}),
 * filled in by its stages. It carries the call's deadline over every wait
 * (the rate limit, the person, the upstream).
 */
export interface CallState {
  /** The served tool's name. */
  readonly tool: string;
  /** `performance.now()` when the call began. */
  readonly started: number;
  /** Aborted when the caller cancels or the call's deadline passes. */
  readonly signal: AbortSignal;
  /** The arguments as the controls see them (set by (a); the cache key and the digest a person confirms). */
  args: Record<string, unknown>;
  /** The upstream's HTTP status, once it answered (for the audit line). */
  upstreamStatus?: number;
  /** Milliseconds the rate limit may make the call wait (0: no bound). */
  remainingMs(): number;
  /** What the call waits for now, and whether its request has been sent. */
  phase(doing: string, sent: boolean): void;
  /** The deadline's error when it passed (and the caller had not cancelled). */
  timedOut(): ToolError | undefined;
  /** Release the deadline's timer. */
  clear(): void;
}

/** What a mode plugs into the pipeline; every hook gets the call's own state. */
export interface CallMode<C extends CallState = CallState> {
  /**
   * Start a call of a served tool: its state and deadline.
   * @throws {ToolError} for a name the mode does not serve and does not audit
   */
  begin(name: string, args: Record<string, unknown>, ctx: CallContext, started: number): C;
  /** (a) The mode's checks of the call alone; sets `call.args`. Throws a refusal. */
  check(call: C, ctx: CallContext): void | Promise<void>;
  /**
   * (b) The caller's identity upstream, when the mode sends it (token
   * exchange): a refusal is the caller's. Returns nothing when there is no
   * work.
   */
  identify?(call: C, ctx: CallContext): void | Promise<void>;
  /** (d) What a person is shown; called only for a tool a person confirms. */
  shown(call: C): ShownCall;
  /** (e) Send the call's request, once. */
  send(call: C, ctx: CallContext): Promise<void>;
  /** (f) The answer to return (status, caps, redaction, extraction, coverage, `reject-empty`). */
  answer(call: C, ctx: CallContext): CallToolResult | Promise<CallToolResult>;
}

/** What a pipeline is built from (once per loaded file). */
export interface PipelineOptions<C extends CallState> {
  mode: CallMode<C>;
  controls: CallControls;
  /** The server's name: the rate limit's default shared bucket. */
  server: string;
  /** Withheld stubs: refused before (a). */
  withholds?: readonly Withhold[];
  /** The info tool: answered before (a), naming only what the caller may list. */
  info?: { name: string; answer: (access: ToolAccess | undefined) => JsonObject };
  /** How the rate-limit store's URL is read. */
  resolver: ValueResolver;
  log: Logger;
  /** Signs a confirmation's state (the server's key service; default a per-process key). */
  stateKeys?: StateKeys;
  /** Cached answers are each caller's own (the caller's identity goes upstream). */
  perCaller?: boolean;
}

/** A file's pipeline: its mode, its controls' state (bucket, cache, gate), built once. */
export interface Pipeline<C extends CallState = CallState> {
  readonly mode: CallMode<C>;
  readonly controls: CallControls;
  readonly withheld: ReadonlyMap<string, Withhold>;
  readonly info?: PipelineOptions<C>["info"];
  readonly gate: ConfirmGate;
  readonly cache: ResponseCache;
  readonly bucket?: RateLimiter;
  readonly log: Logger;
  /** Cached answers are keyed by caller too. */
  readonly perCaller: boolean;
}

/** Build a file's pipeline (its bucket, cache and confirmation gate live as long as it does). */
export function createPipeline<C extends CallState>(options: PipelineOptions<C>): Pipeline<C> {
  const { controls, log } = options;
  return {
    mode: options.mode,
    controls,
    withheld: new Map((options.withholds ?? []).map((w) => [w.tool, w])),
    info: options.info,
    gate: new ConfirmGate(controls.confirm, options.stateKeys, log),
    cache: new ResponseCache(),
    bucket: controls.rateLimit
      ? rateLimiter(controls.rateLimit, options.server, options.resolver, log)
      : undefined,
    log,
    perCaller: options.perCaller === true,
  };
}

/** The core's dispatch of a pipeline. */
export function pipelineDispatch<C extends CallState>(pipeline: Pipeline<C>): Dispatch {
  return (name, args, ctx) => runCall(pipeline, name, args, ctx);
}

/**
 * One `tools/call` through the stages, in order (see the module doc).
 * @throws {ToolError} a refusal or failure (audited); {@link InputRequiredError}
 *   or `McpError` from (d)
 */
export async function runCall<C extends CallState>(
  pipeline: Pipeline<C>,
  name: string,
  args: Record<string, unknown>,
  ctx: CallContext,
): Promise<CallToolResult> {
  const started = performance.now();
  const w = pipeline.withheld.get(name);
  if (w) {
    auditCall(pipeline.log, name, ctx, started, "verb_withheld", 403);
    throw withheldCallError(name, w);
  }
  if (pipeline.info && name === pipeline.info.name) {
    const answer = pipeline.info.answer(ctx.tools);
    auditCall(pipeline.log, name, ctx, started, "ok", 200);
    return structuredResult(answer);
  }
  const call = pipeline.mode.begin(name, args, ctx, started);
  let slot = false;
  try {
    const checking = checkCall(pipeline, call, ctx);
    if (checking) await checking;
    const identifying = checkCaller(pipeline, call, ctx);
    if (identifying) await identifying;
    // A task's answer is its Task, not a result to reuse (src/wrap/tasks.ts).
    const ttl = ctx.task ? undefined : forTool(pipeline.controls.cache, name);
    const key = !ttl
      ? ""
      : pipeline.perCaller
      ? `${ResponseCache.key(call.args)}\n${ctx.caller ?? ""}`
      : ResponseCache.key(call.args);
    const hit = ttl ? pipeline.cache.get(name, key) : undefined;
    if (!hit && pipeline.bucket) slot = await takeBudget(pipeline, call);
    if (pipeline.gate.gates(name)) await askPerson(pipeline, call, ctx);
    if (hit) {
      auditCall(pipeline.log, name, ctx, started, "cache_hit", 200);
      return hit;
    }
    // From here the request may reach the upstream: the slot is spent, whatever comes of it.
    slot = false;
    await sendOnce(pipeline, call, ctx);
    const answered = answerOf(pipeline, call, ctx);
    const result = answered instanceof Promise ? await answered : answered;
    if (ttl && !result.isError) pipeline.cache.set(name, key, ttl, result);
    const outcome = ctx.task ? "task_created" : result.isError ? "tool_error" : "ok";
    auditCall(pipeline.log, name, ctx, started, outcome, result.isError ? 500 : 200, call);
    return result;
  } catch (thrown) {
    throw failed(pipeline, call, ctx, thrown);
  } finally {
    if (slot) pipeline.bucket!.giveBack();
    call.clear();
  }
}

/**
 * (a) The mode's checks of the call alone, then `reject-empty-argument`:
 * without a promise when the mode's checks wait for nothing.
 */
export function checkCall<C extends CallState>(
  pipeline: Pipeline<C>,
  call: C,
  ctx: CallContext,
): void | Promise<void> {
  const checking = pipeline.mode.check(call, ctx);
  if (checking) return checking.then(() => checkBlank(pipeline, call));
  checkBlank(pipeline, call);
}

/** `reject-empty-argument` of the call's tool. */
function checkBlank<C extends CallState>(pipeline: Pipeline<C>, call: C): void {
  const blank = forTool(pipeline.controls.rejectEmptyArguments, call.tool);
  if (blank) checkBlankArguments(call.tool, blank, call.args);
}

/**
 * (b) The caller may call this tool, and the mode knows who it is upstream.
 * The core already refused a tool the caller may not list (as unknown, so no
 * caller learns of it); this holds it for a host that calls dispatch itself.
 * With token exchange the caller's token is exchanged here (`identify`): an
 * exchange refused spends no budget and asks no one.
 */
export function checkCaller<C extends CallState>(
  pipeline: Pipeline<C>,
  call: C,
  ctx: CallContext,
): void | Promise<void> {
  if (ctx.tools && !ctx.tools.allows(call.tool)) {
    throw new WeirError("policy_denied", `this caller may not call "${call.tool}"`, {
      rule: "auth",
    });
  }
  return pipeline.mode.identify?.(call, ctx);
}

/**
 * (c) Reserve a rate-limit slot, waiting for it within the call's deadline.
 * @returns whether a slot was reserved (given back unless (e) sends)
 * @throws {WeirError} `rate_limited` 429, `rate_limit_store_unavailable` 503, `cancelled` 499
 */
export async function takeBudget(pipeline: Pipeline, call: CallState): Promise<boolean> {
  if (!pipeline.bucket) return false;
  call.phase("waiting for the rate limit", false);
  const wait = call.remainingMs();
  await pipeline.bucket.take(wait > 0 ? wait : Infinity, call.signal);
  // Work that has not started when the deadline passes never starts.
  try {
    call.signal.throwIfAborted();
  } catch (error) {
    pipeline.bucket.giveBack();
    throw error;
  }
  return true;
}

/** (d) A person confirms the call, when the file says so (src/guard/confirm.ts). */
export async function askPerson<C extends CallState>(
  pipeline: Pipeline<C>,
  call: C,
  ctx: CallContext,
): Promise<void> {
  if (!pipeline.gate.gates(call.tool)) return;
  call.phase("waiting for the confirmation", false);
  const shown = pipeline.mode.shown(call);
  await pipeline.gate.confirm(call.tool, call.args, { ...ctx, signal: call.signal }, shown);
  call.signal.throwIfAborted();
}

/** (e) Send the call's request, once. */
export function sendOnce<C extends CallState>(
  pipeline: Pipeline<C>,
  call: C,
  ctx: CallContext,
): Promise<void> {
  return pipeline.mode.send(call, ctx);
}

/** (f) The mode's answer to the call. */
export function answerOf<C extends CallState>(
  pipeline: Pipeline<C>,
  call: C,
  ctx: CallContext,
): CallToolResult | Promise<CallToolResult> {
  return pipeline.mode.answer(call, ctx);
}

/**
 * What an audit line says came of a call: a kind (src/errors/kinds.ts), or an
 * outcome that is no failure, or a failure of no known kind.
 */
export type AuditOutcome =
  | ErrorKind
  | "ok"
  | "cache_hit"
  | "confirmation_asked"
  | "task_created"
  | "task_cancelled"
  | "tool_error"
  | "handler_error";

/**
 * (g) The call's one audit line (src/ops/audit.ts), built here for every
 * mode (the AWS hosts too): a refusal names its rule (the error's own, else
 * its kind's) and reason (the error's, else `reasons` by rule); anything else
 * is an allowed call with its outcome, status, duration, the upstream's status
 * and a refused redirect's target.
 */
export function auditCall(
  log: Logger,
  tool: string,
  ctx: Pick<CallContext, "auth">,
  started: number,
  outcome: AuditOutcome,
  status: number,
  call?: Pick<CallState, "upstreamStatus">,
  error?: unknown,
  reasons?: Readonly<Partial<Record<KindRule, string>>>,
): void {
  const subject = subjectOf(ctx.auth);
  const rule = ruleOfError(error) ?? (isErrorKind(outcome) ? ruleOf(outcome) : undefined);
  if (rule) {
    const reason = reasonOfError(error) ?? reasons?.[rule];
    auditRefused(log, { rule, status, tool, subject, ...(reason ? { reason } : {}) });
    return;
  }
  auditAllowed(log, {
    tool,
    outcome,
    status,
    durationMs: performance.now() - started,
    upstreamStatus: call?.upstreamStatus,
    subject,
    location: locationOf(error),
  });
}

/** A thrown error, audited, as the caller gets it. */
function failed(pipeline: Pipeline, call: CallState, ctx: CallContext, thrown: unknown): unknown {
  const { log } = pipeline;
  const name = call.tool;
  // Past the call's deadline the answer is the deadline's, naming what was
  // pending and whether anything was sent (a wait's own error says less).
  const error = ownTimeout(thrown) ? thrown : call.timedOut() ?? thrown;
  if (error instanceof InputRequiredError) {
    auditCall(log, name, ctx, call.started, "confirmation_asked", 200, call);
    return error;
  }
  if (error instanceof McpError) {
    // The confirmation gate refused the request itself (a requestState that
    // does not verify, or no elicitation capability): its JSON-RPC error as it is.
    const kind = error.code === ErrorCode.MissingRequiredClientCapability
      ? "confirmation_impossible"
      : "confirmation_state_invalid";
    auditCall(log, name, ctx, call.started, kind, 400, call);
    return error;
  }
  const tool = error instanceof ToolError;
  const outcome = kindOf(error) ?? (tool ? "tool_error" : "handler_error");
  auditCall(log, name, ctx, call.started, outcome, tool ? error.status : 500, call, error);
  if (tool || ctx.signal.aborted) return error;
  // An error nobody foresaw may quote what it choked on (a header value, a
  // credential): neither the caller nor the log sees its message.
  log({
    level: "error",
    event: "tool_failed",
    tool: name,
    error: error instanceof Error ? error.name : typeof error,
  });
  return new WeirError(
    "internal_error",
    `"${name}" failed inside weir; nothing was shown of the cause (the log names its kind)`,
    { cause: error },
  );
}

/** A timeout that names its own step more precisely than the call's deadline would. */
function ownTimeout(error: unknown): boolean {
  const kind = kindOf(error);
  return kind === "extract_timeout" || kind === "sql_timeout";
}

/**
 * The state of a call without a deadline of its own (the wrapped MCP server's
 * requests carry theirs): the caller's signal, and a bound on the rate
 * limit's wait.
 */
export class UnboundedCall implements CallState {
  readonly tool: string;
  readonly started: number;
  readonly signal: AbortSignal;
  args: Record<string, unknown>;
  upstreamStatus?: number;
  readonly #waitMs: number;

  constructor(
    tool: string,
    args: Record<string, unknown>,
    ctx: CallContext,
    started: number,
    waitMs: number,
  ) {
    this.tool = tool;
    this.args = args;
    this.signal = ctx.signal;
    this.started = started;
    this.#waitMs = waitMs;
  }

  remainingMs(): number {
    return this.#waitMs;
  }

  phase(): void {}

  timedOut(): undefined {
    return undefined;
  }

  clear(): void {}
}
