/**
 * Bounding how deep a decoded JSON value nests, checked without recursion, so
 * a pathological value is refused before any recursive code (validation,
 * serialization, redaction) can exhaust the stack.
 *
 * @module
 */
import { isRawJson } from "./text.ts";

/** How deep tool and prompt arguments may nest. */
export const MAX_ARGUMENT_DEPTH = 64;

/** Whether a decoded JSON value nests deeper than `limit` levels. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Whether a decoded JSON value is plain enough for the core's argument checks
 * to have nothing to say: it nests fewer than `limit` levels (as
 * {@link nestsDeeperThan} counts), and every number in it is finite and
 * either a safe integer or not an integer at all, every string and key is
 * well-formed Unicode, and it holds no `JSON.rawJSON` value. One read-only
 * walk, recursion bounded by `limit`.
 * `false` says only "look closer": the core then runs its exact checks.
 */
export function isShallowAndExact(value: unknown, limit: number): boolean {
  return shallowAndExact(value, 0, limit);
}

function shallowAndExact(v: unknown, depth: number, limit: number): boolean {
  if (typeof v === "string") return v.isWellFormed();
  if (typeof v === "number") {
    return Number.isFinite(v) && (Number.isSafeInteger(v) || !Number.isInteger(v));
  }
  if (v === null || typeof v !== "object") return true;
  if (depth >= limit || isRawJson(v)) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (!shallowAndExact(v[i], depth + 1, limit)) return false;
    }
    return true;
  }
  // for-in also visits inherited enumerable keys: a superset, so never a missed value.
  for (const key in v) {
    if (!key.isWellFormed()) return false;
    if (!shallowAndExact((v as Record<string, unknown>)[key], depth + 1, limit)) return false;
  }
  return true;
}
