/**
 * `confirm "<tool>" message=`: a person says yes before a gated call reaches
 * the upstream. Driven through the real CLI with the official clients: v2
 * pinned to 2026-07-28 (input_required + retry), v1 on 2025-11-25 over stdio
 * (elicitation/create to the client) and over HTTP (impossible: refused), the
 * raw 2026-07-28 wire for forged and mismatched answers, and the tool API.
 */
import assert from "node:assert/strict";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { callApi, ROOT, runCli, serveHttp, tempGuardfile, weirCommand } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { confirmingClientV1, confirmingClientV2, type ElicitAction } from "../support/elicit.ts";
import { assertValidResponse, MODERN } from "../support/schemas.ts";

const guardfile = (upstream: string) =>
  tempGuardfile(`confirm "delete_ticket" message="Delete this ticket for good?"
wrap ward mcp tickets {
    base-url "${upstream}"
    auth none
    can delete ticket { path "/tickets/{id}" }
    can get ticket { path "/tickets/{id}" }
}
`);

type Action = ElicitAction;
const textOf = (r: { content?: unknown }) =>
  ((r.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");

Deno.test("confirm with the v2 client pinned to 2026-07-28 (input_required, then a retry)", async () => {
  const upstream = await startRecorder(() => Response.json({ deleted: true }));
  const file = await guardfile(upstream.url);
  const server = await serveHttp(file);
  const { client, answer } = confirmingClientV2<Action>("confirm-v2", "accept");
  const asked = answer.asked;
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    const ok = await client.callTool({ name: "delete_ticket", arguments: { id: "7" } });
    assert.equal(ok.isError, undefined, textOf(ok));
    assert.equal(upstream.requests.length, 1);
    assert.equal(upstream.requests[0].method, "DELETE");
    assert.equal(upstream.requests[0].path, "/tickets/7");
    assert.equal(asked.length, 1);
    assert.match(asked[0], /^Delete this ticket for good\?/);
    assert.match(
      asked[0],
      /Tool: delete_ticket\nRequest: DELETE \/tickets\/7\nArguments:\n {2}"id": "7"$/,
      "the tool, the request and the exact arguments",
    );

    for (const action of ["decline", "cancel"] as const) {
      answer.next = action;
      const no = await client.callTool({ name: "delete_ticket", arguments: { id: "8" } });
      assert.equal(no.isError, true);
      assert.match(textOf(no), new RegExp(`^confirmation_${action}`));
      assert.match(textOf(no), /nothing was sent upstream/);
    }
    assert.equal(upstream.requests.length, 1, "a decline or cancel never reaches the upstream");

    const plain = await client.callTool({ name: "get_ticket", arguments: { id: "7" } });
    assert.equal(plain.isError, undefined);
    assert.equal(asked.length, 3, "an ungated tool never asks");
  } finally {
    await client.close();
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("confirm with the v2 client pinned to 2026-07-28 over stdio", async () => {
  const upstream = await startRecorder(() => Response.json({ deleted: true }));
  const file = await guardfile(upstream.url);
  const { command, args } = weirCommand();
  const { client, answer } = confirmingClientV2<Action>("confirm-v2-stdio", "decline");
  const asked = answer.asked;
  try {
    await client.connect(
      new StdioV2({
        command,
        args: [...args, "serve", file, "--stdio"],
        cwd: ROOT,
        env: Deno.env.toObject(),
        stderr: "ignore",
      }),
    );
    const no = await client.callTool({ name: "delete_ticket", arguments: { id: "9" } });
    assert.equal(no.isError, true);
    assert.match(textOf(no), /^confirmation_declined/);
    assert.equal(upstream.requests.length, 0);
    answer.next = "accept";
    const ok = await client.callTool({ name: "delete_ticket", arguments: { id: "9" } });
    assert.equal(ok.isError, undefined, textOf(ok));
    assert.equal(upstream.requests.length, 1);
    assert.equal(asked.length, 2);
    assert.match(asked[1], /Request: DELETE \/tickets\/9\nArguments:\n {2}"id": "9"$/);
  } finally {
    await client.close();
    await upstream.close();
    await Deno.remove(file);
  }
});

/** Send 2026-07-28 `tools/call`s of delete_ticket over HTTP or stdio; each answer whole. */
function rawWire(
  transport: "HTTP" | "stdio",
  url: string,
  stdio?: { send(line: string): Promise<void>; next(): Promise<string> },
) {
  let id = 1;
  return async (
    params: Record<string, unknown>,
    caps: Record<string, unknown> = { elicitation: {} },
  ): Promise<
    {
      result?: Record<string, unknown>;
      error?: { code: number; message: string; data?: { reason?: string } };
    }
  > => {
    const message = JSON.stringify({
      jsonrpc: "2.0",
      id: id++,
      method: "tools/call",
      params: {
        name: "delete_ticket",
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": caps,
        },
      },
    });
    let text: string;
    if (transport === "stdio") {
      await stdio!.send(message);
      text = await stdio!.next();
    } else {
      const res = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "accept": "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "delete_ticket",
        },
        body: message,
      });
      text = await res.text();
    }
    return assertValidResponse(MODERN, text, "tools/call");
  };
}

/** A `weir serve --stdio` child spoken to line by line. */
function stdioChild(file: string) {
  const { command, args } = weirCommand();
  const child = new Deno.Command(command, {
    args: [...args, "serve", file, "--stdio"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  return {
    send: (line: string) => writer.write(new TextEncoder().encode(line + "\n")),
    async next(): Promise<string> {
      while (!buffered.includes("\n")) {
        const { done, value } = await lines.read();
        if (done) throw new Error("weir --stdio ended");
        buffered += value;
      }
      const at = buffered.indexOf("\n");
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      return line;
    },
    async close() {
      await writer.close();
      await lines.cancel().catch(() => {});
      await child.status;
    },
  };
}

/** Every way a client could alter a state it was given: one character, the ends, the shape. */
function tamperings(state: string, count: number): string[] {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  let x = state.length * 2654435761 >>> 0 || 1;
  const random = (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  const out = new Set<string>([
    "",
    "x",
    state + "-TAMPERED",
    state.slice(0, -1),
    state.slice(1),
    state.replace(".", ""),
    state + "." + state,
    state.split(".").reverse().join("."),
    "é" + state,
  ]);
  while (out.size < count) {
    const at = random(state.length);
    const swapped = alphabet[(alphabet.indexOf(state[at]) + 1 + random(63)) % 64];
    if (swapped !== state[at] && state[at] !== ".") {
      out.add(state.slice(0, at) + swapped + state.slice(at + 1));
    }
  }
  return [...out];
}

for (const transport of ["HTTP", "stdio"] as const) {
  Deno.test(`confirm on the raw 2026-07-28 wire (${transport}): a tampered, foreign or replayed requestState is -32602; only a missing answer asks again`, async () => {
    const upstream = await startRecorder(() => Response.json({ deleted: true }));
    const file = await guardfile(upstream.url);
    const server = await serveHttp(file);
    const child = transport === "stdio" ? stdioChild(file) : undefined;
    // Another weir process signs with its own key: its states are foreign here.
    const other = await serveHttp(file);
    const call = rawWire(transport, server.url, child);
    const callOther = rawWire("HTTP", other.url);
    const accept = { "weir/confirm": { action: "accept" } };
    const refusedAs = (
      answer: Awaited<ReturnType<typeof call>>,
      reason: string,
      what: string,
    ) => {
      assert.equal(answer.error?.code, -32602, `${what}: ${JSON.stringify(answer)}`);
      assert.match(answer.error!.message, /^Invalid requestState for "delete_ticket": it /, what);
      assert.match(answer.error!.message, /Call the tool again without requestState/, what);
      assert.equal(answer.error!.data?.reason, reason, what);
    };
    try {
      const first = (await call({ arguments: { id: "7" } })).result!;
      assert.equal(first.resultType, "input_required");
      const request = (first.inputRequests as Record<string, { method: string }>)["weir/confirm"];
      assert.equal(request.method, "elicitation/create");
      assert.equal("ttlMs" in first, false, "no cache hints on input_required");
      const state = first.requestState as string;

      // No state at all, or a valid one without an answer: asked (again), never an error.
      const bare = await call({ arguments: { id: "7" }, inputResponses: accept });
      assert.equal(bare.result?.resultType, "input_required", "an answer without the state asks");
      const unanswered = await call({
        arguments: { id: "7" },
        inputResponses: { wrong_key: { action: "accept" } },
        requestState: state,
      });
      assert.equal(
        unanswered.result?.resultType,
        "input_required",
        "no answer for it: asked again",
      );

      // Every alteration of the state is refused, naming why.
      for (const tampered of tamperings(state, 40)) {
        const answer = await call({
          arguments: { id: "7" },
          inputResponses: accept,
          requestState: tampered,
        });
        assert.ok(
          ["malformed", "unsigned"].includes(answer.error?.data?.reason ?? ""),
          `${JSON.stringify(tampered)}: ${JSON.stringify(answer)}`,
        );
        refusedAs(answer, answer.error!.data!.reason!, JSON.stringify(tampered));
      }
      // A genuine state for other arguments, or from another server, is refused too.
      refusedAs(
        await call({ arguments: { id: "8" }, inputResponses: accept, requestState: state }),
        "other_call",
        "other arguments",
      );
      const foreign = (await callOther({ arguments: { id: "7" } })).result!.requestState as string;
      refusedAs(
        await call({ arguments: { id: "7" }, inputResponses: accept, requestState: foreign }),
        "unsigned",
        "a state another server signed",
      );
      assert.equal(upstream.requests.length, 0, "nothing reached the upstream so far");

      const good = (await call({
        arguments: { id: "7" },
        inputResponses: accept,
        requestState: state,
      })).result!;
      assert.equal(good.resultType, "complete", JSON.stringify(good));
      assert.equal(good.isError, undefined);
      assert.equal(upstream.requests.length, 1);

      refusedAs(
        await call({ arguments: { id: "7" }, inputResponses: accept, requestState: state }),
        "spent",
        "a replay",
      );
      assert.equal(upstream.requests.length, 1, "an accepted answer runs the call once");

      // Without the elicitation capability: -32021 naming what to declare (2026-07-28).
      const noCap = await call({ arguments: { id: "7" } }, {});
      assert.equal(noCap.error?.code, -32021, JSON.stringify(noCap));
      assert.match(noCap.error!.message, /needs the elicitation capability this request did not/);
      assert.deepEqual(
        (noCap.error as { data?: unknown }).data,
        { requiredCapabilities: { elicitation: {} } },
      );

      const api = await callApi(server.url, "delete_ticket", { id: "7" });
      assert.equal(api.status, 403);
      assert.match(api.text, /confirmation_impossible: .*tool API cannot ask anyone/);
      assert.equal(upstream.requests.length, 1, "over /api a gated tool never runs");
    } finally {
      await child?.close();
      await server.stop();
      await other.stop();
      await upstream.close();
      await Deno.remove(file);
    }
  });
}

Deno.test("confirm with the v1 client on 2025-11-25: elicitation over stdio, impossible over HTTP", async () => {
  const upstream = await startRecorder(() => Response.json({ deleted: true }));
  const file = await guardfile(upstream.url);
  const { command, args } = weirCommand();
  const transport = new StdioClientTransport({
    command,
    args: [...args, "serve", file, "--stdio"],
    cwd: ROOT,
    env: Deno.env.toObject(),
    stderr: "pipe",
  });
  const { client, answer } = confirmingClientV1<Action>("confirm-v1", "accept");
  const asked = answer.asked;
  const server = await serveHttp(file);
  const overHttp = new ClientV1({ name: "confirm-v1-http", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  try {
    await client.connect(transport);
    const ok = await client.callTool({ name: "delete_ticket", arguments: { id: "3" } });
    assert.equal(ok.isError, undefined, textOf(ok));
    assert.equal(upstream.requests.length, 1);
    assert.match(
      asked[0],
      /^Delete this ticket for good\?\n\nTool: delete_ticket\nRequest: DELETE \/tickets\/3\nArguments:\n {2}"id": "3"$/,
    );
    answer.next = "decline";
    const no = await client.callTool({ name: "delete_ticket", arguments: { id: "4" } });
    assert.equal(no.isError, true);
    assert.match(textOf(no), /^confirmation_declined/);
    assert.equal(upstream.requests.length, 1);

    await overHttp.connect(new HttpV1(new URL(`${server.url}/mcp`)));
    const http = await overHttp.callTool({ name: "delete_ticket", arguments: { id: "5" } });
    assert.equal(http.isError, true);
    assert.match(
      textOf(http),
      /^confirmation_impossible: .*no server-to-client requests over HTTP/,
    );
    assert.equal(upstream.requests.length, 1);
  } finally {
    await client.close();
    await overHttp.close();
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("a v1 client that declares no elicitation over stdio is refused, nothing sent", async () => {
  const upstream = await startRecorder();
  const file = await guardfile(upstream.url);
  const { command, args } = weirCommand();
  const client = new ClientV1({ name: "no-elicitation", version: "1.0.0" });
  try {
    await client.connect(
      new StdioClientTransport({
        command,
        args: [...args, "serve", file, "--stdio"],
        cwd: ROOT,
        env: Deno.env.toObject(),
        stderr: "pipe",
      }),
    );
    const r = await client.callTool({ name: "delete_ticket", arguments: { id: "1" } });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /^confirmation_impossible/);
    assert.equal(upstream.requests.length, 0);
  } finally {
    await client.close();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("lint: confirm names a grant, once, with a non-empty message; a gated grant is not cached", async () => {
  const cases: [string, RegExp][] = [
    [`confirm`, /confirm needs the tool it gates/],
    [`confirm "nope_x"`, /"nope_x" is not a grant-backed tool/],
    [`confirm "delete_ticket" message=""`, /message= must be a non-empty/],
    [`confirm "delete_ticket" msg="x"`, /unknown property msg=/],
    [`confirm "delete_ticket"\nconfirm "delete_ticket"`, /is a duplicate/],
    [`confirm "weir_info"`, /not a grant-backed tool/],
    [`confirm "get_ticket"\ncache "get_ticket" ttl="1m"`, /skip the human gate/],
  ];
  for (const [nodes, expected] of cases) {
    const file = await tempGuardfile(
      `${nodes}\nwrap ward mcp t {\n  base-url "https://t.example"\n  auth none\n  can delete ticket { path "/t/{id}" }\n  can get ticket { path "/t/{id}" }\n}\n`,
    );
    try {
      const r = await runCli(["lint", file]);
      assert.equal(r.code, 1, nodes);
      assert.match(r.stderr, expected, `${nodes}\n${r.stderr}`);
    } finally {
      await Deno.remove(file);
    }
  }
});
