/**
 * How a failure to reach the MCP server reads to the caller of a wrapped
 * tool: its kind (`upstream_timeout`, `upstream_redirect`...) or a
 * cancellation, its message clipped and redacted, and, for a redirect, the
 * target kept for the audit line only (`WeirError.location`).
 *
 * @module
 */
import type { CallContext } from "../mcp/server.ts";
import { type ErrorKind, WeirError } from "../errors/kinds.ts";
import type { Redactor } from "../guard/secrets.ts";
import {
  UpstreamFailure,
  UpstreamRedirected,
  UpstreamUnavailable,
} from "../mcp_upstream/errors.ts";

/** A failure as the caller sees it: its kind (`upstream_timeout`...), or a cancellation. */
export function failureOf(
  error: unknown,
  doing: string,
  redactor: Redactor,
  ctx: CallContext,
): WeirError {
  if (ctx.signal.aborted) {
    return new WeirError("cancelled", `${doing}: cancelled by the client`, { cause: error });
  }
  const raw = (error as Error)?.message ?? String(error);
  const detail = redactor.text(clip(raw));
  if (!(error instanceof UpstreamFailure)) {
    return new WeirError("upstream_error", `${doing}: ${detail}`, { cause: error });
  }
  const kind: ErrorKind = error.code;
  // An HTTP refusal already says "the upstream answered <status>".
  const said = kind === "upstream_error" && !detail.startsWith("the upstream answered")
    ? `the upstream answered: ${detail}`
    : detail;
  const note = doing === "calling the tool" && error instanceof UpstreamUnavailable
    ? " (the call was not retried: it may or may not have run upstream)"
    : "";
  // A redirect's target is the operator's (the audit line), never in the words; the
  // MCP server may have echoed the call's secrets into it.
  const location = error instanceof UpstreamRedirected ? error.target(redactor) : undefined;
  return new WeirError(kind, `${doing}: ${said}${note}`, { cause: error, location });
}

/** `text` trimmed, at most `max` characters (then `...`). */
export function clip(text: string, max = 512): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}...` : t;
}
