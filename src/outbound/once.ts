/**
 * Two rules every hop to an upstream keeps, in every mode, when it goes
 * through `fetch` (spec mode's fallback with a proxy, the AWS modes, OAuth
 * introspection): a request is delivered at most once, and no redirect is
 * followed.
 *
 * At most once: Deno's `fetch` (2.9) re-sends a request whose body it can
 * copy when a pooled keep-alive connection closes before the answer begins,
 * even when the server had read the request (measured: a POST arrived twice;
 * Deno issue 35610 and the fix limiting it to pooled connections). It does
 * not re-send a request made on a connection it has just opened. So a
 * request that is not safe (RFC 9110 section 9.2.1: anything but GET, HEAD,
 * OPTIONS, TRACE) goes through {@link freshConnections}, a client that keeps
 * no idle connection; it honours the proxy variables as the default client
 * does. (serve-upstream streams its request bodies instead, which `fetch`
 * never re-sends, and keeps its connections: src/mcp_upstream/http_fetch.ts.)
 *
 * No redirect: requests are made with `redirect: "manual"`, and a 3xx answer
 * is refused in words that name the status and where it pointed
 * ({@link redirectRefusal}), never the full location (it may hold a token).
 *
 * @module
 */

/** Methods that change nothing upstream (RFC 9110 section 9.2.1). */
export const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

let fresh: Deno.HttpClient | undefined;

/**
 * A `fetch` client that opens a new connection for every request (no idle
 * pool), so `fetch` never re-sends one; created on first use, shared by the
 * process.
 */
export function freshConnections(): Deno.HttpClient {
  return fresh ??= Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
}

/**
 * The `client` option for a request: {@link freshConnections} unless the
 * method is safe (then the default, pooled one).
 */
export function clientFor(method: string): { client?: Deno.HttpClient } {
  return SAFE_METHODS.has(method.toUpperCase()) ? {} : { client: freshConnections() };
}

/**
 * The origin a redirect's `Location` points at (resolved against the
 * request's URL), or `undefined` when it has none or it is not a URL.
 */
export function locationOrigin(
  location: string | null,
  requestUrl: string | URL,
): string | undefined {
  if (location === null) return undefined;
  try {
    const origin = new URL(location, requestUrl).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * Words for a refused redirect: `answered 307 redirecting to https://host`
 * (or `answered 307 with no usable Location`), never the full location.
 */
export function redirectRefusal(status: number, origin: string | undefined): string {
  return `answered ${status} ` +
    (origin ? `redirecting to ${origin}` : "(a redirect with no usable Location)") +
    `; weir follows no redirect, so nothing was sent there`;
}
