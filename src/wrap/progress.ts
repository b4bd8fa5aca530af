/**
 * The MCP server's progress for one wrapped call, forwarded to its caller
 * (`CallContext.progress`: stdio, or the HTTP answer's event stream), rate
 * bounded and redacted like the result.
 *
 * @module
 */
import type { CallContext } from "../mcp/server.ts";
import type { Redactor } from "../guard/secrets.ts";
import type { Progress } from "../mcp_upstream/connection.ts";

/** Least time between two progress notifications forwarded for one call, in ms. */
export const PROGRESS_INTERVAL_MS = 100;

/**
 * Forward the upstream's progress for one call to the caller, at most one
 * notification per {@link PROGRESS_INTERVAL_MS}: one that comes sooner waits,
 * and a later one replaces it (the latest progress is what a caller wants).
 * A message is redacted like the result (header secrets). `stop` drops what
 * still waits (the call is over).
 */
export function forwarder(send: NonNullable<CallContext["progress"]>, redactor: Redactor) {
  let last = -Infinity;
  let waiting: Progress | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const out = (p: Progress) => {
    last = performance.now();
    const message = p.message === undefined ? undefined : redactor.text(String(p.message));
    send(p.progress, p.total, message);
  };
  return {
    forward(p: Progress) {
      const since = performance.now() - last;
      if (since >= PROGRESS_INTERVAL_MS && timer === undefined) return out(p);
      waiting = p;
      timer ??= setTimeout(() => {
        timer = undefined;
        if (waiting) out(waiting);
        waiting = undefined;
      }, Math.max(0, PROGRESS_INTERVAL_MS - since));
    },
    stop(flush: boolean) {
      clearTimeout(timer);
      timer = undefined;
      if (flush && waiting) out(waiting);
      waiting = undefined;
    },
  };
}
