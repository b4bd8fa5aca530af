/**
 * A guardfile that wraps an MCP server, through the shipped CLI (`weir serve
 * FILE`, `weir lint-upstream FILE`, `weir describe FILE`), in front of a
 * recording MCP server on the official SDK (both revisions): each override
 * and argument rule shows in `tools/list` and holds on `tools/call` and
 * `/api`; the MCP server sees its own names and the pinned values, and a
 * value a rule refuses never reaches it; a rule that contradicts the MCP
 * server's schema stops start-up and fails lint-upstream, naming both.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { runWeir } from "../support/upstream_cli.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";

const SEARCH: ListedTool = {
  name: "search_issues",
  title: "Search issues",
  description: "Searches issues across the organisation.",
  inputSchema: {
    type: "object",
    properties: {
      org: { type: "string", description: "Organisation" },
      repo: { type: "string", description: "Repository" },
      state: { type: "string", enum: ["open", "closed", "all"] },
      limit: { type: "integer", minimum: 1, maximum: 100 },
      query: { type: "string" },
      debug: { type: "boolean" },
      weight: { type: "number" },
    },
    required: ["org", "repo"],
  },
  annotations: { readOnlyHint: false },
};
const DELETE: ListedTool = {
  name: "delete_issue",
  inputSchema: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
};

function guardfile(url: string, extra = ""): string {
  return `pin "find" {
    argument "org" literal "acme"
}
withhold "delete_issue" {
    reason "Issues are closed, never deleted."
}
wrap ward mcp issues {
    mcp-server http "${url}"
    proxy find {
        upstream "search_issues"
        title "Find issues"
        describe "Finds issues in acme's repositories."
        annotations read-only=#true
        argument "repository" upstream="repo" {
            restrict "acme-*" "docs"
        }
        argument "state" {
            enum "open" "closed"
        }
        argument "limit" minimum=2 maximum=20
        argument "query" min-length=2 max-length=50 pattern="^[^*]*$"
        argument "debug" hide=#true
        ${extra}
    }
}
`;
}

type AnyClient = {
  listTools(): Promise<{ tools: Record<string, unknown>[] }>;
  callTool(
    p: { name: string; arguments: Record<string, unknown> },
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
};

async function client(url: string, revision: "2025-11-25" | "2026-07-28"): Promise<AnyClient> {
  if (revision === "2025-11-25") {
    const c = new ClientV1({ name: "t", version: "1" });
    await c.connect(new HttpV1(new URL(`${url}/mcp`)));
    return c as unknown as AnyClient;
  }
  const c = new ClientV2({ name: "t", version: "2" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await c.connect(new HttpV2(new URL(`${url}/mcp`)));
  return c as unknown as AnyClient;
}

function text(result: Record<string, unknown>): string {
  return ((result.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");
}

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`overrides and argument rules: listed, enforced, translated back exactly (${revision})`, async () => {
    const up = await startSdkUpstream({ revision, framing: "json", tools: [SEARCH, DELETE] });
    const file = await tempGuardfile(guardfile(up.url));
    const weir = await serveHttp(file);
    const c = await client(weir.url, revision);
    try {
      const tools = (await c.listTools()).tools;
      assert.deepEqual(tools.map((t) => t.name).sort(), ["delete_issue", "find", "weir_info"]);
      const find = tools.find((t) => t.name === "find")!;
      assert.equal(find.title, "Find issues");
      assert.equal(find.description, "Finds issues in acme's repositories.");
      assert.equal((find.annotations as { readOnlyHint?: boolean }).readOnlyHint, true);
      const schema = find.inputSchema as {
        properties: Record<string, Record<string, unknown>>;
        required: string[];
      };
      assert.deepEqual(Object.keys(schema.properties), [
        "repository",
        "state",
        "limit",
        "query",
        "weight",
      ]);
      assert.deepEqual(schema.required, ["repository"]);
      assert.deepEqual(schema.properties.state.enum, ["open", "closed"]);
      assert.equal(schema.properties.limit.maximum, 20);
      assert.equal(schema.properties.limit.minimum, 2);
      assert.equal(schema.properties.query.maxLength, 50);
      assert.equal(schema.properties.query.minLength, 2);
      assert.equal(schema.properties.repository.pattern, "^(?:acme-[^/]*|docs)$");

      const ok = await c.callTool({
        name: "find",
        arguments: { repository: "acme-web", state: "open", limit: 5, query: "bug", weight: 1.5 },
      });
      assert.equal(ok.isError, undefined, text(ok));
      const sent = JSON.parse(up.calls().at(-1)!).params;
      assert.equal(sent.name, "search_issues");
      assert.deepEqual(sent.arguments, {
        repo: "acme-web",
        state: "open",
        limit: 5,
        query: "bug",
        weight: 1.5,
        org: "acme",
      });

      const before = up.calls().length;
      for (
        const args of [
          { repository: "other" },
          { repository: "acme-web/x" },
          { repository: "docs", state: "all" },
          { repository: "docs", limit: 21 },
          { repository: "docs", limit: 1 },
          { repository: "docs", query: "a" },
          { repository: "docs", query: "a*" },
          { repository: "docs", query: "x".repeat(51) },
          { repository: "docs", org: "evil" },
          { repository: "docs", repo: "acme-web" },
          { repository: "docs", debug: true },
          { repo: "acme-web" },
        ]
      ) {
        const refused = await c.callTool({ name: "find", arguments: args }).catch((e) => e);
        assert.ok(
          refused instanceof Error || refused.isError === true,
          `refused: ${JSON.stringify(args)}: ${JSON.stringify(refused)}`,
        );
      }
      const withheld = await c.callTool({ name: "delete_issue", arguments: { id: 1 } });
      assert.equal(withheld.isError, true);
      assert.match(text(withheld), /verb_withheld/);
      assert.equal(up.calls().length, before, "nothing refused reached the MCP server");

      // The tool API decides alike.
      const api = await fetch(`${weir.url}/api/find`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ repository: "other" }),
      });
      assert.equal(api.status, 400);
      await api.body?.cancel();
      const apiOk = await fetch(`${weir.url}/api/find`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"repository":"docs","weight":1.50}',
      });
      assert.equal(apiOk.status, 200, await apiOk.text());
      assert.match(up.calls().at(-1)!, /"weight":1\.50/, "a number keeps its spelling");
      assert.equal(up.calls().length, before + 1);
    } finally {
      await c.close();
      await weir.stop();
      await up.stop();
    }
  });
}

Deno.test("a rule that contradicts the MCP server's schema stops start-up and fails lint-upstream, naming both", async () => {
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools: [SEARCH] });
  try {
    const cases: [string, RegExp][] = [
      [
        `argument "state" { enum "open" "stale"; }`,
        /enum value "stale" is refused by the MCP server's schema/,
      ],
      [
        `argument "limit" maximum=500`,
        /maximum=500 is above the MCP server's schema says maximum 100/,
      ],
      [
        `argument "weight" pattern="^1"`,
        /apply to strings, and the MCP server's schema says type number/,
      ],
      [
        `argument "repo" upstream="query"`,
        /"repo" is already an argument of the MCP server's tool/,
      ],
      [`argument "nope" upstream="missing" min-length=1`, /declares no argument "missing"/],
    ];
    for (const [rule, message] of cases) {
      const file = await tempGuardfile(`pin "find" { argument "org" literal "acme"; }
wrap ward mcp issues {
    mcp-server http "${up.url}"
    proxy find {
        upstream "search_issues"
        ${rule}
    }
}
`);
      // weir lint reads the file offline: the rules' fit is the MCP server's to say.
      const lint = await runCli(["lint", file]);
      assert.equal(lint.code, 0, `${rule}: ${lint.stderr}`);
      const serve = await runCli(["serve", file, "--stdio"], { stdin: "" });
      assert.equal(serve.code, 1, `${rule}: ${serve.stderr}`);
      assert.match(serve.stderr, message, rule);
      assert.match(serve.stderr, /tool "find" \(the MCP server's "search_issues"\)/);
      const lu = await runCli(["lint-upstream", file]);
      assert.equal(lu.code, 1, lu.stderr);
      assert.match(lu.stdout, /^find\tunservable$/m);
      assert.match(lu.stderr, message);
    }
    assert.equal(up.calls().length, 0);
  } finally {
    await up.stop();
  }
});

Deno.test("lint-upstream FILE records and checks the MCP server's fingerprints; describe FILE shows the served surface", async () => {
  const up = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "json",
    tools: [SEARCH, DELETE],
  });
  const dir = await Deno.makeTempDir({ prefix: "weir-wrap-lint-" });
  try {
    const file = await tempGuardfile(guardfile(up.url));
    const prints = `${dir}/surface.json`;
    const write = await runWeir(["lint-upstream", file, "--write-fingerprints", prints]);
    assert.equal(write.code, 0, write.stderr);
    assert.equal(write.stdout.trim(), "find\tpresent");
    const recorded = JSON.parse(await Deno.readTextFile(prints));
    assert.deepEqual(Object.keys(recorded.tools), ["search_issues"]);
    assert.equal((await runCli(["lint-upstream", file, "--fingerprints", prints])).code, 0);
    up.setTools([
      { ...SEARCH, description: "Searches issues, and deletes the stale ones." },
      DELETE,
    ]);
    const drifted = await runCli([
      "lint-upstream",
      file,
      "--fingerprints",
      prints,
      "--format",
      "json",
    ]);
    assert.equal(drifted.code, 1);
    const report = JSON.parse(drifted.stdout);
    assert.equal(report.tools[0].status, "drifted");
    assert.equal(report.tools[0].upstream, "search_issues");
    up.setTools([SEARCH, DELETE]);

    const described = await runCli(["describe", file]);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /find {2}MCP tool search_issues/);
    assert.match(described.stdout, /argument repository: string \(required, .*sent as repo\)/);
    assert.match(described.stdout, /pinned argument org from a literal/);
    assert.match(described.stdout, /delete_issue {2}WITHHELD/);
    const json = JSON.parse((await runCli(["describe", "--format", "json", file])).stdout);
    const find = json.tools.find((t: { name: string }) => t.name === "find");
    assert.equal(find.kind, "proxy");
    assert.deepEqual(find.inputSchema.required, ["repository"]);
    const openapi = JSON.parse((await runCli(["describe", "--format", "openapi", file])).stdout);
    const op = openapi.paths["/api/find"].post;
    assert.deepEqual(op.requestBody.content["application/json"].schema, find.inputSchema);
    assert.equal(op["x-weir"].upstream.mcpTool, "search_issues");
    assert.deepEqual(op["x-weir"].renamedArguments, { repository: "repo" });
    assert.equal(up.calls().length, 0, "lint and describe call no tool");
  } finally {
    await up.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a tool renamed onto another of the MCP server's names fails serve and lint-upstream, naming both; names that spell one operation fail lint", async () => {
  const up = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "json",
    tools: [SEARCH, DELETE],
  });
  try {
    const file = await tempGuardfile(`wrap ward mcp issues {
    mcp-server http "${up.url}"
    proxy delete_issue {
        upstream "search_issues"
    }
}
`);
    const message =
      /tool "delete_issue" \(the MCP server's "search_issues"\) is renamed onto the name of the MCP server's own tool "delete_issue"/;
    const serve = await runCli(["serve", file, "--stdio"], { stdin: "" });
    assert.equal(serve.code, 1, serve.stderr);
    assert.match(serve.stderr, message);
    const lu = await runCli(["lint-upstream", file]);
    assert.equal(lu.code, 1, lu.stderr);
    assert.match(lu.stderr, message);
    assert.equal(up.calls().length, 0);
  } finally {
    await up.stop();
  }
  // Offline: one operation under two names, and a withhold undone by a rename.
  const file = await tempGuardfile(`withhold "delete_issue" {
    reason "Issues are closed, never deleted."
}
wrap ward mcp issues {
    mcp-server http "http://127.0.0.1:9/mcp"
    proxy search_issues
    proxy searchIssues {
        upstream "find_issues"
    }
    proxy tidy {
        upstream "delete_issue"
    }
    proxy remove_issue
}
`);
  const lint = await runCli(["lint", file]);
  assert.equal(lint.code, 1, lint.stderr);
  assert.match(
    lint.stderr,
    /:7:5: .*"searchIssues" \(proxy "searchIssues"\) and "search_issues" \(proxy "search_issues", line 6\) differ only by letter case or separators/,
  );
  assert.match(
    lint.stderr,
    /:10:5: .*proxy "tidy" serves the MCP server's "delete_issue", and withhold "delete_issue" withholds it/,
  );
  assert.match(
    lint.stderr,
    /:13:5: .*"remove_issue" \(proxy "remove_issue"\) and "delete_issue" \(withhold "delete_issue", line 1\) differ only by a verb synonym/,
  );
});
