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
