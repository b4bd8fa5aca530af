/**
 * `tools/call`, and the same call from the HTTP tool API: the tool the caller
 * may see, its arguments checked (depth, numbers a double cannot carry, the
 * advertised input schema) and handed on whole, as validated, to the host's
 * dispatch run, and its answer checked against what the tool advertises and
 * cleaned, or its failure turned into the answer the revision expects.
 *
 * @module
 */
import type { PreparedCatalog, PreparedTool } from "./catalog.ts";
import { ErrorCode, type JsonObject, McpError } from "./jsonrpc.ts";
import { createdTask, runsAsTask, taskAnswer, taskMetadata } from "./tasks.ts";
import { ERAS, MODERN_VERSION } from "./revisions.ts";
import { cleanText, illFormedAt, illFormedMessage, isRawJson } from "./text.ts";
import { isShallowAndExact, MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "./depth.ts";
import { InputRequiredError, ToolError } from "./errors.ts";
import { type CallContext, type ToolAccess, traceContextOf } from "./options.ts";
import { cleanResult, clip, errorResult, isObject, isThenable } from "./results.ts";
import { RequestCall } from "./session.ts";
import type { ServerSetup } from "./setup.ts";
import { inputRequiredAnswer, prepareInput } from "./input_required.ts";
import type { CallToolResult } from "./types.ts";

/** What the tool API gets back from {@link McpServer.callTool}. */
export interface ToolCallOutcome {
  /** 200 on success; 400 bad arguments; 404 unknown tool; else the tool's error status. */
  status: number;
  /**
   * When it failed, the kind of failure: `unknown_tool`, `invalid_arguments`,
   * `invalid_params` (the host threw an `McpError` with `-32602`),
   * `input_required`, `malformed_result`, `cancelled`, `internal_error`, or
   * the `kind` a {@link ToolError} carries (weir's `WeirError` does; else, and
   * for a result the tool itself marked `isError`, `tool_error`).
   */
  code?: string;
  /** The tool's result, or an error result saying what was refused. */
  result: CallToolResult;
  /** 2026-07-28 MCP only: the tool asked for input; the answer is an `InputRequiredResult`. */
  inputRequired?: InputRequiredError;
}

const NO_SIGNAL = new AbortController().signal;

/**
 * Call a tool for the HTTP tool API (`McpServer.callTool`): the same checks and
 * dispatch as `tools/call`, under 2026-07-28 rules, with no input requests.
 */
export async function callToolApi(
  s: ServerSetup,
  name: string,
  args: unknown,
  ctx: { signal?: AbortSignal; auth?: unknown; headers?: Headers },
): Promise<ToolCallOutcome> {
  const around = s.options.around;
  if (!around) return await callToolApiUnwrapped(s, name, args, ctx);
  // The same wrapper as a tools/call (a server span, its duration), told what came through
  // the tool API; a refusal of the name or the arguments fails it as invalid params would.
  let outcome: ToolCallOutcome | undefined;
  try {
    await around(
      {
        method: "tools/call",
        name,
        era: "modern",
        auth: ctx.auth,
        toolApi: true,
        ...traceContextOf({}, ctx.headers),
      },
      async () => {
        outcome = await callToolApiUnwrapped(s, name, args, ctx);
        if (outcome.status === 400 || outcome.status === 404) {
          throw new McpError(ErrorCode.InvalidParams, outcome.code ?? "invalid_params");
        }
        return outcome.result;
      },
    );
  } catch (error) {
    if (!outcome) throw error;
  }
  return outcome!;
}

async function callToolApiUnwrapped(
  s: ServerSetup,
  name: string,
  args: unknown,
  ctx: { signal?: AbortSignal; auth?: unknown },
): Promise<ToolCallOutcome> {
  const catalog = await s.catalog();
  const access = s.toolAccess(ctx.auth);
  const tool = visibleTool(catalog, name, access);
  if (!tool) {
    refused(s, "unknown_tool", 404, name);
    return {
      status: 404,
      code: "unknown_tool",
      result: errorResult(`Unknown tool: "${clip(name)}"`),
    };
  }
  const call: CallContext = {
    signal: ctx.signal ?? NO_SIGNAL,
    era: "modern",
    protocolVersion: MODERN_VERSION,
    auth: ctx.auth,
  };
  if (access) call.tools = access;
  const caller = s.callerOf(ctx.auth);
  if (caller !== undefined) call.caller = caller;
  return await runTool(s, tool, args, call);
}

/**
 * The audit line of a refusal the core decides (same shape as
 * `src/ops/audit.ts`): the rule, the status and the tool name, never a value.
 */
function refused(
  s: ServerSetup,
  rule: "schema" | "unknown_tool" | "ill_formed_text",
  status: number,
  tool: string,
): void {
  s.log({
    level: "warn",
    event: "refused",
    decision: "refuse",
    rule,
    status,
    tool: tool.slice(0, 64),
  });
}

/** Synchronous when the catalog is static and the tool answers synchronously. */
export function toolsCall(
  s: ServerSetup,
  params: Record<string, unknown>,
  call: CallContext,
): object | Promise<object> {
  if (!s.static) {
    return s.catalog().then((catalog) => toolsCallIn(s, catalog, params, call));
  }
  return toolsCallIn(s, s.static, params, call);
}

function toolsCallIn(
  s: ServerSetup,
  catalog: PreparedCatalog,
  params: Record<string, unknown>,
  call: CallContext,
): object | Promise<object> {
  const name = params.name;
  if (typeof name !== "string") {
    throw new McpError(ErrorCode.InvalidParams, "tools/call needs params.name (a string)");
  }
  const args = params.arguments;
  if (args !== undefined && !isObject(args)) {
    throw new McpError(ErrorCode.InvalidParams, "tools/call params.arguments must be an object");
  }
  const access = s.toolAccess(call.auth);
  const tool = visibleTool(catalog, name, access);
  if (!tool) {
    refused(s, "unknown_tool", 404, name);
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: "${clip(name)}"`, {
      name: clip(name),
    });
  }
  if (access) call.tools = access;
  if (runsAsTask(s, tool, params, call)) {
    // A task: the same checks and dispatch, which starts it (src/mcp/tasks.ts).
    call.task = taskMetadata(params.task);
    return Promise.resolve(runTool(s, tool, args ?? {}, call)).then((outcome) =>
      taskAnswer(s, name, outcome.result, call)
    );
  }
  let answered = false;
  if (call instanceof RequestCall) {
    const token = (params._meta as Record<string, unknown> | undefined)?.progressToken;
    const notify = isProgressToken(token) ? call.notifier() : undefined;
    if (notify) {
      let last = -Infinity;
      call.progress = (progress, total, message) => {
        if (answered || !(progress > last) || !Number.isFinite(progress)) return;
        last = progress;
        const p: JsonObject = { progressToken: token as string | number, progress };
        if (typeof total === "number" && Number.isFinite(total)) p.total = total;
        if (typeof message === "string") p.message = cleanText(message);
        notify({ jsonrpc: "2.0", method: "notifications/progress", params: p });
      };
    }
    if (call.era === "modern") prepareInput(call, params);
    else {
      const session = call.session;
      if (session?.send && isObject(session.clientCapabilities?.elicitation)) {
        call.elicit = (p, signal) => session.request("elicitation/create", p, signal);
      }
    }
  }
  const outcome = runTool(s, tool, args ?? {}, call);
  if (!(outcome instanceof Promise)) {
    answered = true;
    return callAnswer(s, outcome, call);
  }
  return outcome.then((o) => {
    answered = true;
    return callAnswer(s, o, call);
  });
}

/** The `tools/call` result of a tool's outcome, as the request's revision carries it. */
function callAnswer(
  s: ServerSetup,
  { result, inputRequired }: ToolCallOutcome,
  call: CallContext,
): object {
  if (inputRequired) return inputRequiredAnswer(s, inputRequired);
  if (
    ERAS[call.era].structuredContentIsObject && "structuredContent" in result &&
    !isObject(result.structuredContent)
  ) {
    const { structuredContent: _, ...carried } = result;
    return carried;
  }
  return result;
}

/** The listed tool `name`, if the caller's {@link ToolAccess} (`access`) allows it. */
function visibleTool(
  catalog: PreparedCatalog,
  name: string,
  access: ToolAccess | undefined,
): PreparedTool | undefined {
  const tool = catalog.toolsByName.get(name);
  if (!tool) return undefined;
  return access && !access.allows(name) ? undefined : tool;
}

/**
 * Check the arguments and run the tool: synchronous when the tool's
 * dispatch returns a plain result, a promise when it returns one.
 */
function runTool(
  s: ServerSetup,
  tool: PreparedTool,
  args: unknown,
  call: CallContext,
): ToolCallOutcome | Promise<ToolCallOutcome> {
  const refusal = argumentsRefusal(s, tool, args);
  if (refusal) return refusal;
  const name = tool.wire.name;
  // Faithful arguments: the object that validated, every key and value as
  // received (a schema admits what it admits: additionalProperties,
  // patternProperties, $ref, composition). Never a trimmed copy.
  const passed = tool.takesArguments ? args as JsonObject : {};
  let answer: CallToolResult | Promise<CallToolResult>;
  try {
    answer = s.options.dispatch!(name, passed, call);
  } catch (error) {
    return toolFailed(s, error, name, call);
  }
  if (isThenable<CallToolResult>(answer)) {
    return Promise.resolve(answer).then(
      (result) => toolAnswered(s, tool, result, call),
      (error) => toolFailed(s, error, name, call),
    );
  }
  return toolAnswered(s, tool, answer, call);
}

/**
 * Why the arguments of a call are refused (an error outcome, its audit line
 * written), or `undefined` when they pass: an object, nested within bounds,
 * exact numbers, well-formed text, valid against the tool's schema.
 */
function argumentsRefusal(
  s: ServerSetup,
  tool: PreparedTool,
  args: unknown,
): ToolCallOutcome | undefined {
  const name = tool.wire.name;
  if (!isObject(args)) {
    refused(s, "schema", 400, name);
    return {
      status: 400,
      code: "invalid_arguments",
      result: errorResult(`Arguments for tool "${name}" must be an object`),
    };
  }
  // Most arguments are shallow with plain numbers: one read-only walk says
  // so, and the two exact checks below run only when it cannot.
  const plain = isShallowAndExact(args, MAX_ARGUMENT_DEPTH);
  if (!plain && nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
    refused(s, "schema", 400, name);
    return {
      status: 400,
      code: "invalid_arguments",
      result: errorResult(
        `Invalid arguments for tool "${name}": they nest deeper than ${MAX_ARGUMENT_DEPTH} levels`,
      ),
    };
  }
  const inexact = plain ? null : roundedIntegerAt(args);
  if (inexact !== null) {
    refused(s, "schema", 400, name);
    return {
      status: 400,
      code: "invalid_arguments",
      result: errorResult(
        `Invalid arguments for tool "${name}": the number at ${inexact} is an integer beyond ` +
          `2^53 or beyond the largest double (1e400), or has more digits than a double holds, ` +
          `which cannot be passed on exactly; ` +
          `send it as a string`,
      ),
    };
  }
  // Text that is not well-formed Unicode is refused by where it is: no host
  // would pass it on (or write it) as the caller sent it.
  const illFormed = plain ? null : illFormedAt(args);
  if (illFormed !== null) {
    refused(s, "ill_formed_text", 400, name);
    return {
      status: 400,
      result: errorResult(`Invalid arguments for tool "${name}": ${illFormedMessage(illFormed)}`),
    };
  }
  let problems = tool.validate(args);
  if (problems.length > 0) {
    const held = s.options.heldArguments?.(name);
    if (held && held.size > 0) problems = heldFirst(problems, args, held);
    // The problems may quote argument values: the log names the rule only.
    refused(s, "schema", 400, name);
    return {
      status: 400,
      code: "invalid_arguments",
      result: errorResult(`Invalid arguments for tool "${name}": ${problems.join("; ")}`),
    };
  }
  return undefined;
}

/** What a tool returned, checked against what it advertises and cleaned. */
function toolAnswered(
  s: ServerSetup,
  tool: PreparedTool,
  result: CallToolResult,
  call: CallContext,
): ToolCallOutcome {
  const name = tool.wire.name;
  try {
    if (!isObject(result) || !Array.isArray(result.content)) {
      s.log({ level: "error", event: "malformed_tool_result", tool: name });
      return {
        status: 500,
        code: "malformed_result",
        result: errorResult(`Tool "${name}" returned a malformed result`),
      };
    }
    if (result.isError) {
      return { status: 500, code: "tool_error", result: cleanResult(result, name) };
    }
    // A task started (src/mcp/tasks.ts): its result comes later, through tasks/result.
    if (call.task && createdTask(result)) return { status: 200, result };
    if (tool.validateOutput) {
      // One schema, one source: what outputSchema advertises, a success delivers.
      let problems = "structuredContent" in result
        ? tool.validateOutput(result.structuredContent)
        : ["no structuredContent"];
      if (problems.length > 0 && "structuredContent" in result) {
        // Numbers kept as their source text (JSON.rawJSON, src/mcp/text.ts) are
        // numbers to the schema: check the value as JSON.parse would read it.
        problems = tool.validateOutput(JSON.parse(JSON.stringify(result.structuredContent)));
      }
      if (problems.length > 0) {
        s.log({ level: "error", event: "malformed_tool_result", tool: name, problems });
        return {
          status: 500,
          code: "malformed_result",
          result: errorResult(
            `Tool "${name}" returned a result that does not match its outputSchema`,
          ),
        };
      }
    }
    const clean = cleanResult(result, name);
    return clean.isError
      ? { status: 500, code: "tool_error", result: clean }
      : { status: 200, result: clean };
  } catch (error) {
    return toolFailed(s, error, name, call);
  }
}

/** A tool that threw or rejected: its own answer, a cancellation, or a logged failure. */
function toolFailed(
  s: ServerSetup,
  error: unknown,
  name: string,
  call: CallContext,
): ToolCallOutcome {
  if (error instanceof McpError) {
    // A host that refuses the request itself (a requestState that does not
    // verify, say): over MCP the JSON-RPC error as it is; over the tool API,
    // the same message as a 400 (invalid params) or 500 refusal.
    if (call instanceof RequestCall) throw error;
    const invalid = error.code === ErrorCode.InvalidParams;
    return {
      status: invalid ? 400 : 500,
      code: invalid ? "invalid_params" : "internal_error",
      result: errorResult(error.message),
    };
  }
  if (error instanceof InputRequiredError) {
    if (call.input) return { status: 200, result: { content: [] }, inputRequired: error };
    return {
      status: 403,
      code: "input_required",
      result: errorResult(
        `Tool "${name}" needs input from the client (${error.message}), which cannot be ` +
          `asked for over this transport or revision; nothing was run`,
      ),
    };
  }
  if (error instanceof ToolError) {
    const result = errorResult(error.message);
    if (error.structuredContent) result.structuredContent = error.structuredContent;
    return { status: error.status, code: kindOf(error), result };
  }
  if (call.signal.aborted) {
    // A host that cancels with a ToolError (a server shutdown) says why.
    const reason = call.signal.reason;
    if (reason instanceof ToolError) {
      return { status: reason.status, code: kindOf(reason), result: errorResult(reason.message) };
    }
    return {
      status: 499,
      code: "cancelled",
      result: errorResult(`Tool "${name}" was cancelled`),
    };
  }
  s.log({
    level: "error",
    event: "tool_failed",
    tool: name,
    error: error instanceof Error ? error.message : String(error),
  });
  return {
    status: 500,
    code: "internal_error",
    result: errorResult(`Tool "${name}" failed with an internal error`),
  };
}

/**
 * The kind of a {@link ToolError}: its `kind` field when it has one (a
 * subclass that carries one, as weir's `WeirError` does, src/errors/kinds.ts),
 * a snake_case word; else `tool_error`.
 */
function kindOf(error: ToolError): string {
  const kind = (error as { kind?: unknown }).kind;
  return typeof kind === "string" && /^[a-z][a-z0-9_]{0,63}$/.test(kind) ? kind : "tool_error";
}

/**
 * Whether a number's shortest spelling needs more than 15 significant digits:
 * beyond 2^53, such a value is what JSON.parse made of longer digits (2^53+1
 * arrives as 9007199254740992), while `1e21` or `2e22` are exact as written.
 * (A number whose source text holds more digits than its double, such as
 * 1000000000000000000001 read as 1e21, is caught earlier: `parseMessage` and
 * `parseArguments` in src/mcp/jsonrpc.ts keep its text, and
 * {@link roundedIntegerAt} refuses it.)
 */
function longDigits(v: number): boolean {
  const mantissa = String(Math.abs(v)).split("e")[0].replace(".", "").replace(/0+$/, "");
  return mantissa.length > 15;
}

/**
 * Where (`a.b[2]`) an argument holds an integer beyond ±(2^53 - 1) that
 * JSON.parse has visibly rounded (see {@link longDigits}), a number beyond
 * the largest double that it made Infinity, or a number the parser kept as its
 * source text because a double cannot hold it: passing it on would send other
 * digits (or `null`, or the text "Infinity" in a path). `null` when there is none. Iterative; `args` is already
 * depth-bounded.
 */
function roundedIntegerAt(args: unknown): string | null {
  const stack: [unknown, string][] = [[args, ""]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v) && longDigits(v)) {
      return at || "(top)";
    }
    // JSON.parse reads a number past the largest double (1e400) as Infinity,
    // which no schema should take and JSON.stringify would send as null.
    if (typeof v === "number" && !Number.isFinite(v)) return at || "(top)";
    // A number JSON.parse rounded, kept as its source text by parseMessage.
    if (isRawJson(v)) return at || "(top)";
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) v.forEach((c, i) => stack.push([c, `${at}[${i}]`]));
    else {
      for (const [k, c] of Object.entries(v)) {
        stack.push([c, at ? `${at}.${clip(k)}` : clip(k)]);
      }
    }
  }
  return null;
}

/** A `progressToken` as MCP allows it: a string or an integer. */
function isProgressToken(token: unknown): boolean {
  return typeof token === "string" || (typeof token === "number" && Number.isInteger(token));
}

/**
 * A refusal's problems with each argument the server sets said as the host
 * says it (`McpServerOptions.heldArguments`), first, in place of "unexpected".
 */
function heldFirst(
  problems: string[],
  args: Record<string, unknown>,
  held: ReadonlyMap<string, string>,
): string[] {
  const said: string[] = [];
  const undeclared = new Set<string>();
  for (const key of Object.keys(args)) {
    const why = held.get(key);
    if (why === undefined) continue;
    said.push(`argument "${key}" ${why}`);
    undeclared.add(`unexpected argument "${key}" (not declared)`);
  }
  return said.length === 0 ? problems : [...said, ...problems.filter((p) => !undeclared.has(p))];
}
