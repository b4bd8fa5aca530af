/**
 * Go duration strings (`time.ParseDuration`), as the reference writes them:
 * `200ms`, `1s`, `1m30s`, `1.5h`, `24h`. Units: ns, us (µs), ms, s, m, h.
 *
 * @module
 */

/**
 * The longest delay a timer honours, in milliseconds (2^31 - 1, about 24.8
 * days): HTML's timer initialization steps and Node/Deno store the timeout as
 * a 32-bit signed integer, and a longer one fires after 1 ms instead. Every
 * timeout flag is bounded by it, and a wait longer than it is never scheduled.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * The longest timeout a flag takes, in milliseconds (2,000,000,000, about 23
 * days, 555h): below {@link MAX_TIMER_MS} with room for what is added to it
 * (the upstream deadline's 20 ms slots).
 */
export const MAX_TIMEOUT_MS = 2_000_000_000;

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  "μs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Parse a Go duration.
 * @returns milliseconds, or `null` when the text is not a duration
 */
export function parseDuration(text: string): number | null {
  const m = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (!m) return text === "0" ? 0 : null;
  let total = 0;
  for (
    const part of text.replace(/^[+-]/, "").matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)
  ) {
    total += Number(part[1]) * UNITS[part[2]];
  }
  return m[1] === "-" ? -total : total;
}

/** `86400000` -> `24h0m0s`, the way Go prints a duration. */
export function formatDuration(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}
