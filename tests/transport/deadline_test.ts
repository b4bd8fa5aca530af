import assert, { deepEqual as assertEquals } from "node:assert/strict";
import { Deadline, DEADLINE_SLOT_MS } from "../../src/transport/deadline.ts";

Deno.test("a deadline fires with TimeoutError, never early and at most a slot late", async () => {
  const started = performance.now();
  const deadline = new Deadline(new AbortController().signal, 60);
  const fired = await new Promise<number>((resolve) => {
    deadline.signal.addEventListener("abort", () => resolve(performance.now() - started));
  });
  deadline.clear();
  assert(fired >= 59, `fired after ${fired} ms, before the 60 ms deadline`);
  assert(fired < 60 + DEADLINE_SLOT_MS + 250, `fired ${fired} ms after start`);
  assertEquals((deadline.signal.reason as DOMException).name, "TimeoutError");
});

Deno.test("deadlines in one slot share a timer; a cleared one is not aborted", async () => {
  const caller = new AbortController().signal;
  const kept = new Deadline(caller, 30);
  const cleared = new Deadline(caller, 30);
  cleared.clear();
  await new Promise<void>((resolve) => kept.signal.addEventListener("abort", () => resolve()));
  kept.clear();
  assert(kept.signal.aborted);
  assert(!cleared.signal.aborted, "a cleared deadline must not abort");
});

Deno.test("the caller's cancellation aborts with the caller's reason; clearing leaves no timer", () => {
  const caller = new AbortController();
  const deadline = new Deadline(caller.signal, 30_000);
  caller.abort(new Error("client went away"));
  assert(deadline.signal.aborted);
  assertEquals((deadline.signal.reason as Error).message, "client went away");
  // The test sanitizer fails this test if the slot's timer outlives clear().
  deadline.clear();
  const already = new AbortController();
  already.abort("gone");
  const late = new Deadline(already.signal, 30_000);
  assertEquals(late.signal.reason, "gone");
  late.clear();
});
