/**
 * `weir scaffold` on real documents shipped in npm packages, run as a user runs
 * it: GitHub's official REST document (`@octokit/openapi`) and documents of
 * `@readme/oas-examples` (a Swagger 2.0 one, OpenAPI 3.0 and 3.1 ones), each
 * with no selection, with `--select-reads` and with a few `--select`s. Each
 * output lints clean; `serve` lists exactly the chosen operations (checked
 * over stdio with `tools/list`, every page); each served tool's method and
 * path exist in the source document (read here, not by weir); `describe
 * --format openapi` of the output validates as OpenAPI 3.1. The share of GET
 * operations expressed is printed per document and must be at least 90%.
 */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import YAML from "yaml";
import { runCli, spawnServeStdio, startRecorderFor } from "./support.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

interface Case {
  name: string;
  /** The document inside its npm package (a JSON import). */
  load: () => Promise<{ default: Json }>;
  /** Selectors of the third run, and the METHOD /path each must serve. */
  select: [string, string][];
  /** Write the document as YAML (the YAML path of the reader). */
  yaml?: boolean;
}

const CASES: Case[] = [
  {
    name: "GitHub REST API (@octokit/openapi, OpenAPI 3.0)",
    load: () =>
      import("@octokit/openapi/generated/api.github.com.json", { with: { type: "json" } }),
    select: [
      ["issues/list-for-repo", "GET /repos/{}/{}/issues"],
      ["GET /repos/{owner}/{repo}/pulls/{pull_number}", "GET /repos/{}/{}/pulls/{}"],
      ["issues/create", "POST /repos/{}/{}/issues"],
    ],
  },
  {
    name: "Swagger Petstore (@readme/oas-examples, Swagger 2.0)",
    load: () => import("@readme/oas-examples/2.0/json/petstore.json", { with: { type: "json" } }),
    select: [
      ["findPetsByStatus", "GET /pet/findByStatus"],
      ["GET /store/order/{orderId}", "GET /store/order/{}"],
      ["addPet", "POST /pet"],
    ],
  },
  {
    name: "Train Travel API (@readme/oas-examples, OpenAPI 3.1, as YAML)",
    load: () =>
      import("@readme/oas-examples/3.1/json/train-travel.json", { with: { type: "json" } }),
    select: [
      ["get-stations", "GET /stations"],
      ["create-booking", "POST /bookings"],
    ],
    yaml: true,
  },
  {
    name: "ReadMe API (@readme/oas-examples, OpenAPI 3.1)",
    load: () => import("@readme/oas-examples/3.1/json/readme.json", { with: { type: "json" } }),
    select: [
      ["getAPIs", "GET /branches/{}/apis"],
      ["createAPIKey", "POST /projects/{}/apikeys"],
      ["GET /projects/{subdomain}/apikeys", "GET /projects/{}/apikeys"],
    ],
  },
  {
    name: "Star Trek API (@readme/oas-examples, OpenAPI 3.0)",
    load: () => import("@readme/oas-examples/3.0/json/star-trek.json", { with: { type: "json" } }),
    select: [["GET /animal", "GET /animal"], ["GET /book/search", "GET /book/search"]],
  },
  {
    name: "USPTO Data Set API (@readme/oas-examples, OpenAPI 3.0)",
    load: () => import("@readme/oas-examples/3.0/json/uspto.json", { with: { type: "json" } }),
    select: [["list-data-sets", "GET /"]],
  },
];

/** `/repos/{owner}/{repo}` -> `/repos/{}/{}`: placeholder names are the guardfile's own. */
function shape(path: string): string {
  return path.replace(/\{[^}]*\}/g, "{}");
}

/** Every `METHOD /path` of the document, read directly (not by weir). */
function operationsOf(doc: Json): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const m of ["get", "put", "post", "delete", "patch", "head", "options", "trace"]) {
      if (item?.[m]) out.add(`${m.toUpperCase()} ${shape(path)}`);
    }
  }
  return out;
}

/** `tools/list` over stdio, every page: the served tool names. */
async function servedNames(file: string): Promise<string[]> {
  const child = spawnServeStdio(file);
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const send = (msg: Json) => writer.write(new TextEncoder().encode(JSON.stringify(msg) + "\n"));
  const next = async (id: number): Promise<Json> => {
    for (let i = 0; i < 10_000; i++) {
      const nl = buffered.indexOf("\n");
      if (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const msg = JSON.parse(line);
        if (msg.id === id) return msg;
        continue;
      }
      const { done, value } = await lines.read();
      if (done) throw new Error(`serve ended before answering ${id}`);
      buffered += value;
    }
    throw new Error("no answer");
  };
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "scaffold-test", version: "1" },
      },
    });
    await next(1);
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const names: string[] = [];
    let cursor: string | undefined;
    for (let id = 2; id < 1000; id++) {
      await send({ jsonrpc: "2.0", id, method: "tools/list", params: cursor ? { cursor } : {} });
      const res = await next(id);
      assert.ok(res.result, JSON.stringify(res.error));
      names.push(...res.result.tools.map((t: Json) => t.name));
      cursor = res.result.nextCursor;
      if (!cursor) break;
    }
    return names.sort();
  } finally {
    await writer.close();
    await lines.cancel();
    await child.stderr.cancel();
    await child.status;
  }
}

/** Lint, serve and describe one scaffolded guardfile; returns the served grants' METHOD /path. */
async function checkOutput(
  file: string,
  label: string,
): Promise<{ names: string[]; ops: string[] }> {
  const lint = await runCli(["lint", file]);
  assert.equal(lint.code, 0, `${label}: lint: ${lint.stderr}`);
  assert.doesNotMatch(lint.stderr, /error/i, `${label}: ${lint.stderr}`);
  const names = await servedNames(file);
  assert.deepEqual(names, lint.stdout.trim().split("\n").sort(), `${label}: serve and lint agree`);
  const described = await runCli(["describe", "--format", "json", file]);
  assert.equal(described.code, 0, described.stderr);
  const tools = JSON.parse(described.stdout).tools as Json[];
  const ops = tools.filter((t) => t.kind === "grant").map((t) => {
    const op = t.operation as Json;
    return `${op.method} ${shape(op.path)}`;
  });
  const openapi = await runCli(["describe", "--format", "openapi", file]);
  assert.equal(openapi.code, 0, openapi.stderr);
  const result = await new Validator().validate(JSON.parse(openapi.stdout));
  assert.equal(result.valid, true, `${label}: ${JSON.stringify(result.errors)}`);
  return { names, ops };
}

for (const c of CASES) {
  Deno.test(`weir scaffold: ${c.name}`, async (t) => {
    const doc = (await c.load()).default;
    const dir = await Deno.makeTempDir({ prefix: "weir-scaffold-" });
    const spec = `${dir}/document.${c.yaml ? "yaml" : "json"}`;
    await Deno.writeTextFile(spec, c.yaml ? YAML.stringify(doc) : JSON.stringify(doc));
    const inDocument = operationsOf(doc);
    const gets = [...inDocument].filter((o) => o.startsWith("GET "));

    const scaffold = async (label: string, args: string[]) => {
      const r = await runCli(["scaffold", spec, ...args]);
      assert.equal(r.code, 0, `${label}: ${r.stderr}`);
      const file = `${dir}/${label}.mcp.kdl`;
      await Deno.writeTextFile(file, r.stdout);
      return { file, text: r.stdout, stderr: r.stderr };
    };

    await t.step("no selection: grants nothing, serves only the info tool", async () => {
      const { file, text } = await scaffold("none", []);
      const { names } = await checkOutput(file, "none");
      assert.deepEqual(names, ["weir_info"]);
      // Every operation of the document is listed: off, or a comment saying why not.
      const listed = text.split("\n").filter((l) =>
        /^\s*\/\/ (?:not expressible: )?[A-Z]+ \//.test(l)
      );
      assert.equal(listed.length, inDocument.size, "each operation listed once");
    });

    await t.step("--select-reads: serves exactly the GET operations expressed", async () => {
      const { file, text } = await scaffold("reads", ["--select-reads"]);
      const { names, ops } = await checkOutput(file, "reads");
      assert.equal(names.length, ops.length + 1, "grants plus the info tool");
      for (const op of ops) {
        assert.ok(op.startsWith("GET "), `${op} is not a GET`);
        assert.ok(inDocument.has(op), `${op} is not in the document`);
      }
      const missing = gets.filter((g) => !ops.includes(g));
      for (const m of missing) {
        const [method, path] = m.split(" ");
        const said = text.split("\n").some((l) =>
          l.includes("not expressible: ") && l.includes(method) &&
          shape(l.split(" ").find((w) => w.startsWith("/")) ?? "") === path
        );
        assert.ok(said, `${m} is neither served nor explained`);
      }
      const share = gets.length === 0 ? 1 : ops.length / gets.length;
      console.log(
        `  ${c.name}: GET operations expressed ${ops.length} of ${gets.length} ` +
          `(${(100 * share).toFixed(1)}%)`,
      );
      assert.ok(share >= 0.9, `${c.name}: only ${(100 * share).toFixed(1)}% of GETs expressed`);
    });

    await t.step("--select: serves exactly the selected operations", async () => {
      const args = c.select.flatMap(([s]) => ["--select", s]);
      const { file } = await scaffold("select", args);
      const { names, ops } = await checkOutput(file, "select");
      assert.equal(names.length, c.select.length + 1);
      assert.deepEqual(ops.sort(), c.select.map(([, op]) => op).sort());
      for (const op of ops) assert.ok(inDocument.has(op), `${op} is not in the document`);
    });
    await Deno.remove(dir, { recursive: true });
  });
}

Deno.test("weir scaffold: a selected grant sends what the document describes", async () => {
  const doc = (await import("@readme/oas-examples/2.0/json/petstore.json", {
    with: { type: "json" },
  })).default;
  const dir = await Deno.makeTempDir({ prefix: "weir-scaffold-" });
  const spec = `${dir}/petstore.json`;
  await Deno.writeTextFile(spec, JSON.stringify(doc));
  const r = await runCli(["scaffold", spec, "--select", "findPetsByStatus", "--select", "addPet"]);
  assert.equal(r.code, 0, r.stderr);
  const recorder = await startRecorderFor();
  try {
    // Point the scaffold at a local upstream: the one line a user would edit for a test.
    const text = r.stdout.replace(
      `base-url "http://petstore.swagger.io/v2"`,
      `base-url "${recorder.url}/v2"`,
    );
    assert.notEqual(text, r.stdout);
    const file = `${dir}/petstore.mcp.kdl`;
    await Deno.writeTextFile(file, text);
    const served = await recorder.serve(file, { SWAGGER_PETSTORE_TOKEN: "token-123456789" });
    try {
      const list = await served.call("find_pets-by-status", { status: ["available", "sold"] });
      assert.equal(list.status, 200, JSON.stringify(list.body));
      const refused = await served.call("find_pets-by-status", { status: ["lost"] });
      assert.equal(refused.status, 400, "an enum value the document does not list is refused");
      const add = await served.call("add_pet", {
        name: "Rex",
        photoUrls: ["https://example.com/rex.png"],
        category: { id: 1, name: "dogs" },
      });
      assert.equal(add.status, 200, JSON.stringify(add.body));
      const missing = await served.call("add_pet", { name: "Rex" });
      assert.equal(missing.status, 400, "a required body field is required");
    } finally {
      await served.stop();
    }
    assert.equal(recorder.requests.length, 2, "refused calls send nothing");
    const [get, post] = recorder.requests;
    assert.equal(get.method, "GET");
    assert.equal(get.path, "/v2/pet/findByStatus");
    assert.equal(get.query, "status=available&status=sold");
    assert.equal(get.headers.get("authorization"), "Bearer token-123456789");
    assert.equal(post.method, "POST");
    assert.equal(post.path, "/v2/pet");
    assert.deepEqual(JSON.parse(post.body), {
      name: "Rex",
      photoUrls: ["https://example.com/rex.png"],
      category: { id: 1, name: "dogs" },
    });
  } finally {
    await recorder.close();
    await Deno.remove(dir, { recursive: true });
  }
});
