/**
 * Upstream limits: a deadline and a response-size cap, each a clear tool
 * error; redirects are reported, never followed (a redirect could lead the
 * credential to another host).
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

const guardfile = (upstream: string) =>
  tempGuardfile(
    `wrap ward mcp limits {\n  base-url "${upstream}"\n  auth bearer { value env "LIMITS_TOKEN" }\n  can get thing { path "/t/{id}" }\n  can search thing { path "/s"; query "q" }\n}\n`,
  );

// Each call has its own deadline (60 s, over 10x weir's): were weir's upstream deadline gone,
// the slow call below would fail the test instead of hanging the suite.
const call = (url: string, id: string) => callApi(url, "get_thing", { id }, { timeoutMs: 60_000 });

Deno.test("upstream deadline, size cap and redirects", async (t) => {
  const release: (() => void)[] = [];
  const upstream = await startRecorder((req) => {
    if (req.path === "/t/slow") {
      return new Promise<Response>((resolve) =>
        release.push(() => resolve(Response.json({ late: true })))
      );
    }
    if (req.path === "/t/big") return Response.json({ blob: "x".repeat(5000) });
    if (req.path === "/t/moved") {
      return new Response(null, {
        status: 302,
        headers: { location: "https://elsewhere.example/t" },
      });
    }
    return Response.json({ ok: true });
  });
  const server = await serveHttp(await guardfile(upstream.url), {
    env: { LIMITS_TOKEN: "limits-secret-1" },
    // 5 s: the calls that must succeed have room on a loaded machine; the slow one waits it out.
    extra: ["--upstream-timeout", "5000", "--max-response-bytes", "4096"],
  });
  try {
    await t.step(
      "an upstream that does not answer in time: 504 with the deadline named",
      async () => {
        const r = await call(server.url, "slow");
        assert.equal(r.status, 504);
        assert.match(
          r.text,
          // The deadline as set (5000 ms), never what was left of it when the request
          // went out; on a busy machine it may pass before sending, and says so.
          /upstream_timeout: GET \/t\/\{id\} did not (?:answer|finish) within 5000 ms[;( ]/,
        );
      },
    );
    await t.step("an answer over the cap: 502, refused rather than truncated", async () => {
      const r = await call(server.url, "big");
      assert.equal(r.status, 502);
      assert.match(r.text, /upstream_too_large: .*more than 4096 bytes/);
    });
    await t.step("a redirect is reported, not followed", async () => {
      const before = upstream.requests.length;
      const r = await call(server.url, "moved");
      assert.equal(r.status, 502);
      assert.match(
        r.text,
        /^upstream_redirect: GET \/t\/\{id\} answered 302, a redirect; weir follows no redirect/,
      );
      assert.equal(upstream.requests.length, before + 1);
    });
    await t.step("the upstream URL is capped at 8192 bytes, exactly", async () => {
      // http://127.0.0.1:PORT/s?q=<value>: fill to the byte, then one byte more.
      const prefix = `${upstream.url}/s?q=`.length;
      const before = upstream.requests.length;
      const at = await callApi(server.url, "search_thing", { q: "a".repeat(8192 - prefix) });
      assert.equal(at.status, 200, at.text);
      assert.equal(upstream.requests.at(-1)!.query.length, 8192 - prefix + 2);
      const over = await callApi(server.url, "search_thing", { q: "a".repeat(8193 - prefix) });
      assert.equal(over.status, 400, over.text);
      assert.match(over.text, /request_too_large: .*8193-byte URL, over the 8192-byte limit/);
      assert.equal(upstream.requests.length, before + 1, "nothing sent over the cap");
    });
    await t.step("within the limits, the call succeeds", async () => {
      assert.equal((await call(server.url, "fine")).status, 200);
    });
  } finally {
    for (const r of release) r();
    await server.stop();
    await upstream.close();
  }
});

Deno.test("an unreachable upstream is a clear 502", async () => {
  const upstream = await startRecorder();
  const url = upstream.url;
  await upstream.close();
  const server = await serveHttp(await guardfile(url), { env: { LIMITS_TOKEN: "x-token-2" } });
  try {
    const r = await call(server.url, "a");
    assert.equal(r.status, 502);
    assert.match(r.text, /upstream_unreachable: GET \/t\/\{id\} could not be sent/);
  } finally {
    await server.stop();
  }
});

Deno.test("a call that waited before sending still names the deadline as set, not what was left", async () => {
  // rate-limit 1/1s: the second of two calls waits about a second for its token, then
  // is sent with the rest of its 4000 ms; the upstream never answers. Its timeout
  // names 4000 ms (the setting), whatever the machine's load made of the wait.
  const release: (() => void)[] = [];
  const upstream = await startRecorder(() =>
    new Promise<Response>((resolve) => release.push(() => resolve(Response.json({ late: true }))))
  );
  const file = await tempGuardfile(
    `rate-limit "1/1s"\nwrap ward mcp waits {\n  base-url "${upstream.url}"\n  auth none\n` +
      `  can get thing { path "/t/{id}" }\n}\n`,
  );
  const server = await serveHttp(file, { extra: ["--upstream-timeout", "4000"] });
  try {
    const answers = await Promise.all([call(server.url, "a"), call(server.url, "b")]);
    for (const r of answers) {
      assert.equal(r.status, 504, r.text);
      assert.match(
        r.text,
        /^upstream_timeout: GET \/t\/\{id\} did not (?:answer|finish) within 4000 ms[;( ]/,
      );
    }
  } finally {
    release.forEach((f) => f());
    await server.stop();
    await upstream.close();
  }
});
