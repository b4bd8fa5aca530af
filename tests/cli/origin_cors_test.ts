/**
 * Browser-facing defaults of `weir serve --http`, run as a user runs them:
 * the server's own origin is served with no flags (DNS-rebinding protection
 * still refuses every other Host and Origin), any loopback address can be
 * bound (127/8), `--allow-host` admits a reverse proxy's Host, and
 * `--allow-origin` serves a browser: the CORS preflight is answered and every
 * answer carries `Access-Control-Allow-Origin`. A real browser (Debian's
 * headless Chromium) loads a page from an allowed origin and lists tools.
 */
import assert from "node:assert/strict";
import { runCli, serveHttp } from "../support/cli.ts";
import { rawRequest } from "../support/raw_http.ts";
import { startMcpUpstream } from "../support/mcp_upstream.ts";
import { runWeir, startWrapper } from "../support/upstream_cli.ts";
import { until } from "../support/wait.ts";
import { CHROMIUM } from "../support/chromium.ts";

const GUARDFILE = new URL("../fixtures/conformance.mcp.kdl", import.meta.url).pathname;

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "origin-test", version: "1" },
  },
});

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

Deno.test("default flags: the server's own origin is served, every other Host and Origin refused", async () => {
  const served = await serveHttp(GUARDFILE);
  try {
    const port = Number(new URL(served.url).port);
    const post = (host: string, origin?: string) =>
      rawRequest(port, "POST /mcp HTTP/1.1", {
        ...JSON_HEADERS,
        host,
        ...(origin ? { origin } : {}),
      }, INIT);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      // A page served under this Host, over http or through a TLS proxy (https).
      for (const scheme of ["http", "https"]) {
        const same = await post(host, `${scheme}://${host}`);
        assert.equal(same.status, 200, `same origin ${scheme}://${host}`);
        assert.equal(JSON.parse(same.body).result.protocolVersion, "2025-11-25");
        assert.equal(same.headers.get("access-control-allow-origin"), `${scheme}://${host}`);
      }
    }
    const refusals: [string, string | undefined][] = [
      ["evil.example.com", "http://evil.example.com"],
      [`evil.example.com:${port}`, undefined],
      [`127.0.0.1:${port}`, `http://localhost:${port}`], // another origin than the Host
      [`127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`],
      [`127.0.0.1:${port}`, "null"],
      [`127.0.0.1:${port}`, `http://127.0.0.1:${port}.evil.net`],
      [`127.0.0.1:${port}`, `ws://127.0.0.1:${port}`], // only http and https
      [`127.0.0.1:${port}`, `https://127.0.0.1`], // the port is part of the origin
    ];
    for (const [host, origin] of refusals) {
      const answer = await post(host, origin);
      assert.equal(answer.status, 403, `${host} ${origin}`);
      assert.equal(answer.headers.get("access-control-allow-origin"), null);
    }
    // No CORS grant to a foreign origin's preflight either.
    const preflight = await rawRequest(port, "OPTIONS /mcp HTTP/1.1", {
      host: `127.0.0.1:${port}`,
      origin: "http://evil.example.com",
      "access-control-request-method": "POST",
    });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers.get("access-control-allow-origin"), null);
  } finally {
    assert.equal(await served.stop(), 0);
  }
});

Deno.test("binding another loopback address (127.0.0.2) serves requests naming it", async () => {
  const served = await serveHttp(GUARDFILE, { address: "127.0.0.2:0" });
  try {
    assert.match(served.url, /^http:\/\/127\.0\.0\.2:\d+$/);
    const res = await fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: INIT,
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).result.serverInfo.name, "plain");
    const health = await fetch(`${served.url}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
  } finally {
    assert.equal(await served.stop(), 0);
  }
});

Deno.test("--allow-host admits a Host-preserving reverse proxy's name, and only what is listed", async () => {
  const served = await serveHttp(GUARDFILE, {
    extra: ["--allow-host", "mcp.example.com", "--allow-host", "Proxy.Example:8443"],
  });
  try {
    const port = Number(new URL(served.url).port);
    const status = async (host: string, origin?: string) =>
      (await rawRequest(port, "POST /mcp HTTP/1.1", {
        ...JSON_HEADERS,
        host,
        ...(origin ? { origin } : {}),
      }, INIT)).status;
    assert.equal(await status("mcp.example.com"), 200);
    assert.equal(await status("MCP.EXAMPLE.COM"), 200, "Host compares without case");
    assert.equal(await status("proxy.example:8443"), 200);
    assert.equal(await status("https://mcp.example.com".slice(8), "https://mcp.example.com"), 200);
    assert.equal(await status(`127.0.0.1:${port}`), 200, "loopback names still answer");
    assert.equal(await status("proxy.example"), 403, "the port is part of what is listed");
    // A name listed without a port is a Host without a port (the scheme's default
    // port, as a proxy forwarding nginx's $host sends it), never any port.
    for (const host of [`mcp.example.com:${port}`, "mcp.example.com:8443", "mcp.example.com:80"]) {
      assert.equal(await status(host), 403, host);
    }
    assert.equal(await status("other.example.com"), 403);
    assert.equal(await status("mcp.example.com", "https://evil.example.com"), 403);
  } finally {
    assert.equal(await served.stop(), 0);
  }
  const bad = await runCli(["serve", GUARDFILE, "--http", "0", "--allow-host", "a b/c"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--allow-host takes a Host header value/);
  const badOrigin = await runCli([
    "serve",
    GUARDFILE,
    "--http",
    "0",
    "--allow-origin",
    "http://app.test/",
  ]);
  assert.equal(badOrigin.code, 2);
  assert.match(badOrigin.stderr, /--allow-origin takes an origin, scheme:\/\/host\[:port\]/);
});

Deno.test("--allow-origin: the preflight is answered exactly, and every answer carries CORS headers", async () => {
  const origin = "http://app.test:5173";
  const served = await serveHttp(GUARDFILE, { extra: ["--allow-origin", origin] });
  try {
    for (const path of ["/mcp", "/api/get_ticket"]) {
      const preflight = await fetch(`${served.url}${path}`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, mcp-protocol-version, mcp-method",
        },
      });
      assert.equal(preflight.status, 204, path);
      assert.equal(await preflight.text(), "");
      assert.equal(preflight.headers.get("access-control-allow-origin"), origin);
      assert.equal(preflight.headers.get("access-control-allow-methods"), "POST");
      assert.equal(
        preflight.headers.get("access-control-allow-headers"),
        "content-type, mcp-protocol-version, mcp-method",
      );
      assert.match(preflight.headers.get("vary") ?? "", /\bOrigin\b/);
      assert.equal(preflight.headers.get("access-control-allow-credentials"), null);
    }
    // A preflight from an origin not listed gets nothing a browser would accept.
    const foreign = await fetch(`${served.url}/mcp`, {
      method: "OPTIONS",
      headers: { origin: "http://other.test", "access-control-request-method": "POST" },
    });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get("access-control-allow-origin"), null);
    await foreign.body?.cancel();

    const real = await fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: { ...JSON_HEADERS, origin },
      body: INIT,
    });
    assert.equal(real.status, 200);
    assert.equal(real.headers.get("access-control-allow-origin"), origin);
    assert.match(real.headers.get("vary") ?? "", /\bOrigin\b/);
    assert.match(real.headers.get("access-control-expose-headers") ?? "", /WWW-Authenticate/i);
    await real.body?.cancel();
    // Errors reach the page too: a 405, a 415, a JSON-RPC error, a tool API answer.
    const answers = [
      await fetch(`${served.url}/mcp`, { method: "GET", headers: { origin } }),
      await fetch(`${served.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "text/plain", origin },
        body: INIT,
      }),
      await fetch(`${served.url}/mcp`, {
        method: "POST",
        headers: { ...JSON_HEADERS, origin },
        body: "{",
      }),
      await fetch(`${served.url}/api/test_error_handling`, {
        method: "POST",
        headers: { ...JSON_HEADERS, origin },
        body: "{}",
      }),
    ];
    assert.deepEqual(answers.map((a) => a.status), [405, 415, 400, 403]);
    for (const answer of answers) {
      assert.equal(answer.headers.get("access-control-allow-origin"), origin);
      await answer.body?.cancel();
    }
    const none = await fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: INIT,
    });
    assert.equal(none.headers.get("access-control-allow-origin"), null, "no Origin, no CORS");
    await none.body?.cancel();
  } finally {
    assert.equal(await served.stop(), 0);
  }
});

/**
 * A page that lists tools with `fetch` (modern revision: JSON plus the
 * `MCP-Protocol-Version`/`Mcp-Method` headers, so the browser must preflight),
 * then reports what it saw to its own origin.
 */
function page(mcp: string): string {
  return `<!doctype html><meta charset="utf-8"><script>
(async () => {
  let report;
  try {
    const res = await fetch(${JSON.stringify(mcp)}, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      } } }),
    });
    const body = await res.json();
    report = { status: res.status, tools: body.result.tools.map((t) => t.name) };
  } catch (error) {
    report = { error: String(error) };
  }
  await fetch("/report", { method: "POST", body: JSON.stringify(report) });
})();
</script>`;
}

if (!CHROMIUM) {
  console.error(
    "origin_cors_test: skipping the browser test: no /usr/bin/chromium (apt-get install chromium)",
  );
}

Deno.test({
  name: "headless Chromium on an allowed origin lists tools through --allow-origin; others cannot",
  ignore: !CHROMIUM,
  fn: async () => {
    // Two page servers: one origin allowed, one not.
    const reports: { resolve: (r: unknown) => void; promise: Promise<unknown> }[] = [
      Promise.withResolvers(),
      Promise.withResolvers(),
    ];
    const target = { mcp: "" };
    const pages = [0, 1].map((i) =>
      Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
        const path = new URL(request.url).pathname;
        if (path === "/report") {
          reports[i].resolve(JSON.parse(await request.text()));
          return new Response("ok");
        }
        if (path === "/") {
          return new Response(page(target.mcp), { headers: { "content-type": "text/html" } });
        }
        return new Response("not found", { status: 404 });
      })
    );
    const [allowed, other] = pages.map((p) => `http://127.0.0.1:${p.addr.port}`);
    const served = await serveHttp(GUARDFILE, { extra: ["--allow-origin", allowed] });
    target.mcp = `${served.url}/mcp`;
    const profile = await Deno.makeTempDir({ prefix: "weir-chromium-" });
    const browsers: Deno.ChildProcess[] = [];
    try {
      for (const url of [allowed, other]) {
        browsers.push(
          new Deno.Command(CHROMIUM!, {
            args: [
              "--headless",
              "--no-sandbox",
              "--disable-gpu",
              "--no-first-run",
              "--disable-dev-shm-usage",
              `--user-data-dir=${profile}/${browsers.length}`,
              url,
            ],
            stdin: "null",
            stdout: "null",
            stderr: "null",
          }).spawn(),
        );
      }
      const deadline = (ms: number) =>
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error("the browser did not report in time")), ms)
        );
      const [good, bad] = await Promise.race([
        Promise.all(reports.map((r) => r.promise)),
        deadline(60_000),
      ]) as [Record<string, unknown>, Record<string, unknown>];
      assert.deepEqual(good, {
        status: 200,
        tools: [
          "get_ticket",
          "test_error_handling",
          "test_input_required_result_elicitation",
          "test_input_required_result_tampered_state",
          "test_logging_tool",
          "test_missing_capability",
          "test_streaming_elicitation",
          "weir_info",
        ],
      });
      assert.match(String(bad.error), /TypeError/, "the browser refused the foreign origin");
      // The refusal's log line may still be in the pipe: wait for it (bounded).
      await until(() => /"reason":"origin not allowed"/.test(served.stderr()));
      assert.match(served.stderr(), /"reason":"origin not allowed"/);
    } finally {
      for (const browser of browsers) {
        try {
          browser.kill("SIGKILL");
        } catch { /* gone */ }
        await browser.status;
      }
      assert.equal(await served.stop(), 0);
      for (const p of pages) await p.shutdown();
      await Deno.remove(profile, { recursive: true });
    }
  },
});

Deno.test("serve-upstream shares the browser defaults: own origin, --allow-host, --allow-origin with CORS", async () => {
  const up = await startMcpUpstream();
  const weir = await startWrapper([
    "--tool",
    "echo",
    "--upstream",
    up.url,
    "--allow-host",
    "mcp.example.com",
    "--allow-origin",
    "http://app.test",
  ]);
  try {
    const port = Number(new URL(weir.url).port);
    const post = (headers: Record<string, string>) =>
      rawRequest(port, "POST /mcp HTTP/1.1", { ...JSON_HEADERS, ...headers }, INIT);
    assert.equal((await post({ host: `127.0.0.1:${port}`, origin: weir.url })).status, 200);
    assert.equal((await post({ host: "mcp.example.com" })).status, 200);
    assert.equal((await post({ host: "evil.example.com" })).status, 403);
    const cors = await post({ host: `127.0.0.1:${port}`, origin: "http://app.test" });
    assert.equal(cors.status, 200);
    assert.equal(cors.headers.get("access-control-allow-origin"), "http://app.test");
    const preflight = await rawRequest(port, "OPTIONS /mcp HTTP/1.1", {
      host: `127.0.0.1:${port}`,
      origin: "http://app.test",
      "access-control-request-method": "POST",
    });
    assert.equal(preflight.status, 204);
  } finally {
    await weir.stop();
    await up.stop();
  }
  const bad = await runWeir([
    "serve-upstream",
    "--tool",
    "echo",
    "--upstream",
    "http://127.0.0.1:9/mcp",
    "--http",
    "0",
    "--allow-host",
    "a/b",
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--allow-host takes a Host header value/);
});
