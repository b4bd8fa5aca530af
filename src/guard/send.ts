/**
 * Sending a built request (src/guard/outgoing.ts builds it) once: a deadline,
 * a response-size cap, no redirects, through weir's HTTP/1.1 client or
 * `fetch` behind a proxy, and errors that name the method, path template and
 * status but never a secret. Stage (e) of the control pipeline.
 *
 * @module
 */
import { ToolError } from "../mcp/server.ts";
import { readAtMost } from "../transport/bytes.ts";
import { Deadline } from "../outbound/deadline.ts";
import { proxySetting } from "../outbound/proxy.ts";
import { upstreamTracing } from "../ops/trace_hooks.ts";
import { Http1Error, MAX_HEAD_BYTES } from "../outbound/http1_head.ts";
import type { UrlTarget } from "../outbound/http1_answer.ts";
import type { Http1Client } from "../outbound/http1_client.ts";
import { lazy } from "../ops/lazy.ts";

export type { UrlTarget };
import { clientFor, redirectTarget, type Secrets } from "../outbound/once.ts";
import { fetchHeadTooLarge } from "../outbound/fetch_head.ts";
import { connectFailureWords, isNameFailure } from "../outbound/connect_failure.ts";
import { WeirError } from "../errors/kinds.ts";

/** Limits of one upstream exchange. */
export interface UpstreamLimits {
  /** Milliseconds before the call is abandoned (0 disables). */
  timeoutMs: number;
  /** Largest response body accepted, in bytes. */
  maxResponseBytes: number;
}

/** What came back. */
export interface UpstreamAnswer {
  status: number;
  statusText: string;
  contentType: string;
  body: Uint8Array;
  /**
   * A redirect's target for the operator's log (never followed; query values
   * and the call's secrets redacted: `redirectTarget`, src/outbound/once.ts);
   * never shown to the caller.
   */
  location?: string;
}

/**
 * `auth token-exchange`: for one call, the token to send upstream, exchanged
 * from the caller's own (src/oauth/upstream_credential.ts, which serve hands
 * the guard); throws a `WeirError` (`token_exchange_refused`, 403, or
 * `token_exchange_unavailable`, 503) when there is none.
 * @param auth the call's `CallContext.auth`
 * @param scopes the called grant's scopes (asked for unless the block fixes them)
 */
export type UpstreamCredential = (
  auth: unknown,
  tool: string,
  scopes: readonly string[],
  signal?: AbortSignal,
) => Promise<string>;

/**
 * A request ready to go out: its URL with the query (pins and a query
 * credential included), its header fields (credentials included) and body.
 * Made by {@link buildUpstreamRequest} before anything is spent; sent by
 * {@link exchangeUpstream}.
 */
export interface OutgoingRequest {
  method: string;
  /** `METHOD /path/template`, as errors name the grant. */
  what: string;
  /** The grant's path template (the span's route). */
  template: string;
  url: string;
  /** `url` as the client reads it (parsed, or built from plain parts: src/guard/outgoing.ts). */
  target: UrlTarget;
  /** Header fields by lower-case name. */
  fields: Map<string, string>;
  body?: string;
  /** Through `fetch` rather than weir's HTTP/1.1 client. */
  fetch: boolean;
}

/**
 * Send a built request once and read the answer within the limits.
 *
 * @param secrets the call's secrets (its `Redactor`): a redirect's target is
 *   logged, and an upstream may echo a credential into it
 * @param sending called just before the request goes out: from then on it may take effect
 * @throws {ToolError} 504 on timeout; 502 on a network failure, a cut-off or
 *   oversize answer
 */
export async function exchangeUpstream(
  request: OutgoingRequest,
  limits: UpstreamLimits,
  signal: AbortSignal,
  secrets: Secrets,
  sending?: () => void,
): Promise<UpstreamAnswer> {
  const { url, method, fields, body, target, what } = request;
  // A call whose deadline has passed sends nothing (its caller was told it failed).
  signal.throwIfAborted();
  // No deadline of its own (spec mode: the call's signal is the deadline): the caller's signal
  // as it is, without a controller and listener per call.
  const deadline = limits.timeoutMs > 0 ? new Deadline(signal, limits.timeoutMs) : undefined;
  const active = deadline?.signal ?? signal;
  sending?.();
  try {
    let headers: Headers | undefined;
    const send = () =>
      request.fetch
        ? exchange(
          url,
          method,
          headers ??= new Headers([...fields]),
          body,
          active,
          what,
          limits,
          secrets,
        )
        : exchangeHttp1(
          target,
          url,
          method,
          headers ?? fields,
          body,
          active,
          what,
          limits,
          secrets,
        );
    // With telemetry off: no span (src/ops/trace_hooks.ts).
    const tracing = upstreamTracing();
    if (!tracing) return await send();
    headers = new Headers([...fields]);
    return await tracing.http(
      { method, template: request.template, host: target.host },
      headers,
      send,
    );
  } finally {
    deadline?.clear();
  }
}

/** How upstream requests are sent, decided on the first request of the process. */
export interface Route {
  /** `fetch` instead of weir's HTTP/1.1 client. */
  fetch: boolean;
  /** The proxy variable `fetch` will use, when one is set. */
  proxy?: string;
  /** Why no request may be sent (a setting weir will not guess about). */
  problem?: string;
}

let route: Route | undefined;

/**
 * Whether upstream requests go through `fetch` rather than weir's HTTP/1.1
 * client (src/outbound/http1_client.ts): when a proxy variable is set
 * (`fetch` honours them; weir's client does not speak to proxies: see
 * `src/outbound/proxy.ts`), when they cannot be read (no env permission), or when
 * `WEIR_UPSTREAM_CLIENT=fetch` asks for it (`http1` or unset: weir's
 * client). A proxy variable that is not a proxy URL, or another
 * `WEIR_UPSTREAM_CLIENT` value, is a `problem`: nothing is sent.
 */
export function upstreamRoute(): Route {
  if (route) return route;
  const proxy = proxySetting();
  const readable = proxy.readable &&
    Deno.permissions.querySync({ name: "env", variable: "WEIR_UPSTREAM_CLIENT" }).state ===
      "granted";
  if (!readable) return route = { fetch: true };
  const choice = Deno.env.get("WEIR_UPSTREAM_CLIENT") ?? "";
  if (choice !== "" && choice !== "fetch" && choice !== "http1") {
    return route = {
      fetch: true,
      problem: `WEIR_UPSTREAM_CLIENT is ${
        JSON.stringify(choice.slice(0, 24))
      }; use fetch or http1, or leave it unset`,
    };
  }
  if (proxy.problem) return route = { fetch: true, problem: proxy.problem };
  if (proxy.variable) return route = { fetch: true, proxy: proxy.variable };
  return route = { fetch: choice === "fetch" };
}

/**
 * Why every upstream request of this process would be refused (a proxy
 * variable that is not a proxy URL, or a `WEIR_UPSTREAM_CLIENT` value other
 * than `fetch` or `http1`), naming the variable but never its value; or
 * `undefined` when requests can be sent. `weir serve` asks at start-up so a
 * bad setting stops it before it serves.
 */
export function upstreamClientProblem(): string | undefined {
  return upstreamRoute().problem;
}

const encoder = new TextEncoder();

/**
 * weir's HTTP/1.1 client, loaded by URL at the first call that takes it
 * (`lazy("http1_client")`): a server that is started and listed but not yet
 * called (an MCP host's session start) does not load it.
 */
let http1: Http1Client | undefined;

/** {@link exchange} over weir's HTTP/1.1 client: the same limits, errors and answers. */
async function exchangeHttp1(
  target: UrlTarget,
  url: string,
  method: string,
  headers: Iterable<[string, string]>,
  body: string | undefined,
  signal: AbortSignal,
  what: string,
  limits: UpstreamLimits,
  secrets: Secrets,
): Promise<UpstreamAnswer> {
  let answer;
  try {
    http1 ??= (await lazy<typeof import("../outbound/http1_client.ts")>("http1_client"))
      .sharedClient();
    answer = await http1.request({
      method,
      url: target,
      headers,
      body: body === undefined ? undefined : encoder.encode(body),
      signal,
      maxBodyBytes: limits.maxResponseBytes,
    });
  } catch (error) {
    const failure = abortOrNetwork(error, signal, what, limits);
    if (failure.status !== 502 || !(error instanceof Http1Error) || error.phase !== "body") {
      throw failure;
    }
    throw cutOff(what, error.status);
  }
  if (answer.body === null) throw tooLargeError(what, limits);
  return {
    status: answer.status,
    statusText: answer.statusText,
    contentType: answer.headers.get("content-type") ?? "",
    body: answer.body,
    location: redirectTargetOf(answer.status, answer.headers.get("location") ?? null, url, secrets),
  };
}

/**
 * A redirect's target for the operator's log (`redirectTarget`, the call's
 * secrets redacted), else `undefined`. 304 Not Modified is no redirect (the
 * answer to a conditional request, RFC 9110 section 15.4.5).
 */
function redirectTargetOf(
  status: number,
  location: string | null,
  url: string,
  secrets: Secrets,
) {
  return isRedirect(status) ? redirectTarget(location, url, secrets) : undefined;
}

/** A 3xx answer other than 304 Not Modified. */
export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}

/** The answer's head arrived, its body did not: it may have taken effect. */
function cutOff(what: string, status: number | undefined): ToolError {
  return new WeirError(
    "upstream_cut_off",
    `${what} answered ${status} but the body broke off; ` +
      `the request was delivered and may have taken effect`,
    { status: 502 },
  );
}

function tooLargeError(what: string, limits: UpstreamLimits): ToolError {
  return new WeirError(
    "upstream_too_large",
    `${what} answered more than ${limits.maxResponseBytes} bytes; ` +
      `refused (narrow the request with query inputs)`,
    { status: 502 },
  );
}

/** Send the request with `fetch` and read the answer under one deadline. */
async function exchange(
  url: string,
  method: string,
  headers: Headers,
  body: string | undefined,
  combined: AbortSignal,
  what: string,
  limits: UpstreamLimits,
  secrets: Secrets,
): Promise<UpstreamAnswer> {
  let response: Response;
  try {
    // No redirect followed; a request that is not safe on a fresh connection,
    // which fetch never re-sends (src/outbound/once.ts).
    response = await fetch(url, {
      method,
      headers,
      body,
      redirect: "manual",
      signal: combined,
      ...clientFor(method),
    });
  } catch (error) {
    throw abortOrNetwork(error, combined, what, limits);
  }
  if (await fetchHeadTooLarge(response)) {
    // fetch takes heads of several hundred KiB; weir's cap is the same on both routes.
    throw new WeirError(
      "upstream_unreachable",
      `${what} could not be sent (the answer's head is over ${MAX_HEAD_BYTES} bytes); ` +
        `check that the upstream is up`,
    );
  }
  const tooLarge = () => tooLargeError(what, limits);
  const declared = response.headers.get("content-length");
  if (Number(declared ?? "NaN") > limits.maxResponseBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  let bytes: Uint8Array | null;
  try {
    if (!response.body) {
      bytes = new Uint8Array(0);
    } else if (declared !== null && /^\d+$/.test(declared) && !decoded(response)) {
      // A declared length within the cap: HTTP framing holds the body to it, so
      // read it in one call (measured: a stream reader cost about 45 µs more a call).
      // Not when fetch decodes a Content-Encoding: the length is then the
      // compressed size, and a small gzip body can inflate to gigabytes.
      bytes = await response.bytes();
      if (bytes.byteLength > limits.maxResponseBytes) bytes = null;
    } else {
      bytes = await readAtMost(response.body, limits.maxResponseBytes);
    }
  } catch (error) {
    const failure = abortOrNetwork(error, combined, what, limits);
    if (failure.status !== 502) throw failure;
    throw cutOff(what, response.status);
  }
  if (bytes === null) throw tooLarge();
  return {
    status: response.status,
    statusText: response.statusText,
    contentType: response.headers.get("content-type") ?? "",
    body: bytes,
    location: redirectTargetOf(response.status, response.headers.get("location"), url, secrets),
  };
}

/**
 * Whether fetch decodes the body (a Content-Encoding other than identity,
 * RFC 9110 section 8.4): its Content-Length then counts the encoded bytes.
 */
function decoded(response: Response): boolean {
  const coding = response.headers.get("content-encoding");
  return coding !== null && coding.trim().toLowerCase() !== "identity" && coding.trim() !== "";
}

function abortOrNetwork(
  error: unknown,
  signal: AbortSignal,
  what: string,
  limits: UpstreamLimits,
): ToolError {
  if (signal.aborted) {
    const reason = signal.reason;
    // A host cancelling with its own ToolError (a server shutdown) keeps its words.
    if (reason instanceof ToolError) return reason;
    if (reason instanceof DOMException && reason.name === "TimeoutError") {
      return new WeirError(
        "upstream_timeout",
        `${what} did not answer within ${limits.timeoutMs} ms`,
        { status: 504 },
      );
    }
    return new WeirError("cancelled", `${what} was cancelled by the caller`, { status: 499 });
  }
  // Both clients' failures are said in fixed words; fetch's own messages can
  // hold the URL (and a query credential), so past those only its error's name.
  const detail = error instanceof Http1Error
    ? error.message
    : connectFailureWords(error) ?? (error instanceof Error ? error.name : "error");
  const proxy = route?.proxy;
  const fix = isNameFailure(detail)
    ? "check the host name of the guardfile's base-url"
    : "check that the upstream is up";
  return new WeirError(
    "upstream_unreachable",
    `${what} could not be sent (${detail}); ${fix}` +
      (proxy ? ` and that the proxy in ${proxy} is reachable` : ""),
    { status: 502 },
  );
}
