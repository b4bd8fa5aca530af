/**
 * OpenTelemetry through the real CLI against a real local OTLP/HTTP receiver
 * started here, which decodes what it receives (OTLP JSON encoding): a SERVER
 * span per MCP request, a CLIENT span per upstream call whose traceparent
 * reached the upstream (weir serve's HTTP upstream, serve-upstream's MCP
 * upstream over Streamable HTTP and over stdio (a span, no header), serve-ssm's
 * signed AWS request), the metrics mcp.server.operation.duration and
 * mcp.client.operation.duration, and no argument, result, token or upstream
 * URL in any attribute. Off by default.
 */
import assert from "node:assert/strict";
import { ROOT, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import {
  assertNothingSensitive,
  attr,
  OTEL_ENV,
  rpc,
  settle,
  spans,
  startReceiver,
} from "../support/otlp.ts";
import { startMcpUpstream } from "../support/mcp_upstream.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { awsEnv, CREDENTIALS, startSsmEndpoint } from "../support/aws.ts";
import { freePort } from "../support/port.ts";
import { until } from "../support/wait.ts";

const SECRET = "otel-upstream-secret-42";
const INBOUND = "otel-inbound-token-0123456789";
const MARKER = "zz-otel-argument-zz";
const RESULT = "zz-otel-result-zz";

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
      ...OTEL_ENV(receiver),
    },
    extra: ["--inbound-token-env", "OTEL_T_INBOUND"],
  });
  const call = (id: number, method: string, params: Record<string, unknown>) =>
    rpc(server.url, id, method, params, { authorization: `Bearer ${INBOUND}` });
  try {
    await call(1, "tools/list", {});
    const ok = await call(2, "tools/call", {
      name: "get_thing",
      arguments: { id: MARKER, q: MARKER },
    });
    assert.match(JSON.stringify(ok), new RegExp(RESULT));
    await call(3, "tools/call", { name: "get_thing", arguments: { id: true } }); // schema refusal
  } finally {
    assert.equal(await server.stop(), 0);
    await upstream.close();
  }
  // The receiver got everything before exit (shutdown flushes); allow in-flight posts to land.
  await settle(receiver);

  const all = spans(receiver.received);
  const served = all.find((s) => s.name === "tools/call get_thing" && s.kind === 2);
  assert.ok(served, `no SERVER span "tools/call get_thing": ${all.map((s) => s.name)}`);
  assert.equal(attr(served, "mcp.method.name"), "tools/call");
  assert.equal(attr(served, "gen_ai.tool.name"), "get_thing");
  assert.equal(attr(served, "gen_ai.operation.name"), "execute_tool");
  assert.ok(all.some((s) => s.name === "tools/list" && s.kind === 2), "a span per request");
  const failed = all.filter((s) => s.name === "tools/call get_thing" && attr(s, "error.type"));
  assert.equal(failed.length, 1);
  assert.equal(attr(failed[0], "error.type"), "tool_error");

  const client = all.find((s) => s.kind === 3);
  assert.ok(client, "a CLIENT span for the upstream call");
  assert.equal(client.name, "GET /t/{id}");
  assert.equal(client.parentSpanId, served.spanId, "the upstream call is a child of the request");
  assert.equal(attr(client, "url.template"), "/t/{id}");
  assert.equal(attr(client, "http.response.status_code"), 200);
  const sent = upstream.requests[0].headers.get("traceparent");
  assert.equal(sent, `00-${client.traceId}-${client.spanId}-01`, "traceparent reached upstream");

  const metrics = receiver.received.filter((r) => r.path === "/v1/metrics");
  const text = JSON.stringify(metrics);
  assert.match(text, /"name":"mcp\.server\.operation\.duration"/);
  assert.match(text, /"unit":"s"/);
  assert.match(text, /"key":"mcp\.method\.name","value":\{"stringValue":"tools\/call"\}/);

  assertNothingSensitive(receiver.received, [
    MARKER,
    RESULT,
    SECRET,
    INBOUND,
    "?q=",
    upstream.url,
    "url.full",
  ]);
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

Deno.test("OTLP: serve-upstream's upstream calls get CLIENT spans; traceparent over Streamable HTTP", async () => {
  const receiver = startReceiver();
  const upstream = await startMcpUpstream();
  const fixture = `${ROOT}tests/fixtures/stdio_upstream.ts`;
  const http = await startWrapper(
    [
      ...["--tool", "echo", "--upstream", upstream.url],
      ...["--upstream-header", "X-Api-Key={env:OTEL_U_SECRET}"],
    ],
    { env: { ...OTEL_ENV(receiver), OTEL_U_SECRET: SECRET } },
  );
  const stdio = await startWrapper(
    [
      "--tool",
      "echo",
      ...["--", Deno.execPath(), "run", "--quiet", "--allow-env", "--allow-write", fixture],
    ],
    { env: OTEL_ENV(receiver) },
  );
  try {
    for (const weir of [http, stdio]) {
      const ok = await rpc(weir.url, 1, "tools/call", {
        name: "echo",
        arguments: { message: MARKER },
      });
      assert.match(JSON.stringify(ok), new RegExp(`echo: ${MARKER}`));
    }
  } finally {
    assert.equal(await http.stop(), 0);
    assert.equal(await stdio.stop(), 0);
    await upstream.stop();
  }
  await settle(receiver);

  const all = spans(receiver.received);
  const servers = all.filter((s) => s.name === "tools/call echo" && s.kind === 2);
  const clients = all.filter((s) => s.name === "tools/call echo" && s.kind === 3);
  assert.equal(servers.length, 2, `SERVER spans: ${all.map((s) => `${s.name}/${s.kind}`)}`);
  assert.equal(clients.length, 2, `CLIENT spans: ${all.map((s) => `${s.name}/${s.kind}`)}`);
  const overHttp = clients.find((s) => attr(s, "network.transport") === "tcp");
  const overStdio = clients.find((s) => attr(s, "network.transport") === "pipe");
  assert.ok(overHttp && overStdio, "one CLIENT span per transport");
  for (const client of [overHttp, overStdio]) {
    const parent = servers.find((s) => s.spanId === client.parentSpanId);
    assert.ok(parent, "the upstream call is a child of the request's SERVER span");
    assert.equal(parent.traceId, client.traceId);
    assert.equal(attr(client, "mcp.method.name"), "tools/call");
    assert.equal(attr(client, "gen_ai.tool.name"), "echo");
    assert.equal(attr(client, "error.type"), undefined);
  }
  assert.equal(attr(overHttp, "server.address"), "127.0.0.1");
  assert.equal(attr(overStdio, "server.address"), undefined);
  // The tools/list at start-up is traced too (a root span: no request caused it).
  assert.ok(all.some((s) => s.name === "tools/list" && s.kind === 3 && !s.parentSpanId));

  const calls = upstream.calls("echo");
  assert.equal(calls.length, 1);
  assert.equal(
    calls[0].headers.get("traceparent"),
    `00-${overHttp.traceId}-${overHttp.spanId}-01`,
    "the CLIENT span's traceparent reached the upstream",
  );
  assert.equal(
    (calls[0].params._meta as Record<string, unknown> | undefined)?.traceparent,
    `00-${overHttp.traceId}-${overHttp.spanId}-01`,
    "the trace context travels in params._meta too (MCP reserves the traceparent key)",
  );
  assert.equal(calls[0].headers.get("x-api-key"), SECRET, "the upstream header still went");

  const metrics = JSON.stringify(receiver.received.filter((r) => r.path === "/v1/metrics"));
  assert.match(metrics, /"name":"mcp\.client\.operation\.duration"/);
  assert.match(metrics, /"name":"mcp\.server\.operation\.duration"/);
  assertNothingSensitive(receiver.received, [MARKER, SECRET, upstream.url, "/mcp", fixture]);
});

Deno.test("OTLP: serve-ssm's AWS request gets a CLIENT span; its traceparent is signed and sent", async () => {
  const receiver = startReceiver();
  const name = "/forgejo/coilyco-ops/read-token";
  const value = "zz-otel-ssm-value-zz";
  const ssm = startSsmEndpoint({ [name]: { type: "SecureString", value } });
  const served = await serveHttp("guardfiles/ssm-forgejo-token.mcp.kdl", {
    command: "serve-ssm",
    env: awsEnv({ AWS_ENDPOINT_URL: ssm.url, ...OTEL_ENV(receiver) }),
  });
  try {
    const ok = await rpc(served.url, 1, "tools/call", {
      name: "get_parameter",
      arguments: { name },
    });
    assert.match(JSON.stringify(ok), new RegExp(value));
  } finally {
    assert.equal(await served.stop(), 0);
    await ssm.close();
  }
  await settle(receiver);

  const all = spans(receiver.received);
  const server = all.find((s) => s.name === "tools/call get_parameter" && s.kind === 2);
  const client = all.find((s) => s.kind === 3);
  assert.ok(server && client, `spans: ${all.map((s) => `${s.name}/${s.kind}`)}`);
  assert.equal(client.name, "SSM.GetParameter");
  assert.equal(client.parentSpanId, server.spanId);
  assert.equal(attr(client, "rpc.system"), "aws-api");
  assert.equal(attr(client, "rpc.service"), "SSM");
  assert.equal(attr(client, "rpc.method"), "GetParameter");
  assert.equal(attr(client, "cloud.region"), "us-east-1");
  assert.equal(attr(client, "http.response.status_code"), 200);
  assert.equal(attr(client, "url.template"), undefined);

  assert.equal(ssm.requests.length, 1);
  assert.equal(ssm.requests[0].refused, undefined, "the signature (over traceparent) verified");
  assert.equal(
    ssm.requests[0].headers.get("traceparent"),
    `00-${client.traceId}-${client.spanId}-01`,
  );
  assert.match(
    ssm.requests[0].headers.get("authorization") ?? "",
    /SignedHeaders=[^,]*traceparent/,
  );
  assertNothingSensitive(receiver.received, [
    name,
    value,
    CREDENTIALS.secretAccessKey,
    CREDENTIALS.sessionToken,
    CREDENTIALS.accessKeyId,
    ssm.url,
  ]);
});

Deno.test("a collector that is down is said once per signal, and its return; the batch is not silently lost", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(
    `wrap ward mcp told {\n  base-url "${upstream.url}"\n  auth none\n  can get thing { path "/t/{id}"; }\n}\n`,
  );
  const port = freePort();
  const server = await serveHttp(file, { env: OTEL_ENV({ url: `http://127.0.0.1:${port}` }) });
  const call = async () => {
    const r = await fetch(`${server.url}/api/get_thing`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "a" }),
    });
    await r.body?.cancel();
  };
  const said = (event: string, signal: string) =>
    server.stderr().split("\n").filter((l) => l.includes(`"event":"${event}"`))
      .filter((l) => l.includes(`"signal":"${signal}"`));
  let collector: Deno.HttpServer | undefined;
  try {
    await call();
    for (const signal of ["traces", "metrics"]) {
      assert.ok(await until(() => said("telemetry_export_failed", signal).length > 0), signal);
      const [line] = said("telemetry_export_failed", signal);
      assert.match(line, /"reason":"ECONNREFUSED"/);
      assert.match(line, /check that it is up at OTEL_EXPORTER_OTLP_ENDPOINT/);
      assert.doesNotMatch(line, new RegExp(`127\\.0\\.0\\.1:${port}`), "no endpoint URL");
    }
    await call();
    collector = Deno.serve(
      { hostname: "127.0.0.1", port, onListen: () => {} },
      async (req) => {
        await req.body?.cancel();
        return Response.json({});
      },
    );
    await call();
    for (const signal of ["traces", "metrics"]) {
      assert.ok(await until(() => said("telemetry_export_ok", signal).length > 0), signal);
      assert.equal(said("telemetry_export_failed", signal).length, 1, "once per outage");
    }
  } finally {
    await server.stop();
    await collector?.shutdown();
    await upstream.close();
  }
});
