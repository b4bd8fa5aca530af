/**
 * The tools of GitHub's MCP server that `guardfiles/github-mcp.mcp.kdl`
 * names, as a local stand-in server lists them (the names, arguments and
 * annotations of the official server; descriptions trimmed), for the tests
 * that serve that guardfile against `startSdkUpstream`.
 */
import type { ListedTool } from "./sdk_upstream.ts";

const OWNER = { type: "string", description: "Repository owner" };
const REPO = { type: "string", description: "Repository name" };

/** `get_issue`, `list_issues`, `add_issue_comment` and `merge_pull_request`. */
export const GITHUB_MCP_TOOLS: ListedTool[] = [
  {
    name: "get_issue",
    inputSchema: {
      type: "object",
      properties: { owner: OWNER, repo: REPO, issue_number: { type: "number" } },
      required: ["owner", "repo", "issue_number"],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: "list_issues",
    inputSchema: {
      type: "object",
      properties: {
        owner: OWNER,
        repo: REPO,
        state: { type: "string", enum: ["OPEN", "CLOSED"] },
        perPage: { type: "number", minimum: 1, maximum: 100 },
      },
      required: ["owner", "repo"],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: "add_issue_comment",
    inputSchema: {
      type: "object",
      properties: {
        owner: OWNER,
        repo: REPO,
        issue_number: { type: "number" },
        body: { type: "string" },
      },
      required: ["owner", "repo", "issue_number", "body"],
    },
  },
  {
    name: "merge_pull_request",
    inputSchema: {
      type: "object",
      properties: { owner: OWNER, repo: REPO },
      required: ["owner", "repo"],
    },
  },
];
