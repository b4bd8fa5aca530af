/**
 * Inbound auth fails closed: beyond loopback, `serve --http` refuses to start
 * without `--inbound-token-env` unless `--no-inbound-auth` is explicit; one
 * variable carries several tokens for rotation; weak tokens are refused at
 * start-up without being echoed.
 */
import assert from "node:assert/strict";
import { runCli, serveHttp } from "../support/cli.ts";
import { GENEROUS_MS } from "../support/wait.ts";
import { bearerTokenCheck } from "../../src/inbound/static_tokens.ts";

const DEMO = "guardfiles/demo.mcp.kdl";
const NEW = "tok-new-aaaaaaaaaaaaaaaa";
const OLD = "tok-old-bbbbbbbbbbbbbbbb";

const info = (url: string, authorization?: string) =>
  fetch(`${url}/api/weir_info`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
    body: "{}",
  }).then(async (r) => {
    await r.body?.cancel();
    return r.status;
  });

Deno.test("beyond loopback without a token: refused at start-up (exit 2)", async () => {
  for (const host of ["0.0.0.0", "[::]", "192.0.2.1"]) {
    const r = await runCli(["serve", DEMO, "--http", `${host}:0`]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /listening beyond loopback needs inbound authentication/);
    assert.match(r.stderr, /--inbound-token-env VAR/);
    assert.match(r.stderr, /--no-inbound-auth/);
  }
  for (const host of ["127.0.0.1", "127.1", "localhost"]) {
    const server = await serveHttp(DEMO, { extra: ["--http", `${host}:0`] });
    assert.equal(await server.stop(), 0, `${host} is loopback: no token needed`);
  }
});

Deno.test("--no-inbound-auth is explicit, logged, and contradicts a token variable", async () => {
  const server = await serveHttp(DEMO, { extra: ["--http", "0.0.0.0:0", "--no-inbound-auth"] });
  try {
    assert.equal(await info(server.url.replace("0.0.0.0", "127.0.0.1")), 200);
  } finally {
    await server.stop();
  }
  assert.match(server.stderr(), /"event":"no_inbound_auth"/);
  const both = await runCli([
    "serve",
    DEMO,
    "--http",
    "0.0.0.0:0",
    "--no-inbound-auth",
    "--inbound-token-env",
    "X",
  ]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /contradict/);
});

Deno.test("one variable, several tokens: each accepted during rotation", async () => {
  const server = await serveHttp(DEMO, {
    env: { WEIR_TOKENS: `${NEW}, ${OLD}\n` },
    extra: ["--http", "0.0.0.0:0", "--inbound-token-env", "WEIR_TOKENS"],
  });
  const url = server.url.replace("0.0.0.0", "127.0.0.1");
  try {
    assert.equal(await info(url, `Bearer ${NEW}`), 200);
    assert.equal(await info(url, `Bearer ${OLD}`), 200);
    assert.equal(await info(url, `bearer ${OLD}`), 200, "the scheme is case-insensitive");
    assert.equal(await info(url), 401);
    assert.equal(await info(url, `Bearer ${NEW}${OLD}`), 401);
    assert.equal(await info(url, `Bearer ${NEW}, ${OLD}`), 401);
    assert.equal(await info(url, `Bearer ${NEW.slice(0, -1)}`), 401);
    assert.equal(await info(url, `Basic ${NEW}`), 401);
  } finally {
    await server.stop();
  }
  assert.ok(!server.stderr().includes(NEW) && !server.stderr().includes(OLD));
  assert.match(server.stderr(), /"rule":"auth"/);
});

Deno.test("a weak or unset token variable stops start-up without echoing it (exit 2, a configuration refusal)", async () => {
  // Bounded: a server that starts with a weak token fails here instead of serving on.
  const short = await runCli(
    ["serve", DEMO, "--http", "127.0.0.1:0", "--inbound-token-env", "WEAK"],
    { env: { WEAK: `${NEW},short-tok` }, limitMs: GENEROUS_MS },
  );
  assert.equal(short.code, 2, `weir serve started with a 9-character token: ${short.stderr}`);
  assert.match(short.stderr, /token 2 is 9 characters; use at least 16/);
  assert.ok(!short.stderr.includes("short-tok"));
  const unset = await runCli(
    ["serve", DEMO, "--http", "127.0.0.1:0", "--inbound-token-env", "NOPE_UNSET_X"],
    { limitMs: GENEROUS_MS },
  );
  assert.equal(unset.code, 2);
  assert.match(unset.stderr, /NOPE_UNSET_X: the variable is not set/);
  const shared = await runCli(
    [
      "serve",
      DEMO,
      "--http",
      "127.0.0.1:0",
      "--inbound-token-env",
      "IN",
      "--admin-token-env",
      "ADM",
    ],
    { env: { IN: NEW, ADM: `${OLD} ${NEW}` }, limitMs: GENEROUS_MS },
  );
  assert.equal(shared.code, 2);
  assert.match(shared.stderr, /an admin token must not also be an inbound token/);
});

Deno.test("bearerTokenCheck: exact match against any configured token only", () => {
  const check = bearerTokenCheck([NEW, OLD]);
  assert.equal(check(`Bearer ${NEW}`), true);
  assert.equal(check(`Bearer ${OLD}`), true);
  // Trailing whitespace is not part of a field value (RFC 9110 section 5.5):
  // an HTTP parser strips it, so the token read is the same token.
  assert.equal(check(`Bearer ${NEW} `), true);
  assert.equal(check(`Bearer ${NEW}x`), false);
  assert.equal(check(`Bearer ${NEW} x`), false);
  assert.equal(check(`Bearer ${NEW.toUpperCase()}`), false);
  assert.equal(check(null), false);
  assert.equal(check(""), false);
  assert.equal(check("Bearer "), false);
});
