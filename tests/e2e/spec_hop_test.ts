/**
 * Spec mode's hop to its upstream keeps the same two rules as serve-upstream,
 * through the shipped CLI, with weir's HTTP/1.1 client and with `fetch`
 * (`WEIR_UPSTREAM_CLIENT=fetch`, the path a proxy takes):
 *
 * - no redirect is followed: each 3xx status, to the same path, another path
 *   or another host, for GET and POST, fails naming the status (never the
 *   target), and nothing reaches the target;
 * - a request that is not safe (POST, PUT, PATCH, DELETE) reaches the
 *   upstream at most once: when the upstream reads it and closes a kept-alive
 *   connection without answering, the call fails and the request is not sent
 *   again (a fresh connection serves the next call).
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { type FrontRequest, startClosingFront } from "../support/hop_front.ts";

const GUARDFILE = (base: string) =>
  tempGuardfile(`wrap ward mcp hop {
    base-url "${base}"
    auth bearer { value env "HOP_TOKEN" }
    can get item { path "/items/{id}" }
    can create item {
        path "/items"
        body { field "name" type="string" }
    }
    can set box {
        path "/items/{id}"
        body { field "name" type="string" }
    }
    can edit note {
        path "/items/{id}"
        body { field "name" type="string" }
    }
    can delete item { path "/items/{id}" }
}
`);

const ENV = { HOP_TOKEN: "hop-spec-token-123" };

for (const client of ["http1", "fetch"] as const) {
  Deno.test(`spec mode (${client}): no redirect followed, any status, any target`, async (t) => {
    const elsewhere: string[] = [];
    const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      elsewhere.push(`${req.method} ${new URL(req.url).pathname}`);
      return Response.json({ elsewhere: true });
    });
    let redirect: { status: number; location: string } | undefined;
    const seen: string[] = [];
    const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      const path = new URL(req.url).pathname;
      seen.push(`${req.method} ${path}`);
      if (redirect && path.startsWith("/items")) {
        return new Response(null, {
          status: redirect.status,
          headers: { location: redirect.location },
        });
      }
      return Response.json({ ok: true, path });
    });
    const origin = `http://127.0.0.1:${upstream.addr.port}`;
    const otherOrigin = `http://127.0.0.1:${other.addr.port}`;
    const server = await serveHttp(await GUARDFILE(origin), {
      env: { ...ENV, WEIR_UPSTREAM_CLIENT: client },
    });
    try {
      for (const status of [301, 302, 303, 307, 308]) {
        for (
          const [where, location, to] of [
            ["the same path", `${origin}/items/1`, origin],
            ["another path", "/elsewhere/1", origin],
            ["another host", `${otherOrigin}/items/1`, otherOrigin],
          ] as const
        ) {
          for (const [tool, args] of [["get_item", { id: "1" }], ["create_item", { name: "n" }]]) {
            await t.step(`${status} to ${where}, ${tool}`, async () => {
              redirect = { status, location };
              const before = seen.length;
              const r = await callApi(server.url, tool as string, args);
              redirect = undefined;
              assert.equal(r.status, 502, r.text);
              // The status, never the target (tests/e2e/redirect_target_test.ts: the log's).
              assert.match(
                r.text,
                new RegExp(
                  `^upstream_redirect: (GET|POST) \\S+ answered ${status}, a redirect; ` +
                    "weir follows no redirect",
                ),
              );
              assert.ok(!r.text.includes(to), r.text);
              assert.ok(!r.text.includes(ENV.HOP_TOKEN));
              assert.equal(seen.length, before + 1, JSON.stringify(seen.slice(before)));
              assert.ok(seen.slice(before).every((x) => x.includes("/items")));
              assert.deepEqual(elsewhere, []);
            });
          }
        }
      }
    } finally {
      await server.stop();
      await upstream.shutdown();
      await other.shutdown();
    }
  });

  Deno.test(`spec mode (${client}): a request read and then cut off is not sent again`, async () => {
    // A warm-up call leaves a kept-alive connection; the front then reads the
    // next request whole and closes without an answer.
    const inner = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => Response.json({ ok: true }),
    );
    let cut = false;
    const front = startClosingFront(
      `http://127.0.0.1:${inner.addr.port}/`,
      (req: FrontRequest) => cut && req.path.startsWith("/items"),
    );
    const base = `http://127.0.0.1:${front.port}`;
    const server = await serveHttp(await GUARDFILE(base), {
      env: { ...ENV, WEIR_UPSTREAM_CLIENT: client },
    });
    try {
      const calls: [string, Record<string, string>, string][] = [
        ["create_item", { name: "n" }, "POST"],
        ["set_box", { id: "1", name: "n" }, "PUT"],
        ["edit_note", { id: "1", name: "n" }, "PATCH"],
        ["delete_item", { id: "1" }, "DELETE"],
      ];
      for (const [tool, args, method] of calls) {
        // Warm a kept-alive connection, then cut the next request after reading it.
        cut = false;
        assert.equal((await callApi(server.url, "get_item", { id: "warm" })).status, 200);
        cut = true;
        const before = front.requests.length;
        const r = await callApi(server.url, tool, args);
        cut = false;
        assert.equal(r.status, 502, `${method}: ${r.text}`);
        assert.match(r.text, /^upstream_unreachable: /, r.text);
        await new Promise((resolve) => setTimeout(resolve, 500));
        const sent = front.requests.slice(before).filter((x) => x.method === method);
        assert.equal(sent.length, 1, `${method} arrived ${sent.length} times`);
      }
      // And the next call goes through.
      assert.equal((await callApi(server.url, "create_item", { name: "after" })).status, 200);
    } finally {
      await server.stop();
      await front.stop();
      await inner.shutdown();
    }
  });
}
