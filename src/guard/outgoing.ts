/**
 * Building the request of a grant before anything is spent (stage (a) of the
 * control pipeline, src/guard/pipeline.ts): the base URL, the pins and the
 * credential resolved at call time (each secret registered for redaction),
 * the URL's length and that it stays on the granted upstream, and whether the
 * process can send at all. `send.ts` sends what this builds.
 *
 * @module
 */
import { normalizeBaseUrl } from "../guardfile/parse.ts";
import {
  forTool,
  type Grant,
  type Guardfile,
  type QueryPin,
  type ValueSource,
} from "../guardfile/model.ts";
import { WeirError } from "../errors/kinds.ts";
import { encodeQuery, type PlannedRequest } from "./request.ts";
import { MIN_SECRET_LENGTH, type Redactor } from "./secrets.ts";
import {
  type MissingValueKind,
  type Resolved,
  resolveValueNow,
  type ValueResolver,
} from "./values.ts";
import { type OutgoingRequest, upstreamRoute, type UrlTarget } from "./send.ts";

/** The `User-Agent` weir sends unless the guardfile declares one. */
export const USER_AGENT = "weir/0.1.0 (guarded MCP server)";

/** Longest request URL weir sends, in bytes (common server limits are 8 KiB). */
export const MAX_URL_BYTES = 8192;

/**
 * What weir itself puts into a grant's request, resolved at call time before
 * the call's arguments are looked at (so no check can quote one of its secrets
 * before stage (a) knows them): the base URL, the pins and the credential.
 */
export interface CallValues {
  base: string;
  /** The grant's `pin` query parameters (a secret one: redacted, never shown to a person). */
  pins: { name: string; value: string; secret: boolean }[];
  /** `auth query-param`: parameters that replace any of the same name. */
  authQuery: [string, string][];
  /** `auth header-token` / `bearer`: the header field (lower-case name) and its value. */
  authField?: [string, string];
}

/**
 * Resolve what weir adds to a grant's request: the base URL, the pins and the
 * credential, each secret registered with `redactor` (which then refuses an
 * argument holding one: src/guard/secret_arguments.ts, and redacts them from
 * what the call returns). Nothing is sent. Settled at once, without a
 * promise, when no value is read from a file (values from the environment
 * and literals); a promise otherwise.
 * @throws {ToolError} 500 when a credential, pin or base URL is unset or unusable
 *   (thrown, or the promise rejected once a file was read)
 */
export function resolveCallValues(
  guardfile: Guardfile,
  grant: Grant,
  resolver: ValueResolver,
  redactor: Redactor,
): CallValues | Promise<CallValues> {
  return settle(callValues(guardfile, grant, redactor), resolver);
}

/** A value the steps of {@link callValues} need: its source and how its absence is told. */
interface Needed {
  source: ValueSource;
  what: string;
  code: MissingValueKind;
}

/**
 * The steps of {@link resolveCallValues}, in their order (each value resolved
 * and checked before the next is read): each `yield` asks for one value.
 */
function* callValues(
  guardfile: Guardfile,
  grant: Grant,
  redactor: Redactor,
): Generator<Needed, CallValues, Resolved> {
  const base = typeof guardfile.baseUrl === "string" ? guardfile.baseUrl : usableBase(
    yield { source: guardfile.baseUrl, what: BASE_URL, code: "base_url_missing" },
  );
  const pins: CallValues["pins"] = [];
  for (const pin of forTool(guardfile.controls.pins, grant.tool) ?? []) {
    const { value, secret } = pinValue(
      pin,
      yield { source: pin.source, what: `the pinned query "${pin.name}"`, code: "pin_missing" },
      redactor,
    );
    pins.push({ name: pin.name, value, secret });
  }
  const values: CallValues = { base, pins, authQuery: [] };
  const auth = guardfile.auth;
  if (auth.scheme === "header-token") {
    values.authField = [
      auth.header.toLowerCase(),
      auth.prefix + credential(yield needCredential(auth.value), redactor),
    ];
  } else if (auth.scheme === "bearer") {
    values.authField = [
      "authorization",
      `Bearer ${credential(yield needCredential(auth.value), redactor)}`,
    ];
  } else if (auth.scheme === "token-exchange") {
    // The caller's identity: its exchanged token is set once the caller is known
    // (`withExchangedToken`, stage (b)); a request without one is never sent.
  } else if (auth.scheme === "query-param") {
    for (const p of auth.params) {
      const name = ` "${p.name}"`;
      values.authQuery.push([
        p.name,
        credential(yield needCredential(p.value, name), redactor, name),
      ]);
    }
  }
  return values;
}

const BASE_URL = "the upstream base-url";

function needCredential(source: ValueSource, name = ""): Needed {
  return { source, what: `the upstream credential${name}`, code: "credential_missing" };
}

/**
 * Run `steps` to their end, resolving each value they ask for: synchronously
 * while no value is read from a file, then on as a promise.
 */
function settle<T>(
  steps: Generator<Needed, T, Resolved>,
  resolver: ValueResolver,
  given?: Resolved,
): T | Promise<T> {
  let next = steps.next(given!);
  while (!next.done) {
    const { source, what, code } = next.value;
    const resolved = resolveValueNow(source, resolver, what, code);
    if (resolved instanceof Promise) return resolved.then((r) => settle(steps, resolver, r));
    next = steps.next(resolved);
  }
  return next.value;
}

/**
 * Settle everything about a planned request before it may be sent: weir's
 * own values (`values`, from {@link resolveCallValues}) put in, the URL's
 * length and that it stays on the granted upstream, and that the process can
 * send at all. Nothing is sent.
 *
 * @throws {ToolError} 400 when the URL is too long, 403 when it would leave
 *   the upstream, 500 when the process cannot send (a proxy setting)
 */
export function buildUpstreamRequest(
  guardfile: Guardfile,
  grant: Grant,
  planned: PlannedRequest,
  values: CallValues,
): OutgoingRequest {
  const { base } = values;
  // Header fields by lower-case name; a `Headers` object is made only for
  // `fetch` or a tracing hook (building one costs a few µs a call).
  const fields = new Map<string, string>();
  const query = [...planned.query];
  for (const pin of values.pins) query.push([pin.name, pin.value]);
  if (values.authField) fields.set(values.authField[0], values.authField[1]);
  for (const p of values.authQuery) {
    for (let i = query.length - 1; i >= 0; i--) if (query[i][0] === p[0]) query.splice(i, 1);
    query.push(p);
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
    // Say which part to shorten: the path's values alone may be what is too long.
    const shorten = base.length + planned.path.length > MAX_URL_BYTES
      ? "a shorter path parameter value"
      : "fewer or shorter query values";
    throw new WeirError(
      "request_too_large",
      `${what} would need a ${url.length}-byte URL, over the ` +
        `${MAX_URL_BYTES}-byte limit; send ${shorten} (nothing was sent)`,
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
  return {
    method: planned.method,
    what,
    template: grant.path,
    url,
    target,
    fields,
    body,
    fetch: how.fetch,
  };
}

/**
 * `auth token-exchange`: put the token exchanged for this call's caller on a
 * built request (`Authorization: Bearer <token>`), registered for redaction.
 * @throws {WeirError} `token_exchange_unavailable` when no token was given
 */
export function withExchangedToken(
  request: OutgoingRequest,
  tool: string,
  token: string | undefined,
  redactor: Redactor,
): void {
  if (token === undefined) {
    throw new WeirError(
      "token_exchange_unavailable",
      `${tool} sends the caller's identity upstream, and no exchanged token was ` +
        `given for this call (nothing was sent)`,
    );
  }
  redactor.add(token);
  request.fields.set("authorization", `Bearer ${token}`);
}

/** A resolved credential checked (no control character, long enough to redact) and registered. */
function credential(resolved: Resolved, redactor: Redactor, name = ""): string {
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

/** The last base-url value read from a provider and its normalized form. */
let lastBase: { raw: string; normalized: string } | undefined;

/** A base URL as read, normalized (the last one's normal form reused). */
function usableBase(resolved: Resolved): string {
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

/** What the scope check needs of a base URL, parsed once per base (a base-url read from a source may change). */
interface Scope {
  base: string;
  origin: string;
  /** The base's path with a trailing `/` (every request path must start with it). */
  prefix: string;
  /** The base's parts, when the base is its own canonical form (`plainTarget` may build on it). */
  parts?: { protocol: string; host: string; hostname: string; port: string; path: string };
}

/** The last base URL checked against. */
let lastScope: Scope | undefined;

function scopeOf(base: string): Scope {
  if (lastScope?.base === base) return lastScope;
  const b = new URL(base);
  const path = base.slice(b.origin.length);
  const canonical = base.startsWith(b.origin) &&
    (path === "" ? b.pathname === "/" : b.pathname === path) &&
    b.search === "" && b.hash === "" && b.username === "" && b.password === "";
  return lastScope = {
    base,
    origin: b.origin,
    prefix: b.pathname.replace(/\/$/, "") + "/",
    parts: canonical
      ? { protocol: b.protocol, host: b.host, hostname: b.hostname, port: b.port, path }
      : undefined,
  };
}

/**
 * A path every character of which the WHATWG URL parser keeps as it is: RFC 3986 `pchar`
 * (unreserved, sub-delimiters, `:`, `@`, a `%` with two hex digits) in `/`-led segments.
 */
const PLAIN_PATH = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*)+$/;
/** A segment the parser folds (`.`, `..`, `%2e` in either case): such a path is parsed. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=\/|$)/i;
/**
 * A query the parser keeps as it is: `'` is left out (a special URL's query encodes it, so
 * the bytes sent would differ from the string built).
 */
const PLAIN_QUERY = /^(?:[A-Za-z0-9\-._~!$&()*+,;=:@/?]|%[0-9A-Fa-f]{2})+$/;

/**
 * The request target of `url` (= `base` + a path + an optional `?query`) as the WHATWG URL
 * parser would give it, built from the base's parts without parsing, or `undefined` when the
 * path or query holds anything the parser could rewrite (then it is parsed). The parts equal
 * `new URL(url)`'s (tests/guard/upstream_target_test.ts holds them to it over generated URLs).
 */
export function plainTarget(base: string, url: string): UrlTarget | undefined {
  const parts = scopeOf(base).parts;
  if (!parts || !url.startsWith(base)) return undefined;
  const q = url.indexOf("?", base.length);
  const path = q < 0 ? url.slice(base.length) : url.slice(base.length, q);
  const search = q < 0 ? "" : url.slice(q);
  if (!PLAIN_PATH.test(path) || DOT_SEGMENT.test(path)) return undefined;
  if (search !== "" && !PLAIN_QUERY.test(search.slice(1))) return undefined;
  return {
    protocol: parts.protocol,
    host: parts.host,
    hostname: parts.hostname,
    port: parts.port,
    pathname: parts.path + path,
    search,
  };
}

/**
 * Defence in depth: the final URL must stay on the base URL's origin and under its path, as
 * the URL parser reads it (a URL of plain characters is not parsed: {@link plainTarget}).
 * @returns the request target
 */
function checkSameUpstream(base: string, url: string): UrlTarget {
  const scope = scopeOf(base);
  const u = plainTarget(base, url) ?? new URL(url);
  const origin = u instanceof URL ? u.origin : `${u.protocol}//${u.host}`;
  if (origin !== scope.origin || !(u.pathname + "/").startsWith(scope.prefix)) {
    throw new WeirError("policy_denied", "the request would leave the granted upstream", {
      rule: "upstream_scope",
      status: 403,
    });
  }
  return u;
}

/**
 * A `pin` value: the source's value, or one query parameter of it when the
 * source holds a URL (`from="query:<p>"`), and whether the file calls it
 * secret (`secret=#true` or `from=`: registered for redaction when read from
 * the environment or a file, never shown to a person); errors never echo the value.
 */
function pinValue(
  pin: QueryPin,
  resolved: Resolved,
  redactor: Redactor,
): { value: string; secret: boolean } {
  // A pin is policy, not a secret: redacted only when the file says so
  // (secret=#true), or when it is taken out of a URL-valued secret (from=).
  const hidden = pin.secret === true || pin.fromQuery !== undefined;
  const secret = resolved.secret && hidden;
  if (secret) redactor.add(resolved.value);
  if (!pin.fromQuery) return { value: resolved.value, secret: hidden };
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
  return { value: extracted, secret: hidden };
}
