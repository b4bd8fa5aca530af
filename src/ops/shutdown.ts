/**
 * Graceful shutdown: stop taking new work, let calls in flight finish up to a
 * drain deadline, cancel the rest with a tool error that says why, and log
 * one line with what was drained and what was cut.
 *
 * The transports learn about it through two things a {@link Drain} hands
 * out: {@link Drain.cancel}, an `AbortSignal` that fires at the deadline
 * (its reason a `ToolError` with kind `shutting_down`, so a cancelled call's
 * result names the shutdown, not a client cancellation), and
 * {@link Drain.draining}, which an HTTP front checks to refuse new requests
 * with 503 while the listener closes.
 *
 * Before the drain, an HTTP server may spend a grace period
 * ({@link Drain.unready}, `--shutdown-grace`): `GET /readyz` answers 503 so
 * load balancers and Kubernetes stop routing here, while every request that
 * still arrives is served as usual. Only then does the listener close.
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import { WeirError } from "../errors/kinds.ts";

/** The default drain deadline: 10 s (`--drain-timeout`). */
export const DEFAULT_DRAIN_MS = 10_000;

/** The `reason` of a `shutdown` line: the abort reason when a string (`"SIGTERM"`). */
export function stopReason(signal?: AbortSignal): string {
  return typeof signal?.reason === "string" ? signal.reason : "stop requested";
}

/** After the deadline, how long cancelled calls get to answer before the process goes anyway. */
const CUT_GRACE_MS = 2_000;

/** What {@link Drain.run} saw. */
export interface DrainReport {
  /** Why the server stopped: `SIGTERM`, `SIGINT`, `end of input`... */
  reason: string;
  /** Requests in flight when shutdown began. */
  inFlight: number;
  /** Of those, finished before the deadline. */
  drained: number;
  /** Of those, cancelled at the deadline. */
  cut: number;
  /** Milliseconds from the start of shutdown to the end of the drain. */
  durationMs: number;
}

/** Counts requests in flight and runs the drain. */
export class Drain {
  readonly #controller = new AbortController();
  readonly #deadlineMs: number;
  readonly #log: Logger;
  #inFlight = 0;
  #draining = false;
  #ready = true;

  /**
   * @param deadlineMs how long calls in flight may run once shutdown begins (0: cancel at once)
   * @param log receives the `shutdown` line
   */
  constructor(deadlineMs: number, log: Logger) {
    this.#deadlineMs = deadlineMs;
    this.#log = log;
  }

  /** Fires at the drain deadline; its reason is a `shutting_down` {@link WeirError}. */
  get cancel(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once shutdown has begun: refuse new requests. */
  get draining(): boolean {
    return this.#draining;
  }

  /** False once shutdown has begun (grace included): `GET /readyz` answers 503. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Begin the grace period: stop reporting ready, keep serving. */
  unready(): void {
    this.#ready = false;
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Count one request in; call the returned function when it is answered. */
  enter(): () => void {
    this.#inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#inFlight--;
    };
  }

  /**
   * Begin shutdown and wait for the drain.
   *
   * @param reason written in the log line (e.g. `SIGTERM`)
   * @param finished resolves when the transport has answered everything it
   *   took (e.g. `Deno.serve`'s `finished` after `shutdown()`); awaited at
   *   most until the deadline plus a short grace
   * @param pending counts requests in flight when the transport counts them
   *   itself (stdio); default: the count of {@link enter}
   */
  async run(
    reason: string,
    finished: Promise<unknown>,
    pending: () => number = () => this.#inFlight,
  ): Promise<DrainReport> {
    this.#draining = true;
    this.#ready = false;
    const started = performance.now();
    const inFlight = pending();
    let cut = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        cut = pending();
        this.#controller.abort(
          new WeirError(
            "shutting_down",
            `the server is stopping and this call did not finish within the ` +
              `${this.#deadlineMs} ms drain deadline; it was cancelled (the upstream may have ` +
              `received it)`,
            { status: 503 },
          ),
        );
        resolve();
      }, this.#deadlineMs);
    });
    const settled = Promise.resolve(finished).then(() => {}, () => {});
    await Promise.race([settled, deadline]);
    clearTimeout(timer);
    if (this.#controller.signal.aborted) {
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        settled,
        new Promise((resolve) => (grace = setTimeout(resolve, CUT_GRACE_MS))),
      ]);
      clearTimeout(grace);
    }
    const report: DrainReport = {
      reason,
      inFlight,
      drained: Math.max(0, inFlight - cut),
      cut,
      durationMs: Math.round(performance.now() - started),
    };
    this.#log({
      level: "info",
      event: "shutdown",
      reason,
      in_flight: report.inFlight,
      drained: report.drained,
      cut: report.cut,
      drain_deadline_ms: this.#deadlineMs,
      duration_ms: report.durationMs,
    });
    return report;
  }
}
