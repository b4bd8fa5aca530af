/**
 * One audit line per decision, through the real CLI: every refusal kind names
 * its rule, an allowed call names its outcome, status, duration and upstream
 * status, and no line carries an argument value or a secret. `--log-level`
 * and `WEIR_LOG_LEVEL` filter; control characters are escaped.
 */
import assert from "node:assert/strict";
import { callApi, rawStatus, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

const SECRET = "audit-secret-7f3a91";
const MARKER = "zz-argument-value-zz";

const guardfile = (upstream: string) =>
  tempGuardfile(
    `withhold "delete_thing" { reason "Things are kept."; }
rate-limit "2/1m"
reject-empty-argument "create_thing" field="title"
wrap ward mcp audited {
  base-url "${upstream}"
  auth bearer { value env "AUDIT_TOKEN" }
  restrict id matches "t-*" "u-*b"
  can get thing { path "/t/{id}"; }
  can create thing { path "/t"; body "title" "size"; }
}
`,
  );

/** The JSON lines of a stderr text. */
function lines(stderr: string): Record<string, unknown>[] {
  return stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

Deno.test("an audit line for every decision, never a value or a secret", async (t) => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const file = await guardfile(upstream.url);
  const server = await serveHttp(file, {
    env: { AUDIT_TOKEN: SECRET, INBOUND: "inbound-token-123456" },
    // rate-limit 2/1m refills a call every 30 s: the call past the burst would wait for most of
    // that, past a 10 s deadline as surely as a 2 s one, while the calls that succeed get room
    // on a loaded machine.
    extra: ["--upstream-timeout", "10000", "--inbound-token-env", "INBOUND"],
  });
  const auth = { authorization: "Bearer inbound-token-123456", "content-type": "application/json" };
  const api = (tool: string, args: unknown, headers: Record<string, string> = auth) =>
    fetch(`${server.url}/api/${tool}`, {
      method: "POST",
      headers,
      body: JSON.stringify(args),
    }).then(async (r) => ({ status: r.status, body: await r.text() }));
  try {
    assert.equal((await api("get_thing", { id: `t-${MARKER}` })).status, 200);
    // Outside the globs as sent: the advertised pattern refuses it (a schema refusal).
    assert.equal((await api("get_thing", { id: MARKER })).status, 400);
    // Inside as sent, outside once decoded ("u-...+"): restrict.
    assert.equal((await api("get_thing", { id: `u-${MARKER}%2b` })).status, 403); // restrict
    assert.equal((await api("get_thing", { id: 42, note: MARKER })).status, 400); // schema
    assert.equal((await api("delete_thing", {})).status, 403); // withheld
    assert.equal((await api(`no_such_${"x".repeat(100)}`, {})).status, 404); // unknown tool
    assert.equal((await api("create_thing", { title: " " })).status, 400); // blank argument
    // The refusals above spent no slot of the two (docs/architecture.md, the control pipeline):
    // the second call that passes its checks takes the last one, the third is refused.
    assert.equal((await api("get_thing", { id: "t-2" })).status, 200);
    assert.equal((await api("get_thing", { id: "t-3" })).status, 429); // rate limit
    assert.equal(
      (await api("get_thing", { id: "t-3" }, { ...auth, authorization: "Bearer no" }))
        .status,
      401,
    ); // auth
    assert.equal(
      (await api("get_thing", {}, { ...auth, origin: "https://evil.example" })).status,
      403,
    ); // origin
    const { port } = new URL(server.url);
    const hostStatus = await rawStatus(
      server.url,
      `POST /mcp HTTP/1.1\r\nHost: evil.example:${port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(hostStatus, 403); // host
    const big = await fetch(`${server.url}/api/get_thing`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ id: "t-1", pad: "x".repeat(2 * 1024 * 1024) }),
    }).catch(() => null);
    assert.equal(big?.status ?? 413, 413); // size (the connection may be reset after the 413)
    await big?.body?.cancel();
  } finally {
    assert.equal(await server.stop(), 0);
    await upstream.close();
  }
  const log = lines(server.stderr());
  const refused = log.filter((l) => l.event === "refused");

  await t.step("each refusal kind names its rule and status", () => {
    const rules = new Map(refused.map((l) => [l.rule, l]));
    for (
      const [rule, status] of [
        ["restrict", 403],
        ["schema", 400],
        ["withheld", 403],
        ["unknown_tool", 404],
        ["blank_argument", 400],
        ["rate_limit", 429],
        ["auth", 401],
        ["origin", 403],
        ["host", 403],
        ["size", 413],
      ] as const
    ) {
      const line = rules.get(rule);
      assert.ok(line, `no refused line with rule ${rule} in:\n${server.stderr()}`);
      assert.equal(line.status, status, rule);
      assert.equal(line.decision, "refuse");
      assert.equal(line.level, "warn");
    }
    const unknown = rules.get("unknown_tool")!;
    assert.ok((unknown.tool as string).length <= 64, "a client-chosen name is clipped");
  });

  await t.step("an allowed call: tool, outcome, status, duration, upstream status", () => {
    const ok = log.find((l) => l.event === "tool_call" && l.outcome === "ok");
    assert.ok(ok, server.stderr());
    assert.equal(ok.decision, "allow");
    assert.equal(ok.tool, "get_thing");
    assert.equal(ok.status, 200);
    assert.equal(ok.upstream_status, 200);
    assert.equal(typeof ok.duration_ms, "number");
    assert.equal(ok.level, "info");
  });

  await t.step("no argument value, secret or inbound token in any line", () => {
    const text = server.stderr();
    assert.doesNotMatch(text, new RegExp(MARKER));
    assert.ok(!text.includes(SECRET));
    assert.ok(!text.includes("inbound-token-123456"));
    assert.ok(!text.includes("Bearer no"));
  });
});

Deno.test("--log-level and WEIR_LOG_LEVEL filter lines; a bad level is a usage error", async () => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const file = await guardfile(upstream.url);
  try {
    for (
      const [extra, env] of [
        [["--log-level", "warn"], {}],
        [[], { WEIR_LOG_LEVEL: "warn" }],
        [["--log-level", "WARN"], { WEIR_LOG_LEVEL: "debug" }],
      ] as [string[], Record<string, string>][]
    ) {
      const server = await serveHttp(file, { env: { AUDIT_TOKEN: SECRET, ...env }, extra });
      try {
        // serving is logged at info: it is filtered; serveHttp finds the address another way
        assert.equal((await callApi(server.url, "get_thing", { id: "t-1" })).status, 200);
        assert.equal((await callApi(server.url, "get_thing", { id: "x" })).status, 400);
      } finally {
        assert.equal(await server.stop(), 0);
      }
      const log = lines(server.stderr());
      assert.ok(!log.some((l) => l.event === "tool_call" && l.outcome === "ok"), "info filtered");
      assert.ok(log.some((l) => l.rule === "schema"), "warn kept");
    }
  } finally {
    await upstream.close();
  }
  const bad = await runCli(["serve", file, "--stdio", "--log-level", "loud"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--log-level: unknown level "loud"; use debug, info, warn or error/);
  const badEnv = await runCli(["serve", file, "--stdio"], { env: { WEIR_LOG_LEVEL: "chatty" } });
  assert.equal(badEnv.code, 2);
  assert.match(badEnv.stderr, /WEIR_LOG_LEVEL: unknown level "chatty"/);
});

Deno.test("control characters in a logged field are escaped: one line stays one line", async () => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const server = await serveHttp(await guardfile(upstream.url), { env: { AUDIT_TOKEN: SECRET } });
  try {
    const name = "evil\u0085\u2028\u009b[31mred\nline";
    const r = await fetch(`${server.url}/api/${encodeURIComponent(name)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(r.status, 404);
    await r.body?.cancel();
  } finally {
    await server.stop();
    await upstream.close();
  }
  const text = server.stderr();
  const line = text.split("\n").find((l) => l.includes("unknown_tool"));
  assert.ok(line, text);
  assert.match(line, /evil\\u0085\\u2028\\u009b\[31mred\\nline/);
  assert.doesNotMatch(text, /[\u0080-\u009f\u2028\u2029]/);
});
