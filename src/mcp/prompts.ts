/**
 * `prompts/get`: a listed prompt, its arguments checked against the schema
 * derived from its declared arguments and reduced to the declared names, the
 * host's reader run and its messages cleaned.
 *
 * @module
 */
import type { PreparedPrompt } from "./catalog.ts";
import { ErrorCode, McpError } from "./jsonrpc.ts";
import { MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "./depth.ts";
import { illFormedAt, illFormedMessage } from "./text.ts";
import { InputRequiredError, NotFoundError } from "./errors.ts";
import { inputRequiredAnswer, prepareInput } from "./input_required.ts";
import type { CallContext } from "./options.ts";
import { cleanOut, clip, isObject, pick } from "./results.ts";
import type { ServerSetup } from "./setup.ts";

/**
 * `prompts/get`.
 * @throws {McpError} `-32602` for an unknown prompt, arguments that are not an object, nest too
 *   deeply or fail the prompt's schema, or a reader's {@link NotFoundError}
 */
export async function getPrompt(
  s: ServerSetup,
  params: Record<string, unknown>,
  call: CallContext,
): Promise<object | { json: string }> {
  const name = params.name;
  // The audit line of a refusal (src/ops/audit.ts shape), never an argument value.
  const refuse = (rule: "schema" | "unknown_prompt" | "ill_formed_text", error: McpError) => {
    s.log({
      level: "warn",
      event: "refused",
      decision: "refuse",
      rule,
      status: rule === "unknown_prompt" ? 404 : 400,
      ...(typeof name === "string" ? { prompt: clip(name).slice(0, 64) } : {}),
    });
    return error;
  };
  if (typeof name !== "string") {
    throw refuse(
      "schema",
      new McpError(ErrorCode.InvalidParams, "prompts/get needs params.name (a string)"),
    );
  }
  const prompt: PreparedPrompt | undefined = (await s.catalog()).promptsByName.get(name);
  if (!prompt) {
    throw refuse(
      "unknown_prompt",
      new McpError(ErrorCode.InvalidParams, `Unknown prompt: "${clip(name)}"`, {
        name: clip(name),
      }),
    );
  }
  const args = params.arguments ?? {};
  if (!isObject(args)) {
    throw refuse(
      "schema",
      new McpError(ErrorCode.InvalidParams, "prompts/get params.arguments must be an object"),
    );
  }
  if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
    throw refuse(
      "schema",
      new McpError(ErrorCode.InvalidParams, `Arguments for prompt "${name}" nest too deeply`),
    );
  }
  const illFormed = illFormedAt(args);
  if (illFormed) {
    throw refuse(
      "ill_formed_text",
      new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for prompt "${name}": ${illFormedMessage(illFormed)}`,
      ),
    );
  }
  const problems = prompt.validate(args);
  if (problems.length > 0) {
    throw refuse(
      "schema",
      new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for prompt "${name}": ${problems.join("; ")}`,
        { name, problems },
      ),
    );
  }
  prepareInput(call, params);
  try {
    const result = await s.options.getPrompt!(
      name,
      pick(args, prompt.declared) as Record<string, string>,
      call,
    );
    if (!isObject(result) || !Array.isArray(result.messages)) {
      throw new Error(`prompt "${name}" reader returned no messages list`);
    }
    return cleanOut(result);
  } catch (error) {
    if (error instanceof InputRequiredError) {
      if (call.input) return inputRequiredAnswer(s, error);
      throw new McpError(
        ErrorCode.InvalidParams,
        `Prompt "${name}" needs input from the client (${error.message}), which cannot be ` +
          `asked for under this revision; use 2026-07-28`,
        { name },
      );
    }
    if (error instanceof NotFoundError) {
      throw new McpError(ErrorCode.InvalidParams, `Prompt "${name}" could not be rendered`, {
        name,
        reason: error.message,
      });
    }
    throw error;
  }
}
