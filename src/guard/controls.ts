/**
 * The controls a guardfile can put around grants: refusing blank arguments
 * before anything is sent, an outbound token bucket, a response cache, and
 * refusing empty answers (the token buckets live in `src/store`). Each is a small piece the dispatch pipeline calls
 * in order; each is off unless the guardfile names it.
 *
 * @module
 */
import type { CallToolResult } from "../mcp/types.ts";
import { WeirError } from "../errors/kinds.ts";

/**
 * Emptiness as the reference defines it: `null`, a blank string, `[]`, `{}`.
 * `false` and `0` are answers, not emptiness.
 */
export function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === "string") return value.trim() === "";
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}

/**
 * `reject-empty-argument`: refuse a named argument that is present but blank.
 * @throws {WeirError} 400, naming the argument, before any request
 */
export function checkBlankArguments(
  tool: string,
  fields: readonly string[],
  args: Record<string, unknown>,
): void {
  for (const field of fields) {
    if (Object.hasOwn(args, field) && isEmpty(args[field])) {
      throw new WeirError(
        "reject_empty_argument",
        `"${field}" is present but blank; send a value or leave it out ` +
          `(${tool} sent nothing upstream)`,
        { status: 400 },
      );
    }
  }
}

export { TokenBucket } from "../store/memory.ts";

/** At most this many answers are kept per tool; the soonest to expire goes first. */
export const CACHE_ENTRIES = 256;

/** `cache "<tool>" ttl=`: successful answers reused for `ttl`, keyed by the arguments. */
export class ResponseCache {
  readonly #entries = new Map<string, Map<string, { expires: number; result: CallToolResult }>>();
  readonly #now: () => number;

  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  /** The cache key: the arguments as JSON with keys sorted at every level. */
  static key(args: unknown): string {
    return JSON.stringify(canonical(args));
  }

  get(tool: string, key: string): CallToolResult | undefined {
    const entry = this.#entries.get(tool)?.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.#now()) {
      this.#entries.get(tool)!.delete(key);
      return undefined;
    }
    return entry.result;
  }

  set(tool: string, key: string, ttlMs: number, result: CallToolResult): void {
    let entries = this.#entries.get(tool);
    if (!entries) this.#entries.set(tool, entries = new Map());
    entries.set(key, { expires: this.#now() + ttlMs, result });
    if (entries.size > CACHE_ENTRIES) {
      let soonest: string | undefined;
      let at = Infinity;
      for (const [k, e] of entries) {
        if (e.expires < at) {
          at = e.expires;
          soonest = k;
        }
      }
      entries.delete(soonest!);
    }
  }
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      Object.defineProperty(out, k, {
        value: canonical((value as Record<string, unknown>)[k]),
        enumerable: true,
      });
    }
    return out;
  }
  return value;
}
