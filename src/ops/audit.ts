/**
 * Audit lines: one log event per decision weir takes about a call, in one
 * shape for every mode (spec, serve-upstream, the AWS modes).
 *
 * - A call that was let through: `{"event": "tool_call", "decision": "allow",
 *   "tool", "outcome", "status", "duration_ms", "upstream_status"?,
 *   "location"?}` at `info` (`warn` when the outcome is not `ok`/`cache_hit`);
 *   `location` is where a refused redirect pointed, with its query values
 *   redacted (`redirectTarget`, src/outbound/once.ts): the operator's to see,
 *   never the caller's.
 * - A call or request refused by a rule: `{"event": "refused", "decision":
 *   "refuse", "rule", "status", "tool"?, "reason"?}` at `warn`.
 *
 * Never put an argument value, a result, a header value or a secret in
 * `reason` or any other field: name the rule and the input, not its value.
 * The MCP core and the transports cannot import this room (design layers),
 * so they emit the same shapes directly; the rule names are the
 * {@link RefusalRule} union below.
 *
 * @module
 */
import type { LogEvent, Logger } from "../mcp/server.ts";
import { WeirError } from "../errors/kinds.ts";

/**
 * Why a call or request was refused:
 * - `schema`: arguments do not match the tool's `inputSchema` (or are not an object, or nest too deep)
 * - `unknown_tool`: no such tool in the served catalog
 * - `withheld`: a `withhold` stub was called
 * - `restrict`: a path value outside the grant's `restrict` globs
 * - `dot_segment`, `separator`: a path value that is (or decodes to) `.`/`..`, or holds (or
 *   decodes to) a `/` or `\` it may not
 * - `metacharacter`, `control_character`, `ill_formed_text`: a path or query value holding (in any
 *   decoded form) a refused shell metacharacter, a control character, a lone surrogate
 * - `empty_value`, `value_too_long`, `encoded_too_deep`: an empty path value or segment, a
 *   `slashes="segments"` value over its length, a value still percent-encoded after 16 rounds
 * - `exclusive_inputs`: two inputs of one `mutually-exclusive` group
 * - `upstream_scope`: the planned request would leave the granted upstream
 * - `unknown_prompt`, `unknown_resource`: `prompts/get` or `resources/read` of nothing served
 * - `blank_argument`: `reject-empty-arguments`
 * - `rate_limit`: the rate limit would delay the call past its deadline
 * - `origin`, `host`, `auth`: the inbound checks (403)
 * - `size`: a body or line past its cap (413), a URL too long
 * - `deadline`: a request whose headers or body arrived too slowly (408)
 * - `overload`: the concurrent request cap (503)
 * - `shutting_down`: a request after shutdown began (503)
 * - `allowlist`, `fingerprint`, `pin`: serve-upstream's checks
 * - `undeclared_parameter`: serve-ssm, a parameter name the policy does not declare
 * - `name_twin`: an argument key that is not a declared argument but folds onto one (case,
 *   width, separators: `src/guardfile/name_fold.ts`), which a loose reader could take for it
 * - `key_characters`, `media_type`, `content`: serve-s3, a key or prefix outside the key
 *   characters, a `content_type` the policy does not list, bytes that are markup or not what
 *   their type says (a key's `dot_segment`, `separator`, `empty_value`, `value_too_long`, an
 *   empty object's `empty_value`, an object's `size` are named as in spec mode)
 * - `secret_argument`: an argument holds, in some encoding, a secret weir itself holds for the
 *   call (a credential, a secret pin or header, a database password, an exchanged token, the AWS
 *   secret key: src/guard/secret_arguments.ts); nothing was sent
 * - `token_exchange`: the identity provider refused to exchange the caller's token for the
 *   upstream's (403), or could not be asked (503); nothing was sent upstream
 */
export type RefusalRule =
  | "schema"
  | "unknown_tool"
  | "unknown_prompt"
  | "unknown_resource"
  | "withheld"
  | "restrict"
  | "dot_segment"
  | "separator"
  | "metacharacter"
  | "control_character"
  | "ill_formed_text"
  | "empty_value"
  | "value_too_long"
  | "encoded_too_deep"
  | "exclusive_inputs"
  | "upstream_scope"
  | "blank_argument"
  | "rate_limit"
  | "origin"
  | "host"
  | "auth"
  | "size"
  | "deadline"
  | "overload"
  | "shutting_down"
  | "allowlist"
  | "fingerprint"
  | "pin"
  | "confirm"
  | "undeclared_parameter"
  | "key_characters"
  | "media_type"
  | "content"
  | "name_twin"
  | "secret_argument"
  | "token_exchange";

/** A call let through and what came of it. */
export interface AllowedCall {
  tool: string;
  /** `ok`, `cache_hit`, or the error kind (`upstream_error`, `upstream_timeout`, `cancelled`...). */
  outcome: string;
  /** The status the tool API would answer (200, 502, 504, 499...). */
  status: number;
  /** Wall time of the call in milliseconds. */
  durationMs: number;
  /** The upstream's HTTP status, when a request was sent and answered. */
  upstreamStatus?: number;
  /** Who called: the OAuth token's subject, when weir checked one (never the token). */
  subject?: string;
  /** Where a refused redirect pointed, query values redacted (`WeirError.location`). */
  location?: string;
}

/** A refusal. */
export interface Refusal {
  rule: RefusalRule;
  /** The HTTP status (or the tool API status for an MCP tool error). */
  status: number;
  /** The tool asked for, when known (clipped to 64 characters). */
  tool?: string;
  /** A fixed phrase naming what failed, never a value. */
  reason?: string;
  /** Who called: the OAuth token's subject, when weir checked one (never the token). */
  subject?: string;
}

/** Longest tool name written (a client can send anything as a name). */
const TOOL_CHARS = 64;

/** Write the audit line of an allowed call. */
export function auditAllowed(log: Logger, call: AllowedCall): void {
  const ok = call.outcome === "ok" || call.outcome === "cache_hit";
  // Built field by field (no spread of a conditional object): one line per call.
  const event: LogEvent = {
    level: ok ? "info" : "warn",
    event: "tool_call",
    decision: "allow",
    tool: call.tool.slice(0, TOOL_CHARS),
    outcome: call.outcome,
    status: call.status,
    duration_ms: Math.round(call.durationMs),
  };
  if (call.upstreamStatus !== undefined) event.upstream_status = call.upstreamStatus;
  if (call.subject !== undefined) event.subject = call.subject;
  if (call.location !== undefined) event.location = call.location;
  log(event);
}

/** The redirect target a failure carries for the audit line (`WeirError.location`), if any. */
export function locationOf(error: unknown): string | undefined {
  return error instanceof WeirError ? error.location : undefined;
}

/** Write the audit line of a refusal. */
export function auditRefused(log: Logger, refusal: Refusal): void {
  log({
    level: "warn",
    event: "refused",
    decision: "refuse",
    rule: refusal.rule,
    status: refusal.status,
    ...(refusal.tool === undefined ? {} : { tool: refusal.tool.slice(0, TOOL_CHARS) }),
    ...(refusal.reason === undefined ? {} : { reason: refusal.reason }),
    ...(refusal.subject === undefined ? {} : { subject: refusal.subject }),
  });
}

/**
 * The caller's subject from a transport's `auth` verdict (an object with a
 * string `subject`, as the OAuth resource server hands on), else `undefined`.
 */
export function subjectOf(auth: unknown): string | undefined {
  const subject = (auth as { subject?: unknown } | null | undefined)?.subject;
  return typeof subject === "string" ? subject.slice(0, 128) : undefined;
}
