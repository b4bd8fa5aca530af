/**
 * Sending the planned request: the base URL and credential resolved at call
 * time, a deadline, a response-size cap, no redirects, and errors that name
 * the method, path template and status but never a secret.
 *
 * @module
 */
import { ToolError } from "../mcp/server.ts";
import type { Grant, Guardfile, QueryPin } from "../guardfile/model.ts";
import { normalizeBaseUrl } from "../guardfile/parse.ts";
import { encodeQuery, type PlannedRequest } from "./request.ts";
import { resolveValue, type ValueResolver } from "./values.ts";

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
}

/** Values resolved for one call, kept to scrub them from what goes back. */
export interface ResolvedSecrets {
  credentials: string[];
  pinned: string[];
}

/** The `User-Agent` weir sends unless the guardfile declares one. */
export const USER_AGENT = "weir/0.1.0 (guarded MCP server)";

/**
 * Send one planned request and read the answer within the limits.
 *
 * @param secrets filled with the values resolved for this call, so the caller
 *   can scrub them: `credentials` (auth) from everything it returns, `pinned`
 *   (pin values, possibly secret, possibly ordinary data) from error messages
 * @throws {ToolError} 504 on timeout, 502 on a network failure, an oversize
 *   answer, a redirect or an HTTP error status; 500 when a credential is unset
 */
export async function sendUpstream(
  guardfile: Guardfile,
  grant: Grant,
  planned: PlannedRequest,
  resolver: ValueResolver,
  limits: UpstreamLimits,
  signal: AbortSignal,
  secrets: ResolvedSecrets,
): Promise<UpstreamAnswer> {
  const base = await baseUrlOf(guardfile, resolver);
  const headers = new Headers();
  const query = [...planned.query];
  for (const pin of guardfile.controls.pins[grant.tool] ?? []) {
    const value = await resolvePin(pin, resolver);
    secrets.pinned.push(value);
    query.push([pin.name, value]);
  }
  if (guardfile.controls.pins[grant.tool]) {
    query.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
  const auth = guardfile.auth;
  if (auth.scheme === "header-token") {
    const token = await resolveValue(auth.value, resolver, "the upstream credential");
    secrets.credentials.push(token);
    headers.set(auth.header, auth.prefix + token);
  } else if (auth.scheme === "bearer") {
    const token = await resolveValue(auth.value, resolver, "the upstream credential");
    secrets.credentials.push(token);
    headers.set("authorization", `Bearer ${token}`);
  } else if (auth.scheme === "query-param") {
    for (const p of auth.params) {
      const value = await resolveValue(p.value, resolver, `the upstream credential "${p.name}"`);
      secrets.credentials.push(value);
      for (let i = query.length - 1; i >= 0; i--) if (query[i][0] === p.name) query.splice(i, 1);
      query.push([p.name, value]);
      query.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    }
  }
  for (const [name, value] of guardfile.headers) headers.set(name, value);
  if (!headers.has("user-agent")) headers.set("user-agent", USER_AGENT);
  if (!headers.has("accept")) headers.set("accept", "application/json");
  let body: string | undefined;
  if (planned.body !== undefined) {
    body = JSON.stringify(planned.body);
    headers.set("content-type", "application/json");
  }
  const url = base + planned.path + (query.length > 0 ? `?${encodeQuery(query)}` : "");
  checkSameUpstream(base, url);

  const what = `${grant.method} ${grant.path}`;
  const signals = [signal];
  if (limits.timeoutMs > 0) signals.push(AbortSignal.timeout(limits.timeoutMs));
  const combined = AbortSignal.any(signals);
  let response: Response;
  try {
    response = await fetch(url, {
      method: planned.method,
      headers,
      body,
      redirect: "manual",
      signal: combined,
    });
  } catch (error) {
    throw abortOrNetwork(error, combined, what, limits);
  }
  let bytes: Uint8Array;
  try {
    bytes = await readCapped(response, limits.maxResponseBytes, what);
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw abortOrNetwork(error, combined, what, limits);
  }
  return {
    status: response.status,
    statusText: response.statusText,
    contentType: response.headers.get("content-type") ?? "",
    body: bytes,
  };
}

function abortOrNetwork(
  error: unknown,
  signal: AbortSignal,
  what: string,
  limits: UpstreamLimits,
): ToolError {
  if (signal.aborted) {
    const reason = signal.reason;
    if (reason instanceof DOMException && reason.name === "TimeoutError") {
      return new ToolError(
        `upstream_timeout: ${what} did not answer within ${limits.timeoutMs} ms`,
        { status: 504 },
      );
    }
    return new ToolError(`cancelled: ${what} was cancelled by the caller`, { status: 499 });
  }
  const name = error instanceof Error ? error.name : "error";
  return new ToolError(
    `upstream_unreachable: ${what} could not be sent (${name}); check that the upstream is up`,
    { status: 502 },
  );
}

async function readCapped(response: Response, max: number, what: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  const tooLarge = () =>
    new ToolError(
      `upstream_too_large: ${what} answered more than ${max} bytes; refused ` +
        `(narrow the request with query inputs)`,
      { status: 502 },
    );
  if (declared > max) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

async function baseUrlOf(guardfile: Guardfile, resolver: ValueResolver): Promise<string> {
  if (typeof guardfile.baseUrl === "string") return guardfile.baseUrl;
  const raw = await resolveValue(guardfile.baseUrl, resolver, "the upstream base-url");
  const normalized = normalizeBaseUrl(raw);
  if (typeof normalized !== "string") {
    throw new ToolError(`the resolved base-url is not usable: ${normalized.error}`, {
      status: 500,
    });
  }
  return normalized;
}

/** Defence in depth: the final URL must stay on the base URL's origin and under its path. */
function checkSameUpstream(base: string, url: string): void {
  const b = new URL(base);
  const u = new URL(url);
  const prefix = b.pathname.replace(/\/$/, "") + "/";
  if (u.origin !== b.origin || !(u.pathname + "/").startsWith(prefix)) {
    throw new ToolError("policy_denied: the request would leave the granted upstream", {
      status: 403,
    });
  }
}

/**
 * A `pin` value: the source's value, or one query parameter of it when the
 * source holds a URL (`from="query:<p>"`). Errors never echo the value.
 */
async function resolvePin(pin: QueryPin, resolver: ValueResolver): Promise<string> {
  const value = await resolveValue(pin.source, resolver, `the pinned query "${pin.name}"`);
  if (!pin.fromQuery) return value;
  let extracted: string | null = null;
  try {
    extracted = new URL(value).searchParams.get(pin.fromQuery);
  } catch {
    extracted = null;
  }
  if (!extracted) {
    throw new ToolError(
      `the pinned query "${pin.name}" could not be taken from its source: it is not a URL ` +
        `with a "${pin.fromQuery}" query parameter`,
      { status: 500 },
    );
  }
  return extracted;
}

/**
 * Replace every secret value in `text` by `[redacted]`. Values shorter than 4
 * characters are left alone (they would redact ordinary words).
 */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join("[redacted]");
  return out;
}

/**
 * {@link scrub} every string (and object key) inside a decoded JSON value, so
 * an upstream that echoes the credential back cannot put it in a result.
 */
export function scrubDeep(value: unknown, secrets: readonly string[]): unknown {
  if (!secrets.some((s) => s.length >= 4)) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return scrub(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, child] of Object.entries(v)) {
        Object.defineProperty(out, scrub(k, secrets), {
          value: walk(child),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  return walk(value);
}
