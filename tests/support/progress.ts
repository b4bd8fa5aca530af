/** Assertions on the progress an official MCP client reports. */
import assert from "node:assert/strict";

/**
 * What an official client saw: at least one notification, strictly
 * increasing, drawn from 1..last. The official v1 client runs a notification's
 * handler in a microtask but settles the response at once, so a progress
 * notification read in the same chunk as the result is dropped by the client
 * (@modelcontextprotocol/sdk 1.x, shared/protocol.js); which ones are lost
 * depends on timing, so this names none of them. That weir sends the
 * last one ahead of the result is for tests to assert on the wire.
 */
export function assertProgressWithin(seen: number[], last: number) {
  const shown = JSON.stringify(seen);
  assert.ok(seen.length >= 1, "no progress reached the client");
  assert.ok(seen.every((p) => Number.isInteger(p) && p >= 1 && p <= last), shown);
  assert.ok(seen.every((p, i) => i === 0 || p > seen[i - 1]), `strictly increasing: ${shown}`);
}
