/**
 * The caller's identity on a wrapped call: with token exchange (the
 * `token-exchange` block of `mcp-server http`, serve-upstream's
 * `--token-exchange-*` flags), each call carries `Authorization: Bearer` with
 * a token exchanged from its caller's own (src/oauth/upstream_credential.ts,
 * built by the command), never the caller's token. A refusal (403) or an
 * exchange that could not be made (503) is audited and nothing is sent.
 *
 * @module
 */
import type { CallContext, Logger } from "../mcp/server.ts";
import { auditRefused, subjectOf } from "../ops/audit.ts";
import { ruleOfError, WeirError } from "../errors/kinds.ts";
import type { Redactor } from "../guard/secrets.ts";

/** What the host needs to send a caller's identity upstream. */
export interface CallerIdentity {
  /**
   * For one call, the token to send upstream, exchanged from the caller's;
   * throws a `WeirError` (`token_exchange_refused`, 403, or
   * `token_exchange_unavailable`, 503) when there is none.
   */
  credential: (
    auth: unknown,
    tool: string,
    scopes: readonly string[],
    signal?: AbortSignal,
  ) => Promise<string>;
  /** The scopes of a served tool, asked for in its exchange (unless the setting fixes them). */
  scopesOf: (name: string) => readonly string[];
}

/**
 * The header fields of one call's identity, or `undefined` without token
 * exchange. The token is added to `redactor` (it never reaches an answer).
 * @throws {WeirError} the exchange's refusal, after its audit line
 */
export async function identityHeaders(
  identity: CallerIdentity | undefined,
  name: string,
  ctx: CallContext,
  redactor: Redactor,
  log: Logger,
): Promise<Record<string, string> | undefined> {
  if (!identity) return undefined;
  try {
    const token = await identity.credential(ctx.auth, name, identity.scopesOf(name), ctx.signal);
    redactor.add(token);
    return { authorization: `Bearer ${token}` };
  } catch (error) {
    const rule = ruleOfError(error);
    if (rule && error instanceof WeirError) {
      auditRefused(log, { rule, status: error.status, tool: name, subject: subjectOf(ctx.auth) });
    }
    throw error;
  }
}
