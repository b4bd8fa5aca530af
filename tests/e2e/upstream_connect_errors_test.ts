/**
 * When serve-upstream or lint-upstream cannot reach its upstream, the one line
 * it prints says what happened and what to do, once (not again "as
 * 2026-07-28"), names the upstream, and never quotes the upstream's body: a
 * wrong path (404: the MCP endpoint), a 401/403 (--upstream-header), nothing
 * listening (connection refused), a command not on PATH.
 */
import assert from "node:assert/strict";
import { ROOT, serveHttp, tempGuardfile } from "../support/cli.ts";
import { runWeir } from "../support/upstream_cli.ts";

const COMMANDS = [["lint-upstream"], ["serve-upstream", "--stdio"]];

/** A plain HTTP server answering every request with `status` and a body quoting `secret`. */
function answering(status: number, body: string) {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      await request.body?.cancel();
      return new Response(body, { status, headers: { "content-type": "text/plain" } });
    },
  );
  return { url: `http://127.0.0.1:${server.addr.port}/mcp`, stop: () => server.shutdown() };
}

function oneLine(stderr: string, name: string): string {
  const lines = stderr.trim().split("\n").filter((l) => l.startsWith("weir: "));
  assert.equal(lines.length, 1, stderr);
  assert.doesNotMatch(lines[0], /and as 2026-07-28/, "one fact, said once");
  assert.match(lines[0], new RegExp(`^weir: ${name}: upstream `));
  return lines[0];
}

Deno.test("a wrong path (weir's own 404 at /): the MCP endpoint is named, nothing 'broke off'", async () => {
  const upstream = await serveHttp(`${ROOT}guardfiles/demo.mcp.kdl`, {
    env: { WEIR_DEMO_BASE_URL: "http://127.0.0.1:9", WEIR_DEMO_TOKEN: "demo-token-0123456789" },
  });
  try {
    for (const command of COMMANDS) {
      const r = await runWeir([
        ...command,
        "--tool",
        "list_ticket",
        "--upstream",
        `${upstream.url}/`,
      ]);
      assert.equal(r.code, 1, r.stderr);
      const line = oneLine(r.stderr, command[0]);
      assert.ok(line.includes(`upstream ${upstream.url}/: `), line);
      assert.match(
        line,
        /answered 404: no MCP endpoint there; point weir at the server's MCP endpoint \(often \.\.\.\/mcp\)/,
      );
      assert.doesNotMatch(line, /broke off|may have run/);
    }
  } finally {
    await upstream.stop();
  }
});

Deno.test("a 401 or 403 points to --upstream-header and never quotes the upstream's body", async () => {
  for (const status of [401, 403]) {
    const up = answering(status, "no entry for token-in-body-7f3a");
    try {
      for (const command of COMMANDS) {
        const r = await runWeir([...command, "--tool", "echo", "--upstream", up.url]);
        assert.equal(r.code, 1, r.stderr);
        const line = oneLine(r.stderr, command[0]);
        assert.match(line, new RegExp(`the upstream answered ${status}: .*--upstream-header`));
        if (status === 401) assert.match(line, /'Authorization=Bearer \{env:VAR\}'/);
        assert.doesNotMatch(line, /token-in-body|no entry/);
      }
      // With a credential sent, the message says it was refused, and does not show it.
      const r = await runWeir(
        [
          "lint-upstream",
          "--tool",
          "echo",
          "--upstream",
          up.url,
          "--upstream-header",
          "Authorization=Bearer {env:UP_TOKEN}",
        ],
        { UP_TOKEN: "up-token-value-0123456789" },
      );
      const line = oneLine(r.stderr, "lint-upstream");
      assert.match(line, status === 401 ? /refused the credential sent/ : /refused access/);
      assert.doesNotMatch(line, /up-token-value/);
    } finally {
      await up.stop();
    }
  }
});

Deno.test("nothing listening: the URL, 'connection refused', what to do", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const url = `http://127.0.0.1:${port}/mcp`;
  for (const command of COMMANDS) {
    const r = await runWeir([...command, "--tool", "echo", "--upstream", url]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      oneLine(r.stderr, command[0]),
      `weir: ${command[0]}: upstream ${url}: could not connect: connection refused: nothing ` +
        `is listening there; start the MCP server, or correct its address`,
    );
  }
});

Deno.test("a stdio command that does not exist: 'not found on PATH', once", async () => {
  for (const command of COMMANDS) {
    const r = await runWeir([...command, "--tool", "echo", "--", "weir-no-such-command-x"]);
    assert.equal(r.code, 1, r.stderr);
    const line = oneLine(r.stderr, command[0]);
    assert.equal(line.match(/not found on PATH/g)?.length, 1, line);
    assert.match(line, /install it, or give its full path$/);
    assert.doesNotMatch(line, /entity not found|Failed to spawn/);
  }
});

Deno.test("the guardfile form (mcp-server): the same words, no advice about command-line flags", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const files = [
    [
      `mcp-server stdio "weir-no-such-command-x"`,
      /the command "weir-no-such-command-x" was not found on PATH; install it, or give its full path$/,
    ],
    [
      `mcp-server http "http://127.0.0.1:${port}/mcp"`,
      /connection refused: nothing is listening there; start the MCP server, or correct its address$/,
    ],
  ] as const;
  for (const [server, words] of files) {
    const file = await tempGuardfile(`wrap ward mcp x {\n    ${server}\n    proxy echo\n}\n`);
    for (
      const command of [["serve", file, "--stdio"], ["describe", file], ["lint-upstream", file]]
    ) {
      const r = await runWeir(command);
      assert.equal(r.code, 1, `${command[0]}: ${r.stderr}`);
      const line = r.stderr.trim().split("\n").find((l) => /could not connect/.test(l)) ?? "";
      assert.match(line, words, `${command[0]}: ${r.stderr}`);
      assert.doesNotMatch(line, /after --|--upstream\b|and as 2026-07-28/, line);
    }
  }
});

Deno.test("a permission weir was not given (no --allow-run for a stdio server) stops at once, saying which flag", async () => {
  const file = await tempGuardfile(
    `wrap ward mcp tools {\n  mcp-server stdio "npx" "-y" "some-mcp-server" {\n` +
      `    connect-timeout "60s"\n  }\n  proxy echo\n}\n`,
  );
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--config",
      `${ROOT}deno.json`,
      "--allow-read",
      "--allow-env",
      "--allow-net",
      `${ROOT}cli.ts`,
      "describe",
      file,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(r.stderr);
  assert.equal(r.code, 1, stderr);
  assert.match(
    stderr,
    /could not connect: Requires run access to "npx", run again with the --allow-run flag/,
  );
  assert.doesNotMatch(stderr, /upstream_connect_retry|timed out after/, "not waited out for 60 s");
});
