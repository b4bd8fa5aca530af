/**
 * Spec mode's part of the control pipeline (src/guard/pipeline.ts): what a
 * grant plugs into the stages.
 *
 * - (a) {@link SpecMode.check}: optional inputs sent as `null` dropped; weir's
 *   own values resolved (src/guard/outgoing.ts: base URL, pins and
 *   credential; a sql grant's DSN) and no argument holding one of their
 *   secrets (src/guard/secret_arguments.ts); then the request planned from
 *   the grant (src/guard/request.ts: path values in every decoded form,
 *   `restrict`, metacharacters, exclusive inputs, the body) and built (the
 *   URL's length, the granted upstream). A sql grant binds its parameters
 *   only at (e).
 * - (b) {@link SpecMode.identify}: with `auth token-exchange`, the caller's
 *   exchanged token, which no argument may hold either.
 * - (e) {@link SpecMode.send}: the request, once (or the statement).
 * - (f) {@link SpecMode.answer}: a status other than 2xx judged, the answer's
 *   cap, extraction, JSON read exactly, depth, `fail-when`, redaction of
 *   every secret the call resolved, `reject-empty`, and the coverage envelope.
 *
 * One deadline per call ({@link SpecCall}, `--upstream-timeout` counted from
 * the start of the call) spans the rate limit, the confirmation, a database
 * connection and the upstream's answer.
 *
 * @module
 */
import { redirectRefusal } from "../outbound/once.ts";
import { Deadline } from "../outbound/deadline.ts";
import { cleanDeep, cleanText, clipText, jsonTextIsClean, parseJsonExact } from "../mcp/text.ts";
import { type JsonObject, spelledArguments } from "../mcp/jsonrpc.ts";
import { type CallContext, type Logger, ToolError } from "../mcp/server.ts";
import type { CallToolResult } from "../mcp/types.ts";
import { structuredResult } from "../mcp/results.ts";
import { type Extraction, forTool, type Grant, type Guardfile } from "../guardfile/model.ts";
import { readerOf } from "../guardfile/readers.ts";
import { grantInputNames } from "../guardfile/grant.ts";
import { type ErrorKind, WeirError } from "../errors/kinds.ts";
import { type Envelope, envelope } from "./coverage.ts";
import { indexRestricts, planRequest, type RestrictIndex, withoutNulls } from "./request.ts";
import {
  exchangeUpstream,
  isRedirect,
  type OutgoingRequest,
  type UpstreamAnswer,
  type UpstreamCredential,
  type UpstreamLimits,
} from "./send.ts";
import {
  buildUpstreamRequest,
  type CallValues,
  resolveCallValues,
  withExchangedToken,
} from "./outgoing.ts";
import { refuseSecretArguments, refuseSecretText } from "./secret_arguments.ts";
import { MAX_ANSWER_DEPTH, nestsDeeperThan, Redactor } from "./secrets.ts";
import type { ValueResolver } from "./values.ts";
import { isEmpty } from "./controls.ts";
import type { SqlAnswer, SqlRunner } from "./sql.ts";
import { lazy } from "../ops/lazy.ts";
import { extract } from "./extract.ts";
import type { CallMode, CallState, ShownCall } from "./pipeline.ts";

/** Upstream answers as text (non-fatal: a bad byte becomes U+FFFD, as before). */
const utf8 = new TextDecoder();

const EXCERPT_CHARS = 200;

/** The step of a call that waits for the upstream (its timeout says "did not answer"). */
const UPSTREAM_ANSWER = "waiting for the upstream's answer";

/**
 * One call of a grant: its deadline (`--upstream-timeout`, counted from the
 * start of the call) over every wait in it, and what each stage settled. A
 * caller told the call timed out can rely on it: nothing was sent after
 * that, and the message says whether anything had been (docs/spec-mode.md,
 * "One deadline per call").
 */
export class SpecCall implements CallState {
  readonly tool: string;
  readonly grant: Grant;
  readonly started: number;
  /** The arguments as the agent sent them (numbers as written: `spelledArguments`). */
  readonly original: Record<string, unknown>;
  args: Record<string, unknown>;
  upstreamStatus?: number;
  /** (a) The request built (an HTTP grant). */
  request?: OutgoingRequest;
  /** (a) Receives every secret the call resolves; (f) redacts them from the answer. */
  readonly redactor = new Redactor();
  /** (a) The grant's pins as read for this call (shown to a person, a secret one by name only). */
  pins?: CallValues["pins"];
  /** (a) A sql grant's database, as its DSN read at the start of the call. */
  dsn?: string;
  /** (e) The upstream's answer (an HTTP grant), or the statement's (a sql grant). */
  answer?: UpstreamAnswer;
  rows?: SqlAnswer;
  /** The answer cap in bytes a sql read stops at (0: none). */
  readonly maxBytes: number;
  readonly #ctx: CallContext;
  readonly #deadline: Deadline;
  readonly #timeoutMs: number;
  #doing = "starting";
  #sent = false;

  constructor(
    grant: Grant,
    args: Record<string, unknown>,
    ctx: CallContext,
    started: number,
    limits: UpstreamLimits,
  ) {
    this.tool = grant.tool;
    this.grant = grant;
    this.original = args;
    this.args = args;
    this.started = started;
    this.maxBytes = limits.maxResponseBytes;
    this.#ctx = ctx;
    this.#timeoutMs = limits.timeoutMs;
    // Counted from the call's start (remainingMs counts from it too).
    this.#deadline = new Deadline(ctx.signal, limits.timeoutMs, () => this.#expired(), started);
  }

  get signal(): AbortSignal {
    return this.#deadline.signal;
  }

  remainingMs(): number {
    return this.#timeoutMs > 0
      ? Math.max(1, Math.ceil(this.started + this.#timeoutMs - performance.now()))
      : 0;
  }

  phase(doing: string, sent: boolean): void {
    this.#doing = doing;
    this.#sent ||= sent;
  }

  timedOut(): ToolError | undefined {
    const signal = this.#deadline.signal;
    return signal.aborted && !this.#ctx.signal.aborted && signal.reason instanceof ToolError
      ? signal.reason
      : undefined;
  }

  clear(): void {
    this.#deadline.clear();
  }

  #expired(): WeirError {
    const { grant } = this;
    const kind: ErrorKind = grant.sql ? "sql_timeout" : "upstream_timeout";
    // An HTTP grant is named as its errors name it: method and path template.
    const what = grant.sql ? `"${grant.tool}"` : `${grant.method} ${grant.path}`;
    const ms = this.#timeoutMs;
    return new WeirError(
      kind,
      this.#sent && !grant.sql && this.#doing === UPSTREAM_ANSWER
        ? `${what} did not answer within ${ms} ms; the request was sent and may have taken effect`
        : `${what} did not finish within ${ms} ms (${this.#doing}); ` +
          (this.#sent
            ? "the request was sent and may have taken effect"
            : "nothing was sent, and nothing will be"),
    );
  }
}

/** Options of {@link SpecMode}. */
export interface SpecModeOptions {
  resolver: ValueResolver;
  limits: UpstreamLimits;
  log: Logger;
  /** `auth token-exchange`: the token sent upstream for a call's caller. */
  upstreamCredential?: UpstreamCredential;
}

/** A guardfile's grants as the pipeline's mode (built once per loaded file). */
export class SpecMode implements CallMode<SpecCall> {
  readonly #guardfile: Guardfile;
  readonly #options: SpecModeOptions;
  readonly #grants: Map<string, Grant>;
  readonly #restricts: RestrictIndex;
  readonly #failWhen: Map<string, (answer: unknown, scope: Record<string, unknown>) => boolean>;
  readonly #rejectEmpty: ReadonlySet<string>;
  /** Per grant: path values, then query inputs (what a person sees first). */
  readonly #identifying: Map<string, readonly string[]>;
  /** A file with `database`: its runner, made on the first sql call (sql.ts loads then). */
  #sql?: SqlRunner;
  readonly #exchanges: boolean;

  constructor(guardfile: Guardfile, options: SpecModeOptions) {
    this.#guardfile = guardfile;
    this.#options = options;
    this.#grants = new Map(guardfile.grants.map((g) => [g.tool, g]));
    this.#restricts = indexRestricts(guardfile);
    this.#failWhen = new Map(
      guardfile.grants.filter((g) => g.failWhen).map((g) => [
        g.tool,
        readerOf("jmespath").jmesPathPredicate(g.failWhen!),
      ]),
    );
    this.#rejectEmpty = new Set(guardfile.controls.rejectEmpty);
    this.#exchanges = guardfile.auth.scheme === "token-exchange";
    this.#identifying = new Map(
      guardfile.grants.map((g) => [g.tool, [...g.pathParams, ...g.query.map((q) => q.name)]]),
    );
  }

  /** The file's sql runner (a file with `database`), made once on the first sql call. */
  async #sqlRunner(): Promise<SqlRunner> {
    if (this.#sql) return this.#sql;
    const { SqlRunner } = await lazy<typeof import("./sql.ts")>("guard_sql");
    const { resolver, limits, log } = this.#options;
    return this.#sql ??= new SqlRunner(this.#guardfile.database!, resolver, limits.timeoutMs, log);
  }

  begin(name: string, args: Record<string, unknown>, ctx: CallContext, started: number): SpecCall {
    const grant = this.#grants.get(name);
    if (!grant) throw new ToolError(`unknown tool "${name}"`, { status: 404 });
    return new SpecCall(grant, args, ctx, started, this.#options.limits);
  }

  /**
   * (a) Nulls dropped; weir's own values resolved (the credential and pins of
   * an HTTP grant, a sql grant's DSN) and no argument holding one of their
   * secrets; an HTTP grant's request planned and built (nothing is sent).
   */
  check(call: SpecCall): void | Promise<void> {
    const { grant } = call;
    // An optional input sent as null was not given: no check, cache key or request sees it.
    call.args = withoutNulls(grant, call.original);
    if (grant.sql) return this.#checkSql(call);
    // Without a promise when no value is read from a file (the usual call).
    const values = resolveCallValues(this.#guardfile, grant, this.#options.resolver, call.redactor);
    if (values instanceof Promise) return values.then((v) => this.#plan(call, v));
    this.#plan(call, values);
  }

  /** (a) of a sql grant: its DSN read, and no argument holding it. */
  async #checkSql(call: SpecCall): Promise<void> {
    call.dsn = await (await this.#sqlRunner()).dsn(call.redactor);
    refuseSecretArguments(call.grant.tool, call.redactor, call.original);
  }

  /** (a) of an HTTP grant, its values resolved: the request planned and built. */
  #plan(call: SpecCall, values: CallValues): void {
    const { grant } = call;
    // Before any check that may quote a value.
    refuseSecretArguments(grant.tool, call.redactor, call.original);
    // What is sent carries each number as the agent wrote it (1e21, 1.0, -0):
    // the arguments' spelled twin (src/mcp/jsonrpc.ts), nulls dropped alike.
    const spelled = spelledArguments(call.original);
    const planned = planRequest(
      grant,
      spelled ? withoutNulls(grant, spelled) : call.args,
      this.#restricts,
    );
    // Path values beside each other or the template's text (`/{a}-{b}`) may spell what no
    // argument holds alone.
    if (call.redactor.active && grant.pathParams.length > 0) {
      refuseSecretText(
        `the path of "${grant.tool}" (its path values in place)`,
        call.redactor,
        planned.path,
      );
    }
    call.request = buildUpstreamRequest(this.#guardfile, grant, planned, values);
    call.pins = values.pins;
  }

  /**
   * (b) With `auth token-exchange`, the caller's own token exchanged for the
   * upstream's (a refusal is the caller's: 403 `token_exchange_refused`, or
   * 503 `token_exchange_unavailable`); nothing otherwise.
   */
  identify(call: SpecCall, ctx: CallContext): void | Promise<void> {
    if (this.#exchanges && !call.grant.sql) return this.#exchange(call, ctx);
  }

  async #exchange(call: SpecCall, ctx: CallContext): Promise<void> {
    const credential = this.#options.upstreamCredential;
    const token = credential
      ? (call.phase("waiting for the token exchange", false),
        await credential(ctx.auth, call.tool, call.grant.scopes, call.signal))
      : undefined;
    withExchangedToken(call.request!, call.tool, token, call.redactor);
    refuseSecretArguments(call.tool, call.redactor, call.original);
  }

  shown(call: SpecCall): ShownCall {
    const request = call.request;
    return {
      // The path as sent; never the query, which may carry a credential or a secret pin
      // (the caller's query values are among the arguments shown).
      request: request
        ? `${request.method} ${request.target.pathname}`
        : `SQL ${clipText(call.grant.sql!.statement.replace(/\s+/g, " ").trim(), 200)}`,
      identifying: this.#identifying.get(call.tool)!,
      pinned: call.pins?.map((p) => [p.name, p.secret ? undefined : p.value] as const),
    };
  }

  /** (e) The request (or the statement), once. */
  async send(call: SpecCall): Promise<void> {
    if (call.grant.sql) {
      const spelled = spelledArguments(call.original);
      call.rows = await (await this.#sqlRunner()).run(
        call.grant,
        call.args,
        call.dsn!,
        call.signal,
        call,
        spelled,
      );
      return;
    }
    call.phase(UPSTREAM_ANSWER, false);
    call.answer = await exchangeUpstream(
      call.request!,
      // No timer of its own: the call's signal is the deadline, and its error names the
      // --upstream-timeout as set (never what was left of it) and whether the request was sent.
      { ...this.#options.limits, timeoutMs: 0 },
      call.signal,
      call.redactor,
      () => call.phase(UPSTREAM_ANSWER, true),
    );
    call.upstreamStatus = call.answer.status;
  }

  /** (f) The answer: judged, capped, extracted, read, redacted, wrapped with its coverage. */
  answer(call: SpecCall): CallToolResult | Promise<CallToolResult> {
    return call.grant.sql ? this.#sqlAnswer(call) : this.#httpAnswer(call);
  }

  #sqlAnswer(call: SpecCall): CallToolResult {
    const { grant } = call;
    const answer = call.rows!;
    const { maxResponseBytes } = this.#options.limits;
    if (maxResponseBytes > 0 && answer.bytes > maxResponseBytes) {
      throw new WeirError(
        "sql_too_large",
        `${grant.tool} produced more than the ${maxResponseBytes}-byte answer cap (the ` +
          `read stopped there); lower max-rows or select fewer or narrower columns`,
        { status: 502 },
      );
    }
    if (this.#failsWhen(grant, answer.result, call.args)) {
      throw new WeirError("sql_failed", `${grant.tool} matched fail-when ${grant.failWhen}`, {
        status: 502,
      });
    }
    const rows = answer.result.rows;
    if (this.#rejectEmpty.has(grant.tool) && Array.isArray(rows) && rows.length === 0) {
      throw new WeirError(
        "reject_empty",
        `${grant.tool} found no rows; an empty answer is not treated as "none found"`,
        { status: 502 },
      );
    }
    const env = envelope(cleanDeep(answer.result), answer.bytes);
    env.coverage.truncated = answer.truncated;
    return envelopeResult(env);
  }

  #httpAnswer(call: SpecCall): CallToolResult | Promise<CallToolResult> {
    const { grant, redactor } = call;
    const answer = call.answer!;
    const what = `${grant.method} ${grant.path}`;
    // 304 Not Modified answers a conditional request (an If-None-Match header input): no body,
    // read as any empty answer ("304 Not Modified").
    if (answer.status >= 300 && answer.status !== 304) {
      const excerpt = clipText(
        cleanText(redactor.text(utf8.decode(answer.body))).replace(/\s+/g, " ").trim(),
        EXCERPT_CHARS,
      );
      if (isRedirect(answer.status)) {
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
    const extraction = forTool(this.#guardfile.controls.extract, grant.tool);
    if (extraction) return this.#extracted(call, extraction);
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
      // Nesting past the bound takes an opening and a closing bracket per level: a
      // shorter text cannot, and is not walked.
      if (text.length > 2 * MAX_ANSWER_DEPTH && nestsDeeperThan(result, MAX_ANSWER_DEPTH)) {
        throw new WeirError(
          "upstream_too_deep",
          `${what} answered JSON nested deeper than ${MAX_ANSWER_DEPTH} levels; refused`,
          { status: 502 },
        );
      }
      if (this.#failsWhen(grant, result, call.args)) {
        throw new WeirError("upstream_failed", `${what} matched fail-when ${grant.failWhen}`, {
          status: 502,
        });
      }
      // Redaction only writes "[redacted]"; the walk that cleans text runs only
      // when the answer's text could decode to something to clean.
      result = redactor.redactOwned(result);
      if (!jsonTextIsClean(text)) result = cleanDeep(result);
    }
    if (this.#rejectEmpty.has(grant.tool) && (answer.body.length === 0 || isEmpty(result))) {
      throw new WeirError(
        "reject_empty",
        `${what} answered nothing (${
          answer.body.length === 0 ? "an empty body" : JSON.stringify(result)
        }); an empty answer is not treated as "none found"`,
        { status: 502 },
      );
    }
    return envelopeResult(envelope(result, answer.body.length));
  }

  /** An answer projected by `extract` (a PDF's text, a feed's entries), with its coverage. */
  async #extracted(call: SpecCall, extraction: Extraction): Promise<CallToolResult> {
    const { timeoutMs } = this.#options.limits;
    call.phase(`extracting the answer (${extraction.as})`, true);
    const parsed = await extract(
      call.tool,
      extraction,
      call.answer!.body,
      call.remainingMs(),
      call.signal,
      timeoutMs,
    );
    // Cleaned before its JSON text is written (as sql and HTTP answers are), so the
    // text block says what structuredContent says: a feed's CDATA or a PDF's text may
    // hold control characters, which the text would carry as JSON escapes.
    const env = envelope(cleanDeep(call.redactor.redactOwned(parsed.result)), 0);
    env.coverage[extraction.as === "pdf-text" ? "pages" : "entries"] = {
      shown: parsed.shown,
      total: parsed.total,
    };
    return envelopeResult(env);
  }

  /** Whether the grant's `fail-when` holds for an answer (its inputs visible as `$name`, absent as null). */
  #failsWhen(grant: Grant, answer: unknown, args: Record<string, unknown>): boolean {
    const predicate = this.#failWhen.get(grant.tool);
    if (!predicate) return false;
    const scope: Record<string, unknown> = {};
    for (const name of grantInputNames(grant)) {
      scope[name] = Object.hasOwn(args, name) ? args[name] : null;
    }
    return predicate(answer, scope);
  }
}

/**
 * The tool result for an envelope: its JSON as text and as `structuredContent`
 * (the core does not walk it again when that text shows it clean: src/mcp/results.ts).
 */
function envelopeResult(env: Envelope): CallToolResult {
  return structuredResult(env as unknown as JsonObject);
}
