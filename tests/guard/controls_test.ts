/** The token bucket of rate-limit: waiting, refusing past a deadline, and cancellation. */
import assert from "node:assert/strict";
import { TokenBucket } from "../../src/guard/controls.ts";

Deno.test("a cancelled call that already got its slot does not give it back", async () => {
  let now = 0;
  const bucket = new TokenBucket(1, 50, () => now);
  const controller = new AbortController();
  await bucket.take(1000, controller.signal); // the burst slot, no wait
  const waiting = bucket.take(1000, controller.signal); // waits ~50 ms for the next slot
  await waiting;
  controller.abort(); // too late: the request went out
  now = 0; // no refill has happened on the injected clock
  // With the slot kept, the next caller waits two intervals (100 ms), not one.
  await assert.rejects(bucket.take(75, new AbortController().signal), /delay this call 100 ms/);
});

Deno.test("a call cancelled while waiting returns its slot", async () => {
  const now = 0;
  const bucket = new TokenBucket(1, 60_000, () => now);
  await bucket.take(0, new AbortController().signal);
  const controller = new AbortController();
  const waiting = bucket.take(120_000, controller.signal);
  controller.abort();
  await assert.rejects(waiting, /cancelled/);
  // The reservation was returned: the next caller waits one interval, not two.
  await assert.rejects(
    bucket.take(59_000, new AbortController().signal),
    /delay this call 60000 ms/,
  );
});
