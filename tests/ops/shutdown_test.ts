/**
 * Graceful shutdown through the real CLI: SIGTERM lets calls in flight
 * finish, refuses new ones, cuts what outlives the drain deadline with a
 * tool error that says why, logs one `shutdown` line, and exits 0. On stdio,
 * end of input drains the same way.
 */
import assert from "node:assert/strict";
import { serveHttp, spawnServeStdio, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { MODERN_META } from "../support/mcp.ts";
import { until, within } from "../support/wait.ts";

const guardfile = (upstream: string) =>
  tempGuardfile(
    `wrap ward mcp slow {\n  base-url "${upstream}"\n  auth none\n  can get thing { path "/t/{id}"; }\n}\n`,
  );

/** An upstream whose answers wait until released. */
async function heldUpstream() {
  const held: (() => void)[] = [];
  const upstream = await startRecorder(() =>
    new Promise<Response>((resolve) => held.push(() => resolve(Response.json({ late: true }))))
  );
  return {
    ...upstream,
    held,
    release: () => held.splice(0).forEach((f) => f()),
    async waitFor(n: number) {
      await until(() => upstream.requests.length >= n);
      assert.equal(upstream.requests.length, n, "the calls reached the upstream");
    },
  };
}

const call = (url: string) =>
  fetch(`${url}/api/get_thing`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id: "x" }),
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

function shutdownLine(stderr: string): Record<string, unknown> {
  const line = stderr.split("\n").find((l) => l.includes('"event":"shutdown"'));
  assert.ok(line, `no shutdown line in:\n${stderr}`);
  return JSON.parse(line);
}

Deno.test("SIGTERM: three calls in flight complete, a fourth is refused, exit 0", async () => {
  const upstream = await heldUpstream();
  const server = await serveHttp(await guardfile(upstream.url));
  try {
    const calls = [call(server.url), call(server.url), call(server.url)];
    await upstream.waitFor(3);
    server.kill("SIGTERM");
    // Wait for the signal to be taken (readiness gone, or the listener closed), not a fixed time:
    // a call sent before weir saw the signal would rightly be served.
    await until(async () => {
      const ready = await fetch(`${server.url}/readyz`).catch(() => undefined);
      await ready?.body?.cancel();
      return ready === undefined || ready.status === 503;
    });
    const fourth = await call(server.url).catch((error) => ({ status: 0, text: String(error) }));
    assert.ok(
      fourth.status === 503 || fourth.status === 0,
      `a call after the signal is refused, got ${fourth.status} ${fourth.text}`,
    );
    upstream.release();
    for (const r of await Promise.all(calls)) {
      assert.equal(r.status, 200, r.text);
      assert.match(r.text, /late/);
    }
    assert.equal(await server.stop(), 0);
    const line = shutdownLine(server.stderr());
    assert.equal(line.reason, "SIGTERM");
    assert.equal(line.in_flight, 3);
    assert.equal(line.drained, 3);
    assert.equal(line.cut, 0);
    assert.equal(line.drain_deadline_ms, 10_000, "the default drain deadline is 10 s");
  } finally {
    upstream.release();
    await server.stop();
    await upstream.close();
  }
});

Deno.test("a call that outlives --drain-timeout is cut with a shutting_down tool error", async () => {
  const upstream = await heldUpstream();
  const server = await serveHttp(await guardfile(upstream.url), {
    extra: ["--drain-timeout", "300"],
  });
  try {
    const pending = call(server.url);
    await upstream.waitFor(1);
    server.kill("SIGINT");
    // The upstream holds the call until the test ends: the process can only answer and exit
    // before that by not waiting for it (ordering, not a duration; the bound only ends a hang).
    const r = await within(pending, "the cut call's answer");
    assert.equal(r.status, 503);
    assert.match(r.text, /shutting_down: the server is stopping .* 300 ms drain deadline/);
    assert.equal(await within(server.exited, "the exit after SIGINT"), 0);
    assert.equal(upstream.held.length, 1, "the process does not wait for the upstream");
    const line = shutdownLine(server.stderr());
    assert.equal(line.reason, "SIGINT");
    assert.equal(line.cut, 1);
    assert.equal(line.drained, 0);
  } finally {
    upstream.release();
    await server.stop();
    await upstream.close();
  }
});

Deno.test("stdio: end of input lets the call in flight finish, then exits 0", async () => {
  const upstream = await heldUpstream();
  const file = await guardfile(upstream.url);
  const child = spawnServeStdio(file);
  try {
    const w = child.stdin.getWriter();
    const request = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "get_thing", arguments: { id: "x" }, _meta: MODERN_META },
    };
    await w.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
    await upstream.waitFor(1);
    await w.close();
    // A head start for weir to read the end of input while the call is held. weir logs nothing
    // when it reads it, so the order cannot be awaited: on a loaded machine the call may finish
    // first (then nothing was in flight at the end of input); the counts below hold either way.
    await new Promise((r) => setTimeout(r, 200));
    upstream.release();
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const reply = JSON.parse(stdout.trim());
    assert.equal(reply.id, 7);
    assert.match(JSON.stringify(reply.result), /late/);
    const line = shutdownLine(stderr);
    assert.equal(line.reason, "end of input");
    assert.ok(line.in_flight === 0 || line.in_flight === 1, JSON.stringify(line));
    assert.equal(line.drained, line.in_flight, "the call in flight finished");
    assert.equal(line.cut, 0);
  } finally {
    upstream.release();
    await upstream.close();
  }
});
