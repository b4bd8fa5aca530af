/**
 * Readiness for rolling deploys, through the real CLI: `GET /readyz` answers
 * 200 while weir serves and 503 from SIGTERM on, while `--shutdown-grace`
 * keeps everything else served (so a load balancer stops routing here
 * before the listener closes); then the drain, and exit 0. `/healthz` stays
 * liveness.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { until } from "../support/wait.ts";

const probe = async (url: string) => {
  const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: r.status, body: await r.json(), cache: r.headers.get("cache-control") };
};

Deno.test("SIGTERM: /readyz turns 503 at once, everything else is served through the grace, exit 0", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(
    `wrap ward mcp g {\n  base-url "${upstream.url}"\n  auth none\n  can get thing { path "/t/{id}"; }\n}\n`,
  );
  const server = await serveHttp(file, { extra: ["--shutdown-grace", "20000"] });
  try {
    const first = await probe(`${server.url}/readyz`);
    assert.match(first.body.surface, /^[0-9a-f]{16}$/);
    assert.deepEqual(first, {
      status: 200,
      body: { status: "ready", surface: first.body.surface },
      cache: "no-store",
    });
    server.kill("SIGTERM");
    let ready = await probe(`${server.url}/readyz`);
    await until(async () => (ready = await probe(`${server.url}/readyz`)).status !== 200);
    assert.deepEqual(ready.status, 503);
    assert.deepEqual(ready.body, { status: "shutting_down", surface: first.body.surface });
    // Still serving: liveness and calls.
    assert.equal((await probe(`${server.url}/healthz`)).status, 200);
    const call = await fetch(`${server.url}/api/get_thing`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "during-grace" }),
    });
    assert.equal(call.status, 200, await call.text());
    assert.equal(upstream.requests.at(-1)?.path, "/t/during-grace");
    assert.equal(await server.stop(), 0);
    const lines = server.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) =>
      JSON.parse(l)
    );
    const grace = lines.findIndex((l) => l.event === "shutdown_grace");
    const shutdown = lines.findIndex((l) => l.event === "shutdown");
    assert.ok(grace >= 0 && shutdown > grace, server.stderr());
    assert.equal(lines[grace].grace_ms, 20000);
    assert.equal(lines[grace].reason, "SIGTERM");
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("without --shutdown-grace, SIGTERM drains at once and exits 0 (the default is 0)", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(
    `wrap ward mcp g {\n  base-url "${upstream.url}"\n  auth none\n  can get thing { path "/t/{id}"; }\n}\n`,
  );
  const server = await serveHttp(file);
  try {
    assert.equal((await probe(`${server.url}/readyz`)).status, 200);
    assert.equal(await server.stop(), 0);
    assert.ok(!server.stderr().includes("shutdown_grace"));
    assert.match(server.stderr(), /"event":"shutdown"/);
  } finally {
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("--shutdown-grace takes a whole number of milliseconds (exit 2 otherwise)", async () => {
  const { runCli } = await import("../support/cli.ts");
  const out = await runCli([
    "serve",
    "guardfiles/demo.mcp.kdl",
    "--http",
    "0",
    "--shutdown-grace",
    "5s",
  ]);
  assert.equal(out.code, 2, out.stderr);
  assert.match(out.stderr, /--shutdown-grace takes a whole number/);
});
