/**
 * An opaque token checked by RFC 7662 introspection passes only when the
 * authorization server says it is active, issued by the issuer, for this
 * resource (`aud`, RFC 8707), and within its time (issue 34 item 10: a
 * mutation that dropped the audience check survived: no test introspected a
 * token for another resource). Against a local authorization server.
 */
import assert from "node:assert/strict";
import { createTokenVerifier, discoverIssuer, TokenError } from "../../src/oauth/access_tokens.ts";

const RESOURCE = "https://mcp.example.com/mcp";

Deno.test("introspection: active, from the issuer, for this resource and in time, or refused saying which", async () => {
  const answers = new Map<string, Record<string, unknown>>();
  const where = { issuer: "" };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/.well-known/oauth-authorization-server") {
      return Response.json({
        issuer: where.issuer,
        introspection_endpoint: `${where.issuer}/introspect`,
      });
    }
    const token = new URLSearchParams(await request.text()).get("token") ?? "";
    return Response.json(answers.get(token) ?? { active: false });
  });
  const issuer = where.issuer = `http://127.0.0.1:${server.addr.port}`;
  const now = Math.floor(Date.now() / 1000);
  const good = { active: true, iss: issuer, aud: RESOURCE, sub: "alice", exp: now + 300 };
  answers.set("good", good);
  answers.set("good-list", { ...good, aud: ["https://other.example", RESOURCE] });
  answers.set("good-no-iss", { ...good, iss: undefined });
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ["other-aud", { ...good, aud: "https://other.example/mcp" }, /aud does not name this resource/],
    [
      "aud-list-without",
      { ...good, aud: ["https://a.example", "https://b.example"] },
      /aud does not/,
    ],
    ["no-aud", { ...good, aud: undefined }, /aud does not name this resource/],
    ["aud-prefix", { ...good, aud: `${RESOURCE}/more` }, /aud does not name this resource/],
    ["other-iss", { ...good, iss: "https://evil.example" }, /iss is not the issuer/],
    ["expired", { ...good, exp: now - 3600 }, /has expired/],
    ["not-yet", { ...good, nbf: now + 3600 }, /not valid yet/],
    ["inactive", { ...good, active: false }, /not active/],
  ];
  for (const [token, claims] of refused) answers.set(token, claims);
  try {
    const verify = createTokenVerifier({
      metadata: await discoverIssuer(issuer),
      resource: RESOURCE,
      introspection: { clientId: "weir", clientSecret: "weir-client-secret-0123" },
    });
    for (const token of ["good", "good-list", "good-no-iss"]) {
      assert.equal((await verify(token)).subject, "alice", token);
    }
    for (const [token, , message] of refused) {
      await assert.rejects(
        verify(token),
        (e: Error) => e instanceof TokenError && message.test(e.message),
        token,
      );
    }
  } finally {
    await server.shutdown();
  }
});
