/** Shared drift checks: concurrent callers share runs, but never one begun before they arrived. */
import assert from "node:assert/strict";
import { CoalescedCheck } from "../../src/mcp_upstream/coalesced_check.ts";

Deno.test("coalesced check: one run at a time, each caller served by a run begun after it", async () => {
  const started: number[] = [];
  const finish: (() => void)[] = [];
  const check = new CoalescedCheck(() => {
    started.push(started.length);
    return new Promise<void>((resolve) => finish.push(resolve));
  });
  const order: string[] = [];
  const a = check.check().then(() => order.push("a"));
  assert.equal(started.length, 1, "the first caller starts a run");
  const b = check.check().then(() => order.push("b"));
  const c = check.check().then(() => order.push("c"));
  assert.equal(started.length, 1, "callers arriving during a run do not start another yet");
  finish[0]();
  await a;
  await Promise.resolve();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(started.length, 2, "b and c share the run begun after run 1 ended");
  assert.deepEqual(order, ["a"], "b and c were not served by the run that began before them");
  finish[1]();
  await Promise.all([b, c]);
  assert.deepEqual(order, ["a", "b", "c"]);
  const d = check.check();
  assert.equal(started.length, 3);
  finish[2]();
  await d;
});

Deno.test("coalesced check: a failed run fails its callers only; the next caller runs again", async () => {
  let fail = true;
  let runs = 0;
  const check = new CoalescedCheck(() => {
    runs++;
    return fail ? Promise.reject(new Error("upstream down")) : Promise.resolve();
  });
  await assert.rejects(check.check(), /upstream down/);
  fail = false;
  await check.check();
  assert.equal(runs, 2);
});
