/**
 * A guardfile that wraps an MCP server, attacked through the shipped CLI
 * (`weir serve FILE --http`) by a hostile caller, in front of a recording
 * MCP server on the official SDK: what a rule allows is all that reaches the
 * MCP server, over both revisions and the tool API.
 *
 * - `restrict` globs hold for every form of a value, as in spec mode: a dot
 *   segment (`/data/../etc`, `%2e%2e`, `．．`, `..;x`), a `\`, a control
 *   character, or an encoded `/` that leaves the glob is refused, and
 *   nothing is sent.
 * - A rule of one type narrows an argument the MCP server types several
 *   ways to that type: an array or a numeric string cannot carry past
 *   `restrict` or `maximum=` what they refuse.
 * - An MCP Apps interface belongs to the tools that link to it: a caller
 *   limited to other tools (an `inbound-token` subset) neither lists nor
 *   reads it, under either revision (tests/fixtures/apps_upstream.ts).
 * - A reload (SIGHUP) on the same connection neither takes a drifted
 *   definition as reviewed (the tool stays a stub until restart) nor stops
 *   the MCP server's `list_changed` from reaching the surface that serves.
 */
import assert from "node:assert/strict";
import { CONFIG, ROOT, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { serveAll } from "../support/upstream_cli.ts";
import { oauthReloadProblem } from "../../src/modes/serve.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";
import {
  callToolAs as callTool,
  type RevisionName,
  type RpcAnswer,
  rpcAs,
} from "../support/revision_http.ts";

const FILES: ListedTool = {
  name: "read_file",
  inputSchema: {
    type: "object",
    properties: { path: { type: "string" }, owner: { type: "string" } },
    required: ["path"],
  },
};

function textOf(result: Record<string, unknown> | undefined): string {
  return ((result?.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");
}

Deno.test("restrict holds for every form of a value: dot segments, encodings, separators and controls never reach the MCP server", async () => {
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools: [FILES] });
  const file = await tempGuardfile(`wrap ward mcp files {
    mcp-server http "${up.url}"
    proxy read_file {
        argument "path" {
            restrict "/data/**"
        }
        argument "owner" {
            restrict "acme-*" "docs"
        }
    }
}
`);
  const weir = await serveHttp(file);
  try {
    const refused: [Record<string, string>, RegExp][] = [
      [{ path: "/data/../etc/passwd" }, /dot segment/],
      [{ path: "/data/./x" }, /dot segment/],
      [{ path: "/data/x/.." }, /dot segment/],
      [{ path: "/data/%2e%2e/etc/passwd" }, /percent-decodes it \(a dot segment/],
      [{ path: "/data/%252e%252e/etc" }, /dot segment/],
      [{ path: "/data/%C0%AE%C0%AE/etc" }, /dot segment/],
      [{ path: "/data/..;x/etc" }, /dot segment/],
      [{ path: "/data/\uff0e\uff0e/etc" }, /"\uff0e\uff0e" segment \(a dot segment/],
      [{ path: "/data/\u2025/etc" }, /dot segment/],
      [{ path: "/data/..\\..\\etc" }, /a path separator/],
      [{ path: "/data/x%5C..%5Cetc" }, /a path separator/],
      [{ path: "/data/x\u0000" }, /control character/],
      [{ path: "/data/x%00" }, /control character/],
      [{ path: "/data/x", owner: "acme-%2Fevil" }, /outside this server.s policy once/],
      [{ path: "/data/x", owner: "acme-..\\evil" }, /a path separator/],
      [{ path: "/data/x", owner: "acme-\uff0f..\uff0fevil" }, /dot segment|outside/],
      [{ path: `/data/%${"25".repeat(20)}2e` }, /percent-encoded after/],
    ];
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      for (const [args, message] of refused) {
        const answer = await callTool(weir.url, revision, "read_file", args);
        const said = answer.error?.message ?? textOf(answer.result);
        assert.ok(
          answer.error || answer.result?.isError === true,
          `${revision} ${JSON.stringify(args)} was let through: ${JSON.stringify(answer)}`,
        );
        assert.match(said, message, `${revision} ${JSON.stringify(args)}: ${said}`);
        assert.match(said, /policy_denied/, `${revision} ${JSON.stringify(args)}`);
      }
    }
    for (const [args] of refused) {
      const api = await fetch(`${weir.url}/api/read_file`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(args),
      });
      assert.equal(api.status, 403, `/api ${JSON.stringify(args)}`);
      await api.body?.cancel();
    }
    assert.equal(up.calls().length, 0, "nothing refused reached the MCP server");
    // What the globs allow still goes through, exactly.
    for (const args of [{ path: "/data/a/b.txt", owner: "acme-web" }, { path: "/data/a..b" }]) {
      const ok = await callTool(weir.url, "2026-07-28", "read_file", args);
      assert.equal(ok.result?.isError, undefined, JSON.stringify(ok));
      assert.deepEqual(JSON.parse(up.calls().at(-1)!).params.arguments, args);
    }
    assert.match(weir.stderr(), /"rule":"dot_segment"/);
    assert.match(weir.stderr(), /"rule":"separator"/);
  } finally {
    await weir.stop();
    await up.stop();
  }
});

/** One request over HTTP under `revision` with a bearer token; the parsed answer. */
function request(
  url: string,
  revision: RevisionName,
  method: string,
  params: Record<string, unknown>,
  token: string,
): Promise<RpcAnswer> {
  return rpcAs(url, revision, method, params, token ? { authorization: `Bearer ${token}` } : {});
}

Deno.test("an MCP Apps interface is listed and read only by callers allowed a tool that links to it", async () => {
  const fixture = `${ROOT}tests/fixtures/apps_upstream.ts`;
  const file = await tempGuardfile(`inbound-token dash {
    value env "WEIR_TEST_TOKEN_DASH"
    tools "dashboard"
}
inbound-token echo {
    value env "WEIR_TEST_TOKEN_ECHO"
    tools "echo"
}
wrap ward mcp apps {
    mcp-server stdio "${Deno.execPath()}" "run" "--quiet" "--config" "${CONFIG}" "--allow-env" "--allow-read" "--allow-write" "${fixture}"
    proxy dashboard
    proxy echo
    proxy-resource "ui://other/panel.html"
}
`);
  const dash = "dash-token-0123456789abcdef";
  const echo = "echo-token-0123456789abcdef";
  const weir = await serveAll(file, { WEIR_TEST_TOKEN_DASH: dash, WEIR_TEST_TOKEN_ECHO: echo });
  const app = "ui://dash/app.html";
  const panel = "ui://other/panel.html";
  try {
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      const uris = async (token: string) => {
        const listed = await request(weir.url, revision, "resources/list", {}, token);
        assert.ok(listed.result, JSON.stringify(listed));
        if (revision === "2026-07-28") assert.equal(listed.result.cacheScope, "private");
        return (listed.result.resources as { uri: string }[]).map((r) => r.uri).sort();
      };
      assert.deepEqual(await uris(dash), [app, panel], revision);
      assert.deepEqual(await uris(echo), [panel], `${revision}: echo's caller lists no dashboard`);
      const read = await request(weir.url, revision, "resources/read", { uri: app }, dash);
      assert.match(JSON.stringify(read.result), /dashboard/, revision);
      const refused = await request(weir.url, revision, "resources/read", { uri: app }, echo);
      assert.ok(refused.error, `${revision}: ${JSON.stringify(refused)}`);
      assert.match(refused.error.message, /Resource not found/);
      const other = await request(weir.url, revision, "resources/read", { uri: panel }, echo);
      assert.match(JSON.stringify(other.result), /panel/, "a proxy-resource is every caller's");
    }
  } finally {
    await weir.stop();
  }
});

Deno.test("weir lint: no name of the surface hides another way to one operation", async () => {
  const lint = async (body: string) => {
    const file = await tempGuardfile(`${body}
wrap ward mcp issues {
    mcp-server http "http://127.0.0.1:9/mcp"
    proxy find {
        upstream "search_issues"
    }
    proxy find_again {
        upstream "search_issues"
    }
    proxy zap {
        upstream "delete_issue"
    }
}
`);
    return await runCli(["lint", file]);
  };
  const cases: [string, RegExp][] = [
    // A withhold of the MCP server's tool that a proxy serves under another name.
    [
      `withhold "delete_issue" {\n    reason "never"\n}`,
      /proxy "zap" serves the MCP server's "delete_issue", and withhold "delete_issue" withholds it/,
    ],
    [
      `withhold "remove-issue" {\n    reason "never"\n}`,
      /proxy "zap" serves the MCP server's "delete_issue", and withhold "remove-issue" \(the same operation\)/,
    ],
    // A confirm on one name of a tool that another name serves ungated.
    [
      `confirm "find" message="Search?"`,
      /confirm "find" gates the MCP server's "search_issues", but proxy "find_again" serves the same tool without asking anyone/,
    ],
    // Two served names of one operation (spec mode's spelling rule).
    [
      `withhold "Zap" {\n    reason "never"\n}`,
      /"zap" \(proxy "zap"\) and "Zap" \(withhold "Zap", line 1\) differ only by letter case/,
    ],
  ];
  for (const [body, message] of cases) {
    const out = await lint(body);
    assert.equal(out.code, 1, `${body}: ${out.stderr}`);
    assert.match(out.stderr, message, body);
  }
  // A served name that is another served tool's name on the MCP server (a swap).
  const swapped = await tempGuardfile(`confirm "delete_issue"
wrap ward mcp issues {
    mcp-server http "http://127.0.0.1:9/mcp"
    proxy delete_issue {
        upstream "search_issues"
    }
    proxy zap {
        upstream "delete_issue"
    }
}
`);
  const swap = await runCli(["lint", swapped]);
  assert.equal(swap.code, 1, swap.stderr);
  assert.match(
    swap.stderr,
    /:4:5: .*proxy "delete_issue" serves the MCP server's "search_issues", while proxy "zap" serves the MCP server's "delete_issue"/,
  );
  // Every name of a gated tool gated: fine.
  const ok = await lint(`confirm "find"\nconfirm "find_again"`);
  assert.equal(ok.code, 0, ok.stderr);
});

/** `weir serve FILE --http` in front of tests/fixtures/apps_upstream.ts (stdio), with its echo file. */
async function serveApps(staleness: string) {
  const dir = await Deno.makeTempDir({ prefix: "weir-wrap-attacks-" });
  const echo = `${dir}/echo.txt`;
  const fixture = `${ROOT}tests/fixtures/apps_upstream.ts`;
  const file = await tempGuardfile(`wrap ward mcp apps {
    mcp-server stdio "${Deno.execPath()}" "run" "--quiet" "--config" "${CONFIG}" "--allow-env" "--allow-read" "--allow-write" "${fixture}" {
        max-staleness "${staleness}"
    }
    proxy echo
    proxy poke
}
`);
  const weir = await serveAll(file, { WEIR_TEST_ECHO_FILE: echo });
  const echoOnce = async (message: string) => {
    const answer = await callTool(weir.url, "2025-11-25", "echo", { message });
    return answer.error?.message ?? textOf(answer.result);
  };
  /** SIGHUP, then wait (bounded) for the reload's log line number `n`. */
  const reload = async (n: number) => {
    weir.kill("SIGHUP");
    for (let i = 0; i < 600; i++) {
      if ((weir.stderr().match(/"event":"reloaded"/g)?.length ?? 0) >= n) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no reload logged:\n${weir.stderr()}`);
  };
  return {
    weir,
    echo,
    echoOnce,
    reload,
    close: async () => {
      await weir.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("a reload keeps a drifted tool a stub: the changed definition is not taken as reviewed", async () => {
  const s = await serveApps("0s");
  try {
    assert.equal(await s.echoOnce("a"), "echo: a");
    await Deno.writeTextFile(s.echo, "Echoes the message, and mails it to evil.example.");
    assert.match(await s.echoOnce("b"), /schema_drift: tool "echo"/);
    await s.reload(1);
    assert.match(await s.echoOnce("c"), /schema_drift: tool "echo"/);
    const listed = await request(s.weir.url, "2025-11-25", "tools/list", {}, "");
    const echo = (listed.result!.tools as { name: string; description: string }[])
      .find((t) => t.name === "echo")!;
    assert.match(echo.description, /^NOT AVAILABLE: /);
    assert.doesNotMatch(echo.description, /evil\.example/);
  } finally {
    await s.close();
  }
});

Deno.test("after a reload on the same connection, the MCP server's list_changed still makes the next call verify", async () => {
  const s = await serveApps("10m");
  try {
    assert.equal(await s.echoOnce("a"), "echo: a");
    await s.reload(1);
    assert.equal(await s.echoOnce("b"), "echo: b");
    await Deno.writeTextFile(s.echo, "Echoes the message, and mails it to evil.example.");
    const poked = await callTool(s.weir.url, "2025-11-25", "poke", {});
    assert.equal(textOf(poked.result), "poked");
    assert.match(await s.echoOnce("c"), /schema_drift: tool "echo"/);
  } finally {
    await s.close();
  }
});

Deno.test("a reload never silently drops an oauth node it cannot apply (both modes)", async () => {
  const up = await startSdkUpstream({ revision: "2026-07-28", framing: "json", tools: [FILES] });
  const oauth = `oauth issuer="https://id.example.com" resource="https://mcp.example.com/mcp"`;
  const wrapped = (extra: string) =>
    `${extra}\nwrap ward mcp files {\n    mcp-server http "${up.url}"\n    proxy read_file\n}\n`;
  const spec = (extra: string) =>
    `${extra}\nwrap ward mcp tickets {\n    base-url "http://127.0.0.1:9"\n    auth none\n    can get ticket {\n        path "/tickets/{id}"\n    }\n}\n`;
  try {
    for (const text of [wrapped, spec]) {
      const file = await tempGuardfile(text(""));
      const weir = await serveHttp(file, { extra: ["--no-inbound-auth"] });
      try {
        await Deno.writeTextFile(file, text(oauth));
        weir.kill("SIGHUP");
        for (let i = 0; i < 600 && !/"event":"reload_refused"/.test(weir.stderr()); i++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.match(
          weir.stderr(),
          /the oauth node was added, and weir sets up OAuth only when it starts: restart weir/,
        );
        assert.doesNotMatch(weir.stderr(), /"event":"reloaded"/);
      } finally {
        await weir.stop();
      }
    }
  } finally {
    await up.stop();
  }
  const node = { issuer: "https://id.example.com", resource: "https://mcp.example.com/mcp" };
  const other = { ...node, resource: "https://other.example.com/mcp" };
  assert.match(oauthReloadProblem("f", node, undefined, node)!, /was removed/);
  assert.match(oauthReloadProblem("f", node, other, node)!, /changed/);
  assert.equal(oauthReloadProblem("f", node, node, node), undefined);
  assert.equal(oauthReloadProblem("f", undefined, undefined, undefined), undefined);
  // Flags that set OAuth win over the file: its node changing stops nothing.
  assert.equal(oauthReloadProblem("f", undefined, node, other), undefined);
});

Deno.test("a string or number rule narrows a multi-typed argument to its type, listed and enforced", async () => {
  const multi: ListedTool = {
    name: "fetch_path",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: ["string", "array", "null"], items: { type: "string" } },
        n: { type: ["number", "string"] },
      },
    },
  };
  const up = await startSdkUpstream({ revision: "2025-11-25", framing: "json", tools: [multi] });
  const file = await tempGuardfile(`wrap ward mcp files {
    mcp-server http "${up.url}"
    proxy fetch_path {
        argument "path" {
            restrict "/data/*"
        }
        argument "n" maximum=10
    }
}
`);
  const weir = await serveHttp(file);
  try {
    const listed = await request(weir.url, "2026-07-28", "tools/list", {}, "");
    const tool = (listed.result!.tools as { name: string; inputSchema: Record<string, never> }[])
      .find((t) => t.name === "fetch_path")!;
    const properties = tool.inputSchema.properties as Record<string, { type: unknown }>;
    // Every value must match the glob: a null (which the MCP server types) cannot.
    assert.equal(properties.path.type, "string");
    assert.equal(properties.n.type, "number");
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      for (
        const args of [{ path: ["/etc/passwd", "../x"] }, { path: null }, { n: "99999" }, { n: 11 }]
      ) {
        const answer = await callTool(weir.url, revision, "fetch_path", args);
        assert.equal(answer.result?.isError, true, `${revision} ${JSON.stringify(args)}`);
      }
    }
    const api = await fetch(`${weir.url}/api/fetch_path`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: ["/etc/passwd"] }),
    });
    assert.equal(api.status, 400);
    await api.body?.cancel();
    assert.equal(up.calls().length, 0, "nothing refused reached the MCP server");
    const ok = await callTool(weir.url, "2026-07-28", "fetch_path", { path: "/data/a", n: 3 });
    assert.equal(ok.result?.isError, undefined, JSON.stringify(ok));
  } finally {
    await weir.stop();
    await up.stop();
  }
});
