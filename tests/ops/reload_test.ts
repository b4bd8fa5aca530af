/**
 * Reload through the real CLI: SIGHUP and `POST /admin/reload` re-read the
 * guardfile, lint it as `weir lint` does, and swap only a clean file; a
 * broken one leaves the old surface serving and logs its errors with
 * line:column. One keep-alive connection is used across reloads, and a call
 * in flight finishes on the surface it started on.
 */
import assert from "node:assert/strict";
import { runCli, serveHttp, spawnServeStdio, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { MODERN_META } from "../support/mcp.ts";
import { until } from "../support/wait.ts";

const ADMIN = "admin-token-0123456789abcdef";

const v1 = (upstream: string) =>
  `wrap ward mcp reloading {\n  base-url "${upstream}"\n  auth none\n  can get thing { path "/t/{id}"; }\n}\n`;
const v2 = (upstream: string) =>
  `wrap ward mcp reloading {\n  base-url "${upstream}"\n  auth none\n  can list thing { path "/t"; }\n}\n`;
const broken = (upstream: string) =>
  `wrap ward mcp reloading {\n  base-url "${upstream}"\n  auth none\n  can list thing { path "/t"; }\n  frobnicate 1\n}\n`;

/** One HTTP/1.1 connection, requests sent one after another on it. */
async function keepAlive(url: string) {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  let buffered = new Uint8Array(0);
  const decoder = new TextDecoder();
  const readMore = async () => {
    const chunk = new Uint8Array(65536);
    const n = await conn.read(chunk);
    if (n === null) throw new Error("the server closed the connection");
    const next = new Uint8Array(buffered.length + n);
    next.set(buffered);
    next.set(chunk.subarray(0, n), buffered.length);
    buffered = next;
  };
  return {
    async post(
      path: string,
      body: unknown,
      extra = "",
    ): Promise<{ status: number; body: string }> {
      const text = JSON.stringify(body);
      await conn.write(
        new TextEncoder().encode(
          `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json\r\n${extra}Content-Length: ${
              new TextEncoder().encode(text).length
            }` +
            `\r\n\r\n${text}`,
        ),
      );
      for (let i = 0; i < 1000; i++) {
        const head = decoder.decode(buffered);
        const end = head.indexOf("\r\n\r\n");
        if (end !== -1) {
          const length = Number(/content-length: (\d+)/i.exec(head.slice(0, end))?.[1] ?? "0");
          const headBytes = new TextEncoder().encode(head.slice(0, end + 4)).length;
          if (buffered.length >= headBytes + length) {
            const status = Number(head.split(" ")[1]);
            const out = decoder.decode(buffered.subarray(headBytes, headBytes + length));
            buffered = buffered.slice(headBytes + length);
            assert.doesNotMatch(head.slice(0, end), /connection: close/i);
            return { status, body: out };
          }
        }
        await readMore();
      }
      throw new Error("no complete response");
    },
    close: () => conn.close(),
  };
}

async function toolNames(conn: Awaited<ReturnType<typeof keepAlive>>): Promise<string[]> {
  const r = await conn.post("/mcp", {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: { _meta: MODERN_META },
  }, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n");
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body).result.tools.map((t: { name: string }) => t.name)
    .filter((n: string) => n !== "weir_info").sort();
}

async function waitForLog(stderr: () => string, pattern: RegExp, count: number) {
  if (await until(() => (stderr().match(new RegExp(pattern, "g")) ?? []).length >= count)) return;
  assert.fail(`no ${count}x ${pattern} in:\n${stderr()}`);
}

Deno.test("reload: a clean edit swaps, a broken one keeps the old surface", async (t) => {
  const held: (() => void)[] = [];
  const upstream = await startRecorder((req) =>
    req.path.startsWith("/t/")
      ? new Promise<Response>((resolve) => held.push(() => resolve(Response.json({ v: 1 }))))
      : Response.json({ v: 2 })
  );
  const file = await tempGuardfile(v1(upstream.url));
  const server = await serveHttp(file, {
    env: { WEIR_ADMIN: ADMIN },
    extra: ["--admin-token-env", "WEIR_ADMIN"],
  });
  const conn = await keepAlive(server.url);
  try {
    assert.deepEqual(await toolNames(conn), ["get_thing"]);

    await t.step(
      "SIGHUP with a clean edit: tools/list changes on the same connection",
      async () => {
        const inFlight = fetch(`${server.url}/api/get_thing`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ id: "a" }),
        });
        await until(() => upstream.requests.length >= 1);
        await Deno.writeTextFile(file, v2(upstream.url));
        server.kill("SIGHUP");
        await waitForLog(server.stderr, /"event":"reloaded"/, 1);
        assert.deepEqual(await toolNames(conn), ["list_thing"]);
        held.splice(0).forEach((f) => f());
        const r = await inFlight;
        assert.equal(r.status, 200, "the call in flight finished on the surface it started on");
        assert.match(await r.text(), /"v":1/);
        const line = server.stderr().split("\n").find((l) => l.includes('"event":"reloaded"'))!;
        const parsed = JSON.parse(line);
        assert.equal(parsed.trigger, "SIGHUP");
        assert.deepEqual(parsed.added, ["list_thing"]);
        assert.deepEqual(parsed.removed, ["get_thing"]);
      },
    );

    await t.step(
      "SIGHUP with a broken edit: old surface kept, errors logged with line:column",
      async () => {
        await Deno.writeTextFile(file, broken(upstream.url));
        server.kill("SIGHUP");
        await waitForLog(server.stderr, /"event":"reload_refused"/, 1);
        assert.deepEqual(await toolNames(conn), ["list_thing"], "the old surface still serves");
        const line = server.stderr().split("\n").find((l) => l.includes("reload_refused"))!;
        const errors: string[] = JSON.parse(line).errors;
        const lint = await runCli(["lint", file]);
        assert.equal(lint.code, 1);
        assert.ok(errors.length > 0);
        for (const e of errors) {
          assert.match(e, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:5:\\d+: `));
          assert.ok(lint.stderr.includes(e), `lint says the same: ${e}\n${lint.stderr}`);
        }
      },
    );

    await t.step("POST /admin/reload: 422 with the errors, then 200 once fixed", async () => {
      const reload = (token?: string) =>
        fetch(`${server.url}/admin/reload`, {
          method: "POST",
          headers: token ? { authorization: `Bearer ${token}` } : {},
        }).then(async (r) => ({ status: r.status, body: await r.json() }));
      const anon = await reload();
      assert.equal(anon.status, 401);
      assert.equal(anon.body.error.code, "auth");
      assert.equal((await reload("admin-token-wrong-000000000")).status, 401);
      const bad = await reload(ADMIN);
      assert.equal(bad.status, 422);
      assert.match(bad.body.errors.join("\n"), /:5:\d+: /);
      await Deno.writeTextFile(file, v1(upstream.url));
      const good = await reload(ADMIN);
      assert.equal(good.status, 200, JSON.stringify(good.body));
      assert.deepEqual(good.body.added, ["get_thing"]);
      assert.deepEqual(await toolNames(conn), ["get_thing"]);
    });

    await t.step(
      "GET /admin/describe is weir describe --format json of the running file",
      async () => {
        const r = await fetch(`${server.url}/admin/describe`, {
          headers: { authorization: `Bearer ${ADMIN}` },
        });
        assert.equal(r.status, 200);
        const described = await runCli(["describe", "--format", "json", file]);
        assert.deepEqual(await r.json(), JSON.parse(described.stdout));
        const anon = await fetch(`${server.url}/admin/describe`);
        await anon.body?.cancel();
        assert.equal(anon.status, 401);
        assert.equal(anon.headers.get("www-authenticate"), 'Bearer realm="weir-admin"');
      },
    );
  } finally {
    held.splice(0).forEach((f) => f());
    conn.close();
    await server.stop();
    await upstream.close();
  }
  assert.ok(!server.stderr().includes(ADMIN), "the admin token is never logged");
});

Deno.test("admin endpoints are off by default (404)", async () => {
  const upstream = await startRecorder();
  const server = await serveHttp(await tempGuardfile(v1(upstream.url)));
  try {
    for (const [method, path] of [["POST", "/admin/reload"], ["GET", "/admin/describe"]]) {
      const r = await fetch(`${server.url}${path}`, { method });
      await r.body?.cancel();
      assert.equal(r.status, 404, path);
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("stdio: SIGHUP swaps the surface for the next request on the same pipe", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(v1(upstream.url));
  const child = spawnServeStdio(file);
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  const nextLine = async () => {
    while (!pending.includes("\n")) {
      const { done, value } = await lines.read();
      if (done) throw new Error("stdout ended");
      pending += value;
    }
    const at = pending.indexOf("\n");
    const line = pending.slice(0, at);
    pending = pending.slice(at + 1);
    return JSON.parse(line);
  };
  const list = async (id: number) => {
    const request = { jsonrpc: "2.0", id, method: "tools/list", params: { _meta: MODERN_META } };
    await writer.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
    const reply = await nextLine();
    return reply.result.tools.map((t: { name: string }) => t.name)
      .filter((n: string) => n !== "weir_info").sort();
  };
  let stderr = "";
  const errPump = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
  })();
  try {
    assert.deepEqual(await list(1), ["get_thing"]);
    await Deno.writeTextFile(file, v2(upstream.url));
    child.kill("SIGHUP");
    await waitForLog(() => stderr, /"event":"reloaded"/, 1);
    assert.deepEqual(await list(2), ["list_thing"]);
  } finally {
    await writer.close();
    const status = await child.status;
    await errPump;
    await lines.cancel().catch(() => {});
    await upstream.close();
    assert.equal(status.code, 0, stderr);
  }
});
