/**
 * What can go wrong between weir and an upstream MCP server, one class per
 * kind, each with the stable code weir's error messages and audit lines
 * start with (`upstream_unavailable`, `upstream_error`, ...), and a
 * summary of the official clients' long schema-error messages.
 *
 * The kinds, and whether the request may have reached the upstream:
 * - {@link UpstreamUnavailable}: no connection, or it broke before an answer
 *   began (a request in flight may or may not have run);
 * - {@link UpstreamCutOff}: the answer began (HTTP status and head, or an
 *   event stream) and broke off before the result (the request was
 *   delivered and may have run);
 * - {@link UpstreamRedirected}: the upstream answered 3xx; weir follows no
 *   redirect (the request was delivered to the configured URL only);
 * - {@link UpstreamTooLarge}: the answer passed the size cap while being
 *   read (the request was delivered);
 * - {@link UpstreamTimeout}: no answer within the request timeout;
 * - {@link UpstreamRefused}: the upstream answered with a JSON-RPC error;
 * - {@link UpstreamTokenUnavailable}: weir's own token for the connection
 *   could not be had from the identity provider (nothing was sent).
 *
 * @module
 */
import type { ErrorKind } from "../errors/kinds.ts";
import { redirectRefusal, redirectTarget, type Secrets } from "../outbound/once.ts";

/** A failure talking to the upstream; `code` names its kind (src/errors/kinds.ts). */
export abstract class UpstreamFailure extends Error {
  /** The error kind weir's messages and audit lines use for this failure. */
  abstract readonly code: ErrorKind;
}

/** The connection broke (or could not be made) before an answer began. */
export class UpstreamUnavailable extends UpstreamFailure {
  readonly code = "upstream_unavailable" as const;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UpstreamUnavailable";
  }
}

/**
 * weir's own token for a request of its own (the handshake, a listing) could
 * not be had from the identity provider (client credentials): nothing was
 * sent. `final` when retrying cannot help (the provider refused weir's
 * client: a setting to change), so connecting stops at once.
 */
export class UpstreamTokenUnavailable extends UpstreamUnavailable {
  /** The provider refused weir's client (a setting to change), not merely unreachable. */
  readonly final: boolean;
  constructor(message: string, final: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = "UpstreamTokenUnavailable";
    this.final = final;
  }
}

/**
 * The upstream answered an HTTP status a person must act on: 401/403 (the
 * credential), or 404/405 to the handshake (not an MCP endpoint). The message
 * names the URL and the fix, never the answer's body.
 */
export class UpstreamHttpRefusal extends UpstreamFailure {
  readonly code = "upstream_error" as const;
  /** The HTTP status. */
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "UpstreamHttpRefusal";
    this.status = status;
  }
}

/** The answer began and broke off before its result: the request was delivered. */
export class UpstreamCutOff extends UpstreamFailure {
  readonly code = "upstream_cut_off" as const;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UpstreamCutOff";
  }
}

/**
 * The upstream answered with a redirect (any 3xx), which weir never follows:
 * weir's credential goes nowhere but the configured URL. The message (which
 * a caller reads) says the status, never the target: that is
 * {@link UpstreamRedirected.target}, for the operator, with the secrets of
 * the request redacted by whoever words it (the `Location` may quote them).
 */
export class UpstreamRedirected extends UpstreamFailure {
  readonly code = "upstream_redirect" as const;
  /** The answer's status (301, 302, 303, 307, 308...). */
  readonly status: number;
  readonly #location: string | null;
  readonly #url: string | URL;
  /**
   * @param location the answer's `Location` header as it came (`null`: none)
   * @param url the request's URL (a relative `Location` resolves against it)
   */
  constructor(status: number, location: string | null, url: string | URL) {
    super(
      `the upstream ${redirectRefusal(status)}; give weir the final URL (--upstream, or ` +
        `mcp-server http)`,
    );
    this.name = "UpstreamRedirected";
    this.status = status;
    this.#location = location;
    this.#url = url;
  }

  /**
   * Where it pointed, query values and `secrets` redacted (`redirectTarget`,
   * src/outbound/once.ts), or `undefined` when it had no usable `Location`.
   * @param secrets what the request carried (the header secrets, a caller's exchanged token)
   */
  target(secrets: Secrets): string | undefined {
    return redirectTarget(this.#location, this.#url, secrets);
  }
}

/** The answer passed the size cap while it was read. */
export class UpstreamTooLarge extends UpstreamFailure {
  readonly code = "upstream_too_large" as const;
  constructor(maxBytes: number) {
    super(`the upstream's answer is over the ${maxBytes}-byte cap (--max-response-bytes)`);
    this.name = "UpstreamTooLarge";
  }
}

/** The request timeout passed before the upstream answered. */
export class UpstreamTimeout extends UpstreamFailure {
  readonly code = "upstream_timeout" as const;
  constructor(ms: number) {
    super(`the upstream did not answer within ${ms} ms`);
    this.name = "UpstreamTimeout";
  }
}

/**
 * A failure's words for the operator (start-up, lint-upstream, the log): its
 * message, and for a redirect where it pointed, query values and `secrets`
 * redacted. A caller is given the message alone.
 */
export function operatorMessage(error: Error, secrets: Secrets): string {
  const target = error instanceof UpstreamRedirected ? error.target(secrets) : undefined;
  return target !== undefined ? `${error.message} (it pointed to ${target})` : error.message;
}

/**
 * `error` with `secrets` taken out of its message, in place (returned): the
 * upstream's words (a JSON-RPC error, an HTTP body, a transport message) may
 * quote what weir sent it, and every reader of a connection's failure (a
 * caller, a log line, start-up and every command's message) gets them
 * through here. A redirect's target is redacted where it is worded
 * ({@link UpstreamRedirected.target}).
 */
export function scrubbed<E>(error: E, secrets: Secrets): E {
  if (error instanceof Error) error.message = secrets.text(error.message);
  return error;
}

/** The upstream answered a request with a JSON-RPC error. */
export class UpstreamRefused extends UpstreamFailure {
  readonly code = "upstream_error" as const;
  /** The JSON-RPC error code the upstream answered (0 when weir refused its answer). */
  readonly rpcCode: number;
  constructor(rpcCode: number, message: string) {
    super(message);
    this.name = "UpstreamRefused";
    this.rpcCode = rpcCode;
  }
}

/**
 * The official clients reject an answer that is not MCP (say, a URL that
 * serves some other JSON API) with a schema error whose message is the whole
 * list of schema issues as indented JSON: hundreds of lines for one answer.
 * Each such list inside `message` becomes one line naming the first few
 * distinct `path: message` issues; any other text is kept as it is.
 * @param message an error message, possibly holding such a list
 * @returns the message with every issue list summarized
 */
export function conciseMessage(message: string): string {
  let out = "";
  let rest = message;
  for (let guard = 0; guard < 8; guard++) {
    const start = rest.search(/\[\s*\{\s*"(?:code|expected|path|message)"/);
    if (start < 0) break;
    const end = closingBracket(rest, start);
    if (end < 0) break;
    let issues: unknown;
    try {
      issues = JSON.parse(rest.slice(start, end + 1));
    } catch {
      break;
    }
    const found: string[] = [];
    collectIssues(issues, found);
    const shown = [...new Set(found)].slice(0, 3);
    out += rest.slice(0, start) +
      `the answer is not a valid MCP message (${shown.join("; ") || "schema mismatch"}` +
      `${new Set(found).size > shown.length ? "; ..." : ""})`;
    rest = rest.slice(end + 1);
  }
  return out + rest;
}

/** The index of the `]` closing the `[` at `start` (JSON strings skipped), or -1. */
function closingBracket(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") {
      depth--;
      if (depth === 0) return c === "]" ? i : -1;
    }
  }
  return -1;
}

/** Leaf issues as `path: message` (a union's branches are walked in order). */
function collectIssues(value: unknown, into: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) collectIssues(item, into);
    return;
  }
  if (!value || typeof value !== "object") return;
  const issue = value as { path?: unknown; message?: unknown; errors?: unknown };
  if (Array.isArray(issue.errors) && issue.errors.length > 0) {
    collectIssues(issue.errors, into);
    return;
  }
  if (typeof issue.message !== "string") return;
  const path = Array.isArray(issue.path) && issue.path.length > 0
    ? `${issue.path.join(".")}: `
    : "";
  into.push(`${path}${issue.message.slice(0, 120)}`);
}

/**
 * A failure before any answer, as the kind a caller sees: an
 * {@link UpstreamFailure} found inside what the official clients threw, else
 * {@link UpstreamUnavailable} with a concise message.
 */
export function unavailable(error: unknown): UpstreamFailure {
  // The official clients wrap what the transport threw (sometimes twice).
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    if (e instanceof UpstreamFailure) return e;
    e = (e as { cause?: unknown }).cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new UpstreamUnavailable(conciseMessage(message), { cause: error });
}

/**
 * Whether `error` (or an error it was caused by, up to 8 deep) is Deno
 * refusing a permission weir was not given (`Deno.errors.NotCapable`,
 * `PermissionDenied`): a setting to change, not a failure to wait out.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { permissionRefused } from "./errors.ts";
 * const denied = new Deno.errors.NotCapable('Requires run access to "npx"');
 * assert.ok(permissionRefused(new Error("spawn failed", { cause: denied })));
 * assert.ok(!permissionRefused(new Error("connection refused")));
 * ```
 */
export function permissionRefused(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      return true;
    }
  }
  return false;
}
