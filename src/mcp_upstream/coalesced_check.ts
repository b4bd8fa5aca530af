/**
 * One check shared by concurrent callers, never older than the caller: used
 * for serve-upstream's per-call drift check (a `tools/list` of the upstream).
 *
 * @module
 */

/**
 * Drift checks shared by concurrent calls without ever using a listing that
 * began before a call arrived: a call that finds no check running starts one;
 * calls arriving while one runs all wait for the single check that starts
 * right after it. So each call is checked against a listing begun after it
 * arrived, and at most one listing is in flight (plus one queued), whatever
 * the concurrency.
 */
export class CoalescedCheck {
  #running?: Promise<void>;
  #queued?: Promise<void>;
  readonly #run: () => Promise<void>;

  constructor(run: () => Promise<void>) {
    this.#run = run;
  }

  /** Resolves (or rejects) with a run that began after this call. */
  check(): Promise<void> {
    if (!this.#running) return this.#start();
    this.#queued ??= this.#running.catch(() => {}).then(() => {
      this.#queued = undefined;
      return this.#start();
    });
    return this.#queued;
  }

  #start(): Promise<void> {
    const running: Promise<void> = this.#run().finally(() => {
      if (this.#running === running) this.#running = undefined;
    });
    this.#running = running;
    return running;
  }
}
