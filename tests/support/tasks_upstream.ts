/**
 * An MCP upstream that runs tasks, on the official v1 SDK (MCP 2025-11-25
 * "Tasks": the `Server`'s `taskStore` option, which answers `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel`, and one `InMemoryTaskStore`
 * shared by every request), over stateless Streamable HTTP on 127.0.0.1, so
 * that several weir replicas reach the same tasks.
 *
 * Tools: `report` (`taskSupport: "optional"`): as a task, it completes once
 * the test calls `finish(topic)` (or at once for topic `"now"`), answering
 * `report on <topic>` and the `Authorization` header the task was created
 * with (so a test sees it redacted); `hang` (`"required"`) never completes
 * (cancel it); `plain` (forbidden); `echo` (optional: completes at once,
 * answering its arguments and the `task` it was created with, as JSON) and
 * `empty` (optional: completes at once with no content). Every created task
 * is recorded, and the `task` of every task-augmented call as sent.
 *
 * Also the client side of a tasks test: {@link rpc} and {@link refused}.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

const TOOLS = [
  {
    name: "report",
    description: "Writes a report on a topic.",
    inputSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
    execution: { taskSupport: "optional" },
  },
  {
    name: "hang",
    description: "Runs until cancelled.",
    inputSchema: { type: "object" },
    execution: { taskSupport: "required" },
  },
  { name: "plain", description: "Answers at once.", inputSchema: { type: "object" } },
  {
    name: "echo",
    description: "Answers its arguments.",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" }, key: { type: "string" } },
    },
    execution: { taskSupport: "optional" },
  },
  {
    name: "empty",
    description: "Answers nothing.",
    inputSchema: { type: "object" },
    execution: { taskSupport: "optional" },
  },
];

/** A running tasks upstream. */
export interface TasksUpstream {
  url: string;
  /** The upstream's task ids, in creation order. */
  created: string[];
  /** The `task` of each task-augmented call as it came on the wire (before the SDK parses it). */
  received: unknown[];
  /** Complete the `report` task of this topic. */
  finish(topic: string): Promise<void>;
  close(): Promise<void>;
}

type Extra = {
  taskStore?: { createTask(p: { ttl?: number }): Promise<{ taskId: string }> };
  requestInfo?: { headers?: Record<string, string | string[] | undefined> };
};
type Call = {
  params: { name: string; arguments?: Record<string, unknown>; task?: { ttl?: number } };
};

/** Start the upstream on a free port. */
export async function startTasksUpstream(): Promise<TasksUpstream> {
  const store = new InMemoryTaskStore();
  const created: string[] = [];
  const received: unknown[] = [];
  const waiting = new Map<string, { taskId: string; auth: string }[]>();
  const complete = async (taskId: string, topic: string, auth: string) => {
    await store.storeTaskResult(taskId, "completed", {
      content: [{ type: "text", text: `report on ${topic}; sent with ${auth}` }],
    });
  };
  const handle = async (request: Request): Promise<Response> => {
    const raw = await request.clone().json().catch(() => undefined);
    if (raw?.method === "tools/call" && raw.params?.task !== undefined) {
      received.push(raw.params.task);
    }
    const server = new Server({ name: "tasks-upstream", version: "1.0.0" }, {
      capabilities: {
        tools: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore: store,
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }) as never);
    server.setRequestHandler(CallToolRequestSchema, async (req: Call, extra: Extra) => {
      const { name, arguments: args = {}, task } = req.params;
      if (!task) {
        if (name === "plain") return { content: [{ type: "text", text: "plain ran" }] };
        return { content: [{ type: "text", text: `${name} ran without a task` }] };
      }
      const made = await extra.taskStore!.createTask({ ttl: task.ttl ?? 60_000 });
      created.push(made.taskId);
      if (name === "echo" || name === "empty") {
        const text = JSON.stringify({ arguments: args, task });
        await store.storeTaskResult(made.taskId, "completed", {
          content: name === "echo" ? [{ type: "text", text }] : [],
        });
      }
      const auth = String(request.headers.get("authorization") ?? "none");
      if (name === "report") {
        const topic = String(args.topic);
        if (topic === "now") await complete(made.taskId, topic, auth);
        else waiting.set(topic, [...waiting.get(topic) ?? [], { taskId: made.taskId, auth }]);
      }
      return { task: made } as never;
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    return await transport.handleRequest(request);
  };
  let resolvePort!: (port: number) => void;
  const port = new Promise<number>((r) => resolvePort = r);
  const http = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => resolvePort(port),
  }, handle);
  return {
    url: `http://127.0.0.1:${await port}/mcp`,
    created,
    received,
    async finish(topic) {
      for (const { taskId, auth } of waiting.get(topic) ?? []) await complete(taskId, topic, auth);
      waiting.delete(topic);
    },
    async close() {
      store.cleanup?.();
      await http.shutdown();
    },
  };
}

// deno-lint-ignore no-explicit-any
type Any = any;

/** One raw request of the v1 client (its typed helpers do not cover tasks/*). */
export function rpc(
  client: Client,
  method: string,
  params: Record<string, unknown>,
  schema: Any,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  return client.request({ method, params } as Any, schema);
}

/** The message of a request that must fail. */
export async function refused(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("it did not fail");
}
