/**
 * A task is held to what its call is held to (issue 32 item 3, "the same caps,
 * redaction and audit as a call"), through the guardfile form served by the
 * CLI in front of an upstream on the official SDK's task store:
 *
 * - `tasks/result` is answered as the call would be: the tool's secret pin,
 *   echoed by the MCP server, is redacted; `reject-empty` refuses an empty
 *   result (audited `reject_empty`);
 * - `params.task` reaches the MCP server as `{ttl}` only; a `ttl` that is not
 *   a non-negative integer is refused and creates nothing;
 * - `tasks/cancel` leaves an audit line;
 * - a caller whose tools a reload narrowed no longer reaches a task of a tool
 *   it may no longer call (its handle, valid before, is "not found").
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { refused, rpc, startTasksUpstream } from "../support/tasks_upstream.ts";
import { until } from "../support/wait.ts";

const PIN = "pin-secret-0123456789abcdef";
const TOKEN = "ci-token-0123456789abcdefghij";

function file(url: string, tools: string): string {
  return `reject-empty "empty"
pin "echo" {
    argument "key" env "PIN_KEY" secret=#true
}
inbound-token ci {
    value env "CI_TOKEN"
    tools ${tools}
}
wrap ward mcp tasks {
    mcp-server http "${url}"
    proxy echo
    proxy empty
    proxy hang
}
`;
}

Deno.test("tasks are held to their call's controls: redaction, reject-empty, task metadata, audit, access", async () => {
  const upstream = await startTasksUpstream();
  const path = await tempGuardfile(file(upstream.url, `"echo" "empty" "hang"`));
  const served = await serveHttp(path, { env: { PIN_KEY: PIN, CI_TOKEN: TOKEN } });
  const client = new Client({ name: "weir-tasks-guard-test", version: "1.0.0" });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    // The pin is sent, and the MCP server's echo of it comes back redacted, as from a call.
    const echo = await rpc(client, "tools/call", {
      name: "echo",
      arguments: { text: "hi" },
      task: { ttl: 30_000, smuggled: { note: "for the upstream" } },
    }, CreateTaskResultSchema);
    const result = await rpc(
      client,
      "tasks/result",
      { taskId: echo.task.taskId },
      GetTaskPayloadResultSchema,
    );
    const text = result.content[0].text as string;
    assert.ok(!text.includes(PIN), text);
    assert.deepEqual(JSON.parse(text).arguments, { text: "hi", key: "[redacted]" });
    // Only the specification's task metadata reaches the MCP server.
    assert.deepEqual(upstream.received, [{ ttl: 30_000 }]);
    for (const task of [{ ttl: -1 }, { ttl: 1.5 }, { ttl: "60000" }]) {
      assert.match(
        await refused(() =>
          rpc(client, "tools/call", { name: "echo", arguments: {}, task }, CreateTaskResultSchema)
        ),
        /-32602.*ttl/,
      );
    }
    assert.equal(upstream.created.length, 1, "a refused task metadata creates nothing");
    // reject-empty holds for the task's result as for the call's.
    const empty = await rpc(
      client,
      "tools/call",
      { name: "empty", arguments: {}, task: {} },
      CreateTaskResultSchema,
    );
    const refusedEmpty = await rpc(
      client,
      "tasks/result",
      { taskId: empty.task.taskId },
      GetTaskPayloadResultSchema,
    );
    assert.equal(refusedEmpty.isError, true);
    assert.match(refusedEmpty.content[0].text, /^reject_empty: empty answered nothing/);
    assert.deepEqual(refusedEmpty._meta["io.modelcontextprotocol/related-task"], {
      taskId: empty.task.taskId,
    });
    // A task of "hang", cancelled: audited.
    const hang = await rpc(
      client,
      "tools/call",
      { name: "hang", arguments: {}, task: {} },
      CreateTaskResultSchema,
    );
    const hang2 = await rpc(
      client,
      "tools/call",
      { name: "hang", arguments: {}, task: {} },
      CreateTaskResultSchema,
    );
    const cancelled = await rpc(
      client,
      "tasks/cancel",
      { taskId: hang.task.taskId },
      CancelTaskResultSchema,
    );
    assert.equal(cancelled.status, "cancelled");
    // A reload narrows the caller's tools: its task of "hang" is no longer its to follow.
    await Deno.writeTextFile(path, file(upstream.url, `"echo" "empty"`));
    served.kill("SIGHUP");
    assert.ok(await until(() => served.stderr().includes(`"event":"reloaded"`)), "reloaded");
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      assert.match(
        await refused(() =>
          rpc(client, method, { taskId: hang2.task.taskId }, GetTaskResultSchema)
        ),
        /-32602.*Task not found.*"hang"/,
        method,
      );
    }
    // Its task of a tool it may still call is.
    assert.equal(
      (await rpc(client, "tasks/get", { taskId: echo.task.taskId }, GetTaskResultSchema)).status,
      "completed",
    );
  } finally {
    await client.close();
    await served.stop();
    await upstream.close();
  }
  const lines = served.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) =>
    JSON.parse(l)
  );
  const calls = lines.filter((l) => l.event === "tool_call");
  assert.ok(calls.some((l) => l.tool === "echo" && l.outcome === "ok"), "tasks/result audited");
  assert.ok(calls.some((l) => l.tool === "empty" && l.outcome === "reject_empty"));
  assert.ok(calls.some((l) => l.tool === "hang" && l.outcome === "task_cancelled"));
  assert.ok(!served.stderr().includes(PIN), "no secret in a log line");
});
