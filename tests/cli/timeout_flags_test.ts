/**
 * Timeout flags are bounded by what a timer can hold (2^31 - 1 ms): a longer
 * value used to fire at once (every upstream call an immediate
 * upstream_timeout, a health check failing a healthy server). Each is a usage
 * error (exit 2) naming the bound; the largest allowed value still works.
 */
import assert from "node:assert/strict";
import { runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

const TOO_LONG = "99999999999";

Deno.test("timeout flags longer than a timer can hold are usage errors", async () => {
  const file = await tempGuardfile(
    `wrap ward mcp t {\n  base-url "http://127.0.0.1:9"\n  auth none\n  can get thing { path "/t" }\n}\n`,
  );
  try {
    const cases: [string[], RegExp][] = [
      [["serve", file, "--stdio", "--upstream-timeout", TOO_LONG], /--upstream-timeout .*at most/],
      [["healthcheck", "http://127.0.0.1:9/healthz", "--timeout", TOO_LONG], /--timeout .*at most/],
      [
        [
          "serve-upstream",
          "--tool",
          "x",
          "--stdio",
          "--request-timeout",
          "1000h",
          "--upstream",
          "http://127.0.0.1:9/mcp",
        ],
        /--request-timeout takes at most/,
      ],
      [
        [
          "lint-upstream",
          "--tool",
          "x",
          "--connect-timeout",
          "1000h",
          "--upstream",
          "http://127.0.0.1:9/mcp",
        ],
        /--connect-timeout takes at most/,
      ],
    ];
    for (const [args, message] of cases) {
      const out = await runCli(args, { stdin: "" });
      assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
      assert.match(out.stderr, message);
    }
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("the longest allowed --upstream-timeout and healthcheck --timeout still wait", async () => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const file = await tempGuardfile(
    `wrap ward mcp t {\n  base-url "${upstream.url}"\n  auth none\n  can get thing { path "/t" }\n}\n`,
  );
  const server = await serveHttp(file, { extra: ["--upstream-timeout", "2000000000"] });
  try {
    const r = await fetch(`${server.url}/api/get_thing`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(r.status, 200, await r.text());
    const health = await runCli([
      "healthcheck",
      `${server.url}/healthz`,
      "--timeout",
      "2000000000",
    ]);
    assert.equal(health.code, 0, health.stderr);
    const secret = await runCli(["healthcheck", "http://ops:pw-hunter2@127.0.0.1:9/healthz"]);
    assert.equal(secret.code, 1);
    assert.ok(!secret.stderr.includes("hunter2"), secret.stderr);
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});
