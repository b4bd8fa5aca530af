/**
 * MCP 2025-11-25 tasks carried through the wrap (issue 32 item 3), as users
 * run it: the shipped CLI and the official clients.
 *
 * - serve-upstream over server-everything (stdio; its `simulate-research-query`
 *   runs only as a task, on the official SDK): the `tasks` capability
 *   (without `list`), a task-augmented call answers a `CreateTaskResult`,
 *   `tasks/get`, `tasks/result` with the related task; the specification's
 *   refusals (a plain call of a task-only tool, a task on a tool without task
 *   support, `tasks/list`); a 2026-07-28 caller, which has no tasks, calls the
 *   task-only tool plainly and gets its result (weir runs the task upstream).
 * - Two replicas (same state keys) in front of one upstream on the official
 *   SDK's task store, two callers: a task made on one replica is followed on
 *   the other by the caller who made it, and is unknown to the other caller on
 *   either; the upstream's credential is redacted from the task's result; the
 *   calls leave audit lines; `tasks/cancel` cancels.
 * - The guardfile form: a renamed proxy runs as a task under its served name.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import {
  cacheEverything,
  everythingCommand,
  startWrapper,
  textOf,
  v2Stdio,
  weirAll,
} from "../support/upstream_cli.ts";
import { modernPost } from "../support/modern_http.ts";
import { refused, rpc, startTasksUpstream } from "../support/tasks_upstream.ts";
import { until } from "../support/wait.ts";

async function v1Token(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "weir-tasks-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

Deno.test("tasks through serve-upstream: server-everything's task-only tool, both revisions", async () => {
  await cacheEverything();
  const { command, args } = weirAll();
  const client = new Client({ name: "weir-tasks-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command,
      args: [
        ...args,
        "serve-upstream",
        "--tool",
        "simulate-research-query",
        "--tool",
        "echo",
        "--stdio",
        "--",
        ...everythingCommand(),
      ],
      stderr: "ignore",
    }),
  );
  try {
    assert.deepEqual(client.getServerCapabilities()?.tasks, {
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const created = await rpc(client, "tools/call", {
      name: "simulate-research-query",
      arguments: { topic: "owls" },
      task: { ttl: 60_000 },
    }, CreateTaskResultSchema);
    const { taskId, status } = created.task;
    assert.equal(status, "working");
    const got = await rpc(client, "tasks/get", { taskId }, GetTaskResultSchema);
    assert.equal(got.taskId, taskId);
    const result = await rpc(client, "tasks/result", { taskId }, GetTaskPayloadResultSchema);
    assert.match(result.content[0].text, /^# Research Report: owls/);
    assert.deepEqual(result._meta["io.modelcontextprotocol/related-task"], { taskId });
    assert.equal(
      (await rpc(client, "tasks/get", { taskId }, GetTaskResultSchema)).status,
      "completed",
    );
    // The specification's refusals (MCP 2025-11-25, Tasks: tool-level negotiation).
    assert.match(
      await refused(() =>
        rpc(client, "tools/call", {
          name: "simulate-research-query",
          arguments: { topic: "owls" },
        }, CallToolResultSchema)
      ),
      /-32601.*runs only as a task/,
    );
    assert.match(
      await refused(() =>
        rpc(client, "tools/call", {
          name: "echo",
          arguments: { message: "x" },
          task: {},
        }, CreateTaskResultSchema)
      ),
      /-32601.*does not run as a task/,
    );
    assert.match(await refused(() => rpc(client, "tasks/list", {}, GetTaskResultSchema)), /-32601/);
    assert.match(
      await refused(() => rpc(client, "tasks/get", { taskId: `${taskId}x` }, GetTaskResultSchema)),
      /-32602.*Task not found/,
    );
  } finally {
    await client.close();
  }
  // 2026-07-28 has no tasks: the task-only tool answers a plain call (weir runs the task upstream).
  const modern = await v2Stdio(["--tool", "simulate-research-query", "--", ...everythingCommand()]);
  try {
    const result = await modern.callTool({
      name: "simulate-research-query",
      arguments: { topic: "owls" },
    });
    assert.notEqual(result.isError, true);
    assert.match(textOf(result), /^# Research Report: owls/);
    // The upstream's task is the hop's: its id is not relayed.
    assert.equal(JSON.stringify(result).includes("related-task"), false, JSON.stringify(result));
  } finally {
    await modern.close();
  }
});

Deno.test("tasks across two replicas and two callers: bound to the caller, redacted, audited", async () => {
  const upstream = await startTasksUpstream();
  const env = {
    WEIR_STATE_KEYS: "tasks-test-state-key-0123456789abcdefghij",
    WEIR_TOKENS: "tasks-test-token-alice-0123456789,tasks-test-token-bob-0123456789",
    UPSTREAM_TOKEN: "upstream-secret-0123456789abcdef",
  };
  const [alice, bob] = env.WEIR_TOKENS.split(",");
  const flags = [
    "--tool",
    "report",
    "--tool",
    "hang",
    "--tool",
    "plain",
    "--upstream",
    upstream.url,
    "--upstream-header",
    "Authorization=Bearer {env:UPSTREAM_TOKEN}",
    "--inbound-token-env",
    "WEIR_TOKENS",
    "--state-keys-env",
    "WEIR_STATE_KEYS",
  ];
  const replicas = [await startWrapper(flags, { env }), await startWrapper(flags, { env })];
  const clients: Client[] = [];
  try {
    const [a1, a2, b1, b2] = await Promise.all([
      v1Token(replicas[0].url, alice),
      v1Token(replicas[1].url, alice),
      v1Token(replicas[0].url, bob),
      v1Token(replicas[1].url, bob),
    ]);
    clients.push(a1, a2, b1, b2);
    const made = await rpc(a1, "tools/call", {
      name: "report",
      arguments: { topic: "owls" },
      task: { ttl: 60_000 },
    }, CreateTaskResultSchema);
    const taskId = made.task.taskId;
    assert.equal(upstream.created.length, 1);
    assert.notEqual(
      taskId,
      upstream.created[0],
      "callers see a signed handle, not the upstream's id",
    );
    // The caller who made it follows it on the other replica.
    assert.equal((await rpc(a2, "tasks/get", { taskId }, GetTaskResultSchema)).status, "working");
    // Another caller, on either replica: unknown.
    for (const other of [b1, b2]) {
      for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
        assert.match(
          await refused(() => rpc(other, method, { taskId }, GetTaskResultSchema)),
          /-32602.*Task not found/,
          method,
        );
      }
    }
    // The upstream's own id is not a handle either.
    assert.match(
      await refused(() =>
        rpc(a1, "tasks/get", { taskId: upstream.created[0] }, GetTaskResultSchema)
      ),
      /-32602/,
    );
    const waiting = rpc(a2, "tasks/result", { taskId }, GetTaskPayloadResultSchema);
    await upstream.finish("owls");
    const result = await waiting;
    assert.equal(result.content[0].text, "report on owls; sent with Bearer [redacted]");
    assert.deepEqual(result._meta["io.modelcontextprotocol/related-task"], { taskId });
    // Cancel a task that runs until cancelled (bob's own, from the other replica).
    const hang = await rpc(
      b1,
      "tools/call",
      { name: "hang", arguments: {}, task: {} },
      CreateTaskResultSchema,
    );
    const cancelled = await rpc(
      b2,
      "tasks/cancel",
      { taskId: hang.task.taskId },
      CancelTaskResultSchema,
    );
    assert.equal(cancelled.status, "cancelled");
    assert.equal(cancelled.taskId, hang.task.taskId);
    // A plain call of an optional tool stays a plain call; 2026-07-28 has no tasks/*.
    const plain = await rpc(
      a1,
      "tools/call",
      { name: "report", arguments: { topic: "now" } },
      CallToolResultSchema,
    );
    assert.equal(plain.content[0].text, "report ran without a task");
    const modern = await modernPost(replicas[0].url, "tasks/get", { taskId }, { token: alice });
    assert.equal(modern.error?.code, -32601);
    const discovered = await modernPost(replicas[0].url, "server/discover", {}, { token: alice });
    assert.equal((discovered.result!.capabilities as Record<string, unknown>).tasks, undefined);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    const logs = await Promise.all(replicas.map(async (r) => (await r.stop(), r.stderr())));
    await upstream.close();
    const lines = logs.join("\n").split("\n").filter((l) => l.startsWith("{")).map((l) =>
      JSON.parse(l)
    );
    const calls = lines.filter((l) => l.event === "tool_call");
    assert.ok(calls.some((l) => l.tool === "report" && l.outcome === "task_created"));
    assert.ok(calls.some((l) => l.tool === "report" && l.outcome === "ok"), "tasks/result audited");
    assert.ok(!logs.join("").includes(env.UPSTREAM_TOKEN), "no secret in a log line");
  }
});

Deno.test("tasks through the guardfile form: a renamed proxy runs as a task", async () => {
  const upstream = await startTasksUpstream();
  const file = await tempGuardfile(`wrap ward mcp tasks {
    mcp-server http "${upstream.url}"
    proxy write_report {
        upstream "report"
        describe "Writes a report."
    }
}
`);
  const served = await serveHttp(file);
  const client = new Client({ name: "weir-tasks-test", version: "1.0.0" });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`)));
    const made = await rpc(client, "tools/call", {
      name: "write_report",
      arguments: { topic: "now" },
      task: {},
    }, CreateTaskResultSchema);
    const result = await rpc(
      client,
      "tasks/result",
      { taskId: made.task.taskId },
      GetTaskPayloadResultSchema,
    );
    assert.equal(result.content[0].text, "report on now; sent with none");
  } finally {
    await client.close();
    await served.stop();
    await upstream.close();
  }
});

Deno.test("tasks through the guardfile form: a secret pin the MCP server echoes in a task's result is redacted, as in a plain call's", async () => {
  const upstream = await startTasksUpstream();
  const TOPIC = "topic-secret-3f9a1c7e5b";
  const file = await tempGuardfile(
    `pin "write_report" { argument "topic" env "REPORT_TOPIC" secret=#true; }
wrap ward mcp tasks {
    mcp-server http "${upstream.url}"
    proxy write_report {
        upstream "report"
    }
}
`,
  );
  const served = await serveHttp(file, { env: { REPORT_TOPIC: TOPIC } });
  const client = new Client({ name: "weir-tasks-test", version: "1.0.0" });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`)));
    const made = await rpc(client, "tools/call", {
      name: "write_report",
      arguments: {},
      task: {},
    }, CreateTaskResultSchema);
    await upstream.finish(TOPIC);
    const result = await rpc(
      client,
      "tasks/result",
      { taskId: made.task.taskId },
      GetTaskPayloadResultSchema,
    );
    assert.equal(result.content[0].text, "report on [redacted]; sent with none");
    // One line for the task's creation, one for its result (written as the result goes out).
    const audit = () =>
      served.stderr().split("\n").filter((l) => l.includes('"tool":"write_report"'));
    await until(() => audit().length >= 2);
    assert.deepEqual(audit().map((l) => JSON.parse(l).outcome), ["task_created", "ok"]);
  } finally {
    await client.close();
    await served.stop();
    await upstream.close();
  }
});
