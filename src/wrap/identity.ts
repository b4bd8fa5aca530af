/**
 * The caller's identity on a wrapped MCP server: with token exchange (the
 * `token-exchange` block of `mcp-server http`, serve-upstream's
 * `--token-exchange-*` flags), each request a caller makes (`tools/call`,
 * `tasks/*`, `resources/read`) carries `Authorization: Bearer` with a token
 * exchanged from that caller's own (src/oauth/upstream_credential.ts, built
 * by the command), never the caller's token and never weir's own; where the
 * MCP server keeps 2025-11-25 sessions, it goes on that caller's own session
 * (src/mcp_upstream/caller_sessions.ts), keyed by the caller's subject. A
 * refusal (403) or an exchange that could not be made (503) is audited and
 * nothing is sent.
 *
 * weir's own requests (the handshake, the listings, each re-verification)
 * carry weir's own token when the block says `client-credentials`
 * ({@link CallerIdentity.connection}), else the block's other headers only.
 *
 * @module
 */
import type { CallContext, Logger } from "../mcp/server.ts";
import { auditRefused, subjectOf } from "../ops/audit.ts";
import { ruleOfError, WeirError } from "../errors/kinds.ts";
import type { Redactor } from "../guard/secrets.ts";
import type { OwnToken } from "../mcp_upstream/connection.ts";

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
  /** `client-credentials`: weir's own token for its own requests to the MCP server. */
  connection?: OwnToken;
}

/** How a caller's request goes upstream: its header fields and who it is for the connection. */
export interface CallerRoute {
  /** `authorization: Bearer <exchanged token>`. */
  headers: Record<string, string>;
  /** The caller's key for its own session (its subject; `UpstreamConnection`'s `CallOptions.caller`). */
  caller: string;
}

/**
 * The route of a request whose caller's token was exchanged for `token`:
 * sessions are bound to the subject (a caller without one gets a session per
 * token).
 */
export function routeOf(auth: unknown, token: string): CallerRoute {
  const subject = (auth as { subject?: unknown } | null | undefined)?.subject;
  return {
    headers: { authorization: `Bearer ${token}` },
    caller: typeof subject === "string" ? `subject ${subject}` : `token ${token}`,
  };
}

/**
 * The route of one caller's request, or `undefined` without token exchange.
 * The token is added to `redactor` (it never reaches an answer).
 * @param name the tool (or, for `resources/read`, the resource) named in the log and audit line
 * @throws {WeirError} the exchange's refusal, after its audit line
 */
export async function callerRoute(
  identity: CallerIdentity | undefined,
  name: string,
  scopes: readonly string[],
  ctx: Pick<CallContext, "auth" | "signal">,
  redactor: Redactor,
  log: Logger,
): Promise<CallerRoute | undefined> {
  if (!identity) return undefined;
  try {
    const token = await identity.credential(ctx.auth, name, scopes, ctx.signal);
    redactor.add(token);
    return routeOf(ctx.auth, token);
  } catch (error) {
    const rule = ruleOfError(error);
    if (rule && error instanceof WeirError) {
      auditRefused(log, { rule, status: error.status, tool: name, subject: subjectOf(ctx.auth) });
    }
    throw error;
  }
}
