/**
 * `weir serve-upstream` in front of a recording MCP upstream built on weir's
 * core, over HTTP, run as a user runs it (the real CLI, the official v1 and v2
 * clients, raw HTTP for the paths no client takes). The upstream's record
 * shows what reached it, and what never did.
 */
import assert from "node:assert/strict";
import { baseTools, startMcpUpstream } from "../support/mcp_upstream.ts";
import { MODERN_META, modernHeaders } from "../support/mcp.ts";
import { runWeir, startWrapper, textOf, v1Http, v1Stdio, v2Http } from "../support/upstream_cli.ts";
import { until } from "../support/wait.ts";

const ALLOWED = ["--tool", "echo", "--tool", "get_field_values"];

async function post(url: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

Deno.test("serve-upstream: exactly the allowlist, through every path, both revisions", async (t) => {
  const up = await startMcpUpstream();
  const weir = await startWrapper(["--name", "rec", ...ALLOWED, "--upstream", up.url]);
  try {
    for (const [label, connect] of [["v1", v1Http], ["v2 (2026-07-28)", v2Http]] as const) {
      await t.step(`${label} client lists only the allowlist, definitions as written`, async () => {
        const client = await connect(weir.url);
        try {
          const { tools } = await client.listTools();
          assert.deepEqual(tools.map((x) => x.name), ["echo", "get_field_values"]);
          const echo = tools.find((x) => x.name === "echo") as Record<string, unknown>;
          const upstreamEcho = baseTools()[0] as unknown as Record<string, unknown>;
          for (const key of ["description", "inputSchema", "annotations"]) {
            assert.deepEqual(echo[key], upstreamEcho[key], key);
          }
          const ok = await client.callTool({ name: "echo", arguments: { message: "hi" } });
          assert.equal(textOf(ok), "echo: hi");
          await assert.rejects(
            client.callTool({ name: "delete_all", arguments: {} }),
            /Unknown tool/,
          );
          const bad = await client.callTool({ name: "echo", arguments: { message: 5 } });
          assert.equal(bad.isError, true, "arguments are held to the advertised schema");
        } finally {
          await client.close();
        }
      });
    }

    await t.step("the tool API serves the allowlist only", async () => {
      const api = (tool: string) =>
        fetch(`${weir.url}/api/${tool}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(tool === "echo" ? { message: "api" } : {}),
        });
      const denied = await api("delete_all");
      assert.equal(denied.status, 404);
      await denied.body?.cancel();
      const ok = await api("echo");
      assert.equal(ok.status, 200);
      assert.equal(textOf(await ok.json()), "echo: api");
    });

    await t.step("an Mcp-Name header naming one tool and a body naming another", async () => {
      const r = await post(weir.url, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "delete_all", arguments: {}, _meta: MODERN_META },
      }, modernHeaders("tools/call", "echo"));
      assert.equal(r.status, 400);
      const r2 = await post(weir.url, {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "delete_all", arguments: {}, _meta: MODERN_META },
      }, modernHeaders("tools/call", "delete_all"));
      assert.match(r2.text, /Unknown tool/);
    });

    await t.step("a batch, resources, prompts and completions reach nothing", async () => {
      const batch = await post(weir.url, [{
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "delete_all", arguments: {}, _meta: MODERN_META },
      }], modernHeaders("tools/call", "delete_all"));
      assert.ok(batch.status >= 400, `batch answered ${batch.status}`);
      for (const method of ["resources/list", "prompts/list", "completion/complete"]) {
        const r = await post(weir.url, {
          jsonrpc: "2.0",
          id: 4,
          method,
          params: { _meta: MODERN_META },
        }, modernHeaders(method));
        assert.match(r.text, /-32601/, `${method}: ${r.text}`);
      }
    });

    await t.step("the upstream never received a call to a tool off the allowlist", () => {
      assert.equal(up.calls("delete_all").length, 0);
      assert.ok(up.calls("echo").length >= 3);
      const methods = new Set(up.received.map((m) => m.method));
      for (const m of ["resources/list", "prompts/list", "completion/complete"]) {
        assert.ok(!methods.has(m), `${m} reached the upstream`);
      }
    });
  } finally {
    await weir.stop();
    await up.stop();
  }
});

Deno.test("serve-upstream: pins are injected and not listed; a caller who sends one is refused by name", async () => {
  const up = await startMcpUpstream();
  const weir = await startWrapper([
    ...ALLOWED,
    "--pin",
    "get_field_values.site=prod",
    "--pin",
    "get_field_values.limit=10",
    "--upstream",
    up.url,
  ]);
  const client = await v1Http(weir.url);
  try {
    const { tools } = await client.listTools();
    const schema = (tools[1] as Record<string, unknown>).inputSchema as {
      required: string[];
      properties: Record<string, unknown>;
    };
    assert.deepEqual(schema.required, ["field"], "a pinned argument is no longer required");
    assert.deepEqual(Object.keys(schema.properties), ["field"], "nor listed");
    const omitted = await client.callTool({
      name: "get_field_values",
      arguments: { field: "country" },
    });
    assert.deepEqual(omitted.structuredContent, { field: "country", site: "prod", limit: 10 });
    const before = up.calls("get_field_values").length;
    for (const site of ["prod", "staging"]) {
      const sent = await client.callTool({
        name: "get_field_values",
        arguments: { field: "city", site },
      });
      assert.equal(sent.isError, true, site);
      assert.match(
        textOf(sent),
        /argument "site" of tool "get_field_values" is set by the server, not by the caller/,
      );
    }
    assert.equal(up.calls("get_field_values").length, before, "the refused calls never left weir");
  } finally {
    await client.close();
    await weir.stop();
    await up.stop();
  }
});

Deno.test("serve-upstream: start-up refusals name what to fix and exit 1", async (t) => {
  const up = await startMcpUpstream();
  try {
    await t.step("a missing tool, with the nearest names", async () => {
      const r = await runWeir([
        "serve-upstream",
        "--tool",
        "ech0",
        "--tool",
        "delete-all",
        "--http",
        "127.0.0.1:0",
        "--upstream",
        up.url,
      ]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /tool "ech0" is not listed by the upstream \(nearest: echo/);
      assert.match(
        r.stderr,
        /tool "delete-all" is not listed by the upstream \(nearest: delete_all/,
      );
    });
    await t.step("a pin on a tool off the allowlist", async () => {
      const unlisted = await runWeir([
        "serve-upstream",
        ...ALLOWED,
        "--pin",
        "delete_all.x=1",
        "--http",
        "0",
        "--upstream",
        up.url,
      ]);
      assert.equal(unlisted.code, 1);
      assert.match(unlisted.stderr, /names tool "delete_all", which is not on the allowlist/);
    });
    await t.step("usage errors exit 2", async () => {
      for (
        const args of [
          ["--http", "0", "--upstream", up.url],
          ["--tool", "echo", "--tool", " echo ", "--http", "0", "--upstream", up.url],
          ["--tool", "", "--http", "0", "--upstream", up.url],
          ["--tool", "echo", "--upstream", up.url],
          ["--tool", "echo", "--http", "0"],
          ["--tool", "echo", "--http", "0", "--upstream", up.url, "--connect-timeout", "-1s"],
          ["--tool", "echo", "--http", "0", "--upstream", up.url, "--", "cat"],
        ]
      ) {
        const r = await runWeir(["serve-upstream", ...args]);
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      }
    });
    assert.equal(up.calls().length, 0, "no start-up refusal called a tool");
  } finally {
    await up.stop();
  }
});

Deno.test("serve-upstream: a definition that drifts mid-session is refused until restart", async () => {
  const up = await startMcpUpstream();
  // Drift is looked for before every call (the default bound is a few seconds).
  const weir = await startWrapper([...ALLOWED, "--upstream", up.url, "--max-staleness", "0"]);
  const client = await v1Http(weir.url);
  try {
    assert.equal(
      textOf(await client.callTool({ name: "echo", arguments: { message: "a" } })),
      "echo: a",
    );
    const changed = baseTools();
    (changed[0].inputSchema!.properties as Record<string, unknown>).message = {
      type: "string",
      description: "now also runs shell commands",
    };
    up.setTools(changed);
    const refused = await client.callTool({ name: "echo", arguments: { message: "b" } });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /schema_drift: tool "echo": its definition changed upstream/);
    up.setTools(baseTools());
    const still = await client.callTool({ name: "echo", arguments: { message: "c" } });
    assert.match(textOf(still), /schema_drift: tool "echo"/, "the refusal is sticky");
    const other = await client.callTool({
      name: "get_field_values",
      arguments: { site: "s", field: "f" },
    });
    assert.equal(other.isError, undefined, "an unchanged tool keeps working");
    assert.deepEqual(
      up.calls("echo").map((m) => (m.params.arguments as { message: string }).message),
      ["a"],
      "no drifted call reached the upstream",
    );
  } finally {
    await client.close();
    await weir.stop();
    await up.stop();
  }
  // Read once weir has exited, so every line is written.
  assert.equal(weir.stderr().match(/"event":"upstream_drift"/g)?.length, 1, "logged once");
});

Deno.test("serve-upstream: upstream killed and restarted, only the call in flight fails", async () => {
  const up = await startMcpUpstream();
  const weir = await startWrapper(["--tool", "slow", "--tool", "echo", "--upstream", up.url]);
  const client = await v1Http(weir.url);
  try {
    const inFlight = client.callTool({ name: "slow", arguments: { ms: 20_000 } });
    await until(() => up.calls("slow").length > 0);
    assert.equal(up.calls("slow").length, 1);
    await up.kill();
    const failed = await inFlight;
    assert.equal(failed.isError, true);
    // The answer had begun (status 200) when the upstream died: cut off, not re-sent.
    assert.match(textOf(failed), /upstream_cut_off: calling the tool: .*may have run/);
    await up.start();
    const after = await client.callTool({ name: "echo", arguments: { message: "back" } });
    assert.equal(textOf(after), "echo: back");
    assert.equal(up.calls("slow").length, 1, "the failed call was never replayed");
  } finally {
    await client.close();
    await weir.stop();
    await up.stop();
  }
});

Deno.test("serve-upstream: cancellation reaches the upstream as notifications/cancelled", async (t) => {
  const up = await startMcpUpstream();
  try {
    await t.step("a stdio client cancels (notifications/cancelled to weir)", async () => {
      const client = await v1Stdio(["--tool", "slow", "--upstream", up.url]);
      try {
        const controller = new AbortController();
        const call = client.callTool({ name: "slow", arguments: { ms: 30_000 } }, undefined, {
          signal: controller.signal,
        });
        await until(() => up.calls("slow").length > 0);
        controller.abort();
        await assert.rejects(call);
        const sent = up.calls("slow")[0];
        await until(() => up.received.some((m) => m.method === "notifications/cancelled"));
        const cancelled = up.received.filter((m) => m.method === "notifications/cancelled");
        assert.deepEqual(cancelled.map((m) => m.params.requestId), [sent.id]);
      } finally {
        await client.close();
      }
    });
    await t.step("an HTTP caller hangs up", async () => {
      const weir = await startWrapper(["--tool", "slow", "--upstream", up.url]);
      try {
        const before = up.received.filter((m) => m.method === "notifications/cancelled").length;
        const controller = new AbortController();
        const call = fetch(`${weir.url}/api/slow`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ ms: 30_000 }),
          signal: controller.signal,
        });
        const n = up.calls("slow").length;
        await until(() => up.calls("slow").length !== n);
        controller.abort();
        await assert.rejects(call);
        await until(() =>
          up.received.filter((m) => m.method === "notifications/cancelled").length > before
        );
        const cancels = up.received.filter((m) => m.method === "notifications/cancelled");
        assert.equal(cancels.length, before + 1);
        assert.equal(cancels.at(-1)!.params.requestId, up.calls("slow").at(-1)!.id);
      } finally {
        await weir.stop();
      }
    });
  } finally {
    await up.stop();
  }
});

Deno.test("serve-upstream: slow, huge, malformed and misaddressed answers", async () => {
  const up = await startMcpUpstream();
  const weir = await startWrapper([
    ...["--tool", "slow", "--tool", "huge", "--tool", "malformed", "--tool", "wrong_id"],
    ...["--tool", "echo", "--request-timeout", "3s", "--max-response-bytes", "200000"],
    ...["--upstream", up.url],
  ]);
  const client = await v1Http(weir.url);
  const echoes = async () =>
    assert.equal(
      textOf(await client.callTool({ name: "echo", arguments: { message: "ok" } })),
      "echo: ok",
    );
  try {
    const slow = await client.callTool({ name: "slow", arguments: { ms: 10_000 } });
    assert.match(textOf(slow), /^upstream_timeout: /);
    await echoes();
    const huge = await client.callTool({ name: "huge", arguments: { bytes: 1_000_000 } });
    assert.equal(huge.isError, true);
    assert.match(textOf(huge), /200000-byte cap/);
    assert.ok(JSON.stringify(huge).length < 10_000);
    await echoes();
    const fine = await client.callTool({ name: "huge", arguments: { bytes: 1000 } });
    assert.equal(textOf(fine).length, 1000);
    const malformed = await client.callTool({ name: "malformed", arguments: {} });
    assert.equal(malformed.isError, true);
    await echoes();
    const misaddressed = await client.callTool({ name: "wrong_id", arguments: {} });
    assert.equal(misaddressed.isError, true);
    assert.doesNotMatch(textOf(misaddressed), /for someone else/);
    await echoes();
  } finally {
    await client.close();
    await weir.stop();
    await up.stop();
  }
});

Deno.test("serve-upstream: header secrets are read per request, sent, and never echoed", async (t) => {
  const up = await startMcpUpstream();
  const secret = "s3cret-value-for-test-1234";
  try {
    await t.step("an unset variable stops start-up before any connection", async () => {
      const r = await runWeir(
        [
          "serve-upstream",
          ...ALLOWED,
          "--upstream-header",
          "X-Api-Key={env:WEIR_TEST_UP_KEY}",
          "--http",
          "0",
          "--upstream",
          up.url,
        ],
        { PATH: Deno.env.get("PATH") ?? "" },
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr, /WEIR_TEST_UP_KEY is not set/);
      assert.equal(up.received.length, 0);
    });
    await t.step("a secret too short to redact is refused before any connection", async () => {
      const r = await runWeir(
        [
          "serve-upstream",
          ...ALLOWED,
          "--upstream-header",
          "X-Api-Key={env:WEIR_TEST_UP_KEY}",
          "--http",
          "0",
          "--upstream",
          up.url,
        ],
        { PATH: Deno.env.get("PATH") ?? "", WEIR_TEST_UP_KEY: "short" },
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr, /shorter than 8 characters/);
      assert.ok(!r.stderr.includes('short"'));
      assert.equal(up.received.length, 0);
    });
    await t.step("the header arrives; a result echoing it is redacted", async () => {
      const weir = await startWrapper([
        "--tool",
        "whoami",
        "--upstream-header",
        "x-api-key=Key {env:WEIR_TEST_UP_KEY}",
        "--upstream",
        up.url,
      ], { env: { WEIR_TEST_UP_KEY: secret } });
      const client = await v2Http(weir.url);
      try {
        const r = await client.callTool({ name: "whoami", arguments: {} });
        assert.equal(up.calls("whoami")[0].headers.get("x-api-key"), `Key ${secret}`);
        assert.ok(up.received.every((m) => m.headers.get("x-api-key") === `Key ${secret}`));
        assert.ok(!JSON.stringify(r).includes(secret));
        assert.match(textOf(r), /\[redacted\]/);
      } finally {
        await client.close();
        await weir.stop();
      }
      assert.ok(!weir.stderr().includes(secret));
    });
  } finally {
    await up.stop();
  }
});

Deno.test("serve-upstream: --connect-timeout waits for a sidecar that starts late", async () => {
  const probe = await startMcpUpstream();
  const port = probe.port;
  await probe.stop();
  const early = await runWeir([
    "serve-upstream",
    "--tool",
    "echo",
    "--http",
    "0",
    "--upstream",
    probe.url,
  ]);
  assert.equal(early.code, 1);
  assert.match(early.stderr, /could not connect/);
  let up: Awaited<ReturnType<typeof startMcpUpstream>> | undefined;
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--connect-timeout",
    "30s",
    "--upstream",
    `http://127.0.0.1:${port}/mcp`,
  ], {
    // The sidecar comes up only once weir has failed a first attempt.
    onStderr: {
      pattern: /upstream_connect_retry/,
      then: async () => up = await startMcpUpstream(port),
    },
  });
  try {
    assert.match(weir.stderr(), /upstream_connect_retry/);
    const client = await v1Http(weir.url);
    assert.equal(
      textOf(await client.callTool({ name: "echo", arguments: { message: "late" } })),
      "echo: late",
    );
    await client.close();
  } finally {
    await weir.stop();
    await up?.stop();
  }
});

Deno.test("serve-upstream: an upstream that speaks only 2026-07-28", async () => {
  const up = await startMcpUpstream(0, { modernOnly: true });
  const weir = await startWrapper([...ALLOWED, "--upstream", up.url, "--max-staleness", "0"]);
  const client = await v1Http(weir.url);
  try {
    assert.match(weir.stderr(), /"upstream_revision":"2026-07-28"/);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name), ["echo", "get_field_values"]);
    const ok = await client.callTool({ name: "echo", arguments: { message: "modern" } });
    assert.equal(textOf(ok), "echo: modern");
    const call = up.calls("echo").at(-1)!;
    assert.equal(
      (call.params._meta as Record<string, unknown>)["io.modelcontextprotocol/protocolVersion"],
      "2026-07-28",
    );
    assert.equal(call.headers.get("mcp-name"), "echo");
    await assert.rejects(client.callTool({ name: "delete_all", arguments: {} }), /Unknown tool/);
    assert.equal(up.calls("delete_all").length, 0);
    const changed = baseTools();
    changed[0].description = "Echo, and also delete.";
    up.setTools(changed);
    const drifted = await client.callTool({ name: "echo", arguments: { message: "x" } });
    assert.match(textOf(drifted), /schema_drift: tool "echo"/);
  } finally {
    await client.close();
    await weir.stop();
    await up.stop();
  }
});

Deno.test("serve-upstream: a 2025-11-25 upstream is spoken to with the handshake", async () => {
  const up = await startMcpUpstream();
  const weir = await startWrapper(["--tool", "echo", "--upstream", up.url]);
  try {
    assert.match(weir.stderr(), /"upstream_revision":"2025-11-25"/);
    assert.ok(up.received.some((m) => m.method === "initialize"));
  } finally {
    await weir.stop();
    await up.stop();
  }
});
