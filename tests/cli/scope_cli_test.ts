/** `scope` through the real CLI: describe shows it, lint points at a bad one. */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { runCli, tempGuardfile } from "../support/cli.ts";

const GUARDFILE = `wrap ward mcp t {
  base-url "t.example"
  auth none
  can get ticket {
    path "/t/{id}"
    scope "tickets:read"
  }
  can create ticket {
    path "/t"
    body "title"
    scope "tickets:write" "tickets:read"
  }
}
`;

Deno.test("describe shows each grant's scopes, in text and JSON", async () => {
  const file = await tempGuardfile(GUARDFILE);
  try {
    const text = await runCli(["describe", file]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /create_ticket {2}POST \/t\n {2}needs scope tickets:write tickets:read\n/,
    );
    assert.match(text.stdout, /get_ticket {2}GET \/t\/\{id\}\n {2}needs scope tickets:read\n/);
    const json = await runCli(["describe", "--format", "json", file]);
    const tools = JSON.parse(json.stdout).tools as { name: string; scopes: string[] }[];
    assert.deepEqual(
      Object.fromEntries(tools.map((t) => [t.name, t.scopes])),
      {
        create_ticket: ["tickets:write", "tickets:read"],
        get_ticket: ["tickets:read"],
        weir_info: [],
      },
    );
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("lint names the file, line and column of a malformed scope, exit 1", async () => {
  const file = await tempGuardfile(GUARDFILE.replace(`"tickets:read"\n  }`, `"tickets read"\n  }`));
  try {
    const r = await runCli(["lint", file]);
    assert.equal(r.code, 1);
    assert.ok(
      r.stderr.includes(`${file}:6:5`),
      `expected ${file}:6:5 in:\n${r.stderr}`,
    );
    assert.match(r.stderr, /scope "tickets read" is not an OAuth scope/);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("describe --format openapi: each operation lists its scopes; the document stays valid OpenAPI 3.1", async () => {
  const file = await tempGuardfile(GUARDFILE);
  try {
    const r = await runCli(["describe", "--format", "openapi", file]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    const create = doc.paths["/api/create_ticket"].post;
    // Scopes mean OAuth: the only scheme declared, required (no anonymous alternative).
    assert.deepEqual(create.security, [{ oauth: ["tickets:write", "tickets:read"] }]);
    assert.deepEqual(Object.keys(doc.components.securitySchemes), ["oauth"]);
    assert.deepEqual(create["x-weir"].scopes, ["tickets:write", "tickets:read"]);
    assert.ok("401" in create.responses);
    assert.equal(doc.components.securitySchemes.oauth.scheme, "bearer");
    assert.equal(doc.paths["/api/weir_info"].post.security, undefined, "no scope, no override");
  } finally {
    await Deno.remove(file);
  }
});
