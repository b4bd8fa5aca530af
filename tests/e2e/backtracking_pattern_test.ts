/**
 * A `pattern` that backtracks exponentially (ReDoS) never reaches a call: a
 * guardfile that writes one fails lint (error naming the line and a rewrite)
 * and is not served; an upstream MCP server's tool whose schema holds one is
 * listed as a stub that refuses at once. Through the shipped CLI.
 */
import assert from "node:assert/strict";
import { callApi, ROOT, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";

const DEMO = await Deno.readTextFile(`${ROOT}guardfiles/demo.mcp.kdl`);

/** demo.mcp.kdl with `get ticket`'s id held to `pattern`. */
function demoWith(pattern: string): Promise<string> {
  const text = DEMO.replace(
    "    can get ticket {\n",
    `    can get ticket {\n        param "id" pattern="${pattern}"\n`,
  );
  assert.notEqual(text, DEMO);
  return tempGuardfile(text);
}

Deno.test("lint: an exponential slug pattern is an error with its line and a rewrite", async () => {
  const file = await demoWith("^([a-z0-9]+-?)+$");
  const line = (await Deno.readTextFile(file)).split("\n").findIndex((l) => l.includes("^(")) + 1;
  const out = await runCli(["lint", file]);
  assert.equal(out.code, 1, out.stderr);
  assert.match(out.stderr, new RegExp(`:${line}:\\d+: .*backtrack exponentially`));
  assert.match(out.stderr, /\^\[a-z0-9\]\+\(-\[a-z0-9\]\+\)\*-\?\$/);
  const served = await runCli(["serve", file, "--http", "127.0.0.1:0"], { limitMs: 60_000 });
  assert.equal(served.code, 1, served.stderr);
  assert.match(served.stderr, /backtrack exponentially/);
});

Deno.test("lint: the rewritten slug pattern is clean; a polynomial one is a warning", async () => {
  const clean = await runCli(["lint", await demoWith("^[a-z0-9]+(-[a-z0-9]+)*-?$")]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.doesNotMatch(clean.stderr + clean.stdout, /backtrack/);
  const slow = await runCli(["lint", await demoWith("^\\\\s*a*\\\\s*$")]);
  assert.equal(slow.code, 0, slow.stderr);
  assert.match(slow.stderr + slow.stdout, /backtrack polynomially/);
});

Deno.test("a wrapped MCP server's argument pattern that backtracks exponentially fails lint", async () => {
  const file = await tempGuardfile(`wrap ward mcp issues {
    mcp-server http "http://127.0.0.1:9/mcp"
    proxy find {
        upstream "search_issues"
        argument "org" pattern="^([a-z]+ ?)*$"
    }
}
`);
  const out = await runCli(["lint", file]);
  assert.equal(out.code, 1, out.stderr);
  assert.match(out.stderr, /:5:\d+: .*can backtrack exponentially/);
});

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`serve-upstream (${revision}): a tool listing ^(a+)+$ is a stub that refuses at once`, async () => {
    const upstream = await startSdkUpstream({
      revision,
      framing: "json",
      tools: [
        {
          name: "echo",
          inputSchema: {
            type: "object",
            properties: { s: { type: "string", pattern: "^(a+)+$" } },
          },
        },
        {
          name: "slug",
          inputSchema: {
            type: "object",
            properties: { s: { type: "string", pattern: "^[a-z0-9]+(-[a-z0-9]+)*-?$" } },
          },
        },
      ],
    });
    const weir = await serveHttp("--tool=echo", {
      command: "serve-upstream",
      extra: ["--tool", "slug", "--upstream", upstream.url],
    });
    try {
      const evil = { s: "a".repeat(40) + "!" };
      const echo = await callApi(weir.url, "echo", evil, { timeoutMs: 15_000 });
      assert.equal(echo.body.isError, true, JSON.stringify(echo.body));
      assert.match(echo.text, /not available|NOT AVAILABLE|backtrack exponentially/i);
      const slug = await callApi(weir.url, "slug", evil, { timeoutMs: 15_000 });
      assert.equal(slug.body.isError, true, JSON.stringify(slug.body));
      const fine = await callApi(weir.url, "slug", { s: "a-b" }, { timeoutMs: 15_000 });
      assert.equal(fine.text, "slug ran", JSON.stringify(fine.body));
      // Only the well-formed call reached the upstream.
      assert.deepEqual(upstream.calls().map((body) => JSON.parse(body).params.name), ["slug"]);
      const list = await fetch(`${weir.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }).then((r) => r.text());
      assert.match(list, /backtrack exponentially/);
    } finally {
      await weir.stop();
      await upstream.stop();
    }
  });
}

Deno.test("scaffold: an OpenAPI pattern that backtracks exponentially writes no file and says why", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const spec = `${dir}/api.json`;
    await Deno.writeTextFile(
      spec,
      JSON.stringify({
        openapi: "3.0.3",
        info: { title: "Items", version: "1" },
        servers: [{ url: "https://api.example.com" }],
        paths: {
          "/items/{id}": {
            get: {
              operationId: "getItem",
              parameters: [{
                name: "id",
                in: "path",
                required: true,
                schema: { type: "string", pattern: "^([a-z0-9]+-?)+$" },
              }],
              responses: { "200": { description: "ok" } },
            },
          },
        },
      }),
    );
    const output = `${dir}/items.mcp.kdl`;
    const out = await runCli(["scaffold", spec, "--select-reads", "--output", output]);
    assert.equal(out.code, 1, out.stderr);
    assert.match(out.stderr, /can backtrack exponentially/);
    assert.match(out.stderr, /no guardfile written/);
    await assert.rejects(Deno.stat(output), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
