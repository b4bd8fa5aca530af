/**
 * Waits for tests that hold on a loaded machine (CI runs the suite on 2 cores
 * at a load of 10-20): poll for a condition with a generous bound that ends as
 * soon as the condition holds, and bound a promise without asserting how fast
 * it settled. A bound here is a guard against a hang (many times the expected
 * time), never the behaviour under test.
 *
 * @module
 */

/** Default bound of {@link until} and {@link within}: 60 s. */
export const GENEROUS_MS = 60_000;

/** Resolve after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Poll `done` every `stepMs` (default 25) until it returns true or `timeoutMs`
 * (default {@link GENEROUS_MS}) has passed. Returns whether it held: the
 * caller asserts on what it waited for, with its own message.
 */
export async function until(
  done: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; stepMs?: number } = {},
): Promise<boolean> {
  const end = Date.now() + (options.timeoutMs ?? GENEROUS_MS);
  while (true) {
    if (await done()) return true;
    if (Date.now() >= end) return false;
    await sleep(options.stepMs ?? 25);
  }
}

/**
 * `promise`, or a rejection saying `${what} did not happen within ${ms} ms`
 * once `ms` (default {@link GENEROUS_MS}) has passed. The timer is cleared
 * either way (no leaked op).
 */
export async function within<T>(
  promise: Promise<T>,
  what: string,
  ms = GENEROUS_MS,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
