/**
 * `inbound-token "<caller>" { value env "<VAR>"; tools "<tool>"... }`: a
 * static bearer token (or several, for rotation) that may see and call only
 * the tools listed, the guardfile form of `--inbound-token-env VAR:TOOL,...`.
 * Read in both modes (a spec-mode wrap and an MCP server wrap). Pure: the
 * token itself is named (`env` or `file`), never read here; a literal is
 * refused, since a token written in the file would be a secret in review.
 *
 * ```kdl
 * inbound-token reporting {
 *     value env "REPORTING_TOKEN"
 *     tools "get_issue" "list_issue"
 * }
 * ```
 *
 * @module
 */
import type { InboundToken } from "./model.ts";
import { type NodeReader, onlyOnce, show, suggest } from "./nodes.ts";
import { readValue } from "./value.ts";

export type { InboundToken };

const CALLER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Read every `inbound-token` node.
 * @param top the document's top-level nodes
 * @param served the tool names the file serves (a token may list only these)
 */
export function readInboundTokens(
  top: NodeReader[],
  served: readonly string[],
): InboundToken[] {
  const out: InboundToken[] = [];
  for (const node of top.filter((n) => n.name === "inbound-token")) {
    node.onlyProperties();
    if (!node.argCount(1, 1, `the caller's name, e.g. inbound-token reporting { ... }`)) continue;
    const name = node.stringArg(0, "the caller's name");
    if (name === undefined) continue;
    if (!CALLER_NAME.test(name)) {
      node.error(
        `inbound-token ${show(name)}: a caller name is 1-64 characters of A-Z a-z 0-9 _ - .: ` +
          `rename it`,
      );
      continue;
    }
    if (out.some((t) => t.name === name)) {
      node.error(`inbound-token "${name}" is declared twice: keep one`);
      continue;
    }
    const kids = node.onlyChildren(["value", "tools"]);
    const valueNode = onlyOnce(kids, "value");
    const toolsNode = onlyOnce(kids, "tools");
    if (!valueNode) {
      node.error(
        `inbound-token "${name}" says not where its token is read: add value env "<VAR>" (or ` +
          `value file "<path>")`,
      );
    }
    const source = valueNode ? readValue(valueNode) : undefined;
    if (source?.chain.some((c) => c.provider === "literal")) {
      valueNode!.error(
        `a token written in the guardfile is a secret in review: read it from env or file ` +
          `instead of literal`,
      );
      continue;
    }
    const tools: string[] = [];
    if (!toolsNode) {
      node.error(
        `inbound-token "${name}" names no tools (deny by absence: none are implied): add ` +
          `tools "<tool>"..., the tools this caller may see and call`,
      );
    } else {
      toolsNode.onlyProperties();
      toolsNode.noChildren();
      if (
        toolsNode.argCount(1, Infinity, `the tools this caller may call, e.g. tools "get_issue"`)
      ) {
        for (let i = 0; i < toolsNode.node.values.length; i++) {
          const tool = toolsNode.stringArg(i, `tool ${i + 1}`);
          if (tool === undefined) continue;
          if (!served.includes(tool)) {
            toolsNode.error(
              `"${tool}" is not a tool this guardfile serves${suggest(tool, served)}: name a ` +
                `served tool (${
                  served.length === 0
                    ? "none"
                    : served.length <= 8
                    ? served.join(", ")
                    : `${served.slice(0, 8).join(", ")}, ... ${served.length} in all`
                })`,
            );
          } else if (tools.includes(tool)) {
            toolsNode.error(`"${tool}" is listed twice: keep one`);
          } else tools.push(tool);
        }
      }
    }
    if (!source || tools.length === 0) continue;
    out.push({ name, source, tools, position: node.node.position });
  }
  return out;
}
