/**
 * A tool definition's fingerprint: SHA-256 (FIPS 180-4, via `crypto.subtle`)
 * of its canonical JSON, so that any change to name, title, description,
 * schemas, annotations, icons, `_meta` or any other field is drift, and a mere
 * reordering of object keys is not.
 *
 * Canonical JSON (src/mcp/canonical_json.ts): objects with keys sorted by
 * UTF-16 code units (as RFC 8785 sorts them), arrays in order, strings and
 * numbers as `JSON.stringify` writes them, no whitespace.
 *
 * @module
 */
import { sha256Hex } from "../transport/bytes.ts";
import { canonicalJson } from "../mcp/canonical_json.ts";

export { canonicalJson };

/**
 * `sha256:<64 hex digits>` of a tool definition's canonical JSON.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fingerprint } from "./fingerprint.ts";
 * const a = await fingerprint({ name: "echo", inputSchema: { type: "object" } });
 * const b = await fingerprint({ inputSchema: { type: "object" }, name: "echo" });
 * assert.equal(a, b);
 * assert.match(a, /^sha256:/);
 * ```
 */
export async function fingerprint(tool: unknown): Promise<string> {
  return `sha256:${await sha256Hex(canonicalJson(tool))}`;
}
