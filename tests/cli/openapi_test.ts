/**
 * `weir describe --format openapi`, run as a user runs it: the document of
 * every shipped guardfile validates as OpenAPI 3.1 (by
 * `@seriousme/openapi-schema-validator`, which checks the document against
 * the official OAS 3.1 schema), every schema in it is a valid JSON Schema
 * 2020-12 (Ajv's meta-schema check), there is one `POST /api/<tool>` per tool
 * `lint` lists, withheld tools are deprecated with their reason; and against a
 * served guardfile, each answer's status is one the document lists for that
 * route, with a body its schema accepts.
 */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020Import from "ajv/dist/2020.js";
import { runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

// deno-lint-ignore no-explicit-any
type Json = any;
interface AjvLike {
  validateSchema(schema: unknown): boolean;
  compile(schema: unknown): ((data: unknown) => boolean) & { errors?: unknown };
  errors?: unknown;
}
const Ajv2020 = Ajv2020Import as unknown as new (o: Record<string, unknown>) => AjvLike;
const ajv = new Ajv2020({ strict: false, allErrors: true });

// A guardfile that wraps an MCP server describes what that server lists, so it connects: its
// documents are checked against a local server in tests/e2e/mcp_wrap_examples_test.ts.
const EXAMPLES = [...Deno.readDirSync("guardfiles")]
  .filter((e) => e.name.endsWith(".mcp.kdl"))
  .filter((e) => !/^\s*mcp-server /m.test(Deno.readTextFileSync(`guardfiles/${e.name}`)))
  .map((e) => `guardfiles/${e.name}`)
  .sort();

async function openapi(file: string): Promise<Json> {
  const r = await runCli(["describe", "--format", "openapi", file], {
    env: { AWS_REGION: "us-east-1" },
  });
  assert.equal(r.code, 0, `${file}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Every schema of the document: request bodies and responses. */
function schemasOf(doc: Json): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const op = item.post;
    out.push([`${path} request`, op.requestBody.content["application/json"].schema]);
    for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
      out.push([`${path} ${status}`, res.content["application/json"].schema]);
    }
  }
  return out;
}

for (const file of EXAMPLES) {
  Deno.test(`describe --format openapi: ${file} is a valid OpenAPI 3.1 document`, async () => {
    const doc = await openapi(file);
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(doc.openapi, "3.1.0");
    for (const [where, schema] of schemasOf(doc)) {
      assert.ok(ajv.validateSchema(schema), `${where}: ${JSON.stringify(ajv.errors)}`);
      ajv.compile(schema);
    }
    const lint = await runCli(["lint", "--format", "json", file], {
      env: { AWS_REGION: "us-east-1" },
    });
    const tools = JSON.parse(lint.stdout).files[0].tools as { name: string; kind: string }[];
    assert.deepEqual(
      Object.keys(doc.paths).sort(),
      tools.map((t) => `/api/${t.name}`).sort(),
      "one route per served tool",
    );
    const ids = Object.values(doc.paths as Record<string, Json>).map((p) => p.post.operationId);
    assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
    for (const t of tools) {
      const op = doc.paths[`/api/${t.name}`].post;
      assert.ok(op.requestBody.content["application/json"].schema, t.name);
      if (t.kind === "withheld") {
        assert.equal(op.deprecated, true, `${t.name} is marked deprecated`);
        assert.match(op.description, /^NOT AVAILABLE: withheld by policy\. \S/);
        assert.ok(op["x-weir"].withheld.reason.length > 0);
        assert.ok(!("200" in op.responses), "a withheld tool never answers 200");
      } else {
        assert.equal(op.deprecated, undefined);
        assert.ok("200" in op.responses);
      }
    }
  });
}

Deno.test("openapi: the schemas are the served ones; opt-outs, rules and limits show", async () => {
  const doc = await openapi("guardfiles/prometheus.mcp.kdl");
  const query = doc.paths["/api/get_query"].post;
  const schema = query.requestBody.content["application/json"].schema;
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(schema.required, ["promql"]);
  assert.equal(schema.properties.promql.maxLength, 4000);
  assert.deepEqual(schema.properties.time.type, ["string", "null"]);
  assert.deepEqual(query["x-weir"].metacharactersAllowed, ["promql"]);
  assert.deepEqual(query["x-weir"].upstream, { method: "GET", path: "/api/v1/query" });
  assert.match(query.description, /Metacharacters allowed in: promql/);
  assert.ok("429" in query.responses, "a rate-limited guardfile documents 429");
  const targets = doc.paths["/api/list_targets"].post;
  assert.equal(targets["x-weir"].cacheTtlMs, 15_000);
  assert.deepEqual(
    targets.requestBody.content["application/json"].schema.properties.state.enum,
    ["active", "dropped", "any", null],
  );
  const ok = query.responses["200"].content["application/json"].schema;
  assert.deepEqual(ok.properties.structuredContent.required, ["coverage", "result"]);
  const demo = await openapi("guardfiles/demo.mcp.kdl");
  assert.ok(!("429" in demo.paths["/api/get_ticket"].post.responses), "no rate-limit, no 429");
});

Deno.test("openapi: every answer of a served guardfile is a documented status and body", async () => {
  const upstream = await startRecorder();
  const shipped = await Deno.readTextFile("guardfiles/github-contents.mcp.kdl");
  const file = await tempGuardfile(
    shipped.replace(`base-url "https://api.github.com"`, `base-url "${upstream.url}"`),
  );
  const doc = await openapi(file);
  const server = await serveHttp(file, { env: { GITHUB_TOKEN: "ghp_openapi_test_token_1" } });
  const seen = new Set<string>();
  const check = async (tool: string, body: string, contentType = "application/json") => {
    const res = await fetch(`${server.url}/api/${tool}`, {
      method: "POST",
      headers: { "content-type": contentType },
      body,
    });
    const answer = await res.json();
    const documented = doc.paths[`/api/${tool}`].post.responses[String(res.status)];
    assert.ok(documented, `${tool} answered ${res.status}, which the document does not list`);
    const validate = ajv.compile(documented.content["application/json"].schema);
    assert.ok(validate(answer), `${tool} ${res.status}: ${JSON.stringify(validate.errors)}`);
    seen.add(`${tool} ${res.status}`);
  };
  const args = { owner: "acme-docs", repo: "handbook", path: "docs/intro.md" };
  try {
    await check("get_contents", JSON.stringify(args));
    await check("get_contents", JSON.stringify({ ...args, path: "docs/../x" }));
    await check("get_contents", JSON.stringify({ ...args, extra: 1 }));
    await check("get_contents", "[1]");
    await check("get_contents", JSON.stringify(args), "text/plain");
    await check("get_readme", JSON.stringify({ owner: "acme-docs", repo: "handbook" }));
    await check("set_contents", JSON.stringify(args));
    await check("weir_info", "{}");
  } finally {
    await server.stop();
    await upstream.close();
  }
  assert.deepEqual([...seen].sort(), [
    "get_contents 200",
    "get_contents 400",
    "get_contents 403",
    "get_contents 415",
    "get_readme 200",
    "set_contents 403",
    "weir_info 200",
  ]);
});

Deno.test("openapi: a confirm-gated grant documents no 200, and the tool API refuses it", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(`confirm "delete_note" message="Delete this note for good?"
wrap ward mcp notes {
    base-url "${upstream.url}"
    auth none
    can get note { path "/notes/{id}"; }
    can delete note { path "/notes/{id}"; }
}
`);
  const doc = await openapi(file);
  assert.equal((await new Validator().validate(doc)).valid, true);
  const del = doc.paths["/api/delete_note"].post;
  assert.ok(!("200" in del.responses), "the tool API never runs a gated tool");
  assert.ok("403" in del.responses);
  assert.match(del.responses["403"].description, /confirmation_impossible/);
  assert.deepEqual(del["x-weir"].confirm, { message: "Delete this note for good?" });
  assert.match(del.description, /Confirm-gated: a person is asked "Delete this note for good\?"/);
  assert.ok("200" in doc.paths["/api/get_note"].post.responses);
  const server = await serveHttp(file);
  try {
    const res = await fetch(`${server.url}/api/delete_note`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "n1" }),
    });
    const answer = await res.json();
    assert.equal(res.status, 403);
    const validate = ajv.compile(del.responses["403"].content["application/json"].schema);
    assert.ok(validate(answer), JSON.stringify(validate.errors));
    assert.equal(upstream.requests.length, 0, "nothing reached the upstream");
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("openapi: declares only the inbound authentication the guardfile uses", async () => {
  const grant =
    `wrap ward mcp t {\n  base-url "http://127.0.0.1:9"\n  auth none\n  can get item {\n` +
    `    path "/items/{id}"\n    SCOPE  }\n}\n`;
  const plain = await openapi(await tempGuardfile(grant.replace("SCOPE", "")));
  assert.equal(plain.components?.securitySchemes, undefined, "no scheme when none is used");
  assert.equal(plain.security, undefined);
  assert.match(plain.info.description, /--inbound-token-env VAR/, "says how serve adds one");

  const tokens = await openapi(
    await tempGuardfile(
      `inbound-token ci { value env "CI_TOKEN"; tools "get_item"; }\n` +
        grant.replace("SCOPE", ""),
    ),
  );
  assert.deepEqual(Object.keys(tokens.components.securitySchemes), ["inboundToken"]);
  assert.deepEqual(tokens.security, [{ inboundToken: [] }]);

  const oauth = await openapi(
    await tempGuardfile(
      `oauth issuer="https://id.example.com" resource="https://mcp.example.com/mcp"\n` +
        grant.replace("SCOPE", `scope "items:read"\n`),
    ),
  );
  assert.deepEqual(Object.keys(oauth.components.securitySchemes), ["oauth"]);
  assert.deepEqual(oauth.security, [{ oauth: [] }]);
  assert.deepEqual(oauth.paths["/api/get_item"].post.security, [{ oauth: ["items:read"] }]);
  for (const doc of [plain, tokens, oauth]) {
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  }
});
