/**
 * OpenTelemetry through the real CLI against a real local OTLP/HTTP receiver
 * started here, which decodes what it receives (OTLP JSON encoding): a SERVER
 * span per MCP request, a CLIENT span per upstream call whose traceparent
 * reached the upstream, the metric mcp.server.operation.duration, and no
 * argument, result, token or upstream URL in any attribute. Off by default.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { MODERN_META } from "../support/mcp.ts";

const SECRET = "otel-upstream-secret-42";
const INBOUND = "otel-inbound-token-0123456789";
const MARKER = "zz-otel-argument-zz";
const RESULT = "zz-otel-result-zz";

interface Received {
  path: string;
  body: Record<string, unknown>;
}

function startReceiver() {
  const received: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const type = req.headers.get("content-type") ?? "";
    assert.match(type, /application\/json/, "the exporter sends OTLP JSON");
    received.push({ path: new URL(req.url).pathname, body: await req.json() });
    return Response.json({});
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, received, close: () => server.shutdown() };
}

type Span = {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: { key: string; value: Record<string, unknown> }[];
};

function spans(received: Received[]): Span[] {
  return received.filter((r) => r.path === "/v1/traces").flatMap((r) =>
    (r.body.resourceSpans as { scopeSpans: { spans: Span[] }[] }[]).flatMap((rs) =>
      rs.scopeSpans.flatMap((s) => s.spans)
    )
  );
}

const attr = (span: Span, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};

Deno.test("OTLP: spans per request and upstream call, the duration metric, nothing sensitive", async () => {
  const receiver = startReceiver();
  const upstream = await startRecorder(() => Response.json({ note: RESULT }));
  const file = await tempGuardfile(
    `wrap ward mcp traced {\n  base-url "${upstream.url}"\n  auth bearer { value env "OTEL_T_SECRET" }\n` +
      `  can get thing { path "/t/{id}"; query "q"; }\n}\n`,
  );
  const server = await serveHttp(file, {
    env: {
      OTEL_T_SECRET: SECRET,
      OTEL_T_INBOUND: INBOUND,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_METRIC_EXPORT_INTERVAL: "300",
    },
    extra: ["--inbound-token-env", "OTEL_T_INBOUND"],
  });
  const rpc = (id: number, method: string, params: Record<string, unknown>) =>
    fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        authorization: `Bearer ${INBOUND}`,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method,
        params: { ...params, _meta: MODERN_META },
      }),
    }).then((r) => r.json());
  try {
    await rpc(1, "tools/list", {});
    const ok = await rpc(2, "tools/call", {
      name: "get_thing",
      arguments: { id: MARKER, q: MARKER },
    });
    assert.match(JSON.stringify(ok), new RegExp(RESULT));
    await rpc(3, "tools/call", { name: "get_thing", arguments: { id: 7 } }); // schema refusal
  } finally {
    assert.equal(await server.stop(), 0);
    await upstream.close();
  }
  // The receiver got everything before exit (shutdown flushes); allow in-flight posts to land.
  for (let i = 0; i < 40 && !receiver.received.some((r) => r.path === "/v1/metrics"); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await receiver.close();

  const all = spans(receiver.received);
  const call = all.find((s) => s.name === "tools/call get_thing" && s.kind === 2);
  assert.ok(call, `no SERVER span "tools/call get_thing": ${all.map((s) => s.name)}`);
  assert.equal(attr(call, "mcp.method.name"), "tools/call");
  assert.equal(attr(call, "gen_ai.tool.name"), "get_thing");
  assert.equal(attr(call, "gen_ai.operation.name"), "execute_tool");
  assert.ok(all.some((s) => s.name === "tools/list" && s.kind === 2), "a span per request");
  const failed = all.filter((s) => s.name === "tools/call get_thing" && attr(s, "error.type"));
  assert.equal(failed.length, 1);
  assert.equal(attr(failed[0], "error.type"), "tool_error");

  const client = all.find((s) => s.kind === 3);
  assert.ok(client, "a CLIENT span for the upstream call");
  assert.equal(client.name, "GET /t/{id}");
  assert.equal(client.parentSpanId, call.spanId, "the upstream call is a child of the request");
  assert.equal(attr(client, "url.template"), "/t/{id}");
  assert.equal(attr(client, "http.response.status_code"), 200);
  const sent = upstream.requests[0].headers.get("traceparent");
  assert.equal(sent, `00-${client.traceId}-${client.spanId}-01`, "traceparent reached upstream");

  const metrics = receiver.received.filter((r) => r.path === "/v1/metrics");
  const text = JSON.stringify(metrics);
  assert.match(text, /"name":"mcp\.server\.operation\.duration"/);
  assert.match(text, /"unit":"s"/);
  assert.match(text, /"key":"mcp\.method\.name","value":\{"stringValue":"tools\/call"\}/);

  const everything = JSON.stringify(receiver.received);
  for (const sensitive of [MARKER, RESULT, SECRET, INBOUND, "?q=", upstream.url, "url.full"]) {
    assert.ok(!everything.includes(sensitive), `"${sensitive}" leaked into telemetry`);
  }
});

Deno.test("OTel is off without OTEL_* variables; an unsupported protocol stops start-up", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(
    `wrap ward mcp quiet {\n  base-url "${upstream.url}"\n  auth none\n  can get thing { path "/t/{id}"; }\n}\n`,
  );
  try {
    const server = await serveHttp(file);
    const r = await fetch(`${server.url}/api/get_thing`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "a" }),
    });
    await r.body?.cancel();
    assert.equal(await server.stop(), 0);
    assert.equal(upstream.requests[0].headers.get("traceparent"), null);
    const { runCli } = await import("../support/cli.ts");
    const bad = await runCli(["serve", file, "--stdio"], {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      },
    });
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc: weir exports OTLP over HTTP as JSON/,
    );
  } finally {
    await upstream.close();
  }
});

Deno.test("serve-upstream reads the same OTEL_* settings (an unsupported protocol stops it)", async () => {
  const { runCli } = await import("../support/cli.ts");
  const r = await runCli(
    [
      "serve-upstream",
      "--tool",
      "echo",
      "--http",
      "127.0.0.1:0",
      "--upstream",
      "http://127.0.0.1:9/mcp",
    ],
    {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      },
    },
  );
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /OTEL_EXPORTER_OTLP_PROTOCOL=http\/protobuf: weir exports OTLP over HTTP/);
});
