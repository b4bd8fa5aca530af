/**
 * `weir serve-upstream` wrapping the official `server-everything` (npm) as a
 * stdio child, exactly as the client config in docs/wrapping-mcp-servers.md runs it: only the
 * allowlisted tool is listed or callable, to the official v1 client over
 * stdio and the v2 client (2026-07-28) over HTTP. (server-everything offers
 * its sampling and elicitation tools only to a client declaring those
 * capabilities; weir declares none, so they are not even listed upstream.)
 * Also its Streamable HTTP mode (sessions, SSE answers), restarted under weir.
 */
import assert from "node:assert/strict";
import {
  cacheEverything,
  everythingCommand,
  startWrapper,
  textOf,
  v1Http,
  v1Stdio,
  v2Http,
  v2Stdio,
} from "../support/upstream_cli.ts";

await cacheEverything();

Deno.test("serve-upstream over stdio wraps server-everything: exactly echo", async (t) => {
  await t.step("v1 client over stdio", async () => {
    const notifications: string[] = [];
    const client = await v1Stdio(
      ["--name", "ev", "--tool", "echo", "--", ...everythingCommand()],
      undefined,
      notifications,
    );
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name), ["echo"]);
      const r = await client.callTool({ name: "echo", arguments: { message: "hello" } });
      assert.equal(textOf(r), "Echo: hello");
      for (const other of ["get-env", "trigger-sampling-request", "gzip-file-as-resource"]) {
        await assert.rejects(
          client.callTool({ name: other, arguments: {} }),
          /Unknown tool/,
          other,
        );
      }
      // server-everything sends notifications/tools/list_changed right after its
      // handshake (and more); weir relays none of them.
      assert.deepEqual(notifications, []);
    } finally {
      await client.close();
    }
  });

  await t.step("v2 client (2026-07-28) over stdio", async () => {
    const client = await v2Stdio(["--name", "ev", "--tool", "echo", "--", ...everythingCommand()]);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name), ["echo"]);
      const r = await client.callTool({ name: "echo", arguments: { message: "modern" } });
      assert.equal(textOf(r), "Echo: modern");
      await assert.rejects(client.callTool({ name: "get-env", arguments: {} }), /Unknown tool/);
    } finally {
      await client.close();
    }
  });

  await t.step("v2 client (2026-07-28) over HTTP", async () => {
    const weir = await startWrapper([
      "--tool",
      "echo",
      "--tool",
      "get-sum",
      "--",
      ...everythingCommand(),
    ]);
    const client = await v2Http(weir.url);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name), ["echo", "get-sum"]);
      const r = await client.callTool({ name: "echo", arguments: { message: "modern" } });
      assert.equal(textOf(r), "Echo: modern");
      const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
      assert.match(textOf(sum), /42/);
      await assert.rejects(client.callTool({ name: "get-env", arguments: {} }), /Unknown tool/);
    } finally {
      await client.close();
      await weir.stop();
    }
  });
});

Deno.test("serve-upstream over stdio: a child that dies is started again; answers over the cap refused", async () => {
  const dir = await Deno.makeTempDir();
  const spawns = `${dir}/spawns.log`;
  const fixture = new URL("../fixtures/stdio_upstream.ts", import.meta.url).pathname;
  const weir = await startWrapper([
    ...["--tool", "echo", "--tool", "crash", "--tool", "huge", "--max-response-bytes", "100000"],
    ...["--", Deno.execPath(), "run", "--quiet", "--allow-env", "--allow-write", fixture],
  ], { env: { WEIR_TEST_SPAWN_LOG: spawns } });
  const client = await v2Http(weir.url);
  const started = async () => (await Deno.readTextFile(spawns)).trim().split("\n").length;
  try {
    assert.equal(
      textOf(await client.callTool({ name: "echo", arguments: { message: "a" } })),
      "echo: a",
    );
    assert.equal(await started(), 1);
    const crashed = await client.callTool({ name: "crash", arguments: {} });
    assert.equal(crashed.isError, true);
    assert.match(textOf(crashed), /upstream_unavailable: calling the tool: .*not retried/);
    assert.equal(
      textOf(await client.callTool({ name: "echo", arguments: { message: "b" } })),
      "echo: b",
    );
    assert.equal(await started(), 2, "one new child, and the crashing call was not sent again");
    const huge = await client.callTool({ name: "huge", arguments: { bytes: 500_000 } });
    assert.equal(huge.isError, true);
    assert.match(textOf(huge), /^upstream_too_large: calling the tool: .*over the 100000-byte cap/);
    assert.equal(
      textOf(await client.callTool({ name: "echo", arguments: { message: "c" } })),
      "echo: c",
    );
    const fine = await client.callTool({ name: "huge", arguments: { bytes: 5000 } });
    assert.equal(textOf(fine).length, 5000);
  } finally {
    await client.close();
    await weir.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

/** Start server-everything's Streamable HTTP mode (sessions, SSE answers) on `port`. */
async function everythingHttp(port: number): Promise<{ stop: () => Promise<void> }> {
  const [command, ...args] = everythingCommand();
  const child = new Deno.Command(command, {
    args: [...args.slice(0, -1), "streamableHttp"],
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // It says "listening on port N" on stderr.
  const outDone = child.stdout.pipeTo(new WritableStream());
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const giveUp = setTimeout(() => child.kill("SIGKILL"), 60_000);
  let out = "";
  while (!out.includes(`listening on port ${port}`)) {
    const { done, value } = await reader.read();
    if (done) break;
    out += value;
  }
  clearTimeout(giveUp);
  const drain = (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })();
  if (!out.includes(`listening on port ${port}`)) {
    await child.status;
    throw new Error(`server-everything did not listen:\n${out}`);
  }
  return {
    stop: async () => {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
      await drain.catch(() => {});
      await outDone.catch(() => {});
    },
  };
}

Deno.test("serve-upstream over HTTP wraps server-everything (sessions, SSE); its restart loses nothing but the session", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  let upstream = await everythingHttp(port);
  // Verifying before every call lists first, and that listing reconnects (a new
  // session) before the call is sent. (With the default bound, the first call
  // after the restart fails, not re-sent, and the next one reconnects.)
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--upstream",
    `http://127.0.0.1:${port}/mcp`,
    "--max-staleness",
    "0",
  ]);
  const client = await v1Http(weir.url);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name), ["echo"]);
    assert.equal(
      textOf(await client.callTool({ name: "echo", arguments: { message: "one" } })),
      "Echo: one",
    );
    await upstream.stop();
    upstream = await everythingHttp(port);
    // The old session is gone upstream: weir reconnects once, with a new session.
    assert.equal(
      textOf(await client.callTool({ name: "echo", arguments: { message: "two" } })),
      "Echo: two",
    );
    await assert.rejects(client.callTool({ name: "get-env", arguments: {} }), /Unknown tool/);
  } finally {
    await client.close();
    await weir.stop();
    await upstream.stop();
  }
});
