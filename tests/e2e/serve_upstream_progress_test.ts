/**
 * The upstream's progress for a call reaches the caller's `onprogress`
 * through serve-upstream, as a user runs it: an HTTP upstream built on the
 * official SDK (both revisions) and server-everything over stdio, weir over
 * HTTP and over stdio, the official v1 and v2 clients. Progress is
 * rate-bounded (a burst arrives thinned, still increasing) and the upstream's
 * last notification always arrives, before the result. Which notifications in
 * between are thinned depends on timing, so the assertions do not name them.
 * Nothing of the upstream's identity reaches the result.
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
  weirAll,
} from "../support/upstream_cli.ts";
import { type CallInput, startSdkUpstream } from "../support/sdk_upstream.ts";
import { assertProgressWithin } from "../support/progress.ts";
import { until } from "../support/wait.ts";

const TOOLS = [
  { name: "long", inputSchema: { type: "object" } },
  { name: "burst", inputSchema: { type: "object" } },
];

/**
 * Set while a client test runs: the upstream answers only once the client's `onprogress` has
 * seen a notification (bounded by `until`, 60 s). Without it, a loaded machine can hand the v1
 * client every notification in the same read as the result, which that client drops (see
 * tests/support/progress.ts), and "no progress reached the client" would depend on timing. If
 * weir forwarded no progress, the wait runs out, the result comes, and the test fails.
 */
let clientSawProgress: (() => boolean) | undefined;

async function onCall(input: CallInput) {
  if (input.name === "long") {
    for (let i = 1; i <= 4; i++) {
      await new Promise((r) => setTimeout(r, 150));
      await input.progress(i, 4, `step ${i}`);
    }
  } else {
    for (let i = 1; i <= 60; i++) await input.progress(i, 60);
  }
  const saw = clientSawProgress;
  if (saw) await until(saw);
  return { content: [{ type: "text", text: `${input.name} done` }] };
}

type Progressing = {
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    schema?: unknown,
    options?: { onprogress?: (p: { progress: number }) => void },
  ): Promise<Record<string, unknown>>;
};

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`serve-upstream (${revision} upstream): progress reaches onprogress, rate-bounded`, async (t) => {
    const up = await startSdkUpstream({ revision, framing: "sse", tools: TOOLS, onCall });
    const args = ["--tool", "long", "--tool", "burst", "--upstream", up.url];
    const weir = await startWrapper(args);
    try {
      const clients = [
        ["v1 over HTTP", () => v1Http(weir.url)],
        ["v2 over HTTP", () => v2Http(weir.url)],
        ["v1 over stdio", () => v1Stdio(args)],
      ] as const;
      for (const [label, connect] of clients) {
        await t.step(label, async () => {
          const client = await connect();
          try {
            const seen: number[] = [];
            const onprogress = (p: { progress: number }) => seen.push(p.progress);
            clientSawProgress = () => seen.length > 0;
            const call = (name: string) =>
              label.startsWith("v2")
                ? (client as unknown as {
                  callTool(p: unknown, o: unknown): Promise<Record<string, unknown>>;
                }).callTool({ name, arguments: {} }, { onprogress })
                : (client as unknown as Progressing).callTool(
                  { name, arguments: {} },
                  undefined,
                  { onprogress },
                );
            const result = await call("long");
            assert.equal(textOf(result), "long done");
            assertProgressWithin(seen, 4);
            // Nothing of the upstream's identity in the result.
            assert.ok(!JSON.stringify(result).includes("sdk-recording-upstream"));
            seen.length = 0;
            assert.equal(textOf(await call("burst")), "burst done");
            assert.ok(seen.length < 60, `${seen.length} of 60 forwarded`);
            assertProgressWithin(seen, 60);
          } finally {
            clientSawProgress = undefined;
            await client.close();
          }
        });
      }
    } finally {
      await weir.stop();
      await up.stop();
    }
  });
}

Deno.test("serve-upstream over server-everything (stdio): its progress reaches the client", async () => {
  await cacheEverything();
  const weir = await startWrapper([
    "--tool",
    "trigger-long-running-operation",
    "--",
    ...everythingCommand(),
  ]);
  const client = await v1Http(weir.url);
  try {
    const seen: number[] = [];
    const result = await (client as unknown as Progressing).callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 4 } },
      undefined,
      { onprogress: (p) => seen.push(p.progress) },
    );
    assert.match(textOf(result), /Long running operation completed/);
    assertProgressWithin(seen, 4);
  } finally {
    await client.close();
    await weir.stop();
  }
});

Deno.test("serve-upstream over stdio: the upstream's last progress is on the wire before the result, the burst thinned", async () => {
  const up = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "sse",
    tools: TOOLS,
    onCall,
  });
  const { command, args: pre } = weirAll();
  const child = new Deno.Command(command, {
    args: [...pre, "serve-upstream", "--tool", "burst", "--upstream", up.url, "--stdio"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "wire", version: "1" },
      },
    });
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "burst", arguments: {}, _meta: { progressToken: "p" } },
    });
    const progress: number[] = [];
    let result: Record<string, unknown> | undefined;
    let text = "";
    // Bounded: the read ends at the call's answer or when weir's output ends.
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      const lines = text.split("\n");
      text = lines.pop()!;
      for (const line of lines) {
        const message = JSON.parse(line);
        if (message.method === "notifications/progress") {
          assert.equal(result, undefined, "a progress notification after the result");
          assert.equal(message.params.progressToken, "p");
          progress.push(message.params.progress);
        } else if (message.id === 2) result = message.result;
      }
      if (result) break;
    }
    assert.equal(textOf(result!), "burst done");
    assert.equal(progress.at(-1), 60, JSON.stringify(progress));
    assert.ok(progress.length < 60, `${progress.length} of 60 forwarded`);
    assert.ok(progress.every((p, i) => i === 0 || p > progress[i - 1]), JSON.stringify(progress));
  } finally {
    await writer.close().catch(() => {});
    await child.stdout.cancel().catch(() => {});
    await child.status;
    await up.stop();
  }
});
