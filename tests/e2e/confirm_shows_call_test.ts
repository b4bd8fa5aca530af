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
import { ROOT } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { GITHUB_MCP_TOOLS } from "../support/github_mcp_tools.ts";
import { serveConfirming } from "../support/elicit.ts";

const TOKEN = {
  GITHUB_TOKEN: "ghp_test_token_0123456789abcdef",
  PIN_KEY: "pin-key-5a7c9e1b3d",
  PIN_REPO: "website-main",
};

/** Call once through a confirming official client (accepting), and return what was asked. */
async function confirmOnce(
  revision: "2026-07-28" | "2025-11-25",
  file: string,
  call: { name: string; arguments: Record<string, unknown> },
): Promise<string> {
  const { client, answer, close } = await serveConfirming(revision, file, TOKEN);
  try {
    const result = await client.callTool(call);
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal(answer.asked.length, 1);
    return answer.asked[0];
  } finally {
    await close();
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

/**
 * The question asked for `comment_issue` of the shipped spec-mode GitHub file
 * (a `confirm` added, its base URL `upstream`) commenting `body` on
 * acme-web/site#7.
 */
function commentQuestion(
  revision: "2026-07-28" | "2025-11-25",
  upstream: string,
  body: string,
): Promise<string[]> {
  return questionLines(
    revision,
    "guardfiles/github-issues.mcp.kdl",
    (text) =>
      `confirm "comment_issue" message="Post this comment?"\n` +
      text.replace('base-url "https://api.github.com"', `base-url "${upstream}"`),
    {
      name: "comment_issue",
      arguments: { body, issue_number: 7, repo: "site", owner: "acme-web" },
    },
  );
}

/** The first lines of every `add_issue_comment` question: the restricted owner leads the arguments. */
const WRAP_HEAD = [
  "Post this comment on GitHub?",
  "",
  "Tool: add_issue_comment",
  "Request: tools/call add_issue_comment",
  "Arguments:",
  '  "owner": "acme"',
];

/**
 * The question asked for `add_issue_comment` of the shipped GitHub MCP wrap
 * file (its MCP server at `upstream`) with `args`.
 */
function wrapCommentQuestion(
  revision: "2026-07-28" | "2025-11-25",
  upstream: string,
  args: Record<string, unknown>,
): Promise<string[]> {
  return questionLines(
    revision,
    "guardfiles/github-mcp.mcp.kdl",
    (text) => text.replace("https://api.githubcopilot.com/mcp/", upstream),
    { name: "add_issue_comment", arguments: args },
  );
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
      const lines = await commentQuestion(revision, upstream.url, body);
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
      const lines = await wrapCommentQuestion(revision, up.url, {
        body,
        issue_number: 7,
        repo: "web",
        owner: "acme",
      });
      assertShown(lines, [
        ...WRAP_HEAD,
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

/**
 * Characters that could hide, reorder or break what a person reads, each in a
 * value: a right-to-left override, zero-width characters, a line separator,
 * a newline, a non-breaking space, a C1 control, a tag character, a Hangul
 * filler, stacked combining marks.
 */
const TRICKS = [
  "\u202e",
  "\u2066",
  "\u200b",
  "\u200d",
  "\ufeff",
  "\u00ad",
  "\u2028",
  "\u2029",
  "\n",
  "\r",
  "\u00a0",
  "\u0085",
  "\u{e0041}",
  "\u3164",
  "\u0301\u0302\u0303",
];

/** No character of a trick reached the question as itself (the combining marks: the third). */
function assertNoTricks(question: string): void {
  const lines = question.split("\n");
  for (const trick of TRICKS.filter((t) => t !== "\n")) {
    const hidden = trick.length === 3 ? trick.slice(2) : trick;
    assert.ok(!question.includes(hidden), `U+${hidden.codePointAt(0)!.toString(16)} shown as is`);
  }
  for (const line of lines) assert.ok(!/[\u2028\u2029\r]/.test(line));
}

for (const revision of ["2026-07-28", "2025-11-25"] as const) {
  Deno.test(`confirm shows the call (${revision}, a wrapped MCP server): 300 undeclared keys and hidden characters cannot push or disguise the target`, async () => {
    const up = await startSdkUpstream({
      revision: "2026-07-28",
      framing: "json",
      tools: GITHUB_MCP_TOOLS,
    });
    // The schema is open: weir passes keys it does not declare to the MCP server.
    const extra = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`a${String(i).padStart(3, "0")}`, "filler"]),
    );
    const repo = TRICKS.map((t, i) => `r${i}${t}`).join("");
    try {
      const lines = await wrapCommentQuestion(revision, up.url, {
        ...extra,
        "z\u202enote": "x",
        body: "hi",
        issue_number: 7,
        repo,
        owner: "acme",
      });
      const question = lines.join("\n");
      assertNoTricks(question);
      assert.deepEqual(lines.slice(0, 9), [
        ...WRAP_HEAD,
        '  "body": "hi"',
        '  "issue_number": 7',
        `  "repo": ${
          JSON.stringify(repo).replace(
            /[\u202e\u2066\u200b\u200d\ufeff\u00ad\u2028\u2029\u00a0\u0085\u3164\u0303]|\u{e0041}/gu,
            (c) =>
              [...Array(c.length).keys()].map((i) =>
                `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`
              ).join(""),
          )
        }`,
      ]);
      assert.equal(lines[9], "Not declared by the tool (301):");
      assert.equal(lines[10], '  "a000": "filler"');
      assert.equal(lines.at(-1), '  "z\\u202enote": "x"');
      assert.equal(lines.length, 9 + 1 + 301);
      assert.equal(up.calls().length, 1, "sent once the person said yes");
    } finally {
      await up.stop();
    }
  });

  Deno.test(`confirm shows the call (${revision}, spec mode): a body of hidden characters and line breaks stays on its own line`, async () => {
    const upstream = await startRecorder(() => Response.json({ id: 1 }, { status: 201 }));
    const body = `Looks fine.${TRICKS.join("x")}\nRequest: DELETE /repos/acme-web/site`;
    try {
      const lines = await commentQuestion(revision, upstream.url, body);
      assertNoTricks(lines.join("\n"));
      assert.equal(lines.length, 9, lines.join("\n"));
      assert.equal(lines[3], "Request: POST /repos/acme-web/site/issues/7/comments");
      assert.match(lines[8], /^ {2}"body": "Looks fine\.\\u202ex\\u2066x.*\\nRequest: DELETE/);
      assert.equal(JSON.parse(upstream.requests[0].body).body, body, "sent as written");
    } finally {
      await upstream.close();
    }
  });
}

for (const revision of ["2026-07-28", "2025-11-25"] as const) {
  Deno.test(`confirm shows the call (${revision}): what the server pins is shown too, a secret pin by name only`, async () => {
    const upstream = await startRecorder(() => Response.json({ id: 1 }, { status: 201 }));
    const up = await startSdkUpstream({
      revision: "2026-07-28",
      framing: "json",
      tools: GITHUB_MCP_TOOLS,
    });
    try {
      const spec = await questionLines(
        revision,
        "guardfiles/github-issues.mcp.kdl",
        (text) =>
          `confirm "comment_issue" message="Post this comment?"\n` +
          `pin "comment_issue" { query "via" literal "weir-bot"; query "key" env "PIN_KEY" secret=#true; }\n` +
          text.replace('base-url "https://api.github.com"', `base-url "${upstream.url}"`),
        {
          name: "comment_issue",
          arguments: { body: "hi", issue_number: 7, repo: "site", owner: "acme-web" },
        },
      );
      assert.deepEqual(spec.slice(3, 8), [
        "Request: POST /repos/acme-web/site/issues/7/comments",
        "Set by the server:",
        '  "via": "weir-bot"',
        '  "key": (a secret)',
        "Arguments:",
      ]);
      assert.ok(!spec.join("\n").includes(TOKEN.PIN_KEY));
      assert.match(upstream.requests[0].query, /key=pin-key-5a7c9e1b3d/);
      const wrap = await questionLines(
        revision,
        "guardfiles/github-mcp.mcp.kdl",
        (text) =>
          `pin "add_issue_comment" { argument "repo" env "PIN_REPO" secret=#true; }\n` +
          text.replace("https://api.githubcopilot.com/mcp/", up.url),
        { name: "add_issue_comment", arguments: { body: "hi", issue_number: 7, owner: "acme" } },
      );
      assert.deepEqual(wrap.slice(3, 7), [
        "Request: tools/call add_issue_comment",
        "Set by the server:",
        '  "repo": (a secret)',
        "Arguments:",
      ]);
      assert.ok(!wrap.join("\n").includes(TOKEN.PIN_REPO));
    } finally {
      await upstream.close();
      await up.stop();
    }
  });
}
