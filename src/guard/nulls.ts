/**
 * Optional inputs given as JSON `null` mean "not given" (docs/guardfile.md):
 * {@link withoutNulls} drops them, and optional nested body fields given as
 * `null`, before any check, cache key or request sees the arguments.
 *
 * @module
 */
import type { BodyField, Grant } from "../guardfile/model.ts";

/**
 * Drop optional inputs given as JSON `null` (and optional nested body fields
 * given as `null`): `null` means "not given", so nothing is sent for them.
 * Raw objects and arrays are passed through untouched. The input is not
 * changed: a new object is returned when something was dropped, the input
 * itself when no value in it (or in a nested body field) is `null`.
 */
export function withoutNulls(grant: Grant, args: Record<string, unknown>): Record<string, unknown> {
  if (!holdsNull(grant.body, args)) return args;
  let optional = optionalInputs.get(grant);
  if (!optional) {
    optional = new Set([
      ...grant.query.filter((q) => !q.required).map((q) => q.name),
      ...grant.headers.filter((h) => !h.required).map((h) => h.name),
      ...grant.body.filter((b) => !b.required).map((b) => b.name),
    ]);
    optionalInputs.set(grant, optional);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === null && optional.has(key)) continue;
    const field = grant.body.find((b) => b.name === key);
    define(out, key, field ? bodyWithoutNulls(field, value) : value);
  }
  return out;
}

/** The optional query and body input names of each grant. */
const optionalInputs = new WeakMap<Grant, Set<string>>();

/**
 * Whether {@link withoutNulls} has anything to consider: a `null` among the
 * values, or inside a body field that has nested fields.
 */
function holdsNull(
  fields: readonly BodyField[] | undefined,
  value: Record<string, unknown>,
): boolean {
  for (const key of Object.keys(value)) {
    const inner = value[key];
    if (inner === null) return true;
    if (typeof inner !== "object" || Array.isArray(inner) || !fields) continue;
    const field = fields.find((f) => f.name === key);
    if (field?.fields && holdsNull(field.fields, inner as Record<string, unknown>)) return true;
  }
  return false;
}

function bodyWithoutNulls(field: BodyField, value: unknown): unknown {
  if (!field.fields || typeof value !== "object" || value === null || Array.isArray(value)) {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const sub = field.fields.find((f) => f.name === key);
    if (inner === null && sub && !sub.required) continue;
    define(out, key, sub ? bodyWithoutNulls(sub, inner) : inner);
  }
  return out;
}

/** Set an own property even when its name is `__proto__`. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
