import assert, { deepEqual as assertEquals } from "node:assert/strict";
import { Deadline, DEADLINE_SLOT_MS, withinDeadline } from "../../src/outbound/deadline.ts";

/**
 * Wait for a signal to abort. Slot timers do not keep the process alive (the
 * work a deadline guards does), so the test holds a timer of its own meanwhile.
 */
async function aborted(signal: AbortSignal, boundMs = 5_000): Promise<number> {
  const started = performance.now();
  let keepAlive: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<number>((resolve, reject) => {
      keepAlive = setTimeout(() => reject(new Error("never aborted")), boundMs);
      signal.addEventListener("abort", () => resolve(performance.now() - started));
    });
  } finally {
    clearTimeout(keepAlive);
  }
}

Deno.test("a deadline fires with TimeoutError, never early and at most a slot late", async () => {
  const started = performance.now();
  const deadline = new Deadline(new AbortController().signal, 60);
  await aborted(deadline.signal);
  const fired = performance.now() - started;
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
  await aborted(kept.signal);
  kept.clear();
  assert(kept.signal.aborted);
  assert(!cleared.signal.aborted, "a cleared deadline must not abort");
  // A slot whose members all left runs out harmlessly; a new member of the
  // same slot is still aborted on time.
  const again = new Deadline(caller, 30);
  await aborted(again.signal);
  again.clear();
});

Deno.test("the caller's cancellation aborts with the caller's reason", () => {
  const caller = new AbortController();
  const deadline = new Deadline(caller.signal, 30_000);
  caller.abort(new Error("client went away"));
  assert(deadline.signal.aborted);
  assertEquals((deadline.signal.reason as Error).message, "client went away");
  deadline.clear();
  const already = new AbortController();
  already.abort("gone");
  const late = new Deadline(already.signal, 30_000);
  assertEquals(late.signal.reason, "gone");
  late.clear();
  const own = new Deadline(undefined, 50, () => new RangeError("body too slow"));
  assert(!own.signal.aborted);
  own.clear();
});

Deno.test("a pending deadline does not keep a process alive", async () => {
  const module = new URL("../../src/outbound/deadline.ts", import.meta.url).href;
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { Deadline, withinDeadline } from "${module}"; new Deadline(undefined, 30000);` +
      `withinDeadline(new Promise(() => {}), 30000).catch(() => {});`,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  const took = performance.now() - started;
  assert(took < 20_000, `the process waited ${took} ms for a 30 s deadline`);
});

Deno.test("withinDeadline: the work's own outcome in time, the reason once the deadline passes", async () => {
  assertEquals(await withinDeadline(Promise.resolve("done"), 30), "done");
  await assert.rejects(withinDeadline(Promise.reject(new Error("own")), 30), /own/);
  // Work that settles in time leaves its slot: the slot's timer running out later rejects nothing.
  const early = withinDeadline(new Promise((r) => setTimeout(() => r("early"), 5)), 40);
  assertEquals(await early, "early");
  const started = performance.now();
  let keepAlive: ReturnType<typeof setTimeout> | undefined;
  const never = new Promise<string>((resolve) => {
    keepAlive = setTimeout(() => resolve("too late"), 5_000);
  });
  try {
    await assert.rejects(
      withinDeadline(never, 60, () => new RangeError("body too slow")),
      RangeError,
    );
  } finally {
    clearTimeout(keepAlive);
  }
  const fired = performance.now() - started;
  assert(fired >= 59, `fired after ${fired} ms, before the 60 ms deadline`);
  assert(fired < 60 + 2 * DEADLINE_SLOT_MS + 250, `fired ${fired} ms after start`);
  // Many waits in one slot: each rejects on its own, none early.
  const t0 = performance.now();
  const timers: ReturnType<typeof setTimeout>[] = [];
  const held = Array.from({ length: 50 }, (_, i) =>
    withinDeadline(
      new Promise<number>((r) => timers.push(setTimeout(() => r(i), i < 25 ? 1 : 4_000))),
      80,
    ).then((v) => ["ok", v, performance.now() - t0], (e) => ["late", e, performance.now() - t0]));
  const outcomes = await Promise.all(held);
  timers.forEach((t) => clearTimeout(t));
  for (const [kind, , ms] of outcomes.slice(25)) {
    assertEquals(kind, "late");
    assert((ms as number) >= 79, `rejected after ${ms} ms, before the 80 ms deadline`);
  }
  assert(outcomes.slice(0, 25).every(([kind]) => kind === "ok"));
});
