/**
 * The key service (src/mcp/signed_state.ts): keys with rotation, binding to
 * purpose and caller, and single use.
 */
import assert from "node:assert/strict";
import {
  callerOf,
  InProcessSingleUse,
  MIN_STATE_KEY_BYTES,
  SPENT_RECORD_SLACK_MS,
  StateKeys,
} from "../../src/mcp/signed_state.ts";

const key = (fill: number) => new Uint8Array(MIN_STATE_KEY_BYTES).fill(fill);

Deno.test("StateKeys: two servers holding the same configured key accept each other's values", async () => {
  const a = new StateKeys({ keys: [key(1)] });
  const b = new StateKeys({ keys: [key(1)] });
  assert.equal(a.configured, true);
  const token = await a.seal("cursor", { after: "x" }, "token:aa");
  assert.deepEqual(await b.open("cursor", token, "token:aa"), {
    ok: true,
    payload: { after: "x" },
  });
});

Deno.test("StateKeys: without configured keys each server has its own random key", async () => {
  const a = new StateKeys();
  const b = new StateKeys();
  assert.equal(a.configured, false);
  const token = await a.seal("cursor", 1);
  assert.equal((await a.open("cursor", token)).ok, true);
  assert.deepEqual(await b.open("cursor", token), { ok: false, why: "unsigned" });
});

Deno.test("StateKeys: rotation — the first key signs, every key verifies, a dropped key fails", async () => {
  const old = new StateKeys({ keys: [key(1)] });
  const during = new StateKeys({ keys: [key(2), key(1)] });
  const after = new StateKeys({ keys: [key(2)] });
  const fromOld = await old.seal("p", "v");
  const fromDuring = await during.seal("p", "v");
  // During the rotation both the old replicas' values and the new ones verify.
  assert.equal((await during.open("p", fromOld)).ok, true);
  assert.equal((await during.open("p", fromDuring)).ok, true);
  // A value signed during the rotation is signed with the new key: it outlives the old key.
  assert.equal((await after.open("p", fromDuring)).ok, true);
  assert.deepEqual(await after.open("p", fromOld), { ok: false, why: "unsigned" });
  // Old replicas still running while the new key is added second accept the new
  // replicas' values only once the new key is first everywhere: that is why the
  // new key goes in second first.
  assert.equal((await old.open("p", fromDuring)).ok, false);
});

Deno.test("StateKeys: a value is bound to its purpose and its caller", async () => {
  const keys = new StateKeys({ keys: [key(3)] });
  const token = await keys.seal("weir/confirm", { n: 1 }, "oauth:alice");
  assert.equal((await keys.open("weir/confirm", token, "oauth:alice")).ok, true);
  for (
    const [purpose, caller] of [
      ["weir/confirm", "oauth:bob"],
      ["weir/confirm", undefined],
      ["cursor", "oauth:alice"],
    ] as const
  ) {
    assert.deepEqual(await keys.open(purpose, token, caller), { ok: false, why: "unsigned" });
  }
  // Unbound (unauthenticated) values verify only without a caller.
  const open = await keys.seal("cursor", 2);
  assert.equal((await keys.open("cursor", open)).ok, true);
  assert.equal((await keys.open("cursor", open, "token:x")).ok, false);
});

Deno.test("StateKeys: any altered byte, and any non-token, is refused (property)", async () => {
  const keys = new StateKeys({ keys: [key(4)] });
  const token = await keys.seal("p", { tool: "t", exp: 1 }, "c");
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
  for (let i = 0; i < 300; i++) {
    const at = Math.floor(Math.random() * token.length);
    let swapped = token[at];
    while (swapped === token[at]) swapped = alphabet[Math.floor(Math.random() * alphabet.length)];
    const altered = token.slice(0, at) + swapped + token.slice(at + 1);
    const opened = await keys.open("p", altered, "c");
    assert.equal(opened.ok, false, `altered at ${at}: ${altered}`);
  }
  for (const bad of ["", ".", "a.", ".b", "a.b.c", "!!.!!", 42, null, {}, "x".repeat(9000)]) {
    assert.deepEqual(await keys.open("p", bad, "c"), { ok: false, why: "malformed" }, String(bad));
  }
});

Deno.test("StateKeys: a configured key shorter than 32 bytes is refused, naming which", () => {
  assert.throws(
    () => new StateKeys({ keys: [key(1), new Uint8Array(16)] }),
    /state key 2 has 16 bytes; a key needs at least 32/,
  );
});

Deno.test("StateKeys.spend: a value is spent once; concurrent spends agree on one winner", async () => {
  const keys = new StateKeys({ keys: [key(5)] });
  const exp = Date.now() + 60_000;
  const n1 = await keys.issue();
  const results = await Promise.all(Array.from({ length: 20 }, () => keys.spend(n1, exp)));
  assert.equal(results.filter((r) => r === "spent").length, 1);
  assert.equal(results.filter((r) => r === "used").length, 19);
  const n2 = await keys.issue();
  assert.notEqual(n2, n1);
  assert.equal(await keys.spend(n2, exp), "spent");
  assert.equal(await keys.spend(n2, exp), "used");
  assert.equal(keys.singleUseKind, "process");
});

Deno.test("InProcessSingleUse: a record lives past its value's expiry by the clock-skew slack, then may go", async () => {
  const store = new InProcessSingleUse();
  const n = await store.issue();
  assert.equal(await store.spend(n, Date.now() - 1), "spent");
  assert.equal(await store.spend(n, Date.now() + 1_000), "spent", "an expired record is gone");
  assert.equal(await store.spend(n, Date.now() + 1_000), "used");
  // Through the key service the record outlives the value by the slack: a replica whose
  // clock runs behind still holds the value unexpired for that long.
  const keys = new StateKeys({ keys: [key(5)], singleUse: store });
  const m = await keys.issue();
  assert.equal(await keys.spend(m, Date.now() - 1), "spent");
  assert.equal(await keys.spend(m, Date.now() + 1_000), "used");
  assert.ok(SPENT_RECORD_SLACK_MS >= 60_000);
});

Deno.test("InProcessSingleUse: a value issued by another store (a restarted process) is unrecorded, never spent", async () => {
  const before = new InProcessSingleUse();
  const after = new InProcessSingleUse();
  const n = await before.issue();
  assert.equal(await before.spend(n, Date.now() + 60_000), "spent");
  // The process restarted with the same configured keys: its new store cannot tell whether
  // n was spent, so it never says "spent".
  assert.equal(await after.spend(n, Date.now() + 60_000), "unrecorded");
  for (const odd of ["", "no-generation", ".", "x.", "x.y", `${n}x`]) {
    assert.equal(await after.spend(odd, Date.now() + 60_000), "unrecorded", odd);
  }
});

Deno.test("StateKeys.spend: a store that cannot record makes spend throw (the caller refuses)", async () => {
  const keys = new StateKeys({
    keys: [key(6)],
    singleUse: {
      kind: "broken",
      issue: () => Promise.resolve("n.g"),
      spend: () => Promise.reject(new Error("down")),
    },
  });
  await assert.rejects(async () => keys.spend(await keys.issue(), Date.now() + 1_000), /down/);
});

Deno.test("callerOf() reads auth.caller when it is a non-empty string", () => {
  assert.equal(callerOf({ caller: "token:ab" }), "token:ab");
  for (const auth of [undefined, null, true, {}, { caller: "" }, { caller: 1 }, "token:ab"]) {
    assert.equal(callerOf(auth), undefined, JSON.stringify(auth));
  }
});
