/**
 * The guard's controls around another host's dispatch: a guardfile that wraps
 * an MCP server puts `withhold`, the info tool, `reject-empty-argument`,
 * `confirm`, `cache`, `rate-limit` and `reject-empty` on the wrapped tools by
 * their served names, with the same pieces spec mode uses
 * (src/guard/controls.ts, confirm.ts, rate_limit.ts) and the same codes.
 *
 * One call, in order: a withheld stub refuses (`verb_withheld`, 403); the
 * info tool answers from the surface; a blank argument named by
 * `reject-empty-argument` is refused (400); a `confirm` gate asks a person
 * (2026-07-28 `input_required`, 2025-11-25 elicitation over stdio); a
 * cached answer is returned; a `rate-limit` slot is taken (429 past the
 * wait); then the inner dispatch runs (the wrapped MCP server's call), an
 * empty result is refused when `reject-empty` names the tool (502), and a
 * successful one is cached. This layer audits what it decides itself (its
 * refusals, a cache hit, the info tool); the inner dispatch audits the calls
 * it forwards.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import {
  type CallContext,
  type Dispatch,
  InputRequiredError,
  type Logger,
  type ToolAccess,
  ToolError,
} from "../mcp/server.ts";
import type { CallToolResult, ToolSpec } from "../mcp/types.ts";
import type { RateLimit, Withhold } from "../guardfile/model.ts";
import { checkBlankArguments, isEmpty, ResponseCache } from "../guard/controls.ts";
import { ConfirmGate } from "../guard/confirm.ts";
import { rateLimiter } from "../guard/rate_limit.ts";
import type { ValueResolver } from "../guard/values.ts";
import { StateKeys } from "../mcp/signed_state.ts";
import { withheldCallError, withheldTool } from "../guard/tools.ts";
import { auditAllowed, auditRefused, subjectOf } from "../ops/audit.ts";
import { kindOf, ruleOfError, WeirError } from "../errors/kinds.ts";

/** The controls, by served tool name (a guardfile's `McpWrapControls`). */
export interface WrapControls {
  /** Tool -> the question a person answers before each call. */
  confirm: Readonly<Record<string, string>>;
  /** Tool -> milliseconds a successful answer is reused. */
  cache: Readonly<Record<string, number>>;
  /** Tools whose empty result is an error. */
  rejectEmpty: readonly string[];
  /** Tool -> argument names (served) refused when present but blank. */
  rejectEmptyArguments: Readonly<Record<string, readonly string[]>>;
  /** One bucket for every forwarded call. */
  rateLimit?: RateLimit;
}

/** Options of {@link controlledDispatch}. */
export interface ControlledOptions {
  /** The server name (the default Redis bucket). */
  server: string;
  controls: WrapControls;
  /** Withheld stubs (listed by {@link controlledTools}, refused here). */
  withholds: readonly Withhold[];
  /**
   * The info tool's name and what it answers (the surface now, as the caller
   * whose tools `access` narrows may list it: `undefined` for every tool), if served.
   */
  info?: { name: string; answer: (access: ToolAccess | undefined) => JsonObject };
  /** How the rate-limit store's URL is read. */
  resolver: ValueResolver;
  log: Logger;
  /** Signs a confirmation's state (the server's key service). */
  stateKeys?: StateKeys;
  /** Longest wait for a rate-limit slot, in ms (0: none). */
  waitMs: number;
  /** Each caller's answers are its own (token exchange): the cache is keyed by caller too. */
  perCaller?: boolean;
}

/** The tools this layer itself lists: the withheld stubs and the info tool. */
export function controlledTools(
  options: Pick<ControlledOptions, "withholds" | "info">,
): ToolSpec[] {
  const tools = options.withholds.map(withheldTool);
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

/**
 * An empty tool result, as `reject-empty` means it for an MCP answer: no
 * content block with anything in it (a text block with only blanks counts as
 * empty) and no `structuredContent`, or an empty one (`{}`).
 */
export function isEmptyResult(result: CallToolResult): boolean {
  const blocks = result.content ?? [];
  const contentEmpty = blocks.every((b) =>
    b.type === "text" && typeof b.text === "string" && b.text.trim() === ""
  );
  const structured = result.structuredContent;
  return contentEmpty && (structured === undefined || isEmpty(structured));
}

/**
 * Wrap a dispatch in the controls (see the module doc).
 * @param inner the wrapped MCP server's dispatch, by served name
 */
export function controlledDispatch(inner: Dispatch, options: ControlledOptions): Dispatch {
  const { controls, log } = options;
  const withheld = new Map(options.withholds.map((w) => [w.tool, w]));
  const gate = new ConfirmGate(controls.confirm, options.stateKeys ?? new StateKeys(), log);
  const cache = new ResponseCache();
  const bucket = controls.rateLimit
    ? rateLimiter(controls.rateLimit, options.server, options.resolver, log)
    : undefined;
  const rejectEmpty = new Set(controls.rejectEmpty);
  return async (name: string, args: Record<string, unknown>, ctx: CallContext) => {
    const started = performance.now();
    const subject = subjectOf(ctx.auth);
    const w = withheld.get(name);
    if (w) {
      auditRefused(log, { rule: "withheld", status: 403, tool: name, subject });
      throw withheldCallError(name, w);
    }
    if (options.info && name === options.info.name) {
      const answer = options.info.answer(ctx.tools);
      auditAllowed(log, {
        tool: name,
        outcome: "ok",
        status: 200,
        durationMs: performance.now() - started,
        subject,
      });
      return {
        content: [{ type: "text", text: JSON.stringify(answer) }],
        structuredContent: answer,
      };
    }
    const ttl = controls.cache[name];
    let key = "";
    try {
      checkBlankArguments(name, controls.rejectEmptyArguments[name] ?? [], args);
      if (gate.gates(name)) await gate.confirm(name, args, ctx);
      // A task's answer is its Task, not a result to reuse (src/wrap/tasks.ts).
      if (ttl && !ctx.task) {
        // With the caller's identity upstream, the upstream may answer each caller otherwise.
        key = options.perCaller
          ? `${ResponseCache.key(args)}\n${ctx.caller ?? ""}`
          : ResponseCache.key(args);
        const hit = cache.get(name, key);
        if (hit) {
          auditAllowed(log, {
            tool: name,
            outcome: "cache_hit",
            status: 200,
            durationMs: performance.now() - started,
            subject,
          });
          return hit;
        }
      }
      await bucket?.take(options.waitMs > 0 ? options.waitMs : Infinity, ctx.signal);
    } catch (error) {
      if (error instanceof InputRequiredError) {
        auditAllowed(log, {
          tool: name,
          outcome: "confirmation_asked",
          status: 200,
          durationMs: performance.now() - started,
          subject,
        });
        throw error;
      }
      if (error instanceof ToolError) {
        const rule = ruleOfError(error);
        if (rule) auditRefused(log, { rule, status: error.status, tool: name, subject });
        else {
          auditAllowed(log, {
            tool: name,
            outcome: kindOf(error) ?? "tool_error",
            status: error.status,
            durationMs: performance.now() - started,
            subject,
          });
        }
      }
      throw error;
    }
    const result = await inner(name, args, ctx);
    if (rejectEmpty.has(name) && !ctx.task && !result.isError && isEmptyResult(result)) {
      auditAllowed(log, {
        tool: name,
        outcome: "reject_empty",
        status: 502,
        durationMs: performance.now() - started,
        subject,
      });
      throw new WeirError(
        "reject_empty",
        `${name} answered nothing (no content, no structuredContent); an empty answer is not ` +
          `treated as "none found"`,
      );
    }
    if (ttl && !ctx.task && !result.isError) cache.set(name, key, ttl, result);
    return result;
  };
}
