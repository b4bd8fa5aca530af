/**
 * buildScaffold() on small documents of our own, one per rule of the
 * derivation: reserved input names kept with `upstream=` (or a body `map`),
 * renamed path parameters, what is left out with a note and what makes an
 * operation inexpressible, auth and base-url from the document; and the CLI's
 * output handling (whole-or-nothing `--output`, `--force`, errors that say
 * what to do).
 */
import assert from "node:assert/strict";
import { readOpenApi } from "../../src/scaffold/document.ts";
import { buildScaffold, SelectionError } from "../../src/scaffold/scaffold.ts";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import type { Grant } from "../../src/guardfile/model.ts";
import { CONFIG, ROOT, runCommand } from "../support/cli.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function doc(paths: Json, extra: Json = {}): Json {
  return {
    openapi: "3.1.0",
    info: { title: "Tickets", version: "1" },
    servers: [{ url: "https://tickets.example/api" }],
    paths,
    ...extra,
  };
}

async function scaffold(document: Json, select: string[]) {
  const parsed = await readOpenApi(JSON.stringify(document), "t.json");
  return buildScaffold(parsed, { source: "t.json", maxBytes: 1024 * 1024, select });
}

/** The one grant a scaffold with one selection serves. */
async function grantOf(document: Json, select: string): Promise<{ grant: Grant; text: string }> {
  const s = await scaffold(document, [select]);
  const r = parseGuardfile(s.text, "t.mcp.kdl");
  assert.ok(r.guardfile, r.diagnostics.map((d) => d.message).join("\n") + "\n" + s.text);
  assert.equal(r.guardfile.grants.length, 1, s.text);
  return { grant: r.guardfile.grants[0], text: s.text };
}

Deno.test("buildScaffold(): a query name weir reserves is served under another name and sent as itself", async () => {
  const { grant, text } = await grantOf(
    doc({
      "/search": {
        get: {
          operationId: "searchTickets",
          parameters: [
            {
              name: "query",
              in: "query",
              required: true,
              schema: { type: "string", maxLength: 200 },
            },
            { name: "output", in: "query", schema: { type: "string", enum: ["json", "csv"] } },
          ],
        },
      },
    }),
    "searchTickets",
  );
  assert.deepEqual(
    grant.query.map((q) => [q.name, q.wire, q.required]),
    [["query_value", "query", true], ["output_value", "output", false]],
  );
  assert.equal(grant.query[0].maxLength, 200);
  assert.deepEqual(grant.query[1].enum, ["json", "csv"]);
  assert.match(
    text,
    /field "query_value" type="string" required=#true max-length=200 upstream="query"/,
  );
});

Deno.test("buildScaffold(): a body that is one reserved string field becomes a body map", async () => {
  const { grant } = await grantOf(
    doc({
      "/graphql": {
        post: {
          operationId: "runQuery",
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["query"],
                  properties: { query: { type: "string" } },
                },
              },
            },
          },
        },
      },
    }),
    "runQuery",
  );
  assert.deepEqual(grant.bodyMap, [{ source: ["query_text"], target: "query" }]);
  assert.equal(grant.method, "POST");
});

Deno.test("buildScaffold(): path parameters are typed, bounded, and renamed when the grammar needs it", async () => {
  const { grant } = await grantOf(
    doc({
      "/users/{user.id}/tickets/{number}": {
        parameters: [{
          name: "user.id",
          in: "path",
          required: true,
          schema: { type: "string", pattern: "^[a-z]+$" },
        }],
        put: {
          operationId: "setTicket",
          parameters: [{
            name: "number",
            in: "path",
            required: true,
            schema: { type: "integer", exclusiveMinimum: 0, maximum: 1000 },
          }],
          requestBody: {
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: { number: { type: "integer" }, title: { type: "string" } },
                },
              },
            },
          },
        },
      },
    }),
    "setTicket",
  );
  assert.equal(grant.path, "/users/{user_id}/tickets/{number_path}");
  assert.equal(grant.method, "PUT");
  assert.deepEqual(grant.params.map((p) => [p.name, p.type, p.minimum, p.maximum, p.pattern]), [
    ["user_id", "string", undefined, undefined, "^[a-z]+$"],
    ["number_path", "integer", 1, 1000, undefined],
  ]);
  assert.deepEqual(grant.body.map((b) => b.name), ["number", "title"]);
});

Deno.test("buildScaffold(): header parameters become header inputs; cookies, objects and multipart bodies left out when optional, inexpressible when required", async () => {
  const d = doc({
    "/a": {
      get: {
        operationId: "getA",
        parameters: [
          { name: "X-Trace", in: "header", schema: { type: "string", maxLength: 64 } },
          { name: "filter", in: "query", style: "deepObject", schema: { type: "object" } },
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 50 } },
          { name: "Accept", in: "header", schema: { type: "string" } },
        ],
      },
      post: {
        operationId: "createA",
        parameters: [{
          name: "X-Tenant",
          in: "header",
          required: true,
          schema: { type: "string", enum: ["blue", "green"] },
        }],
      },
      put: {
        operationId: "uploadA",
        requestBody: {
          required: true,
          content: { "multipart/form-data": { schema: { type: "object" } } },
        },
      },
      delete: {
        operationId: "deleteA",
        parameters: [{ name: "session", in: "cookie", required: true, schema: { type: "string" } }],
      },
      patch: {
        operationId: "patchA",
        parameters: [{ name: "Content-Length", in: "header", required: true }],
      },
    },
  });
  const { grant, text } = await grantOf(d, "getA");
  assert.deepEqual(grant.query.map((q) => [q.name, q.minimum, q.maximum]), [["limit", 1, 50]]);
  assert.deepEqual(
    grant.headers.map((h) => [h.name, h.wire, h.required, h.maxLength]),
    [["x_trace", "X-Trace", false, 64]],
  );
  assert.match(text, /header "Accept" is set by weir, not by the caller/);
  assert.match(text, /optional query "filter" is left out: it is an object \(style deepObject\)/);
  const tenant = await grantOf(d, "createA");
  assert.deepEqual(
    tenant.grant.headers.map((h) => [h.name, h.wire, h.required, h.enum]),
    [["x_tenant", "X-Tenant", true, ["blue", "green"]]],
  );
  assert.match(tenant.text, /header "X-Tenant" required=#true \{ enum "blue" "green"; \}/);
  assert.match(
    text,
    /not expressible: PUT \/a \(uploadA\): the request body is multipart\/form-data; weir sends JSON and application\/x-www-form-urlencoded bodies/,
  );
  assert.match(
    text,
    /not expressible: DELETE \/a \(deleteA\): needs cookie "session" on every call/,
  );
  assert.match(
    text,
    /not expressible: PATCH \/a \(patchA\): needs header "Content-Length" on every call: weir frames the request itself/,
  );
  await assert.rejects(
    () => scaffold(d, ["deleteA"]),
    (e: unknown) =>
      e instanceof SelectionError && !e.unknown && /cannot be expressed.*session/.test(e.message),
  );
  await assert.rejects(
    () => scaffold(d, ["GET /nowhere"]),
    (e: unknown) => e instanceof SelectionError && e.unknown,
  );
});

Deno.test("buildScaffold(): a form body is sent form-encoded, its arrays as the encoding object says", async () => {
  const form = (encoding?: Json) => ({
    requestBody: {
      required: true,
      content: {
        "application/x-www-form-urlencoded": {
          schema: {
            type: "object",
            required: ["amount"],
            properties: {
              amount: { type: "integer" },
              metadata: { type: "object", additionalProperties: { type: "string" } },
              expand: { type: "array", items: { type: "string" } },
              tags: { type: "array", items: { type: "string" } },
            },
          },
          ...(encoding ? { encoding } : {}),
        },
      },
    },
  });
  const d = doc({
    "/charges": {
      post: {
        operationId: "createCharge",
        ...form({
          expand: { style: "deepObject", explode: true },
          metadata: { style: "deepObject", explode: true },
        }),
      },
    },
    "/plain": { post: { operationId: "createPlain", ...form() } },
    "/joined": {
      post: { operationId: "createJoined", ...form({ tags: { style: "form", explode: false } }) },
    },
  });
  const charge = await grantOf(d, "createCharge");
  assert.deepEqual(charge.grant.form, { arrays: "brackets" });
  assert.deepEqual(charge.grant.body.map((f) => [f.name, f.type, f.required]), [
    ["amount", "integer", true],
    ["metadata", "object", false],
    ["expand", "array", false],
    ["tags", "array", false],
  ]);
  assert.match(charge.text, /form arrays="brackets"/);
  assert.match(
    charge.text,
    /the document writes this form's arrays in 2 ways; every array is sent arrays="brackets"/,
  );
  const plain = await grantOf(d, "createPlain");
  assert.deepEqual(plain.grant.form, { arrays: "repeat" });
  assert.match(plain.text, /form body "metadata" is sent as metadata\[key\]=value/);
  const joined = await grantOf(d, "createJoined");
  assert.deepEqual(joined.grant.body.find((f) => f.name === "tags")?.type, "string");
  assert.match(joined.text, /form body "tags" is one comma-separated string/);
});

Deno.test("buildScaffold(): an API key declared as a header parameter is the file's credential from the environment, never an input", async () => {
  const d = doc({
    "/a": {
      get: {
        operationId: "getA",
        parameters: [
          { name: "X-API-Key", in: "header", required: true, schema: { type: "string" } },
          { name: "If-None-Match", in: "header", schema: { type: "string" } },
        ],
      },
    },
    "/b": {
      post: {
        operationId: "createB",
        parameters: [{ name: "X-API-Key", in: "header", required: true }],
      },
    },
  });
  const { grant, text } = await grantOf(d, "getA");
  assert.deepEqual(grant.headers.map((h) => h.wire), ["If-None-Match"]);
  assert.match(text, /auth header-token \{\s*header "X-API-Key"\s*value env "TICKETS_API_KEY"/);
  assert.match(
    text,
    /the API.s key is the header parameter "X-API-Key" of 1 operation \(no security scheme says so\)/,
  );
  // Also with a security scheme beside it, the parameter is not an input: the scheme sends it.
  const schemed = doc(
    {
      "/a": {
        get: {
          operationId: "getA",
          security: [{ key: [] }],
          parameters: [{ name: "api_key", in: "header", required: true }],
        },
      },
    },
    { components: { securitySchemes: { key: { type: "apiKey", in: "header", name: "api_key" } } } },
  );
  const withScheme = await grantOf(schemed, "getA");
  assert.deepEqual(withScheme.grant.headers, []);
  assert.match(withScheme.text, /header "api_key"/);
});

Deno.test("buildScaffold(): auth from the scheme the chosen operations accept; the credential is not an input", async () => {
  const d = doc(
    {
      "/a": {
        get: {
          operationId: "getA",
          security: [{ key: [] }],
          parameters: [{ name: "api_key", in: "query", schema: { type: "string" } }],
        },
      },
      "/b": { get: { operationId: "getB", security: [{ token: [] }] } },
    },
    {
      components: {
        securitySchemes: {
          key: { type: "apiKey", in: "query", name: "api_key" },
          token: { type: "http", scheme: "bearer" },
        },
      },
    },
  );
  const a = await scaffold(d, ["getA"]);
  assert.equal(a.auth.kind, "query");
  assert.match(
    a.text,
    /auth query-param \{\n\s+param "api_key" \{\n\s+value env "TICKETS_API_KEY"/,
  );
  const g = parseGuardfile(a.text, "t.mcp.kdl").guardfile!;
  assert.deepEqual(g.grants[0].query, [], "the key is the credential, not a caller input");
  assert.match(a.text, /declares security token; this file sends "key"/, "getB's scheme is named");
  const b = await scaffold(d, ["getB"]);
  assert.equal(b.auth.kind, "bearer");
  assert.match(b.text, /auth bearer \{\n\s+value env "TICKETS_TOKEN"/);
});

Deno.test("buildScaffold(): a relative server URL is read from the environment; nothing selected grants nothing", async () => {
  const d = { ...doc({ "/a": { get: { operationId: "getA" } } }), servers: [{ url: "/v1" }] };
  const s = await scaffold(d, []);
  assert.match(s.text, /base-url \{ value env "TICKETS_BASE_URL"; \}/);
  const r = parseGuardfile(s.text, "t.mcp.kdl");
  assert.ok(r.guardfile);
  assert.deepEqual(r.guardfile.grants, []);
  assert.match(s.text, /\/-can get a \{/);
});

Deno.test("readOpenApi(): a document that is not OpenAPI, or not JSON or YAML, is refused with the reason", async () => {
  await assert.rejects(
    () => readOpenApi(`{"openapi": "4.0"}`, "x.json"),
    /not an OpenAPI 3.0\/3.1 or Swagger 2.0/,
  );
  await assert.rejects(
    () => readOpenApi(`{"info": {}}`, "x.json"),
    /neither "openapi" nor "swagger"/,
  );
  await assert.rejects(() => readOpenApi(`{ nope`, "x.json"), /not JSON or YAML/);
  await assert.rejects(() => readOpenApi(`- 1\n- 2\n`, "x.yaml"), /not an OpenAPI document/);
});

async function weir(args: string[], cwd: string) {
  return await runCommand(Deno.execPath(), {
    args: ["run", "--quiet", "--config", CONFIG, "-A", `${ROOT}cli.ts`, ...args],
    cwd,
    stdin: "null",
  });
}

Deno.test("weir scaffold --output: written whole, never over a file without --force; errors say what to do", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-scaffold-cli-" });
  try {
    await Deno.writeTextFile(
      `${dir}/t.json`,
      JSON.stringify(doc({ "/a": { get: { operationId: "getA" } } })),
    );
    const first = await weir(
      ["scaffold", "t.json", "--select", "getA", "--output", "t.mcp.kdl"],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, "");
    assert.match(first.stderr, /1 operations: 1 granted, 0 listed off, 0 not expressible/);
    assert.match(first.stderr, /Wrote t\.mcp\.kdl\. Next: weir lint t\.mcp\.kdl/);
    const written = await Deno.readTextFile(`${dir}/t.mcp.kdl`);
    assert.match(written, /\n {4}can get a \{/);
    const again = await weir(["scaffold", "t.json", "--output", "t.mcp.kdl"], dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /t\.mcp\.kdl exists; .*add --force/);
    assert.equal(await Deno.readTextFile(`${dir}/t.mcp.kdl`), written, "untouched");
    const forced = await weir(["scaffold", "t.json", "--output", "t.mcp.kdl", "--force"], dir);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(await Deno.readTextFile(`${dir}/t.mcp.kdl`), /\/-can get a \{/);
    const unknown = await weir(["scaffold", "t.json", "--select", "nope"], dir);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--select "nope" matches no operation/);
    const missing = await weir(["scaffold", "none.json"], dir);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /read none\.json/);
    const url = await weir(["scaffold", "https://api.example.com/openapi.json"], dir);
    assert.equal(url.code, 1);
    assert.match(url.stderr, /reads a file, not a URL: download the document first \(curl -fsSLo/);
    const usage = await weir(["scaffold"], dir);
    assert.equal(usage.code, 2);
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
      ["t.json", "t.mcp.kdl"],
      "no temporary file left behind",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
