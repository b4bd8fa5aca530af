/**
 * `weir serve-upstream` wrapping the official `server-everything` (npm) as a
 * stdio child, exactly as the README's client config runs it: only the
 * allowlisted tool is listed or callable, to the official v1 client over
 * stdio and the v2 client (2026-07-28) over HTTP. (server-everything offers
 * its sampling and elicitation tools only to a client declaring those
 * capabilities; weir declares none, so they are not even listed upstream.)
 */
import assert from "node:assert/strict";
import {
  everythingCommand,
  startWrapper,
  textOf,
  v1Stdio,
  v2Http,
  v2Stdio,
} from "../support/upstream_cli.ts";

Deno.test("serve-upstream over stdio wraps server-everything: exactly echo", async (t) => {
  await t.step("v1 client over stdio", async () => {
    const client = await v1Stdio(["--name", "ev", "--tool", "echo", "--", ...everythingCommand()]);
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
    assert.match(textOf(huge), /the upstream sent a message longer than 100000 bytes/);
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
