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
 * is refused: the caller is told the status ({@link redirectRefusal}), never
 * where it pointed; the operator's log gets the target without its query
 * values ({@link redirectTarget}): a `Location` may carry a credential.
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

/** Longest redirect target written to the log (characters). */
const TARGET_CHARS = 512;
/** A query parameter name kept as it is in a logged target; any other is redacted too. */
const PARAM_NAME = /^[A-Za-z0-9_.~-]{1,64}$/;

/**
 * Where a refused redirect pointed, for the operator's log only: its
 * `Location` resolved against the request's URL (RFC 9110 section 10.2.2),
 * without userinfo and fragment, and with the value of every query parameter
 * replaced by `[redacted]` (a presigned URL or a download token rides in the
 * query: RFC 3986 section 3.4); an item without a name, or whose name is not
 * a plain token, is redacted whole. At most 512 characters. `undefined` when there is no
 * `Location` or it is not a URL.
 * @example
 * ```ts
 * import { redirectTarget } from "./once.ts";
 * redirectTarget("/a.tar.gz?token=s3cr3t&v=1#x", "https://api.example/repos/1");
 * // "https://api.example/a.tar.gz?token=[redacted]&v=[redacted]"
 * ```
 */
export function redirectTarget(
  location: string | null,
  requestUrl: string | URL,
): string | undefined {
  if (location === null) return undefined;
  let url: URL;
  try {
    url = new URL(location, requestUrl);
  } catch {
    return undefined;
  }
  url.username = "";
  url.password = "";
  url.hash = "";
  const query = url.search.slice(1);
  url.search = "";
  let text = url.href;
  if (query !== "") {
    text += "?" + query.split("&").map((pair) => {
      // A bare item (`?<token>`) may be the credential itself.
      const eq = pair.indexOf("=");
      return eq > 0 && PARAM_NAME.test(pair.slice(0, eq))
        ? `${pair.slice(0, eq)}=[redacted]`
        : "[redacted]";
    }).join("&");
  }
  return text.length > TARGET_CHARS ? `${text.slice(0, TARGET_CHARS)}...` : text;
}

/**
 * Words for a refused redirect, for the caller: the status and what weir
 * did, never where it pointed (the target is the operator's: the audit line's
 * `location`, {@link redirectTarget}). E.g. `answered 307, a redirect; weir
 * follows no redirect, so nothing was sent there (the operator's log names
 * its target)`.
 */
export function redirectRefusal(status: number): string {
  return `answered ${status}, a redirect; weir follows no redirect, so nothing was sent there ` +
    `(the operator's log names its target)`;
}
