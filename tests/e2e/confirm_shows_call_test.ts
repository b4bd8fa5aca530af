/**
 * What a person confirms is the call itself (issue 35 item 6): the question
 * names the tool, the upstream request (the method and the resolved path,
 * or the wrapped MCP server's tool), then every argument, the identifying
 * ones first; a long value is cut, never a key, so a long `body` cannot push
 * `owner`, `repo` or `issue_number` out of sight. Driven through the shipped
 * CLI with the shipped GitHub guardfiles (a `confirm` added to the spec-mode
 * one), the v2 client pinned to 2026-07-28 over HTTP (`input_required`) and
 * the v1 client on 2025-11-25 over stdio (elicitation). What is sent is the
 * whole value.
 */
import assert from "node:assert/strict";
import { StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ROOT, serveHttp, weirCommand } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { GITHUB_MCP_TOOLS } from "../support/github_mcp_tools.ts";
import { confirmingClientV1, confirmingClientV2 } from "../support/elicit.ts";

const TOKEN = { GITHUB_TOKEN: "ghp_test_token_0123456789abcdef" };

/** The v2 client over HTTP, or the v1 client over stdio: call once, accept, return what was asked. */
async function confirmOnce(
  revision: "2026-07-28" | "2025-11-25",
  file: string,
  call: { name: string; arguments: Record<string, unknown> },
): Promise<string> {
  // 2026-07-28: the v2 client over HTTP; 2025-11-25: the v1 client over stdio (elicitation).
  const weir = revision === "2026-07-28" ? await serveHttp(file, { env: TOKEN }) : undefined;
  const { client, answer } = weir
    ? confirmingClientV2("shows-call", "accept")
    : confirmingClientV1("shows-call", "accept");
  const { command, args } = weirCommand();
  try {
    // deno-lint-ignore no-explicit-any
    await (client as any).connect(
      weir ? new HttpV2(new URL(`${weir.url}/mcp`)) : new StdioV1({
        command,
        args: [...args, "serve", file, "--stdio"],
        cwd: ROOT,
        env: { ...Deno.env.toObject(), ...TOKEN },
        stderr: "ignore",
      }),
    );
    const result = await client.callTool(call);
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal(answer.asked.length, 1);
    return answer.asked[0];
  } finally {
    await client.close();
    await weir?.stop();
  }
}

/**
 * The lines of the question a person is asked for `call`, serving a copy of
 * the shipped guardfile `shipped` changed by `edit`.
 */
async function questionLines(
  revision: "2026-07-28" | "2025-11-25",
  shipped: string,
  edit: (text: string) => string,
  call: { name: string; arguments: Record<string, unknown> },
): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "weir-shows-call-" });
  const file = `${dir}/${shipped.split("/").at(-1)}`;
  await Deno.writeTextFile(file, edit(await Deno.readTextFile(`${ROOT}${shipped}`)));
  try {
    return (await confirmOnce(revision, file, call)).split("\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The question is `head`, then one last line: the body, cut (`cut` holds its JSON length). */
function assertShown(lines: string[], head: string[], cut: RegExp): void {
  assert.deepEqual(lines.slice(0, head.length), head, lines.join("\n"));
  assert.equal(lines.length, head.length + 1, lines.join("\n"));
  assert.match(lines[head.length], cut);
  assert.ok(lines[head.length].length < 300, "the body is cut");
}

for (const revision of ["2026-07-28", "2025-11-25"] as const) {
  Deno.test(`confirm shows the call (${revision}, spec mode): the request line, then owner, repo and issue_number before a cut body`, async () => {
    const upstream = await startRecorder(() => Response.json({ id: 1 }, { status: 201 }));
    const body = "Lorem ipsum. ".repeat(400);
    try {
      const lines = await questionLines(
        revision,
        "guardfiles/github-issues.mcp.kdl",
        (text) =>
          `confirm "comment_issue" message="Post this comment?"\n` +
          text.replace('base-url "https://api.github.com"', `base-url "${upstream.url}"`),
        {
          name: "comment_issue",
          arguments: { body, issue_number: 7, repo: "site", owner: "acme-web" },
        },
      );
      assertShown(lines, [
        "Post this comment?",
        "",
        "Tool: comment_issue",
        "Request: POST /repos/acme-web/site/issues/7/comments",
        "Arguments:",
        '  "owner": "acme-web"',
        '  "repo": "site"',
        '  "issue_number": 7',
      ], /^ {2}"body": "Lorem ipsum\. .*\.\.\. \(cut: 5202 characters in all\)$/);
      assert.equal(upstream.requests.length, 1);
      assert.equal(upstream.requests[0].path, "/repos/acme-web/site/issues/7/comments");
      assert.equal(JSON.parse(upstream.requests[0].body).body, body, "the whole body is sent");
    } finally {
      await upstream.close();
    }
  });

  Deno.test(`confirm shows the call (${revision}, a wrapped MCP server): the MCP server's tool, the restricted owner first`, async () => {
    const up = await startSdkUpstream({
      revision: "2026-07-28",
      framing: "json",
      tools: GITHUB_MCP_TOOLS,
    });
    const body = "b".repeat(1990);
    try {
      const lines = await questionLines(
        revision,
        "guardfiles/github-mcp.mcp.kdl",
        (text) => text.replace("https://api.githubcopilot.com/mcp/", up.url),
        {
          name: "add_issue_comment",
          arguments: { body, issue_number: 7, repo: "web", owner: "acme" },
        },
      );
      assertShown(lines, [
        "Post this comment on GitHub?",
        "",
        "Tool: add_issue_comment",
        "Request: tools/call add_issue_comment",
        "Arguments:",
        '  "owner": "acme"',
        '  "issue_number": 7',
        '  "repo": "web"',
      ], /^ {2}"body": "b+\.\.\. \(cut: 1992 characters in all\)$/);
      assert.equal(up.calls().length, 1);
      assert.equal(JSON.parse(up.calls()[0]).params.arguments.body, body, "the whole body is sent");
    } finally {
      await up.stop();
    }
  });
}
