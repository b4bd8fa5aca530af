/**
 * Tasks (MCP 2025-11-25, "Tasks", experimental): a task-augmented
 * `tools/call` answers a `CreateTaskResult` at once; `tasks/get`,
 * `tasks/result` and `tasks/cancel` follow the task. The host runs them
 * (`ServerOptions.tasks`, a {@link TaskHost}); this module decides what the
 * specification decides:
 *
 * - only 2025-11-25 has them (2026-07-28 moved tasks to an extension this
 *   core does not offer): `tasks` is advertised in `initialize`, never in
 *   `server/discover`, and `tasks/*` of a 2026-07-28 request is `-32601`;
 * - a tool's `execution.taskSupport` rules the call: a `task` on a tool
 *   without `optional` or `required` is `-32601`, as is a plain call of a
 *   `required` one; the arguments are checked against the schema first, as
 *   for any call;
 * - `params.task` is a `TaskMetadata`: an object whose `ttl`, when there,
 *   is a non-negative integer; the host gets `{ttl}` only (`-32602` for
 *   anything else), so no other field reaches an upstream;
 * - a task id is bound to the caller that created it: clients see a handle
 *   signed by the server's state keys (`StateKeys`, purpose `task`, bound to
 *   the caller as cursors are), so another caller's id is unknown to it
 *   (`-32602`, "Task not found"), on every replica holding the same keys;
 *   a caller whose access (`toolAccess`: a token's tools, OAuth scopes) no
 *   longer lets it call the task's tool, or a tool no longer listed, finds
 *   the task unknown too;
 * - a `ToolError` the host throws from `tasks/result` is the tool error
 *   result a call would have answered (the specification: "exactly what the
 *   underlying request would have returned");
 * - `tasks/result` carries `_meta["io.modelcontextprotocol/related-task"]`;
 *   `tasks/list` is not offered: listing a caller's tasks needs a record of
 *   who made which, shared by every replica, which signed handles avoid
 *   (the capability says so: `tasks.list` is absent).
 *
 * @module
 */
import { ErrorCode, type JsonObject, McpError } from "./jsonrpc.ts";
import { type CallContext, CREATED_TASK_META } from "./options.ts";
import { ToolError } from "./errors.ts";
import { errorResult } from "./results.ts";
import type { PreparedTool } from "./catalog.ts";
import type { ServerSetup } from "./setup.ts";
import type { CallToolResult } from "./types.ts";
import { cleanDeep } from "./text.ts";

/** The `_meta` key tying a `tasks/result` answer to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** The purpose task handles are signed for. */
const PURPOSE = "task";
/** MAC bytes of a handle (128 bits, as a cursor's). */
const MAC_BYTES = 16;

/** A tool's `execution.taskSupport` as listed (`forbidden` when absent). */
export function taskSupportOf(tool: PreparedTool): "forbidden" | "optional" | "required" {
  const support = (tool.wire as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
  return support === "optional" || support === "required" ? support : "forbidden";
}

/**
 * Whether this `tools/call` runs as a task: `true` for a task-augmented call
 * of a tool that allows it, `false` for a plain call of one that does not
 * require it.
 * @throws {McpError} `-32601` for a task on a tool without task support, or a
 *   plain call of a tool that requires one (MCP 2025-11-25, "Tool-Level Negotiation")
 */
export function runsAsTask(
  s: ServerSetup,
  tool: PreparedTool,
  params: Record<string, unknown>,
  call: CallContext,
): boolean {
  if (!s.options.tasks || call.era !== "legacy") return false;
  const support = taskSupportOf(tool);
  const name = tool.wire.name;
  if (params.task !== undefined) {
    if (support === "forbidden") {
      throw new McpError(
        ErrorCode.MethodNotFound,
        `tool "${name}" does not run as a task (its execution.taskSupport is not optional or ` +
          `required): call it without params.task`,
      );
    }
    return true;
  }
  if (support === "required") {
    throw new McpError(
      ErrorCode.MethodNotFound,
      `tool "${name}" runs only as a task (execution.taskSupport is required): call it with ` +
        `params.task, then tasks/get and tasks/result`,
    );
  }
  return false;
}

/**
 * The `task` of a task-augmented call as the host gets it: `{}` or `{ttl}`.
 * @throws {McpError} `-32602` when it is not an object or its `ttl` is not a
 *   non-negative integer (MCP 2025-11-25 `TaskMetadata`)
 */
export function taskMetadata(task: unknown): JsonObject {
  if (typeof task !== "object" || task === null || Array.isArray(task)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      "tools/call params.task must be an object (TaskMetadata: {ttl?})",
    );
  }
  const ttl = (task as { ttl?: unknown }).ttl;
  if (ttl === undefined) return {};
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl < 0) {
    throw new McpError(
      ErrorCode.InvalidParams,
      "tools/call params.task.ttl must be a non-negative integer (milliseconds)",
    );
  }
  return { ttl };
}

/** The `Task` a host's dispatch answered a task-augmented call with, if it did. */
export function createdTask(result: CallToolResult): JsonObject | undefined {
  const created = isObject(result?._meta) ? result._meta[CREATED_TASK_META] : undefined;
  return isObject(created) ? created : undefined;
}

/**
 * The answer of a task-augmented `tools/call` the host's dispatch ran
 * (`CallContext.task` set): the `CreateTaskResult`, or the call's error
 * result when it was refused on the way (its arguments, a confirmation
 * declined, a rate limit, a stub).
 */
export async function taskAnswer(
  s: ServerSetup,
  name: string,
  answer: CallToolResult,
  call: CallContext,
): Promise<object> {
  const created = createdTask(answer);
  if (!created) {
    if (answer.isError) return answer;
    throw new McpError(ErrorCode.InternalError, `tool "${name}" did not start a task`);
  }
  return { task: await handed(s, created, name, call) };
}

/** `tasks/get`, `tasks/result`, `tasks/cancel`: open the handle, ask the host, shape the answer. */
export async function taskMethod(
  s: ServerSetup,
  method: "tasks/get" | "tasks/result" | "tasks/cancel",
  params: Record<string, unknown>,
  call: CallContext,
): Promise<object> {
  const handle = params.taskId;
  if (typeof handle !== "string") {
    throw new McpError(ErrorCode.InvalidParams, `${method} needs params.taskId (a string)`);
  }
  const opened = await s.stateKeys.open(PURPOSE, handle, call.caller, MAC_BYTES);
  const payload = opened.ok ? opened.payload as { t?: unknown; n?: unknown } : undefined;
  if (!payload || typeof payload.t !== "string" || typeof payload.n !== "string") {
    // Another caller's handle, an altered one, or another server's: unknown here.
    throw new McpError(
      ErrorCode.InvalidParams,
      "Failed to retrieve task: Task not found (a task id is valid only for the caller that " +
        "created it, on a server holding the same state keys)",
    );
  }
  // The caller may still call the task's tool (its access can narrow: another token, scopes).
  const access = s.toolAccess(call.auth);
  if ((access && !access.allows(payload.n)) || !(await s.catalog()).toolsByName.has(payload.n)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Failed to retrieve task: Task not found (its tool "${payload.n}" is not one this ` +
        `caller may call now)`,
    );
  }
  const host = s.options.tasks!;
  if (method === "tasks/result") {
    let answer: CallToolResult;
    try {
      answer = await host.result(payload.t, payload.n, call);
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      // What the call would have answered: its tool error result.
      answer = errorResult(error.message);
      if (error.structuredContent) answer.structuredContent = error.structuredContent;
    }
    const result = cleanDeep(answer);
    const meta = isObject(result._meta) ? result._meta : {};
    return { ...result, _meta: { ...meta, [RELATED_TASK]: { taskId: handle } } } as CallToolResult;
  }
  const task = method === "tasks/get"
    ? await host.get(payload.t, payload.n, call)
    : await host.cancel(payload.t, payload.n, call);
  return await handed(s, task, payload.n, call);
}

/** A host's `Task` as the caller sees it: its id a handle bound to the caller, text clean. */
async function handed(
  s: ServerSetup,
  task: JsonObject,
  tool: string,
  call: CallContext,
): Promise<JsonObject> {
  if (!isObject(task) || typeof task.taskId !== "string" || typeof task.status !== "string") {
    throw new McpError(ErrorCode.InternalError, "the task the host answered is malformed");
  }
  const taskId = await s.stateKeys.seal(
    PURPOSE,
    { t: task.taskId, n: tool },
    call.caller,
    MAC_BYTES,
  );
  return cleanDeep({ ...task, taskId });
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
