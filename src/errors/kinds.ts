/**
 * weir's error kinds: the one closed set of stable codes a tool call can fail
 * or be refused with, in every mode (spec, serve-upstream, serve-ssm,
 * serve-s3). Each kind says, in one place:
 *
 * - the status the HTTP tool API answers (`POST /api/<tool>`), and any other
 *   status a site may choose for it (listed, so a new one is a type error);
 * - the refusal rule of the audit log (`"event":"refused"`, src/ops/audit.ts)
 *   when the kind is a refusal, else it is the `outcome` of an allowed call;
 * - the OpenTelemetry `error.type` (`timeout`, `cancelled`, else `_OTHER`).
 *
 * A failure is thrown as a {@link WeirError}: its `kind` is a field, its
 * message (the MCP answer's text) starts with `<kind>: `, and its status comes
 * from this table, so the log, the tool API and the MCP answer cannot
 * disagree; a misspelt kind does not compile. Readers use {@link kindOf}, never
 * the message text. Errors keep what caused them (`cause`).
 *
 * @module
 */
import { ToolError } from "../mcp/errors.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";

/** The audit rule of a refusal kind (a subset of `RefusalRule`, src/ops/audit.ts). */
export type KindRule =
  | "schema"
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
  | "withheld"
  | "allowlist"
  | "fingerprint"
  | "pin"
  | "auth"
  | "blank_argument"
  | "rate_limit"
  | "size"
  | "confirm"
  | "undeclared_parameter"
  | "key_characters"
  | "media_type"
  | "content"
  | "name_twin"
  | "secret_argument"
  | "token_exchange";

/** What one kind means to the tool API, the audit log and telemetry. */
export interface KindInfo {
  /** The tool API status. */
  readonly status: number;
  /** Other statuses a site may answer this kind with. */
  readonly also?: readonly number[];
  /** The audit rule when the kind is a refusal; absent for an outcome of an allowed call. */
  readonly rule?: KindRule;
  /** The OpenTelemetry `error.type` (default `_OTHER`). */
  readonly errorType?: "timeout" | "cancelled";
}

/** Every kind. Add a kind here first; `docs/spec-mode.md` ("Results") lists what callers see. */
export const ERROR_KINDS = {
  // Refused by the policy, before anything is sent.
  policy_denied: { status: 403, also: [400], rule: "restrict" },
  verb_withheld: { status: 403, rule: "withheld" },
  reject_empty_argument: { status: 400, rule: "blank_argument" },
  rate_limited: { status: 429, rule: "rate_limit" },
  rate_limit_store_unavailable: { status: 503, rule: "rate_limit" },
  request_too_large: { status: 400, rule: "size" },
  confirmation_declined: { status: 403, rule: "confirm" },
  confirmation_cancelled: { status: 403, rule: "confirm" },
  confirmation_impossible: { status: 403, rule: "confirm" },
  // A confirmation's requestState that does not verify: answered as JSON-RPC -32602 (MCP),
  // never re-asked; the audit line says so.
  confirmation_state_invalid: { status: 400, rule: "confirm" },
  invalid_base64: { status: 400, rule: "schema" },
  too_large: { status: 413, rule: "size" },
  // The identity provider would not exchange the caller's token for the upstream's (403), or
  // could not be asked (503): nothing was sent upstream (src/oauth/upstream_credential.ts).
  token_exchange_refused: { status: 403, rule: "token_exchange" },
  token_exchange_unavailable: { status: 503, rule: "token_exchange" },
  // The call was let through; this is what came of it.
  cancelled: { status: 499, errorType: "cancelled" },
  shutting_down: { status: 503, errorType: "cancelled" },
  internal_error: { status: 500 },
  confirmation_store_unavailable: { status: 503 },
  value_missing: { status: 500 },
  credential_missing: { status: 500 },
  credential_invalid: { status: 500 },
  credential_too_short: { status: 500 },
  base_url_missing: { status: 500 },
  pin_missing: { status: 500 },
  base_url_invalid: { status: 500 },
  pin_invalid: { status: 500 },
  dsn_missing: { status: 500 },
  dsn_invalid: { status: 500 },
  upstream_client_invalid: { status: 500 },
  upstream_error: { status: 502 },
  upstream_redirect: { status: 502 },
  upstream_timeout: { status: 504, errorType: "timeout" },
  upstream_unreachable: { status: 502 },
  upstream_cut_off: { status: 502 },
  upstream_too_large: { status: 502 },
  upstream_too_deep: { status: 502 },
  upstream_not_json: { status: 502 },
  upstream_failed: { status: 502 },
  upstream_unavailable: { status: 502 },
  upstream_auth: { status: 500 },
  schema_drift: { status: 409 },
  // serve-upstream: an allowlisted tool listed as a stub (a schema weir cannot enforce, a pin
  // that does not fit, a policy), refused without reaching the upstream.
  tool_unavailable: { status: 403, rule: "withheld" },
  reject_empty: { status: 502 },
  extract_failed: { status: 502 },
  extract_timeout: { status: 504, errorType: "timeout" },
  extract_too_large: { status: 502 },
  sql_error: { status: 400 },
  sql_failed: { status: 502 },
  sql_timeout: { status: 504, errorType: "timeout" },
  sql_too_large: { status: 502 },
  sql_unavailable: { status: 503 },
  not_found: { status: 404 },
  aws_error: { status: 502 },
  aws_timeout: { status: 504, errorType: "timeout" },
  aws_unreachable: { status: 502 },
  aws_unexpected: { status: 502 },
  aws_answer_too_large: { status: 502 },
  aws_credentials_missing: { status: 500 },
  aws_credentials_invalid: { status: 500 },
} as const satisfies Record<string, KindInfo>;

/** One of weir's error kinds. */
export type ErrorKind = keyof typeof ERROR_KINDS;

/** The statuses a kind may be answered with: its own, and those it lists as `also`. */
export type StatusOf<K extends ErrorKind> =
  | (typeof ERROR_KINDS)[K]["status"]
  | ((typeof ERROR_KINDS)[K] extends { also: readonly (infer S)[] } ? S : never);

/** What a {@link WeirError} may carry besides its kind and text. */
export interface WeirErrorOptions<K extends ErrorKind> {
  /** Another status this kind allows (default: the kind's own). */
  status?: StatusOf<K>;
  /** Structured detail for the result (tools without an `outputSchema`). */
  structuredContent?: JsonObject;
  /** What caused it (kept on the error, never sent to the caller). */
  cause?: unknown;
  /**
   * The audit rule, when the kind's own is too broad: `policy_denied` is a
   * dot segment, a separator, a metacharacter, ... each logged by its name.
   */
  rule?: KindRule;
  /**
   * A refused redirect's target as the operator's log shows it (query values
   * redacted: `redirectTarget`, src/outbound/once.ts); never in the message.
   */
  location?: string;
  /** The audit line's `reason`: a fixed phrase naming what failed, never a value. */
  reason?: string;
}

/**
 * A tool call's failure or refusal of a known {@link ErrorKind}: a `ToolError`
 * (the core answers `isError: true` with its message, the tool API with its
 * status) whose message is `<kind>: <detail>`.
 */
export class WeirError<K extends ErrorKind = ErrorKind> extends ToolError {
  /** The kind, as the audit log, the tool API and telemetry read it. */
  readonly kind: K;

  /**
   * Make the error.
   * @param kind the kind (its status and audit rule come from {@link ERROR_KINDS})
   * @param detail what happened and what to do, without secrets: the text after `<kind>: `
   * @param options another allowed status, structured detail, the cause
   */
  constructor(kind: K, detail: string, options: WeirErrorOptions<K> = {}) {
    super(`${kind}: ${detail}`, {
      status: (options.status as number | undefined) ?? (ERROR_KINDS[kind] as KindInfo).status,
      structuredContent: options.structuredContent,
      cause: options.cause,
    });
    this.name = "WeirError";
    this.kind = kind;
    if (options.rule !== undefined) this.rule = options.rule;
    if (options.location !== undefined) this.location = options.location;
    if (options.reason !== undefined) this.reason = options.reason;
  }

  /** The audit rule this refusal names, when it is more precise than its kind's. */
  readonly rule?: KindRule;
  /** A refused redirect's target for the audit line (see {@link WeirErrorOptions.location}). */
  readonly location?: string;
  /** The audit line's `reason` (a fixed phrase, never a value), when there is one. */
  readonly reason?: string;
}

/** Whether a string is one of the kinds. */
export function isErrorKind(value: string): value is ErrorKind {
  return Object.hasOwn(ERROR_KINDS, value);
}

/** The kind of an error: a {@link WeirError}'s field; `undefined` for any other value. */
export function kindOf(error: unknown): ErrorKind | undefined {
  return error instanceof WeirError ? error.kind : undefined;
}

/**
 * The kind an error result's text starts with (`<kind>: `), for readers that
 * see only a `CallToolResult` (telemetry); `undefined` when the text names no
 * known kind.
 */
export function kindOfText(text: string): ErrorKind | undefined {
  const head = /^([a-z0-9_]+):/.exec(text)?.[1];
  return head !== undefined && isErrorKind(head) ? head : undefined;
}

/** The audit rule of a refusal kind; `undefined` for an outcome of an allowed call. */
export function ruleOf(kind: ErrorKind | undefined): KindRule | undefined {
  if (kind === undefined) return undefined;
  const info: KindInfo = ERROR_KINDS[kind];
  return info.rule;
}

/** The audit rule of an error: its own (see {@link WeirErrorOptions.rule}), else its kind's. */
export function ruleOfError(error: unknown): KindRule | undefined {
  if (!(error instanceof WeirError)) return undefined;
  return (error as WeirError).rule ?? ruleOf(error.kind);
}

/** The audit `reason` an error carries (see {@link WeirErrorOptions.reason}), if any. */
export function reasonOfError(error: unknown): string | undefined {
  return error instanceof WeirError ? error.reason : undefined;
}

/** The OpenTelemetry `error.type` of a kind: `timeout`, `cancelled` or `_OTHER`. */
export function errorTypeOf(kind: ErrorKind | undefined): "timeout" | "cancelled" | "_OTHER" {
  if (kind === undefined) return "_OTHER";
  const info: KindInfo = ERROR_KINDS[kind];
  return info.errorType ?? "_OTHER";
}
