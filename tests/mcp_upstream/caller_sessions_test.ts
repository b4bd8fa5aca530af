/**
 * The callers' own sessions under token exchange
 * (src/mcp_upstream/caller_sessions.ts): one per caller, opened with that
 * caller's token and following its latest one; never more than the bound
 * (the least recently used ended, also one still opening); a session that
 * broke or closed is dropped so its caller's next request opens another. Fake
 * sessions, no network: a property over any sequence of callers and events.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { CallerSessions } from "../../src/mcp_upstream/caller_sessions.ts";
import type { Session } from "../../src/mcp_upstream/sessions.ts";

interface FakeSession extends Session {
  id: number;
  /** The Authorization its requests of its own carry now. */
  authorization: () => string;
  fireClose(): void;
}

/** A table over fake sessions: `opened` in order, `retired` in order; `hold` keeps opening pending. */
function table(max: number) {
  const opened: FakeSession[] = [];
  const retired: FakeSession[] = [];
  const pending: (() => void)[] = [];
  let hold = false;
  const sessions = new CallerSessions({
    open: (authorization) => {
      let onclose = () => {};
      const session = {
        id: opened.length,
        authorization,
        revision: "2025-11-25",
        onclose: (fn: () => void) => onclose = fn,
        fireClose: () => onclose(),
      } as unknown as FakeSession;
      opened.push(session);
      if (!hold) return Promise.resolve(session);
      return new Promise<Session>((resolve) => pending.push(() => resolve(session)));
    },
    retire: (session) => retired.push(session as FakeSession),
  }, max);
  return {
    sessions,
    opened,
    retired,
    hold: (on: boolean) => hold = on,
    release: () => pending.splice(0).forEach((f) => f()),
  };
}

Deno.test("caller sessions: one per caller, opened with its token, following its latest token", async () => {
  const t = table(10);
  const alice = (await t.sessions.session("subject alice", "Bearer a1")) as FakeSession;
  const bob = (await t.sessions.session("subject bob", "Bearer b1")) as FakeSession;
  assert.notEqual(alice, bob);
  assert.equal(alice.authorization(), "Bearer a1");
  assert.equal(await t.sessions.session("subject alice", "Bearer a2"), alice);
  // Its own requests (a DELETE at the end) carry the caller's latest token, never another's.
  assert.equal(alice.authorization(), "Bearer a2");
  assert.equal(bob.authorization(), "Bearer b1");
  assert.ok(t.sessions.has(alice) && t.sessions.has(bob));
  assert.equal(t.opened.length, 2);
});

Deno.test("caller sessions: at most the bound; the least recently used is ended; a session ended while opening is retired once open", async () => {
  const t = table(2);
  const a = await t.sessions.session("a", "Bearer a");
  await t.sessions.session("b", "Bearer b");
  await t.sessions.session("a", "Bearer a"); // a used last: b goes next
  await t.sessions.session("c", "Bearer c");
  assert.equal(t.sessions.size, 2);
  assert.deepEqual(t.retired.map((s) => s.authorization()), ["Bearer b"]);
  assert.equal(await t.sessions.session("a", "Bearer a"), a);
  // Opening d, e and f while held: c and a go, then d is pushed out before it opens and is
  // retired as it opens.
  t.hold(true);
  const d = t.sessions.session("d", "Bearer d");
  const e = t.sessions.session("e", "Bearer e");
  const f = t.sessions.session("f", "Bearer f");
  assert.equal(t.sessions.size, 2);
  t.release();
  const [dOpen, eOpen, fOpen] = await Promise.all([d, e, f]);
  // d is retired after the requests waiting for it have started (the next turn of the loop).
  assert.ok(!t.retired.includes(dOpen as FakeSession));
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(
    t.retired.map((s) => s.authorization()),
    ["Bearer b", "Bearer c", "Bearer a", "Bearer d"],
  );
  assert.ok(!t.sessions.has(dOpen));
  assert.ok(t.sessions.has(eOpen) && t.sessions.has(fOpen));
});

Deno.test("caller sessions: a broken or closed session is dropped; its caller's next request opens another", async () => {
  const t = table(5);
  const first = (await t.sessions.session("a", "Bearer a")) as FakeSession;
  t.sessions.broken(first);
  assert.deepEqual(t.retired, [first]);
  const second = (await t.sessions.session("a", "Bearer a")) as FakeSession;
  assert.notEqual(second, first);
  second.fireClose(); // the MCP server ended it
  const third = await t.sessions.session("a", "Bearer a");
  assert.notEqual(third, second);
  // A failed opening keeps nothing.
  const failing = new CallerSessions({
    open: () => Promise.reject(new Error("401")),
    retire: () => assert.fail("nothing to retire"),
  });
  await assert.rejects(failing.session("a", "Bearer a"), /401/);
  assert.equal(failing.size, 0);
});

Deno.test("caller sessions (property): never over the bound; each caller's session carries only that caller's token; close ends every one", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.array(
        fc.record({
          caller: fc.constantFrom("a", "b", "c", "d", "e", "f"),
          token: fc.integer({ min: 0, max: 3 }),
          event: fc.constantFrom("use", "use", "use", "broken", "closed"),
        }),
        { maxLength: 40 },
      ),
      async (max, steps) => {
        const t = table(max);
        const owner = new Map<FakeSession, string>();
        for (const { caller, token, event } of steps) {
          const s = (await t.sessions.session(caller, `Bearer ${caller}${token}`)) as FakeSession;
          if (owner.has(s)) assert.equal(owner.get(s), caller, "a session shared by two callers");
          owner.set(s, caller);
          assert.equal(s.authorization(), `Bearer ${caller}${token}`);
          if (event === "broken") t.sessions.broken(s);
          if (event === "closed") s.fireClose();
          assert.ok(t.sessions.size <= max, `${t.sessions.size} sessions kept, bound ${max}`);
        }
        const live = t.opened.filter((s) => t.sessions.has(s));
        t.sessions.close();
        assert.equal(t.sessions.size, 0);
        for (const s of live) assert.ok(t.retired.includes(s), "a session left open at close");
      },
    ),
  );
});
