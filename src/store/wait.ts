/**
 * The wait for a reserved rate-limit slot, shared by the in-process and the
 * Redis bucket.
 *
 * @module
 */
import { ToolError } from "../mcp/server.ts";
import { WeirError } from "../errors/kinds.ts";

/**
 * Wait `waitMs` milliseconds for a slot the caller has already reserved.
 *
 * A wait cancelled through `signal` calls `giveBack` (the slot returns to the
 * bucket) and rejects with the signal's reason when that is a `ToolError`,
 * else with `ToolError` `cancelled` (499). A wait that got through keeps its
 * slot even if cancelled later (its request was sent).
 *
 * @param waitMs milliseconds to wait (at most `MAX_TIMER_MS`; the caller bounds it)
 * @param signal aborts the wait
 * @param giveBack returns the reserved slot; called once, only on abort
 */
export function waitForSlot(
  waitMs: number,
  signal: AbortSignal,
  giveBack: () => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      giveBack();
      reject(
        signal.reason instanceof ToolError
          ? signal.reason
          : new WeirError("cancelled", "the call was cancelled while waiting for the rate limit", {
            status: 499,
          }),
      );
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, waitMs);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
