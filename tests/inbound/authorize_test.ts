/**
 * Who may call: `authorize` and `allowedOrigins` are required with no
 * defaults (construction throws without them); `authorize` decides from the
 * request line and headers before the body is read; the optional
 * `authorizeBody(request, bytes)` sees the exact bytes received. A refusal
 * is 403 and its reason goes to the log only.
 */
import assert from "node:assert/strict";
import {
  type AuthVerdict,
  createHttpHandler,
  createToolApiHandler,
  type InboundOptions,
  type LogEvent,
} from "../../mod.ts";
import { makeServer, modernHeaders, modernRequest, post } from "../support/mcp.ts";
import { assertValidResponse, LEGACY, MODERN } from "../support/schemas.ts";

function setup(options: Partial<InboundOptions>) {
  const seen: unknown[] = [];
  const { server } = makeServer({
    catalog: { tools: [{ name: "whoami" }], resources: [], prompts: [] },
    dispatch: (_name, _args, ctx) => {
      seen.push(ctx.auth);
      return { content: [{ type: "text", text: JSON.stringify(ctx.auth ?? null) }] };
    },
  });
  const events: LogEvent[] = [];
  const handler = createHttpHandler(server, {
    authorize: () => true,
    allowedOrigins: [],
    log: (event) => events.push(event),
    ...options,
  });
  return { server, handler, events, seen };
}

const callWhoami = () => modernRequest("tools/call", { name: "whoami" });
const whoamiHeaders = (extra: Record<string, string> = {}) =>
  modernHeaders("tools/call", "whoami", extra);

Deno.test("authorize and allowedOrigins are required: construction throws without them", () => {
  const { server } = makeServer({ catalog: { tools: [], resources: [], prompts: [] } });
  const cases: [unknown, RegExp][] = [
    [{ allowedOrigins: [] }, /"authorize" is required.*authorize: \(\) => true/],
    [{ authorize: "yes", allowedOrigins: [] }, /"authorize" is required/],
    [{ authorize: () => true }, /"allowedOrigins" is required.*"any"/],
    [{ authorize: () => true, allowedOrigins: "*" }, /"allowedOrigins" is required/],
    [
      { authorize: () => true, allowedOrigins: [], authorizeBody: true },
      /"authorizeBody" must be a function/,
    ],
    [undefined, /"authorize" is required/],
  ];
  for (const [options, message] of cases) {
    assert.throws(() => createHttpHandler(server, options as InboundOptions), (e: unknown) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, /^createHttpHandler: /);
      assert.match(e.message, message);
      return true;
    });
    assert.throws(() => createToolApiHandler(server, options as InboundOptions), TypeError);
  }
  assert.ok(createHttpHandler(server, { authorize: () => true, allowedOrigins: "any" }));
});

Deno.test("an authorize refusal is 403 Forbidden; the reason goes only to the log", async () => {
  const verdicts: AuthVerdict[] = [
    false,
    { allow: false, reason: "token t0ps3cret expired" },
    "yes" as unknown as AuthVerdict,
  ];
  for (const verdict of verdicts) {
    const { handler, events, seen } = setup({ authorize: () => verdict });
    const response = await post(handler, callWhoami(), whoamiHeaders());
    assert.equal(response.status, 403);
    assert.equal(response.headers.get("connection"), "close", "the unread body is not drained");
    const body = assertValidResponse<
      { error: { message: string; data: { rule: string; status: number } } }
    >(
      [LEGACY, MODERN],
      response.text,
    );
    assert.match(body.error.message, /^Forbidden: .*ask the server's operator for access$/);
    assert.deepEqual(body.error.data, { rule: "auth", status: 403 });
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.doesNotMatch(response.text, /t0ps3cret|expired|neither/);
    assert.equal(events.length, 1);
    assert.equal(events[0].event, "refused");
    assert.deepEqual(seen, []);
  }
  const { handler, events } = setup({
    authorize: () => ({ allow: false, reason: "token t0ps3cret expired" }),
  });
  await post(handler, callWhoami(), whoamiHeaders());
  assert.equal(events[0].reason, "token t0ps3cret expired");
});

Deno.test("authorize sees headers before the body, and its auth reaches dispatch", async () => {
  let bodyUsed: boolean | undefined;
  const { handler, seen } = setup({
    authorize: (request) => {
      bodyUsed = request.bodyUsed;
      const token = request.headers.get("authorization");
      return token === "Bearer good" ? { allow: true, auth: { user: "ada" } } : false;
    },
  });
  const ok = await post(handler, callWhoami(), whoamiHeaders({ authorization: "Bearer good" }));
  assert.equal(ok.status, 200);
  assertValidResponse(MODERN, ok.text, "tools/call");
  assert.equal(bodyUsed, false);
  assert.deepEqual(seen, [{ user: "ada" }]);
  const bad = await post(handler, callWhoami(), whoamiHeaders({ authorization: "Bearer bad" }));
  assert.equal(bad.status, 403);
  assertValidResponse([LEGACY, MODERN], bad.text);
});

Deno.test("an authorize hook that throws is 500 and says nothing of why", async () => {
  const { handler, events } = setup({
    authorize: () => {
      throw new Error("identity provider at 10.0.0.7 unreachable");
    },
  });
  const response = await post(handler, callWhoami(), whoamiHeaders());
  assert.equal(response.status, 500);
  assertValidResponse([LEGACY, MODERN], response.text);
  assert.doesNotMatch(response.text, /10\.0\.0\.7/);
  assert.match(JSON.stringify(events), /10\.0\.0\.7/);
});

Deno.test("authorizeBody gets the exact bytes received, before they are decoded", async () => {
  const received: Uint8Array[] = [];
  const { handler, seen } = setup({
    authorizeBody: (_request, bytes) => {
      received.push(bytes);
      return { allow: true, auth: "signed" };
    },
  });
  // Odd spacing, escapes, key order and a BOM-less UTF-8 multibyte string: a
  // re-encoding would change every one of them.
  const text =
    '{ "params" : {"name":"whoami", "_meta":{"io.modelcontextprotocol/protocolVersion":' +
    '"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}, "x":"\\u00e9\u00e9" },' +
    '\n\t"method":"tools/call","id":1,"jsonrpc":"2.0"}';
  const response = await post(handler, text, whoamiHeaders());
  assert.equal(response.status, 200);
  assertValidResponse(MODERN, response.text, "tools/call");
  assert.deepEqual(received, [new TextEncoder().encode(text)]);
  assert.deepEqual(seen, [undefined], "authorizeBody's verdict does not replace authorize's auth");
});

Deno.test("an authorizeBody refusal is 403 with the reason only in the log, and keeps the connection", async () => {
  const { handler, events, seen } = setup({
    authorizeBody: () => ({ allow: false, reason: "signature mismatch for key k-17" }),
  });
  const response = await post(handler, callWhoami(), whoamiHeaders());
  assert.equal(response.status, 403);
  assert.equal(response.headers.get("connection"), null, "the body was read: nothing to drain");
  assert.doesNotMatch(response.text, /signature|k-17/);
  assertValidResponse([LEGACY, MODERN], response.text);
  assert.equal(events[0].reason, "signature mismatch for key k-17");
  assert.deepEqual(seen, []);

  const failing = setup({
    authorizeBody: () => Promise.reject(new Error("hsm offline")),
  });
  const crashed = await post(failing.handler, callWhoami(), whoamiHeaders());
  assert.equal(crashed.status, 500);
  assertValidResponse([LEGACY, MODERN], crashed.text);
  assert.doesNotMatch(crashed.text, /hsm/);
  assert.match(JSON.stringify(failing.events), /hsm offline/);
});

/**
 * checkBeforeBody answers synchronously for a hook that returns a verdict and
 * waits only for one that returns a promise: both kinds must decide alike.
 */
Deno.test("an authorize hook that returns a promise decides as a synchronous one does", async () => {
  const verdicts: [string, () => AuthVerdict][] = [
    ["allow with auth", () => ({ allow: true, auth: { user: "ada" } })],
    ["refuse 401", () => ({ allow: false, status: 401, challenge: 'Bearer realm="x"' })],
    ["refuse", () => false],
    ["not a verdict", () => "yes" as unknown as AuthVerdict],
  ];
  for (const [what, verdict] of verdicts) {
    const outcomes = [];
    for (const hook of [verdict, () => Promise.resolve().then(verdict)]) {
      const { handler, seen, events } = setup({ authorize: hook });
      const response = await post(handler, callWhoami(), whoamiHeaders());
      outcomes.push({
        status: response.status,
        challenge: response.headers.get("www-authenticate"),
        seen,
        events,
      });
    }
    assert.deepEqual(outcomes[1], outcomes[0], what);
  }
  const { handler, events } = setup({
    authorize: () => Promise.reject(new Error("identity provider at 10.0.0.7 unreachable")),
  });
  const rejected = await post(handler, callWhoami(), whoamiHeaders());
  assert.equal(rejected.status, 500);
  assert.doesNotMatch(rejected.text, /10\.0\.0\.7/);
  assert.match(JSON.stringify(events), /authorize_failed/);
});
