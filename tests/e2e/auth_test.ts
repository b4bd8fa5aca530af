/**
 * Upstream credential schemes and value providers, through `weir serve`:
 * the credential is read at every call, reaches only the upstream, and an
 * unset one is a tool error naming where it was looked for, with no request.
 */
import assert from "node:assert/strict";
import { callApi, serveHttp } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

async function call(url: string, tool: string, args: Record<string, unknown>) {
  const r = await callApi(url, tool, args);
  return { status: r.status, text: JSON.stringify(r.body) };
}

Deno.test("auth bearer from a value chain: env unset, so the trimmed file wins", async () => {
  // The upstream echoes the credential it got, so an unredacted result would show it.
  const upstream = await startRecorder((req) =>
    Response.json({ got: req.headers.get("authorization") })
  );
  const server = await serveHttp("tests/fixtures/auth_bearer.mcp.kdl", {
    env: { AUTH_BASE_URL: upstream.url },
  });
  try {
    const r = await call(server.url, "get_thing", { id: "1" });
    assert.equal(r.status, 200, r.text);
    assert.equal(
      upstream.requests[0].headers.get("authorization"),
      "Bearer bearer-from-file-31337",
    );
    assert.ok(!r.text.includes("bearer-from-file-31337"), r.text);
    assert.match(r.text, /Bearer \[redacted\]/);
  } finally {
    await server.stop();
    await upstream.close();
  }
  assert.ok(!server.stderr().includes("bearer-from-file-31337"));
});

Deno.test("auth query-param: keys set by weir, sorted with the caller's, never overridable", async () => {
  const upstream = await startRecorder();
  const server = await serveHttp("tests/fixtures/auth_query.mcp.kdl", {
    env: { AUTH_BASE_URL: upstream.url, AUTH_QUERY_KEY: "qk-secret-8080" },
  });
  try {
    const r = await call(server.url, "list_thing", { page: "2", zzz: "last" });
    assert.equal(r.status, 200, r.text);
    assert.equal(
      upstream.requests[0].query,
      "key=qk-secret-8080&page=2&sig=fixed-signature-0&zzz=last",
    );
    const override = await call(server.url, "list_thing", { key: "mine" });
    assert.equal(override.status, 400);
    assert.match(override.text, /unexpected argument \\"key\\"/);
    assert.equal(upstream.requests.length, 1);
    assert.ok(!r.text.includes("qk-secret-8080"), r.text);
  } finally {
    await server.stop();
    await upstream.close();
  }
  assert.ok(!server.stderr().includes("qk-secret-8080"));
});

Deno.test("an unset credential is a tool error naming the variable, and nothing is sent", async () => {
  const upstream = await startRecorder();
  const server = await serveHttp("tests/fixtures/auth_query.mcp.kdl", {
    env: { AUTH_BASE_URL: upstream.url },
  });
  try {
    const r = await call(server.url, "list_thing", {});
    assert.equal(r.status, 500);
    assert.match(r.text, /environment variable AUTH_QUERY_KEY/);
    assert.equal(upstream.requests.length, 0);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("a rotated credential takes effect on the next call (read per call, not at start)", async () => {
  const upstream = await startRecorder();
  const dir = await Deno.makeTempDir({ prefix: "weir-rotate-" });
  globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
  const secret = `${dir}/token`;
  await Deno.writeTextFile(secret, "first-token-1111");
  const guardfile = `${dir}/rotate.mcp.kdl`;
  await Deno.writeTextFile(
    guardfile,
    `wrap ward mcp rotate {\n  base-url "${upstream.url}"\n  auth bearer { value file "${secret}" }\n  can get thing { path "/t" }\n}\n`,
  );
  const server = await serveHttp(guardfile);
  try {
    await call(server.url, "get_thing", {});
    await Deno.writeTextFile(secret, "second-token-2222");
    await call(server.url, "get_thing", {});
    assert.deepEqual(upstream.requests.map((r) => r.headers.get("authorization")), [
      "Bearer first-token-1111",
      "Bearer second-token-2222",
    ]);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("a credential too short to redact is refused, and nothing is sent", async () => {
  const upstream = await startRecorder();
  const server = await serveHttp("tests/fixtures/auth_query.mcp.kdl", {
    env: { AUTH_BASE_URL: upstream.url, AUTH_QUERY_KEY: "abc" },
  });
  try {
    const r = await call(server.url, "list_thing", {});
    assert.equal(r.status, 500);
    assert.match(r.text, /environment variable AUTH_QUERY_KEY is shorter than 8 characters/);
    assert.equal(upstream.requests.length, 0);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("echoes of the credential are redacted however the upstream encodes them", async () => {
  const key = "QK/s3cr+et== z";
  const upstream = await startRecorder((req) =>
    req.query.includes("page=err")
      ? new Response(JSON.stringify({ error: `bad key ${key}` }).replaceAll("/", "\\/"), {
        status: 401,
        statusText: "Unauthorized",
        headers: { "content-type": `text/x-${encodeURIComponent(key)}` },
      })
      : Response.json({ next: `/things?${req.query}`, raw: key })
  );
  const server = await serveHttp("tests/fixtures/auth_query.mcp.kdl", {
    env: { AUTH_BASE_URL: upstream.url, AUTH_QUERY_KEY: key },
  });
  try {
    const ok = await call(server.url, "list_thing", { page: "2" });
    assert.equal(ok.status, 200, ok.text);
    assert.ok(upstream.requests[0].query.includes(encodeURIComponent(key)), "sent encoded");
    assert.ok(!ok.text.includes(encodeURIComponent(key)), ok.text);
    assert.ok(!ok.text.includes(key.replaceAll("/", "\\/")), ok.text);
    assert.match(ok.text, /key=\[redacted\]/);
    const err = await call(server.url, "list_thing", { page: "err" });
    assert.equal(err.status, 502);
    assert.ok(!err.text.includes("s3cr"), err.text);
  } finally {
    await server.stop();
    await upstream.close();
  }
  assert.ok(!server.stderr().includes("s3cr"));
});
