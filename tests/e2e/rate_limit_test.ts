/**
 * `rate-limit "<n>/<window>"`: calls beyond the burst wait their turn
 * (queued, not refused), and a wait that would pass the call's deadline is
 * refused at once with no request.
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

const guardfile = (upstream: string, rate: string) =>
  tempGuardfile(
    `rate-limit "${rate}"\nwrap ward mcp limited {\n  base-url "${upstream}"\n  auth none\n  can get thing { path "/t/{id}" }\n}\n`,
  );

const call = (url: string, id: string) => callApi(url, "get_thing", { id });

Deno.test("rate-limit queues calls past the burst, one per interval", async () => {
  const arrivals: number[] = [];
  const upstream = await startRecorder(() => {
    arrivals.push(performance.now());
    return Response.json({ ok: true });
  });
  const server = await serveHttp(await guardfile(upstream.url, "1/200ms"));
  try {
    const sent = performance.now();
    const results = await Promise.all(["a", "b", "c"].map((id) => call(server.url, id)));
    assert.deepEqual(results.map((r) => r.status), [200, 200, 200], "queued, not refused");
    assert.equal(arrivals.length, 3);
    // The first call takes the one token no earlier than `sent`; the second and third wait one
    // and two intervals (200 and 400 ms) after it. Gaps between arrivals at the upstream are not
    // asserted: under load the first call's own travel can eat into them (one run measured a
    // 276 ms span for three calls). Load only delays, so these lower bounds from `sent` hold
    // however loaded the machine is (10 ms allowed for timer granularity).
    assert.ok(arrivals[1] - sent >= 190, `second call after ${arrivals[1] - sent} ms`);
    assert.ok(arrivals[2] - sent >= 390, `third call after ${arrivals[2] - sent} ms`);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("a wait past the call's deadline is refused at once, with no request", async () => {
  const upstream = await startRecorder();
  // The second call would wait an hour: past a 30 s deadline as surely as a 500 ms one, and a
  // generous deadline keeps the first call within it on a loaded machine.
  const server = await serveHttp(await guardfile(upstream.url, "1/1h"), {
    extra: ["--upstream-timeout", "30000"],
  });
  try {
    assert.equal((await call(server.url, "a")).status, 200);
    const second = await call(server.url, "b");
    assert.equal(second.status, 429);
    assert.match(second.text, /rate_limited/);
    assert.equal(upstream.requests.length, 1);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("a wait longer than a timer can hold is refused, even with no deadline", async () => {
  // 1 call per 720 h: the second call would wait ~30 days, past the 2^31-1 ms a
  // timer holds (a longer timer fires after 1 ms, letting every call through).
  const upstream = await startRecorder();
  const server = await serveHttp(await guardfile(upstream.url, "1/720h"), {
    extra: ["--upstream-timeout", "0"],
  });
  try {
    assert.equal((await call(server.url, "a")).status, 200);
    for (const id of ["b", "c"]) {
      const later = await call(server.url, id);
      assert.equal(later.status, 429, later.text);
      assert.match(later.text, /rate_limited/);
    }
    assert.equal(upstream.requests.length, 1, "one call in the window reached the upstream");
    assert.doesNotMatch(server.stderr(), /TimeoutOverflowWarning/);
  } finally {
    await server.stop();
    await upstream.close();
  }
});
