/**
 * **weir.** `header "<Name>" ...` inside a grant: a request header whose value
 * the caller supplies (`If-Match`, an API version, a request id), held to the
 * value rules of a query input. The header is never one weir sets or frames
 * the request with, a credential, a method override or a trace header.
 * Grammar: `docs/guardfile.md`, "`header`".
 *
 * @module
 */
import { type Grant, HEADER_VALUE_MAX_LENGTH, type HeaderInput } from "./model.ts";
import type { NodeReader } from "./nodes.ts";
import { readGate, RULE_PROPERTIES } from "./rules.ts";
import { readScalarInput } from "./inputs.ts";

/** Why a client-address header is never a caller input. */
const CLIENT_ADDRESS = "it speaks for the client's address, which the caller does not choose";

/** RFC 9110 section 5.1: a field name is a token. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Header names a caller may never supply, with why: what weir sets itself,
 * what frames or routes the request (RFC 9110, RFC 9112), credentials, the
 * W3C Trace Context weir propagates, what proxies add about the client, and
 * what asks the upstream for another method or path than the grant's.
 * Compared by {@link headerKey}.
 */
const NEVER: readonly [string[], string][] = [
  [
    [
      "host",
      "content-length",
      "content-type",
      "content-encoding",
      "transfer-encoding",
      "connection",
      "keep-alive",
    ],
    "weir frames the request itself",
  ],
  [
    ["te", "trailer", "upgrade", "expect", "proxy-connection", "http2-settings"],
    "it changes how the request is sent",
  ],
  [
    ["authorization", "proxy-authorization", "cookie", "user-agent", "accept", "accept-encoding"],
    "weir sets it (credentials belong in auth)",
  ],
  [["traceparent", "tracestate", "baggage"], "weir propagates the trace itself"],
  [
    [
      "forwarded",
      "via",
      "x-real-ip",
      "x-client-ip",
      "client-ip",
      "true-client-ip",
      "cf-connecting-ip",
      "fastly-client-ip",
      "x-cluster-client-ip",
      "x-originating-ip",
      "x-remote-ip",
      "x-remote-addr",
      // The host the client asked for, as a proxy in front says it (IIS ARR, Azure).
      "x-original-host",
      "x-host",
    ],
    CLIENT_ADDRESS,
  ],
  [
    ["x-http-method-override", "x-http-method", "x-method-override", "x-original-method"],
    "it asks the upstream to run another HTTP method than the grant's",
  ],
  [
    ["x-original-url", "x-rewrite-url", "x-original-uri"],
    "it asks the upstream to serve another path than the grant's (IIS, Symfony, nginx auth_request)",
  ],
];

/**
 * A header name as every server reads it: case ignored (RFC 9110), and `_`
 * the same as `-`, as servers that hand headers to the application as
 * CGI-style variables (`HTTP_X_FORWARDED_FOR`: WSGI, Rack, PHP) read
 * `X_Forwarded_For` and `X-Forwarded-For` alike (Puma's CVE-2024-45614).
 */
export function headerKey(name: string): string {
  return name.toLowerCase().replaceAll("_", "-");
}

/**
 * Whether a header name reads as a credential (`X-Api-Key`, `Api-Key`,
 * `X-Auth-Token`, `Private-Token`, ...): the agent would choose whose access
 * the call uses. Such a header belongs in `auth header-token`, read from the
 * environment.
 */
export function isCredentialHeader(name: string): boolean {
  const n = name.toLowerCase();
  return /api[-_]?key([-_]|$)/.test(n) ||
    /(^|[-_])(subscription[-_]?key|access[-_]?key|secret|password|passwd)([-_]|$)/.test(n) ||
    /(^|[-_])(auth|access|private|session|id|bearer|csrf|xsrf)?[-_]?token$/.test(n) ||
    /^x[-_]auth([-_]|$)/.test(n);
}

/** The default argument name of a header input: `If-Match` -> `if_match`. */
export function headerInputName(header: string): string {
  return header.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
}

/** Why a header name may not be a caller input, or undefined when it may. */
export function reservedHeaderReason(name: string): string | undefined {
  const lower = headerKey(name);
  for (const [names, why] of NEVER) if (names.includes(lower)) return `${why}; remove it`;
  if (lower.startsWith("x-forwarded")) return `${CLIENT_ADDRESS}; remove it`;
  if (lower.startsWith("sec-") || lower.startsWith("proxy-")) {
    return "browsers and proxies reserve the Sec- and Proxy- prefixes; remove it";
  }
  if (isCredentialHeader(name)) {
    return `it reads as a credential, which the agent must not choose; send it with ` +
      `auth header-token { header "${name}"; value env "..." }`;
  }
  return undefined;
}

/** Read one `header` node of a grant into `grant.headers`. */
export function readHeaderInput(node: NodeReader, grant: Grant): void {
  node.onlyProperties([
    "input",
    "type",
    "minimum",
    "maximum",
    "required",
    "metacharacters",
    ...RULE_PROPERTIES,
  ]);
  if (node.node.children.some((k) => k.name !== "enum")) {
    node.error(`a header input's block holds only "enum"; remove the other nodes`);
  }
  if (!node.argCount(1, 1, `the header name, e.g. header "If-Match" required=#true`)) return;
  const wire = node.stringArg(0, "the header name");
  if (!wire) return;
  if (!HEADER_NAME.test(wire)) {
    node.error(`"${wire}" is not a valid HTTP header name (RFC 9110 token); rename it`);
    return;
  }
  const why = reservedHeaderReason(wire);
  if (why) {
    node.error(`header "${wire}" cannot be a caller input: ${why}`);
    return;
  }
  if (grant.headers.some((h) => headerKey(h.wire) === headerKey(wire))) {
    node.error(
      `header "${wire}" is declared twice in this grant (names ignore case, and servers read ` +
        `"_" as "-"); keep one`,
    );
    return;
  }
  const name = node.stringProp("input") ?? headerInputName(wire);
  if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) {
    node.error(
      `input=${JSON.stringify(name)} is not an input name (letters, digits, _ or -, not ` +
        `starting with a digit); name it, e.g. input="if_match"`,
    );
    return;
  }
  const input: HeaderInput = {
    name,
    wire,
    type: "string",
    required: node.boolProp("required") ?? false,
    metacharacters: readGate(node),
  };
  if (!readScalarInput(node, name, input, "a header", "string")) return;
  if (input.type === "string") {
    if (input.maxLength !== undefined && input.maxLength > HEADER_VALUE_MAX_LENGTH) {
      node.error(
        `max-length=${input.maxLength} is over ${HEADER_VALUE_MAX_LENGTH}, the longest header ` +
          `value weir sends; lower it`,
      );
    }
    if (input.minLength === 0) {
      node.error(`min-length=0 is not allowed: a header value is never empty; remove it`);
    }
  }
  grant.headers.push(input);
}

/** The static headers of `wrap`, or the auth header, that a grant's header input would replace. */
export function checkHeaderInputClashes(
  at: NodeReader,
  grants: readonly Grant[],
  fixed: readonly string[],
): void {
  for (const grant of grants) {
    for (const h of grant.headers) {
      const clash = fixed.find((f) => headerKey(f) === headerKey(h.wire));
      if (clash) {
        at.error(
          `${grant.tool}: header input "${h.wire}" would replace the header "${clash}" this ` +
            `wrap sends on every request (names ignore case, and servers read "_" as "-"); ` +
            `remove one`,
        );
      }
    }
  }
}
