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
 * a plain token, is redacted whole. `secrets` takes out what the request
 * carried, wherever an upstream put it (a credential echoed into the path or
 * a host label, base64 of it): once from the `Location` as it came (the URL
 * parser lower-cases a host and drops tabs, which could hide one from the
 * other pass) and once from the target, before it is cut to 512 characters,
 * so no cut leaves the start of a secret behind. `undefined` when there is no
 * `Location` or it is not a URL; `[redacted]` when it is one only with the
 * secret in it.
 * @param secrets takes the request's secrets out of a text (a `Redactor`, or
 *   {@link redactingEach}); required: every request that can be redirected carried one
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { redactingEach, redirectTarget } from "./once.ts";
 * const secrets = redactingEach(["s3cr3t-token"]);
 * assert.equal(
 *   redirectTarget("/dl/s3cr3t-token/a.tar.gz?token=x&v=1#x", "https://api.example/repos/1", secrets),
 *   "https://api.example/dl/[redacted]/a.tar.gz?token=[redacted]&v=[redacted]",
 * );
 * ```
 */
export function redirectTarget(
  location: string | null,
  requestUrl: string | URL,
  secrets: Secrets,
): string | undefined {
  if (location === null) return undefined;
  const given = secrets.text(location);
  let url: URL;
  try {
    url = new URL(given, requestUrl);
  } catch {
    return given === location ? undefined : "[redacted]";
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
  text = secrets.text(text);
  return text.length > TARGET_CHARS ? `${text.slice(0, TARGET_CHARS)}...` : text;
}

/** What takes a request's secrets out of a text (`Redactor` in src/guard/secrets.ts is one). */
export interface Secrets {
  /** `value` with every secret replaced by `[redacted]`. */
  text(value: string): string;
}

/** {@link Secrets} of a request that carried none (a JWKS or metadata `GET`). */
export const NOTHING_SENT: Secrets = { text: (value) => value };

/**
 * {@link Secrets} from the values a request carried, where no richer redactor
 * is at hand (an authorization server's answers): each value of at least 4
 * characters becomes `[redacted]` as is, percent-encoded, and in base64 and
 * base64url (RFC 4648 sections 4 and 5, padding or not).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { redactingEach } from "./once.ts";
 * const secrets = redactingEach(["cl1ent-secret"]);
 * assert.equal(secrets.text("/x/cl1ent-secret/Y2wxZW50LXNlY3JldA"), "/x/[redacted]/[redacted]");
 * ```
 */
export function redactingEach(values: readonly string[]): Secrets {
  const spelled = values.filter((s) => s.length >= 4).flatMap((s) => {
    const padded = btoa(String.fromCharCode(...new TextEncoder().encode(s)));
    const b64 = padded.replace(/=+$/, "");
    return [s, encodeURIComponent(s), padded, b64, b64.replaceAll("+", "-").replaceAll("/", "_")];
  });
  return {
    text(value) {
      for (const s of spelled) value = value.split(s).join("[redacted]");
      return value;
    },
  };
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
