/**
 * `weir scaffold` maps form bodies and header parameters of real documents
 * (`@readme/oas-examples`), and the scaffolded file, served by the shipped
 * CLI, sends what the document describes: the Petstore's
 * `updatePetWithForm` (an `application/x-www-form-urlencoded` body, OpenAPI
 * 3.0, 3.1 and Swagger 2.0) form-encoded with generated values, its
 * `deletePet` `api_key` header left to the file's credential; the
 * conditional-request headers of `response-http-behavior` as header inputs;
 * and the `Authorization` header parameter of `schema-circular` (no security
 * scheme) as the file's credential from the environment.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { runCli, startRecorderFor } from "./support.ts";

const dir = await Deno.makeTempDir({ prefix: "weir-scaffold-forms-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

/** Scaffold a document of @readme/oas-examples with selections; the text, pointed at `url`. */
async function scaffold(
  path: string,
  select: string[],
  url: string,
): Promise<{ file: string; text: string }> {
  const doc = (await import(`@readme/oas-examples/${path}`, { with: { type: "json" } })).default;
  const spec = `${dir}/${path.replaceAll("/", "_")}`;
  await Deno.writeTextFile(spec, JSON.stringify(doc));
  const r = await runCli(["scaffold", spec, ...select.flatMap((s) => ["--select", s])]);
  assert.equal(r.code, 0, r.stderr);
  const text = r.stdout.replace(/base-url "[^"]*"/, `base-url "${url}"`)
    .replace(/base-url \{ value env "[^"]*"; \}/, `base-url "${url}"`);
  assert.match(text, new RegExp(`base-url "${url}"`), r.stdout);
  const file = `${spec}.mcp.kdl`;
  await Deno.writeTextFile(file, text);
  const lint = await runCli(["lint", file]);
  assert.equal(lint.code, 0, lint.stderr + text);
  return { file, text };
}

for (const path of ["3.0/json/petstore.json", "3.1/json/petstore.json", "2.0/json/petstore.json"]) {
  Deno.test(`weir scaffold ${path}: updatePetWithForm sends a form body; deletePet's api_key is no input`, async () => {
    const recorder = await startRecorderFor();
    try {
      const { file, text } = await scaffold(
        path,
        ["updatePetWithForm", "deletePet"],
        recorder.url,
      );
      assert.match(text, /can update pet-with-form \{\n(?:.*\n)*?\s+form\n\s+body \{/);
      assert.match(text, /optional header "api_key" is left out: it is a credential/);
      const served = await recorder.serve(file, { SWAGGER_PETSTORE_TOKEN: "token-123456789" });
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 2 ** 31 }),
            fc.option(fc.string({ unit: "grapheme", minLength: 1 }), { nil: undefined }),
            fc.option(fc.string({ unit: "grapheme", minLength: 1 }), { nil: undefined }),
            async (petId, name, status) => {
              const args: Record<string, unknown> = { petId };
              if (name !== undefined) args.name = name;
              if (status !== undefined) args.status = status;
              const r = await served.call("update_pet-with-form", args);
              assert.equal(r.status, 200, JSON.stringify(r.body));
              const seen = recorder.requests.at(-1)!;
              assert.equal(seen.method, "POST");
              assert.match(seen.path, new RegExp(`/pet/${petId}$`));
              const expected = [
                ...(name !== undefined ? [["name", name]] : []),
                ...(status !== undefined ? [["status", status]] : []),
              ];
              if (expected.length === 0) {
                assert.equal(seen.body, "");
              } else {
                assert.equal(seen.headers.get("content-type"), "application/x-www-form-urlencoded");
                assert.deepEqual([...new URLSearchParams(seen.body)], expected);
              }
            },
          ),
          { numRuns: 25 },
        );
        const gone = await served.call("delete_pet", { petId: 7, api_key: "agent-chosen" });
        assert.equal(gone.status, 400, "api_key is not an input");
      } finally {
        await served.stop();
      }
    } finally {
      await recorder.close();
    }
  });
}

Deno.test("weir scaffold: conditional-request header parameters become header inputs, sent as given", async () => {
  const recorder = await startRecorderFor();
  try {
    const { file, text } = await scaffold(
      "3.0/json/response-http-behavior.json",
      [],
      recorder.url,
    );
    const on = text.replace(/\/-can /g, "can ");
    await Deno.writeTextFile(file, on);
    assert.match(on, /header "If-None-Match"/);
    assert.match(on, /header "If-Modified-Since"/);
    const described = await runCli(["describe", file, "--format", "json"]);
    assert.equal(described.code, 0, described.stderr);
    const tools = JSON.parse(described.stdout).tools as {
      name: string;
      arguments: { name: string; in: string; sentAs: string }[];
    }[];
    const tool = tools.find((t) =>
      t.arguments.some((a) => a.in === "header" && a.sentAs === "If-None-Match")
    )!;
    assert.ok(tool, described.stdout);
    const served = await recorder.serve(file);
    try {
      const r = await served.call(tool.name, { if_none_match: `"33a64df5"` });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(recorder.requests.at(-1)!.headers.get("if-none-match"), `"33a64df5"`);
      const bad = await served.call(tool.name, { if_none_match: "a\nb" });
      assert.equal(bad.status, 403, JSON.stringify(bad.body));
    } finally {
      await served.stop();
    }
  } finally {
    await recorder.close();
  }
});

Deno.test("weir scaffold: an Authorization header parameter without a security scheme is the file's credential", async () => {
  const recorder = await startRecorderFor();
  try {
    const { text } = await scaffold("3.0/json/schema-circular.json", [], recorder.url);
    assert.match(
      text,
      /auth header-token \{\s*header "Authorization"\s*value env "[A-Z_]+_API_KEY"/,
    );
    assert.doesNotMatch(text, /^\s*header "Authorization" /m, "no grant takes it as an input");
  } finally {
    await recorder.close();
  }
});
