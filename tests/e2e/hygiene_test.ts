/**
 * What weir passes on from an upstream and from its own environment, through
 * `weir serve` over HTTP (MCP and the tool API) and stdio: credentials are
 * redacted as sent and refused by name when malformed, pins are policy (not
 * secret) unless the file says so, numbers pass through digit for digit, and
 * text comes out well-formed and free of terminal control sequences.
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, weirCommand } from "../support/cli.ts";
import { type Answer, type Recorder, startRecorder } from "../support/upstream.ts";

async function withServer(
  guardfile: string,
  answer: Answer,
  env: Record<string, string>,
  fn: (url: string, upstream: Recorder, stderr: () => string, file: string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "weir-hygiene-" });
  const file = `${dir}/hygiene.mcp.kdl`;
  await Deno.writeTextFile(file, guardfile);
  const upstream = await startRecorder(answer);
  const served = await serveHttp(file, { env: { ...env, HYGIENE_BASE: upstream.url } });
  try {
    await fn(served.url, upstream, served.stderr, file);
  } finally {
    assert.equal(await served.stop(), 0);
    await upstream.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const TOKEN_FILE = (scheme: string) => `
wrap ward mcp hygiene {
    base-url { value env "HYGIENE_BASE" }
    ${scheme}
    can get thing { path "/things/{id}" }
}
`;

/** An upstream that answers 401 quoting the credential headers it got. */
const echoAuth: Answer = (req) =>
  new Response(
    `denied: authorization=${req.headers.get("authorization")} key=${req.headers.get("x-key")}`,
    { status: 401 },
  );

Deno.test("a credential ending in a newline is sent trimmed and redacted as sent", async () => {
  for (
    const [scheme, header] of [
      [`auth bearer { value env "HYGIENE_TOKEN"; }`, "authorization"],
      [`auth header-token { header "X-Key"; value env "HYGIENE_TOKEN"; }`, "x-key"],
    ]
  ) {
    await withServer(
      TOKEN_FILE(scheme),
      echoAuth,
      { HYGIENE_TOKEN: "tok-secret-4242\n" },
      async (url, upstream, stderr) => {
        const r = await callApi(url, "get_thing", { id: "1" });
        assert.equal(r.status, 502, r.text);
        const sent = upstream.requests[0].headers.get(header)!;
        assert.ok(sent.endsWith("tok-secret-4242"), sent);
        assert.ok(!r.text.includes("tok-secret-4242"), r.text);
        assert.match(r.text, /\[redacted\]/);
        assert.ok(!stderr().includes("tok-secret-4242"));
      },
    );
  }
});

Deno.test("a raw-response answer echoing the credential is redacted too (as sent, encoded, escaped)", async () => {
  await withServer(
    `
wrap ward mcp hygiene {
    base-url { value env "HYGIENE_BASE" }
    auth bearer { value env "HYGIENE_TOKEN"; }
    can get thing { path "/things/{id}"; raw-response; }
}
`,
    (req) => {
      const token = req.headers.get("authorization")!.slice("Bearer ".length);
      return new Response(
        `as sent: ${token}; encoded: ${encodeURIComponent(token)}; json: ${JSON.stringify(token)}`,
        { headers: { "content-type": "text/plain" } },
      );
    },
    { HYGIENE_TOKEN: "tok/secret 4242" },
    async (url) => {
      const r = await callApi(url, "get_thing", { id: "1" });
      assert.equal(r.status, 200, r.text);
      assert.ok(!r.text.includes("secret"), r.text);
      const result = JSON.parse(r.text).result;
      assert.equal(result, 'as sent: [redacted]; encoded: [redacted]; json: "[redacted]"');
    },
  );
});

Deno.test("a credential holding CR/LF or another control character is refused by name, never shown", async () => {
  for (const value of ["tok-secret-4242\r\nX-Evil: 1", "tok-secret\u001b4242"]) {
    await withServer(
      TOKEN_FILE(`auth header-token { header "X-Key"; value env "HYGIENE_TOKEN"; }`),
      echoAuth,
      { HYGIENE_TOKEN: value },
      async (url, upstream, stderr) => {
        const r = await callApi(url, "get_thing", { id: "1" });
        assert.equal(r.status, 500);
        assert.match(
          r.text,
          /^credential_invalid: the upstream credential from environment variable HYGIENE_TOKEN has (a line break|a control character)/,
        );
        assert.equal(upstream.requests.length, 0, "nothing was sent");
        assert.ok(!r.text.includes("tok-secret"), r.text);
        assert.ok(!stderr().includes("tok-secret"), stderr());
      },
    );
  }
});

Deno.test("a missing credential, base-url or pin has a stable code prefix", async () => {
  await withServer(
    `
pin "get_thing" { query "site" env "HYGIENE_UNSET_PIN"; }
wrap ward mcp hygiene {
    base-url { value env "HYGIENE_BASE" }
    auth bearer { value env "HYGIENE_UNSET_TOKEN"; }
    can get thing { path "/things/{id}" }
    can list thing { path "/things" }
}
`,
    echoAuth,
    {},
    async (url) => {
      const listed = await callApi(url, "list_thing", {});
      assert.match(
        listed.text,
        /^credential_missing: the upstream credential is not available: set environment variable HYGIENE_UNSET_TOKEN/,
      );
      const pinned = await callApi(url, "get_thing", { id: "1" });
      assert.match(pinned.text, /^pin_missing: the pinned query "site" is not available/);
    },
  );
});

Deno.test("pins are policy: an env pin is not redacted unless secret=#true; a from=query: pin is", async () => {
  await withServer(
    `
pin "get_thing" { query "site" env "HYGIENE_SITE"; }
pin "list_thing" { query "site" env "HYGIENE_SITE" secret=#true; }
pin "search_thing" { query "key" env "HYGIENE_LINK" from="query:auth"; }
wrap ward mcp hygiene {
    base-url { value env "HYGIENE_BASE" }
    auth none
    can get thing { path "/things/{id}" }
    can list thing { path "/things" }
    can search thing { path "/search" }
}
`,
    (req) => Response.json({ source: req.query }),
    { HYGIENE_SITE: "example.com", HYGIENE_LINK: "https://share.example/x?auth=link-secret-777" },
    async (url, upstream) => {
      const plain = await callApi(url, "get_thing", { id: "1" });
      assert.match(plain.text, /"source":"site=example.com"/);
      const secret = await callApi(url, "list_thing", {});
      assert.match(secret.text, /"source":"site=\[redacted\]"/);
      const fromQuery = await callApi(url, "search_thing", {});
      assert.equal(upstream.requests[2].query, "key=link-secret-777");
      assert.match(fromQuery.text, /"source":"key=\[redacted\]"/);
      assert.ok(!fromQuery.text.includes("link-secret-777"));
    },
  );
});

const NUMBERS =
  '{"big":12345678901234567890,"beyond":9007199254740993,"neg":-9007199254740993,"one":1.0,"exp":1e3,"tiny":1.50,"zero":-0,"pi":3.14159265358979323846,"plain":42,"half":0.5}';

Deno.test("numbers from an upstream pass through digit for digit: text, structuredContent, tool API, stdio", async () => {
  await withServer(
    TOKEN_FILE("auth none"),
    () => new Response(NUMBERS, { headers: { "content-type": "application/json" } }),
    {},
    async (url, _upstream, _stderr, file) => {
      const expected = NUMBERS.slice(1, -1); // every member, as the upstream spelled it
      const api = await fetch(`${url}/api/get_thing`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"id":"1"}',
      });
      const apiText = await api.text();
      assert.equal(api.status, 200, apiText);
      // structuredContent is JSON inside the answer; the text block is JSON in a string.
      assert.ok(apiText.includes(`"result":{${expected}}`), apiText);
      const body = JSON.parse(apiText);
      assert.ok(body.content[0].text.includes(`"result":{${expected}}`), body.content[0].text);

      const mcp = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "mcp-protocol-version": "2025-11-25",
        },
        body:
          '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_thing","arguments":{"id":"1"}}}',
      });
      const mcpText = await mcp.text();
      assert.ok(mcpText.includes(`"result":{${expected}}`), mcpText);

      const { command, args } = weirCommand();
      const out = await new Deno.Command(command, {
        args: [...args, "serve", file, "--stdio"],
        env: { HYGIENE_BASE: _upstream.url },
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
        signal: AbortSignal.timeout(30_000),
      }).spawn();
      const w = out.stdin.getWriter();
      await w.write(new TextEncoder().encode(
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n' +
          '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_thing","arguments":{"id":"1"}}}\n',
      ));
      await w.close();
      const stdout = new TextDecoder().decode((await out.output()).stdout);
      assert.ok(stdout.includes(`"result":{${expected}}`), stdout);
    },
  );
});

/** What a hostile upstream answers: a lone surrogate, screen clear, an OSC title, C1 controls. */
const DIRTY_JSON =
  '{"name":"\\ud800 lone","note":"\\u001b[2J\\u001b]0;pwned\\u0007clear","c1":"\\u009b31mred","ok":"caf\\u00e9 \\ud83d\\ude00\\ttab"}';
const DIRTY_TEXT = "boom \u001b[2J\u001b]0;pwned\u0007 \u009b31m end";

function assertClean(text: string, where: string) {
  assert.ok(!/\\u001b|\\u009b|\\ud800|\\u0007/i.test(text), `${where} escapes: ${text}`);
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      assert.ok(v.isWellFormed(), `${where}: ill-formed ${JSON.stringify(v)}`);
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(v), `${where}: control in ${v}`);
    } else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(JSON.parse(text));
}

Deno.test("text out is well-formed and free of terminal escapes: results, upstream errors, raw responses, echoes", async () => {
  await withServer(
    `
wrap ward mcp hygiene {
    base-url { value env "HYGIENE_BASE" }
    auth none
    can get thing { path "/things/{id}" }
    can list thing { path "/things"; raw-response; }
}
`,
    (req) =>
      req.path === "/things/json"
        ? new Response(DIRTY_JSON, { headers: { "content-type": "application/json" } })
        : req.path === "/things"
        ? new Response(DIRTY_TEXT + " \ud800")
        : new Response(DIRTY_TEXT, { status: 500 }),
    {},
    async (url) => {
      const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
        const res = await fetch(`${url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json", ...headers },
          body,
        });
        return await res.text();
      };
      const json = await post("/api/get_thing", '{"id":"json"}');
      assertClean(json, "JSON result");
      assert.match(json, /\\ufffd lone|\uFFFD lone/i);
      assert.match(json, /caf\u00e9 \ud83d\ude00\\ttab/, "clean text is left alone");
      const error = await post("/api/get_thing", '{"id":"err"}');
      assertClean(error, "upstream_error");
      assert.match(error, /upstream_error: GET \/things\/\{id\} -> 500/);
      assertClean(await post("/api/list_thing", "{}"), "raw-response");
      // Echoes of what a caller sent: an unknown tool name, a method, a header version.
      const legacy = { "mcp-protocol-version": "2025-11-25" };
      for (
        const body of [
          '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\ud800\\u001b[2Jx"}}',
          '{"jsonrpc":"2.0","id":2,"method":"\\u001b]0;t\\u0007\\udc00"}',
          '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x\\u001b[2J\\ud800"}}',
        ]
      ) {
        assertClean(await post("/mcp", body, legacy), body);
      }
      assertClean(await post(`/api/${encodeURIComponent("\u001b[2J")}`, "{}"), "tool API name");
    },
  );
});
