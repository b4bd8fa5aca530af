import assert, { deepEqual as assertEquals } from "node:assert/strict";
import { Deadline, DEADLINE_SLOT_MS, withinDeadline } from "../../src/outbound/deadline.ts";

/**
 * Wait for a signal to abort. Slot timers do not keep the process alive (the
 * work a deadline guards does), so the test holds a timer of its own meanwhile.
 */
async function aborted(signal: AbortSignal, boundMs = 60_000): Promise<number> {
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

/**
 * The delays of the slot timers armed while `work` runs (a spy on `setTimeout`, restored after).
 * How late a timer fires depends on the machine's load; the delay it is armed with does not.
 */
function armedDelays(work: () => void): number[] {
  const real = globalThis.setTimeout;
  const delays: number[] = [];
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    delays.push(ms ?? 0);
    return real(fn, ms);
  }) as typeof setTimeout;
  try {
    work();
  } finally {
    globalThis.setTimeout = real;
  }
  return delays;
}

Deno.test("a deadline fires with TimeoutError, never early; its timer is armed at most a slot late", async () => {
  // An odd duration no earlier test's slot can share: this deadline arms a timer of its own.
  let deadline: Deadline | undefined;
  const delays = armedDelays(() => deadline = new Deadline(new AbortController().signal, 61_013));
  deadline!.clear();
  assert.equal(delays.length, 1, "one timer for a new slot");
  assert(
    delays[0] >= 61_013 && delays[0] < 61_013 + DEADLINE_SLOT_MS,
    `armed for ${delays[0]} ms: a 61013 ms deadline is armed for [61013, ${
      61_013 + DEADLINE_SLOT_MS
    }) ms`,
  );
  // On the clock, only the side load cannot break: never before the deadline. (How late it
  // fires is up to the machine; "at most a slot late" is the armed delay above.)
  const started = performance.now();
  const live = new Deadline(new AbortController().signal, 60);
  await aborted(live.signal);
  const fired = performance.now() - started;
  live.clear();
  assert(fired >= 59, `fired after ${fired} ms, before the 60 ms deadline`);
  assertEquals((live.signal.reason as DOMException).name, "TimeoutError");
});

Deno.test("a deadline counted from an earlier start ends that much sooner, never before it", async () => {
  // An odd duration no other test's slot shares: this deadline arms a timer of its own.
  const before = performance.now();
  const from = before - 500;
  let deadline: Deadline | undefined;
  const delays = armedDelays(() =>
    deadline = new Deadline(new AbortController().signal, 61_019, undefined, from)
  );
  const after = performance.now();
  deadline!.clear();
  assert.equal(delays.length, 1, "one timer for a new slot");
  // Armed to end at the slot's end past from + 61019 ms, read against the clock when armed.
  assert(
    delays[0] >= from + 61_019 - after && delays[0] < from + 61_019 + DEADLINE_SLOT_MS - before,
    `armed for ${delays[0]} ms: a 61019 ms deadline from 500 ms ago is armed for about 60519 ms`,
  );
  // Its start long past: it fires at the next turn, with TimeoutError.
  const past = new Deadline(new AbortController().signal, 60_000, undefined, before - 60_000);
  await aborted(past.signal, 30_000);
  past.clear();
  assertEquals((past.signal.reason as DOMException).name, "TimeoutError");
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
  // Deadlines of an hour: a process they kept alive would run for an hour. It is killed after
  // 120 s (a start-up many times slower than on a loaded CI machine) and the test fails.
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { Deadline, withinDeadline } from "${module}"; new Deadline(undefined, 3600000);` +
      `withinDeadline(new Promise(() => {}), 3600000).catch(() => {});`,
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, 120_000);
  try {
    const out = await child.output();
    assert(!killed, "the process was still running 120 s later, held by an hour's deadline");
    assert(out.success, new TextDecoder().decode(out.stderr));
  } finally {
    clearTimeout(timer);
  }
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
  // Never early; how late is up to the machine (the armed delay is checked above).
  assert(fired >= 59, `fired after ${fired} ms, before the 60 ms deadline`);
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
