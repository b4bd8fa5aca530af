/**
 * The process logger's batching (src/ops/log.ts): ordinary lines wait for the
 * batch (written after the current macrotask), a lifecycle line is written at
 * once with everything before it, in order, and arms no timer.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../src/ops/log.ts";

function capture() {
  const writes: string[] = [];
  const sink = {
    write: (bytes: Uint8Array) => {
      writes.push(new TextDecoder().decode(bytes));
      return Promise.resolve(bytes.length);
    },
  };
  return { writes, sink };
}

/** Let queued promise reactions run, without letting any timer fire. */
async function microtasks(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

Deno.test("an audit line waits for the batch; a lifecycle line flushes it at once, in order", async () => {
  const { writes, sink } = capture();
  const log = createLogger({ sink, now: () => 0 });
  log({ level: "info", event: "call", tool: "get_thing" });
  await microtasks();
  assert.equal(writes.length, 0, "an ordinary line is batched, not written at once");
  log({ level: "info", event: "serving", transport: "stdio" });
  await microtasks();
  assert.equal(writes.length, 1, "the lifecycle line and the waiting one go out together");
  const events = writes[0].trim().split("\n").map((l) => JSON.parse(l).event);
  assert.deepEqual(events, ["call", "serving"]);
  // The batch timer armed by the first line finds nothing left to write.
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(writes.length, 1);
  await log.flush();
});

Deno.test("a lifecycle line alone is written without waiting for a timer, whatever the level", async () => {
  const { writes, sink } = capture();
  const log = createLogger({ sink, level: "error", now: () => 0 });
  log({ level: "info", event: "serving", transport: "stdio" });
  await microtasks();
  assert.equal(writes.length, 1);
  assert.equal(JSON.parse(writes[0]).event, "serving");
  log({ level: "info", event: "call" }); // below the level: dropped
  await log.flush();
  assert.equal(writes.length, 1);
});
