/**
 * The seam between request code and OpenTelemetry: code that sends an
 * upstream request calls {@link traceUpstream}, which costs one branch when
 * telemetry is off. `src/ops/telemetry.ts` installs the real hook when the
 * `OTEL_*` variables turn telemetry on; nothing here imports an npm package.
 *
 * @module
 */

/** What a CLIENT span may say about an upstream request (no URL, query or value). */
export interface UpstreamCall {
  /** `GET`, `POST`... */
  method: string;
  /** The granted path template, e.g. `/boards/{board}/tickets` (never the filled path). */
  template: string;
  /** The upstream host (and port), from the base URL. */
  host: string;
}

/**
 * Wraps one upstream exchange: `headers` are the request's (the hook adds
 * `traceparent`); `send` performs it and returns the HTTP status.
 */
export type UpstreamHook = <T extends { status: number }>(
  call: UpstreamCall,
  headers: Headers,
  send: () => Promise<T>,
) => Promise<T>;

let hook: UpstreamHook | undefined;

/** Install (or, with `undefined`, remove) the upstream hook. */
export function setUpstreamHook(next: UpstreamHook | undefined): void {
  hook = next;
}

/** Run an upstream exchange through the hook, if one is installed. */
export function traceUpstream<T extends { status: number }>(
  call: () => UpstreamCall,
  headers: Headers,
  send: () => Promise<T>,
): Promise<T> {
  return hook ? hook(call(), headers, send) : send();
}
