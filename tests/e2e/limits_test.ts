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
    `wrap ward mcp limits {\n  base-url "${upstream}"\n  auth bearer { value env "LIMITS_TOKEN" }\n  can get thing { path "/t/{id}" }\n}\n`,
  );

const call = (url: string, id: string) => callApi(url, "get_thing", { id });

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
    extra: ["--upstream-timeout", "300", "--max-response-bytes", "4096"],
  });
  try {
    await t.step(
      "an upstream that does not answer in time: 504 with the deadline named",
      async () => {
        const r = await call(server.url, "slow");
        assert.equal(r.status, 504);
        assert.match(
          r.text,
          /upstream_timeout: GET \/t\/\{id\} did not answer within 300 ms/,
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
      assert.match(r.text, /302.*does not follow redirects/);
      assert.equal(upstream.requests.length, before + 1);
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
