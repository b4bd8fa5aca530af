import assert from "node:assert/strict";
import { CancelScope } from "../../src/transport/cancel_scope.ts";

Deno.test("a request's signal aborts with the scope; a released one does not", () => {
  const shutdown = new AbortController();
  const scope = new CancelScope(shutdown.signal);
  const running = scope.lease(new Request("http://x/"));
  const answered = scope.lease(new Request("http://x/"));
  const never = scope.lease(new Request("http://x/")); // never asked for its signal
  const a = running.signal;
  assert.equal(running.signal, a, "the signal is built once");
  const b = answered.signal;
  answered.release();
  shutdown.abort(new Error("drain deadline"));
  assert.equal((a.reason as Error).message, "drain deadline");
  assert.equal(b.aborted, false, "an answered request is no longer in the scope");
  never.release();
  // Asked for after the scope aborted: born aborted.
  assert.equal(scope.lease(new Request("http://x/")).signal.aborted, true);
});

Deno.test("the client going away aborts the request's signal with its reason", () => {
  const client = new AbortController();
  const scope = new CancelScope(new AbortController().signal);
  const lease = scope.lease(new Request("http://x/", { signal: client.signal }));
  const signal = lease.signal;
  client.abort("gone");
  assert.equal(signal.reason, "gone");
  lease.release();
});
