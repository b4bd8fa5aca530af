/**
 * MCP 2025-11-25 "Tasks" carried through the wrap (both forms): what the
 * core's task handling (src/mcp/tasks.ts) asks of the wrap mode.
 *
 * - {@link sendCall}: the send of a wrapped call. A task-augmented call
 *   (`CallContext.task`, after the same checks, pins, confirmation and
 *   rate limit as any call) goes to the MCP server as a task-augmented
 *   `tools/call`, and its `Task` comes back (`createdTaskResult`); a plain
 *   call of a tool whose definition requires tasks is run as a task upstream
 *   and its result awaited (`tasks/result`), so a 2026-07-28 caller, which
 *   has no tasks, can still call it (its cancellation cancels the task).
 * - {@link upstreamTasks}: `tasks/get`, `tasks/result`, `tasks/cancel`,
 *   relayed once each while the task's tool is still served (`tasks/get` and
 *   `tasks/result` of a tool now a stub are refused as its call would be;
 *   `tasks/cancel` always goes); what comes back is redacted of what a call's
 *   answer is (header secrets, the tool's secret pins, an exchanged token);
 *   the result of `tasks/result` is answered as a call's is (`answer.ts`:
 *   depth, redaction, clean text, `reject-empty`) and leaves one audit line
 *   as a call does; a cancellation leaves one too. The core has already
 *   bound the task id to the caller (a signed handle), so a caller never
 *   names another's task.
 * - {@link tasksCarried}: weir offers tasks only when it can carry them: the
 *   MCP server speaks 2025-11-25 (2026-07-28 moved tasks to an extension
 *   neither weir nor the official SDK carries) and a served tool allows them.
 *
 * @module
 */
import { ErrorCode, type JsonObject, McpError } from "../mcp/jsonrpc.ts";
import { type CallContext, createdTaskResult, type Logger, type TaskHost } from "../mcp/options.ts";
import type { CallToolResult, ToolSpec } from "../mcp/types.ts";
import type { Redactor } from "../guard/secrets.ts";
import { auditCall, type AuditOutcome } from "../guard/pipeline.ts";
import type { Progress, UpstreamConnection } from "../mcp_upstream/connection.ts";
import { UpstreamFailure, UpstreamRefused } from "../mcp_upstream/errors.ts";
import { withoutHop } from "../mcp_upstream/hop.ts";
import type { ServedTool } from "../mcp_upstream/decision.ts";
import type { EntryState } from "./entries.ts";
import { type CallerIdentity, type CallerRoute, callerRoute } from "./identity.ts";
import { wrapAnswer } from "./answer.ts";
import { kindOf } from "../errors/kinds.ts";
import { callSecrets, type UpstreamHost } from "./host.ts";

/** A definition's `execution.taskSupport` (`forbidden` when absent). */
function taskSupport(definition: ToolSpec): string {
  const support = (definition as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
  return typeof support === "string" ? support : "forbidden";
}

/**
 * Send one wrapped call (see the module doc).
 * @param decision the tool's decision: the MCP server's definition and what weir lists
 * @param options the call's progress sink and its route (the caller's exchanged token and session)
 * @throws what {@link UpstreamConnection.callTool} and {@link UpstreamConnection.task} throw
 */
export async function sendCall(
  connection: UpstreamConnection,
  name: string,
  args: JsonObject,
  decision: Pick<ServedTool, "definition" | "served">,
  ctx: CallContext,
  options: { onProgress?: (p: Progress) => void } & Partial<CallerRoute>,
): Promise<CallToolResult> {
  const route = options.headers ? { headers: options.headers, caller: options.caller } : {};
  if (ctx.task) {
    const params = { name, arguments: args, task: ctx.task };
    const created = await connection.task("tools/call", params, { signal: ctx.signal, ...route });
    return createdTaskResult(created.task as JsonObject);
  }
  if (taskSupport(decision.definition) !== "required") {
    return await connection.callTool(name, args, {
      signal: ctx.signal,
      definition: decision.served,
      onProgress: options.onProgress,
      ...route,
    });
  }
  const params = { name, arguments: args, task: {} };
  const created = await connection.task("tools/call", params, route);
  const taskId = (created.task as JsonObject).taskId as string;
  const cancel = () => void connection.task("tasks/cancel", { taskId }, route).catch(() => {});
  ctx.signal.addEventListener("abort", cancel, { once: true });
  try {
    const result = await connection.task("tasks/result", { taskId }, {
      signal: ctx.signal,
      ...route,
    });
    // The upstream's protocol _meta (its related-task id) is the hop's, not the tool's result.
    return withoutHop(result as unknown as CallToolResult);
  } finally {
    ctx.signal.removeEventListener("abort", cancel);
  }
}

/**
 * Whether weir offers tasks for this surface: the MCP server speaks
 * 2025-11-25 and a served tool's definition allows tasks.
 */
export function tasksCarried(
  connection: UpstreamConnection,
  states: readonly EntryState[],
): boolean {
  return connection.revision === "2025-11-25" &&
    states.some((s) => s.kind === "served" && taskSupport(s.spec) !== "forbidden");
}

/** What {@link upstreamTasks} needs besides the connection. */
export interface UpstreamTasksOptions {
  log: Logger;
  /** The caller's identity upstream (token exchange), as on the call that made the task. */
  identity?: CallerIdentity;
  /** Served tools whose empty result is an error (`reject-empty`). */
  rejectEmpty?: readonly string[];
}

/** The wrap mode's {@link TaskHost} (see the module doc). */
export function upstreamTasks(
  connection: UpstreamConnection,
  host: UpstreamHost,
  options: UpstreamTasksOptions,
): TaskHost {
  const { log, identity } = options;
  const rejectEmpty = new Set(options.rejectEmpty ?? []);
  const relay = async (
    method: "tasks/get" | "tasks/result" | "tasks/cancel",
    taskId: string,
    tool: string,
    ctx: CallContext,
  ): Promise<{ answer: JsonObject; redactor: Redactor }> => {
    if (method !== "tasks/cancel") {
      // A tool no longer served (a stub now) is refused as its call would be (host.ts servedState).
      try {
        host.servedState(tool);
      } catch (error) {
        throw new McpError(ErrorCode.InvalidParams, `${method}: ${(error as Error).message}`);
      }
    }
    // What a call of the tool would redact: header secrets, its secret pins (host.ts), and
    // the exchanged token (added by callerRoute).
    const r = callSecrets(host, tool);
    // The caller's identity upstream, as on the call that made the task (token exchange),
    // on the caller's own session where it has one (where the task lives).
    const route = await callerRoute(identity, tool, identity?.scopesOf(tool) ?? [], ctx, r, log);
    try {
      const raw = await connection.task(method, { taskId }, { signal: ctx.signal, ...route });
      // A result's protocol _meta is the hop's (the core adds the caller's related-task).
      const answer = method === "tasks/result"
        ? withoutHop(raw as unknown as CallToolResult) as unknown as JsonObject
        : raw;
      return { answer, redactor: r };
    } catch (error) {
      throw relayed(error, method, r);
    }
  };
  const redacted = ({ answer, redactor }: { answer: JsonObject; redactor: Redactor }) =>
    (redactor.active ? redactor.deep(answer) : answer) as JsonObject;
  return {
    get: async (taskId, tool, ctx) => redacted(await relay("tasks/get", taskId, tool, ctx)),
    cancel: async (taskId, tool, ctx) => {
      const started = performance.now();
      const task = redacted(await relay("tasks/cancel", taskId, tool, ctx));
      // The pipeline's one audit-line builder (stage (g)), as for the call that made the task.
      auditCall(log, tool, ctx, started, "task_cancelled", 200);
      return task;
    },
    result: async (taskId, tool, ctx) => {
      const started = performance.now();
      const { answer, redactor } = await relay("tasks/result", taskId, tool, ctx);
      const audit = (outcome: AuditOutcome, status: number) =>
        auditCall(log, tool, ctx, started, outcome, status);
      let result: CallToolResult;
      try {
        result = wrapAnswer(
          tool,
          answer as unknown as CallToolResult,
          redactor,
          rejectEmpty.has(tool),
        );
      } catch (error) {
        // The call's own refusal (too deep, reject-empty): the core answers it as a tool error.
        audit(kindOf(error) ?? "tool_error", (error as { status?: number }).status ?? 502);
        throw error;
      }
      audit(result.isError ? "tool_error" : "ok", result.isError ? 500 : 200);
      return result;
    },
  };
}

/** An upstream failure of a task request as the caller sees it: its JSON-RPC error, or ours. */
function relayed(error: unknown, method: string, redactor: Redactor): McpError {
  const text = redactor.text(String((error as Error)?.message ?? error)).slice(0, 512);
  if (error instanceof UpstreamRefused && error.rpcCode !== 0) {
    return new McpError(error.rpcCode, `the upstream answered ${method}: ${text}`);
  }
  const kind = error instanceof UpstreamFailure ? error.code : "upstream_error";
  return new McpError(ErrorCode.InternalError, `${kind}: ${method}: ${text}`);
}
