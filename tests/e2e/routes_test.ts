/**
 * Every route of `weir serve --http` passes the same inbound checks, as
 * src/serving/listen.ts's table says (issue 22, kind 8): through the shipped CLI,
 * each route (`/mcp`, `/api/<tool>`, `/admin/reload`, `/admin/describe`,
 * `/healthz`, `/readyz`, both OAuth metadata paths, an unknown path) asked
 * with a foreign `Host` on loopback, a foreign `Origin`, an `Accept` that
 * refuses JSON, a body where none is read, and the wrong method. Each refusal
 * names its rule in the route's error shape, says `Cache-Control: no-store`,
 * and writes an audit line with that rule; the documented exceptions (probes
 * answer any `Host`; the public metadata any `Origin`) hold and no others.
 */
import assert from "node:assert/strict";
import { type Served, serveHttp } from "../support/cli.ts";
import { freePort, startOidc } from "../support/oidc.ts";
import { parseResponse } from "../support/raw_http.ts";

const FIXTURE = "tests/fixtures/oauth_tickets.mcp.kdl";
const INBOUND = "inbound-token-0123456789";
const ADMIN = "admin-token-0123456789ab";

interface Route {
  path: string;
  method: string;
  /** The error shape its refusals take. */
  shape: "mcp" | "api" | "plain";
  /** Headers a request needs to pass the route's own checks (token, media types). */
  headers: Record<string, string>;
}

/** One raw HTTP/1.1 exchange, so `Host` and the body framing are exactly as written. */
async function exchange(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = Object.entries({
      host: `127.0.0.1:${port}`,
      connection: "close",
      ...headers,
      ...(body === undefined
        ? {}
        : { "content-length": String(new TextEncoder().encode(body).length) }),
    }).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    await conn.write(
      new TextEncoder().encode(`${method} ${path} HTTP/1.1\r\n${head}\r\n${body ?? ""}`),
    );
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(65536);
    try {
      for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
        chunks.push(buf.slice(0, n));
      }
    } catch { /* a dropped connection, after the answer */ }
    return parseResponse(new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c]))));
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

/** The rule a refusal names, read from the route's error shape. */
function ruleOf(shape: Route["shape"], text: string): string {
  const body = JSON.parse(text);
  if (shape === "mcp") return body.error.data.rule;
  if (shape === "api") {
    assert.equal(body.isError, true);
    return body.error.code;
  }
  return body.error.code;
}

function expectRefusal(
  what: string,
  route: Route,
  answer: ReturnType<typeof parseResponse>,
  status: number,
  rule: string,
) {
  assert.equal(answer.status, status, `${what}: ${answer.body.slice(0, 300)}`);
  assert.equal(ruleOf(route.shape, answer.body), rule, `${what}: ${answer.body.slice(0, 300)}`);
  assert.match(answer.headers.get("content-type") ?? "", /application\/json/, what);
  assert.equal(answer.headers.get("cache-control"), "no-store", what);
  assert.ok(JSON.parse(answer.body) && answer.body.length < 2000, what);
}

Deno.test("every route passes the same Host, Origin, Accept, body and method checks (static token, admin)", async () => {
  const served = await serveHttp(FIXTURE, {
    env: {
      TICKETS_BASE_URL: "http://127.0.0.1:9",
      TICKETS_KEY: "upstream-key-123456",
      IN_TOKEN: INBOUND,
      ADMIN_TOKEN: ADMIN,
    },
    extra: ["--inbound-token-env", "IN_TOKEN", "--admin-token-env", "ADMIN_TOKEN"],
  });
  const port = Number(new URL(served.url).port);
  const json = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const routes: Route[] = [
    {
      path: "/mcp",
      method: "POST",
      shape: "mcp",
      headers: {
        ...json,
        authorization: `Bearer ${INBOUND}`,
        "mcp-protocol-version": "2025-11-25",
      },
    },
    {
      path: "/api/weir_info",
      method: "POST",
      shape: "api",
      headers: { ...json, authorization: `Bearer ${INBOUND}` },
    },
    {
      path: "/admin/describe",
      method: "GET",
      shape: "plain",
      headers: { authorization: `Bearer ${ADMIN}` },
    },
    {
      path: "/admin/reload",
      method: "POST",
      shape: "plain",
      headers: { authorization: `Bearer ${ADMIN}` },
    },
    { path: "/healthz", method: "GET", shape: "plain", headers: {} },
    { path: "/readyz", method: "GET", shape: "plain", headers: {} },
    { path: "/no/such/route", method: "GET", shape: "plain", headers: {} },
  ];
  /** The body a route reads (the MCP and tool API routes; the others read none). */
  const body = (route: Route) =>
    route.path === "/mcp"
      ? `{"jsonrpc":"2.0","id":1,"method":"ping"}`
      : route.path.startsWith("/api/")
      ? "{}"
      : undefined;
  try {
    for (const route of routes) {
      const probe = route.path === "/healthz" || route.path === "/readyz";
      // A foreign Host on loopback (DNS rebinding): refused everywhere but the probes.
      const rebound = await exchange(port, route.method, route.path, {
        ...route.headers,
        host: `evil.example:${port}`,
      }, body(route));
      if (probe) assert.equal(rebound.status, 200, `${route.path} answers probes under any Host`);
      else expectRefusal(`${route.path} foreign Host`, route, rebound, 403, "host");

      // A foreign browser Origin: refused everywhere (the admin routes refuse any Origin).
      const foreign = await exchange(port, route.method, route.path, {
        ...route.headers,
        origin: "https://evil.example",
      }, body(route));
      expectRefusal(`${route.path} foreign Origin`, route, foreign, 403, "origin");

      if (route.path === "/no/such/route") {
        expectRefusal(
          "unknown route",
          route,
          await exchange(port, "GET", route.path, {}),
          404,
          "not_found",
        );
        continue;
      }
      // An Accept that refuses JSON (RFC 9110: q=0 is "not acceptable").
      const refusesJson = await exchange(port, route.method, route.path, {
        ...route.headers,
        accept: "application/json;q=0, text/html",
      }, body(route));
      expectRefusal(`${route.path} Accept`, route, refusesJson, 406, "not_acceptable");

      // The wrong method, with Allow.
      const wrong = route.method === "GET" ? "DELETE" : "GET";
      const badMethod = await exchange(port, wrong, route.path, route.headers);
      expectRefusal(`${route.path} ${wrong}`, route, badMethod, 405, "method");
      assert.ok(badMethod.headers.get("allow"), `${route.path}: Allow`);

      // A body where the route reads none.
      if (route.method === "GET" || route.path === "/admin/reload") {
        const withBody = await exchange(
          port,
          route.method,
          route.path,
          route.headers,
          "x".repeat(100),
        );
        expectRefusal(`${route.path} with a body`, route, withBody, 413, "size");
      }
    }
    // The token routes: a missing token is 401 with a Bearer challenge, in each route's shape.
    for (const route of routes.slice(0, 4)) {
      const { authorization: _, ...anonymous } = route.headers;
      const answer = await exchange(port, route.method, route.path, anonymous, body(route));
      expectRefusal(`${route.path} no token`, route, answer, 401, "auth");
      assert.match(answer.headers.get("www-authenticate") ?? "", /^Bearer realm="weir(-admin)?"$/);
    }
  } finally {
    assert.equal(await served.stop(), 0);
  }
  // One audit line per refusal, each naming its rule.
  const rules = served.stderr().split("\n").filter((l) => l.includes('"event":"refused"'))
    .map((l) => JSON.parse(l).rule);
  for (const rule of ["host", "origin", "not_acceptable", "method", "size", "auth", "not_found"]) {
    assert.ok(rules.includes(rule), `an audit line with rule ${rule}: ${rules.join(", ")}`);
  }
});

Deno.test("the OAuth metadata routes: Host checked, any Origin may read, GET only, no body, JSON only", async () => {
  const port = freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const oidc = await startOidc(resource);
  let served: Served | undefined;
  try {
    served = await serveHttp(FIXTURE, {
      address: `127.0.0.1:${port}`,
      extra: ["--oauth-issuer", oidc.issuer, "--oauth-resource", resource],
      env: { TICKETS_BASE_URL: "http://127.0.0.1:9", TICKETS_KEY: "upstream-key-123456" },
    });
    for (
      const path of [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
      ]
    ) {
      const route: Route = { path, method: "GET", shape: "plain", headers: {} };
      const ok = await exchange(port, "GET", path, { origin: "https://any.example" });
      assert.equal(ok.status, 200, ok.body);
      assert.equal(JSON.parse(ok.body).resource, resource);
      assert.equal(ok.headers.get("access-control-allow-origin"), "*");
      expectRefusal(
        `${path} foreign Host`,
        route,
        await exchange(port, "GET", path, { host: "evil.example" }),
        403,
        "host",
      );
      expectRefusal(
        `${path} POST`,
        route,
        await exchange(port, "POST", path, {}, "{}"),
        405,
        "method",
      );
      expectRefusal(
        `${path} body`,
        route,
        await exchange(port, "GET", path, {}, "xx"),
        413,
        "size",
      );
      expectRefusal(
        `${path} Accept`,
        route,
        await exchange(port, "GET", path, { accept: "*/*;q=0" }),
        406,
        "not_acceptable",
      );
    }
  } finally {
    if (served) assert.equal(await served.stop(), 0);
    await oidc.close();
  }
});
