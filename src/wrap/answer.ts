/**
 * What the wrap mode makes of the MCP server's result of a call before the
 * caller sees it (stage (f) of src/guard/pipeline.ts, `call.ts`), and of a
 * task's result (`tasks/result`, `tasks.ts`), one way for both: a result
 * nested too deep is refused, the secrets weir holds for the call (header
 * secrets, secret pins, an exchanged token) are redacted, text is cleaned,
 * and under `reject-empty` an empty result is refused.
 *
 * @module
 */
import type { CallToolResult } from "../mcp/types.ts";
import { cleanDeep } from "../mcp/text.ts";
import { WeirError } from "../errors/kinds.ts";
import { isEmpty } from "../guard/controls.ts";
import { MAX_ANSWER_DEPTH, nestsDeeperThan, type Redactor } from "../guard/secrets.ts";

/**
 * The result as the caller gets it (see the module doc).
 * @param tool the served name (for messages)
 * @param rejectEmpty the file's `reject-empty` names this tool
 * @throws {WeirError} `upstream_too_deep`, `reject_empty`
 */
export function wrapAnswer(
  tool: string,
  result: CallToolResult,
  redactor: Redactor,
  rejectEmpty: boolean,
): CallToolResult {
  if (nestsDeeperThan(result, MAX_ANSWER_DEPTH)) {
    throw new WeirError(
      "upstream_too_deep",
      `the upstream answered a result nested deeper than ${MAX_ANSWER_DEPTH} levels; refused`,
    );
  }
  // Clean text out (docs/spec-mode.md, "Clean text out"): the upstream's strings
  // are well-formed Unicode without terminal control sequences, as in serve.
  const out = cleanDeep(redactor.active ? redactor.deep(result) as CallToolResult : result);
  if (rejectEmpty && !out.isError && isEmptyResult(out)) {
    throw new WeirError(
      "reject_empty",
      `${tool} answered nothing (no content, no structuredContent); an empty answer is ` +
        `not treated as "none found"`,
    );
  }
  return out;
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
