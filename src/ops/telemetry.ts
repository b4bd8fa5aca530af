/**
 * OpenTelemetry, off unless the standard `OTEL_*` variables turn it on, with
 * the official `@opentelemetry/*` packages (loaded only then).
 *
 * On when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a `..._TRACES_`/`..._METRICS_`
 * endpoint) is set, or `OTEL_TRACES_EXPORTER`/`OTEL_METRICS_EXPORTER` is
 * `otlp`; off when `OTEL_SDK_DISABLED=true` or a selector is `none`. Export
 * is OTLP over HTTP with the JSON encoding (`OTEL_EXPORTER_OTLP_PROTOCOL`
 * unset or `http/json`); another protocol is refused at start-up rather than
 * ignored. The OpenTelemetry specification's environment variables apply as
 * the exporters read them (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_EXPORTER_OTLP_HEADERS`...).
 *
 * What is recorded (OpenTelemetry semantic conventions for MCP and GenAI):
 * - a SERVER span per routed MCP request and per HTTP tool API call
 *   (`POST /api/<tool>`, as a `tools/call`), named `tools/call <tool>` or the
 *   method, whose parent is the caller's W3C Trace Context when it sends one
 *   (`params._meta.traceparent`/`tracestate`, else the HTTP headers), with `mcp.method.name`, `mcp.protocol.version`,
 *   `gen_ai.operation.name=execute_tool` and `gen_ai.tool.name` for tool
 *   calls, and `error.type` from a closed set (`tool_error`, `cancelled`,
 *   `timeout`, `invalid_params`, `method_not_found`, `internal_error`, `_OTHER`);
 * - a CLIENT span per upstream HTTP request of `weir serve` (`http.request.method`,
 *   `server.address`, `url.template` (the granted path template),
 *   `http.response.status_code`), whose W3C `traceparent` is sent upstream;
 * - a CLIENT span per AWS request of serve-ssm and serve-s3, named
 *   `Service.Action` (`SSM.GetParameter`, `S3.PutObject`) with
 *   `rpc.system=aws-api`, `rpc.service`, `rpc.method`, `cloud.region`,
 *   `http.request.method`, `server.address` and `http.response.status_code`;
 *   its `traceparent` is sent (and signed) with the request;
 * - a CLIENT span per MCP request of serve-upstream to its upstream, named
 *   `tools/call <tool>` or the method, with `mcp.method.name`,
 *   `gen_ai.tool.name`, `network.transport` (`tcp` or `pipe`),
 *   `server.address` (HTTP) and `error.type`; over Streamable HTTP each HTTP
 *   request it makes carries its `traceparent` (a stdio child gets no header);
 *   and the histogram `mcp.client.operation.duration` (seconds, same labels
 *   as the server's);
 * - on the SERVER span, `enduser.id`: the caller's subject (an OAuth token's `sub`, a static
 *   token's caller name), as audit lines name it; never a token, never a metric label;
 * - the histogram `mcp.server.operation.duration` (seconds; tool API calls
 *   included) with the labels
 *   `mcp.method.name`, `gen_ai.tool.name` (a served tool name, else `_OTHER`)
 *   and `error.type`.
 *
 * Never recorded: arguments, results, tokens, header values, the upstream
 * URL, its path values or query.
 *
 * @module
 */
import { type Logger, type RequestWrapper, ToolError } from "../mcp/server.ts";
import { errorTypeOf, kindOf, kindOfText } from "../errors/kinds.ts";
import { type McpUpstreamHook, setUpstreamTracing, type UpstreamHook } from "./trace_hooks.ts";
import { subjectOf } from "./audit.ts";
import { contextsMadeHere } from "./lazy.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { TelemetryConfigError, telemetryWanted } from "./telemetry_env.ts";

export { TelemetryConfigError, telemetryWanted };

/** Telemetry that is running: the core's wrapper, and a shutdown that flushes. */
export interface Telemetry {
  around: RequestWrapper;
  /** Export what is buffered and stop (call before exit). */
  shutdown(): Promise<void>;
}

const METHODS = new Set([
  "initialize",
  "ping",
  "server/discover",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
]);

/**
 * The OpenTelemetry modules, loaded only when telemetry is on. Each is held in a
 * constant, not written in the `import()`: Deno fetches the npm package of a
 * string-literal `import()` before any command starts (it is part of the module
 * graph, 20 MB here), and an `import()` of a variable only when it runs. Full
 * `npm:` specifiers (the versions deno.json pins, held to them by
 * tests/release/lazy_npm_test.ts) resolve the same from a checkout, from JSR
 * and in a compiled binary (scripts/build.ts INCLUDE embeds them).
 */
const OTEL_MODULES = {
  api: "npm:@opentelemetry/api@1.10.0",
  contextAsyncHooks: "npm:@opentelemetry/context-async-hooks@3.1.0",
  core: "npm:@opentelemetry/core@3.1.0",
  resources: "npm:@opentelemetry/resources@3.1.0",
  sdkTrace: "npm:@opentelemetry/sdk-trace@3.1.0",
  sdkMetrics: "npm:@opentelemetry/sdk-metrics@3.1.0",
  traceExporter: "npm:@opentelemetry/exporter-trace-otlp-http@0.301.0",
  metricExporter: "npm:@opentelemetry/exporter-metrics-otlp-http@0.301.0",
} as const;

/**
 * Start telemetry when the environment asks for it.
 * @param serviceName `service.name` unless `OTEL_SERVICE_NAME` says otherwise
 * @param servedTools the tool names served now (labels outside it become `_OTHER`)
 * @param log where a failed export is said (`telemetry_export_failed`, once
 *   per outage, then `telemetry_export_ok`): without it the SDK drops a batch
 *   the collector did not take, and nothing says so
 * @returns `undefined` when telemetry is off
 * @throws {TelemetryConfigError} as {@link telemetryWanted}
 */
export async function startTelemetry(
  serviceName: string,
  servedTools: () => ReadonlySet<string> | readonly string[],
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
  log?: Logger,
): Promise<Telemetry | undefined> {
  if (!telemetryWanted(env)) return undefined;
  const api: typeof import("@opentelemetry/api") = await import(OTEL_MODULES.api);
  const { AsyncLocalStorageContextManager }: typeof import("@opentelemetry/context-async-hooks") =
    await import(OTEL_MODULES.contextAsyncHooks);
  const { W3CTraceContextPropagator }: typeof import("@opentelemetry/core") = await import(
    OTEL_MODULES.core
  );
  const { resourceFromAttributes, envDetector, detectResources }:
    typeof import("@opentelemetry/resources") = await import(OTEL_MODULES.resources);
  const { TracerProvider, BatchSpanProcessor }: typeof import("@opentelemetry/sdk-trace") =
    await import(OTEL_MODULES.sdkTrace);
  const { MeterProvider, PeriodicExportingMetricReader }:
    typeof import("@opentelemetry/sdk-metrics") = await import(OTEL_MODULES.sdkMetrics);
  const { OTLPTraceExporter }: typeof import("@opentelemetry/exporter-trace-otlp-http") =
    await import(OTEL_MODULES.traceExporter);
  const { OTLPMetricExporter }: typeof import("@opentelemetry/exporter-metrics-otlp-http") =
    await import(OTEL_MODULES.metricExporter);

  const resource = resourceFromAttributes({ "service.name": serviceName }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const tracesOn = (env("OTEL_TRACES_EXPORTER") ?? "otlp").trim().toLowerCase() !== "none";
  const metricsOn = (env("OTEL_METRICS_EXPORTER") ?? "otlp").trim().toLowerCase() !== "none";
  const tracerProvider = new TracerProvider({
    resource,
    spanProcessors: tracesOn
      ? [
        new BatchSpanProcessor({
          exporter: watchedExporter(new OTLPTraceExporter(), "traces", log),
        }),
      ]
      : [],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: metricsOn
      ? [
        new PeriodicExportingMetricReader({
          exporter: watchedExporter(new OTLPMetricExporter(), "metrics", log),
          exportIntervalMillis: Number(env("OTEL_METRIC_EXPORT_INTERVAL") ?? "") || 60_000,
        }),
      ]
      : [],
  });
  // Started before any call: modules loaded during calls load outside their spans (lazy.ts).
  contextsMadeHere(AsyncLocalStorage.snapshot());
  const contextManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  const propagator = new W3CTraceContextPropagator();
  const tracer = tracerProvider.getTracer("weir");
  const duration = meterProvider.getMeter("weir").createHistogram(
    "mcp.server.operation.duration",
    {
      unit: "s",
      description: "Duration of MCP requests as the server saw them",
      advice: {
        explicitBucketBoundaries: [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
      },
    },
  );
  const clientDuration = meterProvider.getMeter("weir").createHistogram(
    "mcp.client.operation.duration",
    {
      unit: "s",
      description: "Duration of MCP requests weir sent to its upstream",
      advice: {
        explicitBucketBoundaries: [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
      },
    },
  );
  const served = () => {
    const tools = servedTools();
    return tools instanceof Set ? tools : new Set(tools as readonly string[]);
  };

  /** End an MCP span (marked as failed when `errorType`) and record its duration, bounded labels only. */
  const finish = (
    span: ReturnType<typeof tracer.startSpan>,
    histogram: typeof duration,
    started: number,
    method: string,
    tool: string | undefined,
    errorType: string | undefined,
  ) => {
    if (errorType) {
      span.setAttribute("error.type", errorType);
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    span.end();
    const labels: Record<string, string> = { "mcp.method.name": method };
    if (tool !== undefined) labels["gen_ai.tool.name"] = tool;
    if (errorType) labels["error.type"] = errorType;
    histogram.record((performance.now() - started) / 1000, labels);
  };

  const getter = {
    keys: () => ["traceparent", "tracestate"],
    get: (carrier: unknown, key: string) => {
      const value = (carrier as Record<string, unknown>)[key];
      return typeof value === "string" ? value : undefined;
    },
  };
  const around: RequestWrapper = async (request, run) => {
    const method = METHODS.has(request.method) ? request.method : "_OTHER";
    const isTool = method === "tools/call";
    const tool = isTool
      ? (request.name !== undefined && served().has(request.name) ? request.name : "_OTHER")
      : undefined;
    const attributes: Record<string, string> = {
      "mcp.method.name": method,
      "mcp.protocol.version": request.era === "modern" ? "2026-07-28" : "2025-11-25",
    };
    if (isTool) {
      attributes["gen_ai.operation.name"] = "execute_tool";
      attributes["gen_ai.tool.name"] = tool!;
    }
    // Who called (an OAuth token's subject, a static token's caller name): spans only, never
    // a metric label (unbounded), never a token.
    const subject = subjectOf(request.auth);
    if (subject !== undefined) attributes["enduser.id"] = subject;
    const started = performance.now();
    // The caller's trace continues here: its traceparent (params._meta, else the HTTP
    // header) is the span's parent; a malformed one is ignored (a new trace starts).
    const parent = request.traceparent === undefined
      ? api.context.active()
      : propagator.extract(api.context.active(), request, getter);
    const span = tracer.startSpan(isTool ? `tools/call ${tool}` : method, {
      kind: api.SpanKind.SERVER,
      attributes,
    }, parent);
    let errorType: string | undefined;
    try {
      const result = await api.context.with(api.trace.setSpan(parent, span), run);
      if (isTool && (result as { isError?: boolean })?.isError === true) {
        errorType = toolErrorType(result);
      }
      return result;
    } catch (error) {
      errorType = rpcErrorType(error);
      throw error;
    } finally {
      finish(span, duration, started, method, tool, errorType);
    }
  };

  const setter = {
    set: (carrier: unknown, key: string, value: string) => (carrier as Headers).set(key, value),
  };
  const upstream: UpstreamHook = async (call, headers, send) => {
    const attributes: Record<string, string> = {
      "http.request.method": call.method,
      "server.address": hostName(call.host),
    };
    if (call.template !== undefined) attributes["url.template"] = call.template;
    if (call.aws) {
      attributes["rpc.system"] = "aws-api";
      attributes["rpc.service"] = call.aws.service;
      attributes["rpc.method"] = call.aws.action;
      attributes["cloud.region"] = call.aws.region;
    }
    const name = call.aws
      ? `${call.aws.service}.${call.aws.action}`
      : `${call.method} ${call.template ?? ""}`.trim();
    const span = tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes });
    const ctx = api.trace.setSpan(api.context.active(), span);
    propagator.inject(ctx, headers, setter);
    try {
      const answer = await api.context.with(ctx, send);
      span.setAttribute("http.response.status_code", answer.status);
      if (answer.status >= 400) {
        span.setAttribute("error.type", String(answer.status));
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
      return answer;
    } catch (error) {
      span.setAttribute("error.type", thrownErrorType(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  };

  const mcpUpstream: McpUpstreamHook = async (call, run) => {
    const attributes: Record<string, string> = {
      "mcp.method.name": call.method,
      "network.transport": call.transport,
    };
    if (call.tool !== undefined) {
      attributes["gen_ai.operation.name"] = "execute_tool";
      attributes["gen_ai.tool.name"] = call.tool;
    }
    if (call.host !== undefined) attributes["server.address"] = hostName(call.host);
    const span = tracer.startSpan(call.tool ? `${call.method} ${call.tool}` : call.method, {
      kind: api.SpanKind.CLIENT,
      attributes,
    });
    const started = performance.now();
    let errorType: string | undefined;
    try {
      const result = await api.context.with(api.trace.setSpan(api.context.active(), span), run);
      if ((result as { isError?: boolean })?.isError === true) errorType = "tool_error";
      return result;
    } catch (error) {
      errorType = thrownErrorType(error);
      throw error;
    } finally {
      finish(span, clientDuration, started, call.method, call.tool, errorType);
    }
  };

  setUpstreamTracing({
    http: upstream,
    mcp: mcpUpstream,
    inject: (headers) => propagator.inject(api.context.active(), headers, setter),
  });

  return {
    around,
    async shutdown() {
      setUpstreamTracing(undefined);
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
      contextManager.disable();
    },
  };
}

/** `host[:port]` without the port (`server.address`). */
function hostName(host: string): string {
  return host.replace(/:\d+$/, "");
}

/**
 * The `error.type` of an upstream request that threw (closed set): from its
 * kind (src/errors/kinds.ts; a plain `ToolError` whose text starts with a
 * known kind counts), else from the error's name (`UpstreamTimeout`,
 * `AbortError`, `TimeoutError`).
 */
function thrownErrorType(error: unknown): string {
  const kind = kindOf(error) ??
    (error instanceof ToolError ? kindOfText(error.message) : undefined);
  const type = errorTypeOf(kind);
  if (type !== "_OTHER") return type;
  const { name } = (error ?? {}) as { name?: unknown };
  if (name === "UpstreamTimeout" || name === "TimeoutError") return "timeout";
  if (name === "AbortError") return "cancelled";
  return "_OTHER";
}

/** The `error.type` of a tool result with `isError` (closed set: the kind its text starts with). */
function toolErrorType(result: unknown): string {
  const text = (result as { content?: { text?: string }[] })?.content?.[0]?.text ?? "";
  const type = errorTypeOf(kindOfText(text));
  return type === "_OTHER" ? "tool_error" : type;
}

/** The `error.type` of a JSON-RPC error thrown by a handler (closed set). */
function rpcErrorType(error: unknown): string {
  const code = (error as { code?: number })?.code;
  if (code === -32602) return "invalid_params";
  if (code === -32601) return "method_not_found";
  if (code === -32603) return "internal_error";
  return "_OTHER";
}

/** The part of an OTLP exporter weir watches: `export` and its result (0 success). */
interface Exporting<T> {
  export(items: T, done: (result: { code: number; error?: Error }) => void): void;
}

/**
 * `exporter`, with each failed export said on `log` once per outage (and its
 * end): the SDK drops a batch its collector did not take. The reason is the
 * error's code (`ECONNREFUSED`, an HTTP status) or its name, never its message
 * (which holds the endpoint URL).
 */
function watchedExporter<T, E extends Exporting<T>>(
  exporter: E,
  signal: "traces" | "metrics",
  log: Logger | undefined,
): E {
  if (!log) return exporter;
  let down = false;
  const original = exporter.export.bind(exporter);
  exporter.export = (items, done) =>
    original(items, (result) => {
      if (result.code !== 0 && !down) {
        down = true;
        log({
          level: "warn",
          event: "telemetry_export_failed",
          signal,
          reason: exportFailure(result.error),
          message: `the OTLP collector did not take this batch of ${signal}, which is dropped; ` +
            `check that it is up at OTEL_EXPORTER_OTLP_ENDPOINT (or the ${signal} endpoint ` +
            `variable); weir keeps exporting and says when it takes them again`,
        });
      } else if (result.code === 0 && down) {
        down = false;
        log({ level: "info", event: "telemetry_export_ok", signal });
      }
      done(result);
    });
  return exporter;
}

function exportFailure(error: Error | undefined): string {
  if (!error) return "failed";
  const code = (error as { code?: unknown }).code;
  if (typeof code === "number") return `HTTP ${code}`;
  if (typeof code === "string" && /^[A-Z_]+$/.test(code)) return code;
  const cause = (error as { cause?: { code?: unknown } }).cause?.code;
  if (typeof cause === "string" && /^[A-Z_]+$/.test(cause)) return cause;
  return error.name;
}
