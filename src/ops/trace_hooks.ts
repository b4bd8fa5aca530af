/**
 * The seam between request code and OpenTelemetry: code that sends an
 * upstream request asks {@link upstreamTracing} for the installed hooks and
 * goes straight on when there are none (one load and one branch, no
 * allocation, when telemetry is off). `src/ops/telemetry.ts` installs the
 * real hooks when the `OTEL_*` variables turn telemetry on; nothing here
 * imports an npm package.
 *
 * @module
 */

/**
 * What a CLIENT span may say about one upstream HTTP request (no URL, query,
 * path value, argument or credential).
 */
export interface UpstreamCall {
  /** `GET`, `POST`... */
  method: string;
  /**
   * The granted path template, e.g. `/boards/{board}/tickets` (never the
   * filled path); absent when there is none to give (AWS requests).
   */
  template?: string;
  /** The upstream host (and port), from the base URL or endpoint. */
  host: string;
  /**
   * For an AWS API request: the service (`SSM`, `S3`), the action
   * (`GetParameter`, `PutObject`) and the region; the span is named
   * `Service.Action` and carries `rpc.system=aws-api` (OpenTelemetry
   * semantic conventions for the AWS SDK).
   */
  aws?: { service: string; action: string; region: string };
}

/**
 * Wraps one upstream exchange: `headers` are the request's (the hook adds
 * `traceparent` before `send` runs); `send` performs it and returns the HTTP status.
 */
export type UpstreamHook = <T extends { status: number }>(
  call: UpstreamCall,
  headers: Headers,
  send: () => Promise<T>,
) => Promise<T>;

/**
 * What a CLIENT span may say about one MCP request to an upstream MCP server
 * (serve-upstream): the method, the tool (a granted name), and how it
 * travels. Never arguments, results, the upstream URL or its path.
 */
export interface McpUpstreamCall {
  /** `tools/call` or `tools/list`. */
  method: string;
  /** The tool called (`tools/call` only). */
  tool?: string;
  /** `tcp` for Streamable HTTP, `pipe` for a stdio child. */
  transport: "tcp" | "pipe";
  /** The upstream host (and port), for Streamable HTTP. */
  host?: string;
}

/**
 * Wraps one MCP request to an upstream; HTTP requests `run` sends meanwhile
 * carry the span's `traceparent` (see {@link UpstreamTracing.inject}).
 */
export type McpUpstreamHook = <T>(call: McpUpstreamCall, run: () => Promise<T>) => Promise<T>;

/** The hooks telemetry installs. */
export interface UpstreamTracing {
  /** One HTTP request to a guarded upstream or AWS. */
  http: UpstreamHook;
  /** One MCP request to an upstream MCP server. */
  mcp: McpUpstreamHook;
  /** Set `traceparent` on `headers` from the span in force, if any. */
  inject(headers: Headers): void;
}

let tracing: UpstreamTracing | undefined;

/** Install (or, with `undefined`, remove) the upstream hooks. */
export function setUpstreamTracing(next: UpstreamTracing | undefined): void {
  tracing = next;
}

/** The installed hooks, or `undefined` when telemetry is off. */
export function upstreamTracing(): UpstreamTracing | undefined {
  return tracing;
}
