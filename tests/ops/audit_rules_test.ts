/**
 * One audit line per decision, each with its own rule name, through the
 * shipped CLI: every policy refusal says what it refused (a dot segment, a
 * separator, a metacharacter, a control character, ill-formed text, an empty
 * value, a value too long or encoded too deep, two exclusive inputs, a
 * `restrict` glob) instead of all being `restrict`; `resources/read` and
 * `prompts/get` write a line when they serve and when they refuse. The lines
 * come in the order of the decisions, exactly one each.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { postMcp } from "../support/raw_upstream.ts";

const AUDIT_EVENTS = new Set(["tool_call", "refused", "resource_read", "prompt_get"]);

Deno.test("weir serve: each decision writes one audit line naming its own rule", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(
    `resource "policy" uri="docs://policy" { audience "assistant"; text "Be kind."; }
prompt "triage" { argument "id" required=#true; text "Look at {id}."; }
wrap ward mcp audited {
    base-url "${upstream.url}"
    auth none
    restrict board matches "team-*" "ops-*b"
    can get item { path "/boards/{board}/items/{id}"; }
    can get file { path "/files/{path}"; param "path" slashes="segments" max-length=20; }
    can list item { path "/items"; query { field "before" type="string"; field "after" type="string"; mutually-exclusive "before" "after"; }; }
}
`,
  );
  const server = await serveHttp(file);
  const api = (tool: string, body: string) =>
    fetch(`${server.url}/api/${tool}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }).then(async (r) => ({ status: r.status, text: await r.text() }));
  const expected: [string, string][] = []; // [event, rule or outcome]
  const decide = async (event: string, rule: string, call: () => Promise<unknown>) => {
    await call();
    expected.push([event, rule]);
  };
  try {
    await decide("tool_call", "ok", () => api("get_item", `{"board":"team-a","id":"1"}`));
    // Outside the globs as sent: the advertised pattern (the core's schema check).
    await decide("refused", "schema", () => api("get_item", `{"board":"sales","id":"1"}`));
    // Inside as sent, outside once percent-decoded ("ops-+"): the guard's restrict.
    await decide("refused", "restrict", () => api("get_item", `{"board":"ops-%2b","id":"1"}`));
    await decide(
      "refused",
      "dot_segment",
      () => api("get_item", `{"board":"team-a","id":"%252e%252e"}`),
    );
    await decide("refused", "separator", () => api("get_item", `{"board":"team-a","id":"a%2Fb"}`));
    await decide("refused", "separator", () => api("get_item", `{"board":"team-a","id":"a/b"}`));
    await decide(
      "refused",
      "metacharacter",
      () => api("get_item", `{"board":"team-a","id":"a;b"}`),
    );
    await decide(
      "refused",
      "metacharacter",
      () => api("get_item", `{"board":"team-a","id":"a%3Bb"}`),
    );
    await decide(
      "refused",
      "control_character",
      () => api("get_item", `{"board":"team-a","id":"a%0Ab"}`),
    );
    await decide(
      "refused",
      "ill_formed_text",
      () => api("get_item", `{"board":"team-a","id":"a\\ud800"}`),
    );
    await decide("refused", "empty_value", () => api("get_file", `{"path":"docs//x"}`));
    await decide("refused", "dot_segment", () => api("get_file", `{"path":"docs/../x"}`));
    await decide(
      "refused",
      "schema", // the advertised maxLength refuses it first
      () => api("get_file", `{"path":"${"a/".repeat(12)}b"}`),
    );
    let deep = "..";
    for (let i = 0; i < 18; i++) deep = deep.replaceAll("%", "%25").replace(/\./g, "%2e");
    await decide(
      "refused",
      "encoded_too_deep",
      () => api("get_item", `{"board":"team-a","id":"${deep}"}`),
    );
    await decide(
      "refused",
      "schema", // the advertised exclusive pair refuses it first
      () => api("list_item", `{"before":"a","after":"b"}`),
    );
    await decide(
      "resource_read",
      "",
      () =>
        postMcp(server.url, {
          jsonrpc: "2.0",
          id: 1,
          method: "resources/read",
          params: { uri: "docs://policy" },
        }),
    );
    await decide(
      "refused",
      "unknown_resource",
      () =>
        postMcp(server.url, {
          jsonrpc: "2.0",
          id: 2,
          method: "resources/read",
          params: { uri: "docs://nope" },
        }),
    );
    await decide(
      "prompt_get",
      "",
      () =>
        postMcp(server.url, {
          jsonrpc: "2.0",
          id: 3,
          method: "prompts/get",
          params: { name: "triage", arguments: { id: "7" } },
        }),
    );
    await decide(
      "refused",
      "unknown_prompt",
      () =>
        postMcp(server.url, {
          jsonrpc: "2.0",
          id: 4,
          method: "prompts/get",
          params: { name: "nope" },
        }),
    );
    await decide(
      "refused",
      "schema",
      () =>
        postMcp(server.url, {
          jsonrpc: "2.0",
          id: 5,
          method: "prompts/get",
          params: { name: "triage", arguments: {} },
        }),
    );
  } finally {
    assert.equal(await server.stop(), 0);
    await upstream.close();
    await Deno.remove(file);
  }
  const lines = server.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) =>
    JSON.parse(l)
  )
    .filter((l) => AUDIT_EVENTS.has(l.event));
  const seen = lines.map((l) => [l.event, (l.rule ?? l.outcome ?? "") as string]);
  assert.deepEqual(seen, expected, server.stderr());
  for (const l of lines) {
    assert.ok(["allow", "refuse"].includes(l.decision), JSON.stringify(l));
    assert.ok(!JSON.stringify(l).includes("docs://nope"), "a made-up URI is not logged");
  }
  assert.equal(upstream.requests.length, 1, "only the allowed call reached the upstream");
});
