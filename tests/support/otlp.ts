/**
 * A local OTLP/HTTP receiver for telemetry tests: it decodes what the
 * exporters send (OTLP JSON encoding) and keeps it; helpers read spans and
 * their attributes, send 2026-07-28 requests and wait for a metrics export.
 */
import assert from "node:assert/strict";
import { MODERN_META } from "./mcp.ts";
import { until } from "./wait.ts";

/** One OTLP export as received. */
export interface Received {
  path: string;
  body: Record<string, unknown>;
}

/** Start the receiver on 127.0.0.1. */
export function startReceiver() {
  const received: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const type = req.headers.get("content-type") ?? "";
    assert.match(type, /application\/json/, "the exporter sends OTLP JSON");
    received.push({ path: new URL(req.url).pathname, body: await req.json() });
    return Response.json({});
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, received, close: () => server.shutdown() };
}

/** A span as OTLP JSON writes it. */
export type Span = {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: { key: string; value: Record<string, unknown> }[];
};

/** Every span received. */
export function spans(received: Received[]): Span[] {
  return received.filter((r) => r.path === "/v1/traces").flatMap((r) =>
    (r.body.resourceSpans as { scopeSpans: { spans: Span[] }[] }[]).flatMap((rs) =>
      rs.scopeSpans.flatMap((s) => s.spans)
    )
  );
}

/** One 2026-07-28 JSON-RPC request to `<url>/mcp`; the decoded answer. */
export function rpc(
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: MODERN_META } }),
  }).then((r) => r.json());
}

/** Wait (bounded) until the receiver has a metrics export, then stop it. */
export async function settle(receiver: ReturnType<typeof startReceiver>): Promise<void> {
  await until(() => receiver.received.some((r) => r.path === "/v1/metrics"));
  await receiver.close();
}

/** Fail when any of `sensitive` appears anywhere in what the receiver got. */
export function assertNothingSensitive(received: Received[], sensitive: string[]): void {
  const everything = JSON.stringify(received);
  for (const value of sensitive) {
    assert.ok(!everything.includes(value), `"${value}" leaked into telemetry`);
  }
}

/** The variables that point weir at the receiver, exporting soon. */
export const OTEL_ENV = (receiver: { url: string }) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_BSP_SCHEDULE_DELAY: "100",
  OTEL_METRIC_EXPORT_INTERVAL: "300",
});

/** A span attribute's value. */
export const attr = (span: Span, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};
