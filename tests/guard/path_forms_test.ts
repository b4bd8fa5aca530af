/**
 * A path value is decided by every form an upstream might read it as (issue
 * 22, kind 10), beyond percent-decoding: a `;` path parameter dropped (Tomcat
 * and Spring resolve `..;x` as `..`, notably behind a proxy that decodes
 * `%3B`), and the Unicode compatibility form (NFKC: fullwidth `．`, `／`, `＼`,
 * the leaders `․` and `‥`; frameworks that normalize paths and Windows'
 * best-fit conversion read them so). Generated spellings of dot segments and
 * separators in those forms, raw or percent-encoded, are refused in every path
 * mode with nothing sent, even where metacharacters are allowed; text that only
 * looks similar (`...`, `a..b`, fullwidth letters, a `;` inside a name) is sent
 * as written. Through the public module API (tool API) and the shipped CLI.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { createToolApiHandler, McpServer } from "../../mod.ts";
import { createGuard, parseGuardfile } from "../../src/guard/mod.ts";
import { isDotPiece } from "../../src/guardfile/decoded.ts";
import { type Recorder, startRecorder } from "../support/upstream.ts";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";

const TEXT = `wrap ward mcp t {
    base-url "UPSTREAM"
    auth none
    can get one { path "/one/{id}"; param "id" metacharacters="allow"; }
    can get tree { path "/tree/{path}"; param "path" slashes="segments" metacharacters="allow"; }
    can get flat { path "/flat/{key}"; param "key" slashes="encoded" metacharacters="allow"; }
}
`;

function guardApi(upstream: Recorder) {
  const { guardfile, diagnostics } = parseGuardfile(
    TEXT.replace("UPSTREAM", upstream.url),
    "t.mcp.kdl",
  );
  assert.ok(guardfile, JSON.stringify(diagnostics));
  const server = new McpServer({
    ...createGuard(guardfile, {
      resolver: { env: () => undefined, readFile: () => Promise.reject(new Error("none")) },
      log: () => {},
    }),
    log: () => {},
  });
  const api = createToolApiHandler(server, { authorize: () => true, allowedOrigins: [] });
  return async (tool: string, args: Record<string, unknown>) => {
    const before = upstream.requests.length;
    const r = await api(
      new Request(`http://127.0.0.1/api/${tool}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(args),
      }),
    );
    const body = await r.text();
    const text = r.status === 200 ? body : JSON.parse(body).content[0].text as string;
    return {
      status: r.status,
      text,
      sent: upstream.requests.length - before,
      path: upstream.requests.at(-1)?.path,
    };
  };
}

const pct = (text: string) =>
  [...new TextEncoder().encode(text)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");

/** One dot, as a path might spell it. */
const dot = fc.constantFrom(".", "\uff0e", "%2e", "%2E", pct("\uff0e"));
/** A dot segment, with an optional `;` parameter. */
const dotSegment = fc.tuple(
  fc.oneof(
    dot.map((d) => d),
    fc.tuple(dot, dot).map(([a, b]) => a + b),
    fc.constantFrom("\u2024", "\u2025", "\u2024\u2024", pct("\u2025")),
  ),
  fc.constantFrom("", ";", ";x", ";jsessionid=1", "%3B", "%3bx"),
).map(([d, p]) => d + p);
/** A separator only Unicode normalization (or its percent-encoding) makes. */
const separator = fc.constantFrom("\uff0f", "\uff3c", pct("\uff0f"), pct("\uff3c"))
  .map((s) => `a${s}b`);

Deno.test("isDotPiece: dot segments with parameters and compatibility characters, not look-alikes", () => {
  for (
    const yes of [".", "..", "..;", "..;x=1", ".;", "\uff0e\uff0e", "\u2025", "\u2024", "\u2024."]
  ) {
    assert.ok(isDotPiece(yes), yes);
  }
  for (const no of ["...", "a..", "..a", ";..", "x;..", "\u2026", "", "a", "ｔ"]) {
    assert.ok(!isDotPiece(no), no);
  }
});

Deno.test("dot segments and separators in every form an upstream reads are refused in every mode, nothing sent", async () => {
  const upstream = await startRecorder();
  const call = guardApi(upstream);
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          dotSegment.map((v) => ({ v, rule: /dot segment/ })),
          separator.map((v) => ({ v, rule: /another path/ })),
        ),
        fc.constantFrom("one", "tree", "flat"),
        async ({ v, rule }, mode) => {
          const args = mode === "one"
            ? { id: v }
            : mode === "tree"
            ? { path: `docs/${v}/x` }
            : { key: v };
          const r = await call(`get_${mode}`, args);
          assert.equal(r.sent, 0, `${mode} ${v}: sent ${r.path}`);
          assert.equal(r.status, 403, `${mode} ${v}: ${r.text}`);
          assert.match(r.text, rule, `${mode} ${v}`);
        },
      ),
      { numRuns: 400 },
    );
  } finally {
    await upstream.close();
  }
});

Deno.test("text that only looks like a dot segment or a separator is sent as written", async () => {
  const upstream = await startRecorder();
  const call = guardApi(upstream);
  try {
    for (
      const v of ["...", "a..b", "..a", "ｔｉｃｋｅｔ", "a;b", "x;..", "ａ．ｂ", "（注）", "\u2026"]
    ) {
      const r = await call("get_one", { id: v });
      assert.equal(r.status, 200, `${v}: ${r.text}`);
      assert.equal(r.path, `/one/${encodeURIComponent(v).replaceAll(";", "%3B")}`, v);
    }
  } finally {
    await upstream.close();
  }
});

Deno.test("weir serve and lint: ..;x and fullwidth dots are dot segments through the CLI", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(TEXT.replace("UPSTREAM", upstream.url));
  const server = await serveHttp(file, { env: { PATH: Deno.env.get("PATH") ?? "" } });
  try {
    for (const v of ["..;x", "\uff0e\uff0e", "\u2025", "a\uff0fb"]) {
      const r = await callApi(server.url, "get_one", { id: v });
      assert.equal(r.status, 403, `${v}: ${r.text}`);
    }
    assert.equal(upstream.requests.length, 0);
  } finally {
    await server.stop();
    await upstream.close();
  }
  // A literal segment of the path template is held to the same forms at lint.
  for (const segment of ["..;x", "\uff0e\uff0e", "\u2025"]) {
    const lint = await runCli([
      "lint",
      await tempGuardfile(`wrap ward mcp t {
    base-url "https://api.example.com"
    auth none
    can get one { path "/a/${segment}/b"; }
}
`),
    ]);
    assert.equal(lint.code, 1, `${segment}: ${lint.stderr}`);
    assert.match(lint.stderr, /has a "\." or "\.\." segment/);
  }
});
