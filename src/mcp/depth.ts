/**
 * Bounding how deep a decoded JSON value nests, checked without recursion, so
 * a pathological value is refused before any recursive code (validation,
 * serialization, redaction) can exhaust the stack.
 *
 * @module
 */

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
