/**
 * OpenTelemetry across weir, through the real CLI against the local OTLP
 * receiver (tests/support/otlp.ts): a call through the HTTP tool API
 * (`POST /api/<tool>`) gets the SERVER span and the duration metric a
 * `tools/call` gets; a caller's W3C Trace Context (the `traceparent` and
 * `tracestate` headers, or `params._meta`) is continued as the SERVER span's
 * parent, and the same trace reaches the upstream: weir serve's HTTP
 * upstream, serve-upstream's MCP upstream, serve-ssm's signed AWS request.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { startMcpUpstream } from "../support/mcp_upstream.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { awsEnv, startSsmEndpoint } from "../support/aws.ts";
import { attr, OTEL_ENV, rpc, settle, type Span, spans, startReceiver } from "../support/otlp.ts";

/** A trace id and parent span id as a caller's tracer would make them. */
function callerContext(): { traceId: string; parentId: string; traceparent: string } {
  const hex = (n: number) =>
    Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, "0"))
      .join("");
  const traceId = hex(16);
  const parentId = hex(8);
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

Deno.test("OTLP: the tool API gets the tools/call span and metric; a caller's trace continues upstream", async () => {
  const receiver = startReceiver();
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const file = await tempGuardfile(
    `wrap ward mcp traced {\n  base-url "${upstream.url}"\n  auth none\n` +
      `  can get thing { path "/t/{id}"; }\n}\n`,
  );
  const server = await serveHttp(file, { env: OTEL_ENV(receiver) });
  const viaApiHeader = callerContext();
  const viaMcpHeader = callerContext();
  const viaMeta = callerContext();
  const api = (args: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/get_thing`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(args),
    }).then(async (r) => ({ status: r.status, body: await r.text() }));
  try {
    const plain = await api({ id: "a" });
    assert.equal(plain.status, 200, plain.body);
    const traced = await api({ id: "b" }, {
      traceparent: viaApiHeader.traceparent,
      tracestate: "vendor=opaque",
    });
    assert.equal(traced.status, 200, traced.body);
    assert.equal((await api({ id: true })).status, 400, "a refused argument");
    assert.equal((await api({ id: "c" }, { traceparent: "00-zz-not-a-context" })).status, 200);
    await rpc(server.url, 1, "tools/call", { name: "get_thing", arguments: { id: "d" } }, {
      traceparent: viaMcpHeader.traceparent,
    });
    // params._meta wins over the header (an MCP client's own context, e.g. over stdio).
    const meta = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        "mcp-protocol-version": "2025-11-25",
        traceparent: viaApiHeader.traceparent,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "get_thing",
          arguments: { id: "e" },
          _meta: { traceparent: viaMeta.traceparent },
        },
      }),
    });
    assert.equal(meta.status, 200, await meta.text());
  } finally {
    assert.equal(await server.stop(), 0);
    await upstream.close();
  }
  await settle(receiver);

  const all = spans(receiver.received);
  const servers = all.filter((s) => s.name === "tools/call get_thing" && s.kind === 2);
  assert.equal(servers.length, 6, `SERVER spans: ${all.map((s) => `${s.name}/${s.kind}`)}`);
  const refused = servers.filter((s) => attr(s, "error.type") === "invalid_params");
  assert.equal(refused.length, 1, "the refused tool API call fails its span as invalid params");
  const childOf = (server: Span) =>
    all.find((s) => s.kind === 3 && s.parentSpanId === server.spanId);
  const continuing = (ctx: { traceId: string; parentId: string }) => {
    const server = servers.find((s) => s.traceId === ctx.traceId);
    assert.ok(server, `a SERVER span in the caller's trace ${ctx.traceId}`);
    assert.equal(server.parentSpanId, ctx.parentId, "the caller's span is the parent");
    const client = childOf(server);
    assert.ok(client, "the upstream call is in the same trace");
    const sent = upstream.requests.find((r) =>
      r.headers.get("traceparent") === `00-${ctx.traceId}-${client.spanId}-01`
    );
    assert.ok(sent, "the upstream received the caller's trace id");
    return { server, sent };
  };
  const viaApi = continuing(viaApiHeader);
  assert.equal(viaApi.sent.headers.get("tracestate"), "vendor=opaque", "tracestate travels along");
  continuing(viaMcpHeader);
  continuing(viaMeta);
  // No context, or a malformed one: a new trace, still one span per call.
  const roots = servers.filter((s) => !s.parentSpanId);
  assert.equal(roots.length, 3);

  // The last export (cumulative) holds every call: the four tool API calls and the two tools/call.
  const exports = receiver.received.filter((r) => r.path === "/v1/metrics");
  type Point = {
    count: string | number;
    attributes: { key: string; value: { stringValue?: string } }[];
  };
  const metrics = (exports.at(-1)!.body.resourceMetrics as {
    scopeMetrics: { metrics: { name: string; histogram?: { dataPoints: Point[] } }[] }[];
  }[]).flatMap((r) => r.scopeMetrics.flatMap((m) => m.metrics));
  const duration = metrics.find((m) => m.name === "mcp.server.operation.duration");
  assert.ok(duration?.histogram, JSON.stringify(metrics.map((m) => m.name)));
  const calls = duration.histogram.dataPoints
    .filter((p) =>
      p.attributes.some((a) => a.key === "gen_ai.tool.name" && a.value.stringValue === "get_thing")
    )
    .reduce((n, p) => n + Number(p.count), 0);
  assert.equal(calls, 6, "every call is in the duration metric, tool API calls included");
});

Deno.test("OTLP: serve-upstream and serve-ssm continue a caller's trace to their upstream", async () => {
  const receiver = startReceiver();
  const mcp = await startMcpUpstream();
  const wrapper = await startWrapper(["--tool", "echo", "--upstream", mcp.url], {
    env: OTEL_ENV(receiver),
  });
  const name = "/forgejo/coilyco-ops/read-token";
  const ssm = startSsmEndpoint({ [name]: { type: "SecureString", value: "v" } });
  const aws = await serveHttp("guardfiles/ssm-forgejo-token.mcp.kdl", {
    command: "serve-ssm",
    env: awsEnv({ AWS_ENDPOINT_URL: ssm.url, ...OTEL_ENV(receiver) }),
  });
  const toMcp = callerContext();
  const toAws = callerContext();
  try {
    await rpc(wrapper.url, 1, "tools/call", { name: "echo", arguments: { message: "hi" } }, {
      traceparent: toMcp.traceparent,
    });
    const r = await fetch(`${aws.url}/api/get_parameter`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: toAws.traceparent },
      body: JSON.stringify({ name }),
    });
    assert.equal(r.status, 200, await r.text());
  } finally {
    assert.equal(await wrapper.stop(), 0);
    assert.equal(await aws.stop(), 0);
    await mcp.stop();
    await ssm.close();
  }
  await settle(receiver);

  const all = spans(receiver.received);
  for (const [ctx, client] of [[toMcp, "tools/call echo"], [toAws, "SSM.GetParameter"]] as const) {
    const server = all.find((s) => s.kind === 2 && s.traceId === ctx.traceId);
    assert.ok(server, `a SERVER span in the caller's trace: ${all.map((s) => s.name)}`);
    assert.equal(server.parentSpanId, ctx.parentId);
    const child = all.find((s) => s.kind === 3 && s.name === client && s.traceId === ctx.traceId);
    assert.ok(child, `${client} is in the caller's trace`);
    assert.equal(child.parentSpanId, server.spanId);
  }
  const echo = mcp.calls("echo")[0];
  assert.match(echo.headers.get("traceparent") ?? "", new RegExp(`^00-${toMcp.traceId}-`));
  assert.match(
    String((echo.params._meta as Record<string, unknown>)?.traceparent),
    new RegExp(`^00-${toMcp.traceId}-`),
  );
  assert.equal(ssm.requests[0].refused, undefined, "the signature over traceparent verified");
  assert.match(
    ssm.requests[0].headers.get("traceparent") ?? "",
    new RegExp(`^00-${toAws.traceId}-`),
  );
});
