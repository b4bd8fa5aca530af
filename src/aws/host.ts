/**
 * What the AWS hosts (`ssm.ts`, `s3.ts`) share: their options and limits, one
 * signed call whose non-2xx answer becomes an error, the audit line of a
 * finished call, failures as secret-free tool errors, and the host contract
 * they hand the MCP core.
 *
 * @module
 */
import {
  type CallContext,
  type Dispatch,
  type Logger,
  type ServerOptions,
  ToolError,
} from "../mcp/server.ts";
import type { ToolSpec } from "../mcp/types.ts";
import { auditCall } from "../guard/pipeline.ts";
import { AwsConfigError, type AwsEndpoint, credentialsFromEnv, type EnvReader } from "./config.ts";
import {
  answerError,
  type AwsAnswer,
  type AwsLimits,
  type AwsRequest,
  credentialRedactor,
  sendAws,
} from "./request.ts";
import { kindOf, type KindRule, WeirError } from "../errors/kinds.ts";
import type { Redactor } from "../guard/secrets.ts";

/** Options of the AWS hosts. */
export interface AwsHostOptions {
  /** Reads credentials at every call. */
  env: EnvReader;
  /** Where requests go (see `resolveEndpoint`). */
  endpoint: AwsEndpoint;
  /** Deadline and answer cap (defaults: 30 s, 1 MiB). */
  limits?: Partial<AwsLimits>;
  /** One line per call (tool, outcome, status, duration); never a value or a credential. */
  log?: Logger;
}

/** Default limits of an AWS call. */
export const DEFAULT_AWS_LIMITS: AwsLimits = { timeoutMs: 30_000, maxResponseBytes: 1024 * 1024 };

/** An answer, and the redactor of the credentials it was sent with. */
export interface CheckedAnswer extends AwsAnswer {
  /**
   * Redacts the call's credentials in every encoding (src/guard/secrets.ts):
   * apply it to whatever of the answer goes into a result.
   */
  redactor: Redactor;
}

/**
 * Send `request` with the credentials `env` holds now (see `sendAws`).
 *
 * @param ok which statuses are answers (default: 2xx)
 * @param started `performance.now()` at the start of the call: the deadline counts from it
 * @throws {AwsConfigError} credentials missing from `env`
 * @throws {AwsCallError} as `sendAws`, and `aws_error` (see `answerError`,
 *   credentials redacted) for a status `ok` refuses
 */
export async function sendAwsChecked(
  request: AwsRequest,
  env: EnvReader,
  limits: AwsLimits,
  signal: AbortSignal,
  ok: (status: number) => boolean = (s) => s >= 200 && s < 300,
  started: number = performance.now(),
): Promise<CheckedAnswer> {
  const credentials = credentialsFromEnv(env);
  const answer = await sendAws(request, credentials, limits, signal, started);
  const redactor = credentialRedactor(credentials);
  if (!ok(answer.status)) throw answerError(request, answer, redactor);
  return { ...answer, redactor };
}

/**
 * Audit a finished call through the pipeline's one audit line
 * (`auditCall`, src/guard/pipeline.ts): `ok` (200, AWS answered 200) when
 * `failure` is absent; a refusal by its rule (with `reasons[rule]` when the
 * error names no reason); else the failure's kind and status. `started` is a
 * `performance.now()` reading. An unknown tool (404, no kind) is not audited:
 * the core refuses it before dispatch.
 */
export function auditFinished(
  log: Logger,
  tool: string,
  ctx: Pick<CallContext, "auth">,
  started: number,
  failure?: ToolError,
  reasons?: Readonly<Partial<Record<KindRule, string>>>,
): void {
  if (!failure) {
    auditCall(log, tool, ctx, started, "ok", 200, { upstreamStatus: 200 });
    return;
  }
  const kind = kindOf(failure);
  if (!kind && failure.status === 404) return;
  auditCall(
    log,
    tool,
    ctx,
    started,
    kind ?? "tool_error",
    failure.status,
    undefined,
    failure,
    reasons,
  );
}

/** Any failure as a tool error whose message carries no secret. */
export function toToolError(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (error instanceof AwsConfigError) {
    return error.kind
      ? new WeirError(error.kind, error.detail, { cause: error })
      : new ToolError(error.message, { status: 500, cause: error });
  }
  return new WeirError("internal_error", `${(error as Error)?.name ?? "error"}`, { cause: error });
}

/** The host contract of an AWS server: its tools, no resources or prompts, lists cached 60 s. */
export function awsHost(
  name: string,
  instructions: string,
  tools: ToolSpec[],
  dispatch: Dispatch,
): Pick<ServerOptions, "name" | "version" | "instructions" | "catalog" | "dispatch" | "cache"> {
  return {
    name,
    version: "0.1.0",
    instructions,
    catalog: { tools, resources: [], prompts: [] },
    dispatch,
    cache: {
      tools: { ttlMs: 60_000, cacheScope: "public" },
      discover: { ttlMs: 60_000, cacheScope: "public" },
    },
  };
}
