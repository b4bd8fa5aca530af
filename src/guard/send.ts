/**
 * Sending the planned request: the base URL and credential resolved at call
 * time, a deadline, a response-size cap, no redirects, and errors that name
 * the method, path template and status but never a secret.
 *
 * @module
 */
import { ToolError } from "../mcp/server.ts";
import type { Grant, Guardfile, QueryPin, ValueSource } from "../guardfile/model.ts";
import { normalizeBaseUrl } from "../guardfile/parse.ts";
import { readAtMost } from "../transport/bytes.ts";
import { Deadline } from "../outbound/deadline.ts";
import { encodeQuery, type PlannedRequest } from "./request.ts";
import { MIN_SECRET_LENGTH, type Redactor } from "./secrets.ts";
import { resolveValue, type ValueResolver } from "./values.ts";
import { proxySetting } from "../outbound/proxy.ts";
import { upstreamTracing } from "../ops/trace_hooks.ts";
import { Http1Error, MAX_HEAD_BYTES, sharedClient } from "../outbound/http1_client.ts";
import { clientFor, redirectTarget } from "../outbound/once.ts";
import { fetchHeadTooLarge } from "../outbound/fetch_head.ts";
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
   * redacted: `redirectTarget`, src/outbound/once.ts); never shown to the caller.
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

/** The `User-Agent` weir sends unless the guardfile declares one. */
export const USER_AGENT = "weir/0.1.0 (guarded MCP server)";

/** Longest request URL weir sends, in bytes (common server limits are 8 KiB). */
export const MAX_URL_BYTES = 8192;

/**
 * Send one planned request and read the answer within the limits.
 *
 * @param redactor receives every secret resolved for this call (credentials,
 *   pins from `env`/`file`), so the caller can redact them from what it returns
 * @param sending called just before the request goes out (after the URL,
 *   credential and checks are settled): from then on it may take effect
 * @param upstreamToken `auth token-exchange`: the token exchanged for this
 *   call's caller, sent as `Authorization: Bearer <token>`
 * @throws {ToolError} 504 on timeout; 502 on a network failure, a cut-off or
 *   oversize answer; 400 when the planned URL is too long; 500 when a
 *   credential is unset or too short to be redacted
 */
export async function sendUpstream(
  guardfile: Guardfile,
  grant: Grant,
  planned: PlannedRequest,
  resolver: ValueResolver,
  limits: UpstreamLimits,
  signal: AbortSignal,
  redactor: Redactor,
  sending?: () => void,
  upstreamToken?: string,
): Promise<UpstreamAnswer> {
  const base = await baseUrlOf(guardfile, resolver);
  // Header fields by lower-case name; a `Headers` object is made only for
  // `fetch` or a tracing hook (building one costs a few µs a call).
  const fields = new Map<string, string>();
  const query = [...planned.query];
  for (const pin of guardfile.controls.pins[grant.tool] ?? []) {
    query.push([pin.name, await resolvePin(pin, resolver, redactor)]);
  }
  const auth = guardfile.auth;
  if (auth.scheme === "header-token") {
    fields.set(
      auth.header.toLowerCase(),
      auth.prefix + await credential(auth.value, resolver, redactor),
    );
  } else if (auth.scheme === "bearer") {
    fields.set("authorization", `Bearer ${await credential(auth.value, resolver, redactor)}`);
  } else if (auth.scheme === "token-exchange") {
    if (upstreamToken === undefined) {
      throw new WeirError(
        "token_exchange_unavailable",
        `${grant.tool} sends the caller's identity upstream, and no exchanged token was ` +
          `given for this call (nothing was sent)`,
      );
    }
    fields.set("authorization", `Bearer ${upstreamToken}`);
  } else if (auth.scheme === "query-param") {
    for (const p of auth.params) {
      const value = await credential(p.value, resolver, redactor, ` "${p.name}"`);
      for (let i = query.length - 1; i >= 0; i--) if (query[i][0] === p.name) query.splice(i, 1);
      query.push([p.name, value]);
    }
  }
  query.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (const [name, value] of guardfile.headers) fields.set(name.toLowerCase(), value);
  // The caller's header inputs: the loader refuses any that weir, auth or a static header sets.
  for (const [name, value] of planned.headers) fields.set(name.toLowerCase(), value);
  if (!fields.has("user-agent")) fields.set("user-agent", USER_AGENT);
  if (!fields.has("accept")) fields.set("accept", "application/json");
  let body: string | undefined;
  if (planned.form !== undefined) {
    body = planned.form;
    fields.set("content-type", "application/x-www-form-urlencoded");
  } else if (planned.body !== undefined) {
    body = JSON.stringify(planned.body);
    fields.set("content-type", "application/json");
  }
  const url = base + planned.path + (query.length > 0 ? `?${encodeQuery(query)}` : "");
  const what = `${grant.method} ${grant.path}`;
  if (url.length > MAX_URL_BYTES) {
    throw new WeirError(
      "request_too_large",
      `${what} would need a ${url.length}-byte URL, over the ` +
        `${MAX_URL_BYTES}-byte limit; send fewer or shorter query values (nothing was sent)`,
      { status: 400 },
    );
  }
  const target = checkSameUpstream(base, url);

  const how = upstreamRoute();
  if (how.problem) {
    throw new WeirError("upstream_client_invalid", `${how.problem} (nothing was sent)`, {
      status: 500,
    });
  }
  // A call whose deadline has passed sends nothing (its caller was told it failed).
  signal.throwIfAborted();
  const deadline = new Deadline(signal, limits.timeoutMs);
  sending?.();
  try {
    let headers: Headers | undefined;
    const send = () =>
      how.fetch
        ? exchange(
          url,
          planned.method,
          headers ??= new Headers([...fields]),
          body,
          deadline,
          what,
          limits,
        )
        : exchangeHttp1(target, planned.method, headers ?? fields, body, deadline, what, limits);
    // With telemetry off: no span (src/ops/trace_hooks.ts).
    const tracing = upstreamTracing();
    if (!tracing) return await send();
    headers = new Headers([...fields]);
    return await tracing.http(
      { method: planned.method, template: grant.path, host: target.host },
      headers,
      send,
    );
  } finally {
    deadline.clear();
  }
}

/** How upstream requests are sent, decided on the first request of the process. */
interface Route {
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
function upstreamRoute(): Route {
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

/** {@link exchange} over weir's HTTP/1.1 client: the same limits, errors and answers. */
async function exchangeHttp1(
  url: URL,
  method: string,
  headers: Iterable<[string, string]>,
  body: string | undefined,
  deadline: Deadline,
  what: string,
  limits: UpstreamLimits,
): Promise<UpstreamAnswer> {
  const signal = deadline.signal;
  let answer;
  try {
    answer = await sharedClient().request({
      method,
      url,
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
    location: redirectTargetOf(answer.status, answer.headers.get("location") ?? null, url),
  };
}

/** A redirect's target for the operator's log (`redirectTarget`), else `undefined`. */
function redirectTargetOf(status: number, location: string | null, url: string | URL) {
  return status >= 300 && status < 400 ? redirectTarget(location, url) : undefined;
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
  deadline: Deadline,
  what: string,
  limits: UpstreamLimits,
): Promise<UpstreamAnswer> {
  const combined = deadline.signal;
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
    location: redirectTargetOf(response.status, response.headers.get("location"), url),
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

/** Resolve a credential, refuse one too short to redact, and register it. */
async function credential(
  source: ValueSource,
  resolver: ValueResolver,
  redactor: Redactor,
  name = "",
): Promise<string> {
  const resolved = await resolveValue(source, resolver, `the upstream credential${name}`, {
    code: "credential_missing",
  });
  // What is sent is what is redacted: surrounding whitespace (a trailing
  // newline from `echo` or a file) is not part of the credential; HTTP would
  // strip it from a header anyway (RFC 9110, 5.5).
  resolved.value = resolved.value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "");
  const bad = /[\u0000-\u001f\u007f]/.exec(resolved.value);
  if (bad) {
    const what = bad[0] === "\r" || bad[0] === "\n"
      ? "a line break (CR or LF) inside it"
      : `a control character (U+${
        bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")
      })`;
    throw new WeirError(
      "credential_invalid",
      `the upstream credential${name} from ${resolved.source} has ${what}; ` +
        `no header or query can carry it: fix the value (nothing was sent)`,
      { status: 500 },
    );
  }
  if (resolved.secret && resolved.value.length < MIN_SECRET_LENGTH) {
    throw new WeirError(
      "credential_too_short",
      `the upstream credential${name} from ${resolved.source} is shorter than ` +
        `${MIN_SECRET_LENGTH} characters; weir refuses to send a credential it cannot keep ` +
        `out of results (nothing was sent)`,
      { status: 500 },
    );
  }
  if (resolved.secret) redactor.add(resolved.value);
  return resolved.value;
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
  // weir's client says what failed in fixed words; fetch's messages can hold
  // the URL (and a query credential), so only its error's name is given.
  const detail = error instanceof Http1Error
    ? error.message
    : error instanceof Error
    ? error.name
    : "error";
  const proxy = route?.proxy;
  return new WeirError(
    "upstream_unreachable",
    `${what} could not be sent (${detail}); check that the upstream is up` +
      (proxy ? ` and that the proxy in ${proxy} is reachable` : ""),
    { status: 502 },
  );
}

/** The last base-url value read from a provider and its normalized form. */
let lastBase: { raw: string; normalized: string } | undefined;

async function baseUrlOf(guardfile: Guardfile, resolver: ValueResolver): Promise<string> {
  if (typeof guardfile.baseUrl === "string") return guardfile.baseUrl;
  const resolved = await resolveValue(guardfile.baseUrl, resolver, "the upstream base-url", {
    code: "base_url_missing",
  });
  if (lastBase?.raw === resolved.value) return lastBase.normalized;
  const normalized = normalizeBaseUrl(resolved.value);
  if (typeof normalized !== "string") {
    // The value itself is not repeated: a misplaced secret must not reach the caller.
    throw new WeirError(
      "base_url_invalid",
      `the base-url from ${resolved.source} is not usable: it must be an http(s) URL with ` +
        `no credentials, query or fragment (nothing was sent)`,
      { status: 500 },
    );
  }
  lastBase = { raw: resolved.value, normalized };
  return normalized;
}

/** The origin and path prefix of the last base URL checked against. */
let lastScope: { base: string; origin: string; prefix: string } | undefined;

/**
 * Defence in depth: the final URL must stay on the base URL's origin and under its path.
 * @returns the parsed URL
 */
function checkSameUpstream(base: string, url: string): URL {
  if (lastScope?.base !== base) {
    const b = new URL(base);
    lastScope = { base, origin: b.origin, prefix: b.pathname.replace(/\/$/, "") + "/" };
  }
  const u = new URL(url);
  if (u.origin !== lastScope.origin || !(u.pathname + "/").startsWith(lastScope.prefix)) {
    throw new WeirError("policy_denied", "the request would leave the granted upstream", {
      rule: "upstream_scope",
      status: 403,
    });
  }
  return u;
}

/**
 * A `pin` value: the source's value, or one query parameter of it when the
 * source holds a URL (`from="query:<p>"`). Secret ones are registered for
 * redaction; errors never echo the value.
 */
async function resolvePin(
  pin: QueryPin,
  resolver: ValueResolver,
  redactor: Redactor,
): Promise<string> {
  const resolved = await resolveValue(pin.source, resolver, `the pinned query "${pin.name}"`, {
    code: "pin_missing",
  });
  // A pin is policy, not a secret: redacted only when the file says so
  // (secret=#true), or when it is taken out of a URL-valued secret (from=).
  const secret = resolved.secret && (pin.secret === true || pin.fromQuery !== undefined);
  if (secret) redactor.add(resolved.value);
  if (!pin.fromQuery) return resolved.value;
  let extracted: string | null = null;
  try {
    extracted = new URL(resolved.value).searchParams.get(pin.fromQuery);
  } catch {
    extracted = null;
  }
  if (!extracted) {
    throw new WeirError(
      "pin_invalid",
      `the pinned query "${pin.name}" could not be taken from ${resolved.source}: it is not ` +
        `a URL with a "${pin.fromQuery}" query parameter`,
      { status: 500 },
    );
  }
  if (secret) redactor.add(extracted);
  return extracted;
}
