/**
 * The guard as a host of the MCP core: a {@link Guardfile} becomes a catalog
 * (one tool per grant, one stub per `withhold`, the info tool) and a dispatch
 * function that plans, checks and sends exactly the granted request. Nothing
 * else exists: a tool the guardfile does not name is not in the catalog, so
 * the core refuses it before any code here runs.
 *
 * @module
 */
import { redirectRefusal } from "../outbound/once.ts";
import { readOnlyView } from "../guardfile/surface.ts";
import { cleanDeep, cleanText, clipText, jsonTextIsClean, parseJsonExact } from "../mcp/text.ts";
import { ErrorCode, type JsonObject, McpError, spelledArguments } from "../mcp/jsonrpc.ts";
import {
  type CallContext,
  InputRequiredError,
  type Logger,
  type ServerOptions,
  stderrLogger,
  type ToolAccess,
  ToolError,
} from "../mcp/server.ts";
import type { CallToolResult, ToolSpec } from "../mcp/types.ts";
import type { Grant, Guardfile } from "../guardfile/model.ts";
import { type Envelope, envelope } from "./coverage.ts";
import { indexRestricts, planRequest, withoutNulls } from "./request.ts";
import {
  grantTool,
  infoTool,
  INSTRUCTIONS_PREAMBLE,
  withheldCallError,
  withheldTool,
} from "./tools.ts";
import { sendUpstream, type UpstreamCredential, type UpstreamLimits } from "./send.ts";
import { MAX_ANSWER_DEPTH, nestsDeeperThan, Redactor } from "./secrets.ts";
import type { ValueResolver } from "./values.ts";
import { jmesPathPredicate } from "../guardfile/jmespath.ts";
import { grantInputNames } from "../guardfile/grant.ts";
import { checkBlankArguments, isEmpty, ResponseCache } from "./controls.ts";
import { rateLimiter } from "./rate_limit.ts";
import { SqlRunner } from "./sql.ts";
import { ConfirmGate } from "./confirm.ts";
import { StateKeys } from "../mcp/signed_state.ts";
import { extract } from "./extract.ts";
import { promptReader, promptSpecs, resourceReader, resourceSpecs } from "./prompts_resources.ts";
import { auditAllowed, auditRefused, locationOf, subjectOf } from "../ops/audit.ts";
import {
  type ErrorKind,
  isErrorKind,
  kindOf,
  ruleOf,
  ruleOfError,
  WeirError,
} from "../errors/kinds.ts";

/**
 * What an audit line says came of a call: a kind (src/errors/kinds.ts), or an
 * outcome that is no failure, or a failure of no known kind.
 */
type AuditOutcome =
  | ErrorKind
  | "ok"
  | "cache_hit"
  | "confirmation_asked"
  | "tool_error"
  | "handler_error";
import { Deadline } from "../outbound/deadline.ts";

/** Upstream answers as text (non-fatal: a bad byte becomes U+FFFD, as before). */
const utf8 = new TextDecoder();

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

const EXCERPT_CHARS = 200;
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
  const restricts = indexRestricts(guardfile);
  const grants = new Map(guardfile.grants.map((g) => [g.tool, g]));
  const withheld = new Map(guardfile.withholds.map((w) => [w.tool, w]));
  const failWhen = new Map(
    guardfile.grants.filter((g) => g.failWhen).map((g) => [g.tool, jmesPathPredicate(g.failWhen!)]),
  );
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
  const controls = guardfile.controls;
  const bucket = controls.rateLimit
    ? rateLimiter(controls.rateLimit, guardfile.name, options.resolver, log)
    : undefined;
  const cache = new ResponseCache();
  const exchanges = guardfile.auth.scheme === "token-exchange";
  const stateKeys = options.stateKeys ?? new StateKeys();
  const confirmGate = new ConfirmGate(controls.confirm, stateKeys, log);

  const sql = guardfile.database
    ? new SqlRunner(guardfile.database, options.resolver, limits.timeoutMs, log)
    : undefined;

  /** A sql grant: rows or rows_affected, with max-rows truncation lifted into coverage. */
  /** Whether the grant's `fail-when` holds for an answer (its inputs visible as `$name`, absent as null). */
  const failsWhen = (grant: Grant, answer: unknown, args: Record<string, unknown>): boolean => {
    const predicate = failWhen.get(grant.tool);
    if (!predicate) return false;
    const scope: Record<string, unknown> = {};
    for (const name of grantInputNames(grant)) {
      scope[name] = Object.hasOwn(args, name) ? args[name] : null;
    }
    return predicate(answer, scope);
  };

  /** The tool result for an envelope: its JSON as text and as `structuredContent`. */
  const envelopeResult = (env: Envelope): CallToolResult => ({
    content: [{ type: "text", text: JSON.stringify(env) }],
    structuredContent: env as unknown as JsonObject,
  });

  const callSql = async (
    grant: Grant,
    args: Record<string, unknown>,
    call: CallBudget,
    spelled: Record<string, unknown> | undefined,
  ) => {
    const answer = await sql!.run(grant, args, call.signal, {
      ...call,
      maxBytes: limits.maxResponseBytes,
    }, spelled);
    if (limits.maxResponseBytes > 0 && answer.bytes > limits.maxResponseBytes) {
      throw new WeirError(
        "sql_too_large",
        `${grant.tool} produced more than the ${limits.maxResponseBytes}-byte answer cap (the ` +
          `read stopped there); lower max-rows or select fewer or narrower columns`,
        { status: 502 },
      );
    }
    if (failsWhen(grant, answer.result, args)) {
      throw new WeirError("sql_failed", `${grant.tool} matched fail-when ${grant.failWhen}`, {
        status: 502,
      });
    }
    const rows = answer.result.rows;
    if (controls.rejectEmpty.includes(grant.tool) && Array.isArray(rows) && rows.length === 0) {
      throw new WeirError(
        "reject_empty",
        `${grant.tool} found no rows; an empty answer is not treated as "none found"`,
        { status: 502 },
      );
    }
    const env = envelope(cleanDeep(answer.result), answer.bytes);
    env.coverage.truncated = answer.truncated;
    return envelopeResult(env);
  };

  const callGrant = async (
    grant: Grant,
    args: Record<string, unknown>,
    original: Record<string, unknown>,
    call: CallBudget,
    seen: { upstreamStatus?: number },
    auth: unknown,
  ) => {
    // What is sent carries each number as the agent wrote it (1e21, 1.0, -0):
    // the arguments' spelled twin (src/mcp/jsonrpc.ts), nulls dropped alike.
    const spelled = spelledArguments(original);
    if (grant.sql) return await callSql(grant, args, call, spelled);
    const planned = planRequest(grant, spelled ? withoutNulls(grant, spelled) : args, restricts);
    const redactor = new Redactor();
    // The caller's identity upstream: a token exchanged from the caller's (never the caller's own).
    let upstreamToken: string | undefined;
    if (exchanges && options.upstreamCredential) {
      call.phase("waiting for the token exchange", false);
      upstreamToken = await options.upstreamCredential(
        auth,
        grant.tool,
        grant.scopes,
        call.signal,
      );
      redactor.add(upstreamToken);
    }
    call.phase(UPSTREAM_ANSWER, false);
    const answer = await sendUpstream(
      guardfile,
      grant,
      planned,
      options.resolver,
      // No timer of its own: the call's signal is the deadline, and its error names the
      // --upstream-timeout as set (never what was left of it) and whether the request was sent.
      { ...limits, timeoutMs: 0 },
      call.signal,
      redactor,
      () => call.phase(UPSTREAM_ANSWER, true),
      upstreamToken,
    );
    seen.upstreamStatus = answer.status;
    const what = `${grant.method} ${grant.path}`;
    if (answer.status >= 300) {
      const excerpt = clipText(
        cleanText(redactor.text(utf8.decode(answer.body))).replace(/\s+/g, " ").trim(),
        EXCERPT_CHARS,
      );
      if (answer.status < 400) {
        // Never followed: the caller hears the status; the target is for the audit line.
        throw new WeirError("upstream_redirect", `${what} ${redirectRefusal(answer.status)}`, {
          location: answer.location,
        });
      }
      throw new WeirError(
        "upstream_error",
        `${what} -> ${answer.status} ${answer.statusText}` + (excerpt ? `: ${excerpt}` : ""),
      );
    }
    const extraction = controls.extract[grant.tool];
    if (extraction) {
      call.phase(`extracting the answer (${extraction.as})`, true);
      const parsed = await extract(
        grant.tool,
        extraction,
        answer.body,
        call.remainingMs(),
        call.signal,
        limits.timeoutMs,
      );
      const result = redactor.deep(parsed.result);
      const env = envelope(result, 0);
      env.coverage[extraction.as === "pdf-text" ? "pages" : "entries"] = {
        shown: parsed.shown,
        total: parsed.total,
      };
      return envelopeResult(env);
    }
    // Decoded only here: an extraction reads the bytes themselves.
    const text = utf8.decode(answer.body);
    let result: unknown;
    if (answer.body.length === 0) {
      result = cleanText(`${answer.status} ${answer.statusText}`.trim());
    } else if (grant.rawResponse) {
      result = cleanText(redactor.text(text));
    } else {
      try {
        // Numbers pass through exactly: src/mcp/text.ts.
        result = parseJsonExact(text);
      } catch {
        const media = /^[\w.+-]+\/[\w.+-]+/.exec(answer.contentType)?.[0] ?? "a body";
        throw new WeirError(
          "upstream_not_json",
          `${what} -> ${answer.status} answered ${
            redactor.text(media)
          } that is not JSON (add raw-response to the grant to pass text through)`,
          { status: 502 },
        );
      }
      if (nestsDeeperThan(result, MAX_ANSWER_DEPTH)) {
        throw new WeirError(
          "upstream_too_deep",
          `${what} answered JSON nested deeper than ${MAX_ANSWER_DEPTH} levels; refused`,
          { status: 502 },
        );
      }
      if (failsWhen(grant, result, args)) {
        throw new WeirError("upstream_failed", `${what} matched fail-when ${grant.failWhen}`, {
          status: 502,
        });
      }
      // Redaction only writes "[redacted]"; the walk that cleans text runs only
      // when the answer's text could decode to something to clean.
      result = redactor.deep(result);
      if (!jsonTextIsClean(text)) result = cleanDeep(result);
    }
    if (
      controls.rejectEmpty.includes(grant.tool) && (answer.body.length === 0 || isEmpty(result))
    ) {
      throw new WeirError(
        "reject_empty",
        `${what} answered nothing (${
          answer.body.length === 0 ? "an empty body" : JSON.stringify(result)
        }); an empty answer is not treated as "none found"`,
        { status: 502 },
      );
    }
    const env = envelope(result, answer.body.length);
    return envelopeResult(env);
  };

  const dispatch = async (
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<CallToolResult> => {
    const started = performance.now();
    const seen: { upstreamStatus?: number } = {};
    // One audit line per decision (src/ops/audit.ts): refusals name their rule.
    const subject = subjectOf(ctx.auth);
    const done = (outcome: AuditOutcome, status: number, error?: unknown) => {
      // The error's own rule (a dot segment, a metacharacter...), else its kind's.
      const rule = ruleOfError(error) ?? (isErrorKind(outcome) ? ruleOf(outcome) : undefined);
      if (rule) auditRefused(log, { rule, status, tool: name, subject });
      else {
        auditAllowed(log, {
          tool: name,
          outcome,
          status,
          durationMs: performance.now() - started,
          upstreamStatus: seen.upstreamStatus,
          subject,
          location: locationOf(error),
        });
      }
    };
    const w = withheld.get(name);
    if (w) {
      done("verb_withheld", 403);
      throw withheldCallError(name, w);
    }
    if (name === guardfile.infoTool) {
      done("ok", 200);
      const answer = info(ctx.tools);
      return {
        content: [{ type: "text", text: JSON.stringify(answer) }],
        structuredContent: answer,
      };
    }
    const grant = grants.get(name);
    if (!grant) throw new ToolError(`unknown tool "${name}"`, { status: 404 });
    // An optional input sent as null was not given: no check, cache key or request sees it.
    const original = args;
    args = withoutNulls(grant, args);
    const call = callBudget(name, grant, ctx, started, limits.timeoutMs);
    try {
      checkBlankArguments(name, controls.rejectEmptyArguments[name] ?? [], args);
      if (confirmGate.gates(name)) {
        call.phase("waiting for the confirmation", false);
        await confirmGate.confirm(name, args, { ...ctx, signal: call.signal });
        call.signal.throwIfAborted();
      }
      const ttl = controls.cache[name];
      // With the caller's identity upstream, the upstream may answer each caller otherwise.
      const key = !ttl
        ? ""
        : exchanges
        ? `${ResponseCache.key(args)}\n${ctx.caller ?? ""}`
        : ResponseCache.key(args);
      const hit = ttl ? cache.get(name, key) : undefined;
      if (hit) {
        done("cache_hit", 200);
        return hit;
      }
      if (bucket) {
        call.phase("waiting for the rate limit", false);
        await bucket.take(limits.timeoutMs > 0 ? call.remainingMs() : Infinity, call.signal);
        // Work that has not started when the deadline passes never starts.
        call.signal.throwIfAborted();
      }
      const result = await callGrant(grant, args, original, call, seen, ctx.auth);
      if (ttl) cache.set(name, key, ttl, result);
      done("ok", 200);
      return result;
    } catch (thrown) {
      // Past the call's deadline the answer is the deadline's, naming what was
      // pending and whether anything was sent (a wait's own error says less).
      const error = ownTimeout(thrown) ? thrown : call.timedOut() ?? thrown;
      if (error instanceof InputRequiredError) {
        done("confirmation_asked", 200);
        throw error;
      }
      if (error instanceof McpError) {
        // The confirmation gate refused the request itself (a requestState that
        // does not verify, or no elicitation capability): its JSON-RPC error as it is.
        done(
          error.code === ErrorCode.MissingRequiredClientCapability
            ? "confirmation_impossible"
            : "confirmation_state_invalid",
          400,
        );
        throw error;
      }
      const status = error instanceof ToolError ? error.status : 500;
      done(
        kindOf(error) ?? (error instanceof ToolError ? "tool_error" : "handler_error"),
        status,
        error,
      );
      if (error instanceof ToolError || ctx.signal.aborted) throw error;
      // An error nobody foresaw may quote what it choked on (a header value, a
      // credential): neither the caller nor the log sees its message.
      log({
        level: "error",
        event: "tool_failed",
        tool: name,
        error: error instanceof Error ? error.name : typeof error,
      });
      throw new WeirError(
        "internal_error",
        `"${name}" failed inside weir; nothing was shown of the cause ` +
          `(the log names its kind)`,
        { cause: error },
      );
    } finally {
      call.clear();
    }
  };

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

/** The step of a call that waits for the upstream (its timeout says "did not answer"). */
const UPSTREAM_ANSWER = "waiting for the upstream's answer";

/**
 * One call's deadline (`--upstream-timeout`, counted from the start of the
 * call) over every wait in it: the confirmation, the rate-limit queue, a
 * database connection and the upstream's answer all share it, and work that
 * has not started when it passes never starts. A caller told the call timed
 * out can rely on it: nothing was sent after that, and the message says
 * whether anything had been (docs/spec-mode.md, "One deadline per call").
 */
export interface CallBudget {
  /** Aborted when the caller cancels or the deadline passes (then with the timeout error). */
  readonly signal: AbortSignal;
  /** Milliseconds left (at least 1), or 0 when the call has no deadline. */
  remainingMs(): number;
  /** What the call waits for now, and whether its request has been sent. */
  phase(doing: string, sent: boolean): void;
  /** The timeout error when the deadline passed (and the caller had not cancelled). */
  timedOut(): ToolError | undefined;
  /** Release the deadline's timer slot. */
  clear(): void;
}

function callBudget(
  name: string,
  grant: Grant,
  ctx: CallContext,
  started: number,
  timeoutMs: number,
): CallBudget {
  let doing = "starting";
  let sent = false;
  const kind: ErrorKind = grant.sql ? "sql_timeout" : "upstream_timeout";
  // An HTTP grant is named as its errors name it: method and path template.
  const what = grant.sql ? `"${name}"` : `${grant.method} ${grant.path}`;
  const deadline = new Deadline(ctx.signal, timeoutMs, () =>
    new WeirError(
      kind,
      sent && !grant.sql && doing === UPSTREAM_ANSWER
        ? `${what} did not answer within ${timeoutMs} ms; the request was sent and may have ` +
          `taken effect`
        : `${what} did not finish within ${timeoutMs} ms (${doing}); ` +
          (sent
            ? "the request was sent and may have taken effect"
            : "nothing was sent, and nothing will be"),
    ));
  return {
    signal: deadline.signal,
    remainingMs: () =>
      timeoutMs > 0 ? Math.max(1, Math.ceil(started + timeoutMs - performance.now())) : 0,
    phase(now, wasSent) {
      doing = now;
      sent ||= wasSent;
    },
    timedOut() {
      const reason = deadline.signal.reason;
      return deadline.signal.aborted && !ctx.signal.aborted && reason instanceof ToolError
        ? reason
        : undefined;
    },
    clear: () => deadline.clear(),
  };
}

/** A timeout that names its own step more precisely than the call's deadline would. */
function ownTimeout(error: unknown): boolean {
  const kind = kindOf(error);
  return kind === "extract_timeout" || kind === "sql_timeout";
}
