/**
 * Schema profiles through the shipped CLI (`weir serve --schema-profile`), on
 * every example guardfile, checked with the vendors' own code from npm:
 *
 * - gemini: the Vercel AI SDK's Google provider 3.x (the last line that
 *   converts JSON Schema to Gemini's OpenAPI `parameters`) sends exactly the
 *   listed schema (nothing dropped), and `@google/genai`'s own transformer
 *   sends only fields of Gemini's `Schema` object (read from the package's
 *   type declarations) with one `type` each;
 * - openai-strict: `toStrictJsonSchema` from the `openai` package accepts every
 *   listed schema and returns it unchanged (it is already strict);
 * - every profile: the same accepted and refused arguments get the same
 *   answers and send the same upstream requests (enforcement is identical),
 *   and the official MCP client lists and calls the tools.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { GoogleGenAI, Type } from "@google/genai";
import { toStrictJsonSchema } from "openai/lib/transform.js";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { awsEnv } from "../support/aws.ts";

type Schema = Record<string, unknown>;
interface Tool {
  name: string;
  description?: string;
  inputSchema: Schema;
}

const EXAMPLES = [
  "demo.mcp.kdl",
  "forgejo-issues.mcp.kdl",
  "github-contents.mcp.kdl",
  "github-issues.mcp.kdl",
  "open-meteo.mcp.kdl",
  "plausible-stats.mcp.kdl",
  "prometheus.mcp.kdl",
  "s3-assets.mcp.kdl",
  "ssm-forgejo-token.mcp.kdl",
];

const ENV = {
  WEIR_DEMO_BASE_URL: "http://127.0.0.1:9",
  ...awsEnv({
    AWS_ENDPOINT_URL_SSM: "http://127.0.0.1:9",
    AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9",
  }),
};

async function listed(file: string, profile: string, env: Record<string, string> = ENV) {
  const server = await serveHttp(file, { env, extra: ["--schema-profile", profile] });
  try {
    const client = new Client({ name: "weir-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      return (await client.listTools()).tools as Tool[];
    } finally {
      await client.close();
    }
  } finally {
    await server.stop();
  }
}

/** Every listed tool of every example under `profile`. */
async function allTools(profile: string): Promise<Map<string, Tool[]>> {
  const out = new Map<string, Tool[]>();
  for (const example of EXAMPLES) out.set(example, await listed(`guardfiles/${example}`, profile));
  return out;
}

/** What the AI SDK's Google provider sends to Gemini as a tool's `parameters`. */
async function viaAiSdk(tools: Tool[]): Promise<unknown[]> {
  let body: { tools?: { functionDeclarations: { parameters?: unknown }[] }[] } = {};
  const google = createGoogleGenerativeAI({
    apiKey: "test-key",
    fetch: (_url, init) => {
      body = JSON.parse(String(init?.body));
      return Promise.resolve(Response.json({
        candidates: [{ content: { parts: [{ text: "ok" }], role: "model" }, finishReason: "STOP" }],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
      }));
    },
  });
  await google("gemini-2.5-flash").doGenerate({
    prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    tools: tools.map((t) => ({
      type: "function" as const,
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as never,
    })),
  });
  return body.tools![0].functionDeclarations.map((d) => d.parameters);
}

/** What `@google/genai` sends to Gemini for function declarations with these `parameters`. */
async function viaGenai(tools: Tool[]): Promise<Schema[]> {
  let body: { tools: { functionDeclarations: { parameters: Schema }[] }[] } = { tools: [] };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    body = await req.json();
    return Response.json({
      candidates: [{ content: { parts: [{ text: "ok" }], role: "model" }, finishReason: "STOP" }],
    });
  });
  try {
    const ai = new GoogleGenAI({
      apiKey: "test-key",
      httpOptions: { baseUrl: `http://127.0.0.1:${server.addr.port}` },
    });
    await ai.models.generateContent({
      model: "gemini-2.5-flash",
      contents: "hi",
      config: {
        tools: [{
          functionDeclarations: tools.map((t) => ({
            name: t.name,
            description: t.description,
            parameters: t.inputSchema as never,
          })),
        }],
      },
    });
  } finally {
    await server.shutdown();
  }
  return body.tools[0].functionDeclarations.map((d) => d.parameters);
}

/** The field names of Gemini's `Schema`, from `@google/genai`'s type declarations. */
async function geminiSchemaFields(): Promise<Set<string>> {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
  })
    .output();
  const cache = JSON.parse(new TextDecoder().decode(info.stdout)).npmCache as string;
  const dts = await Deno.readTextFile(
    `${cache}/registry.npmjs.org/@google/genai/3.1.0/dist/genai.d.ts`,
  );
  const block = /^export declare interface Schema \{([\s\S]*?)^\}/m.exec(dts)![1];
  return new Set([...block.matchAll(/^\s+([A-Za-z]+)\??:/gm)].map((m) => m[1]));
}

/** Every subschema of a schema, with its path. */
function* walk(schema: Schema, path = ""): Generator<[string, Schema]> {
  yield [path || "/", schema];
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    yield* walk(sub, `${path}/properties/${name}`);
  }
  if (schema.items && typeof schema.items === "object") {
    yield* walk(schema.items as Schema, `${path}/items`);
  }
  for (const [i, sub] of ((schema.anyOf ?? []) as Schema[]).entries()) {
    yield* walk(sub, `${path}/anyOf/${i}`);
  }
}

const hasProperties = (s: Schema) => Object.keys((s.properties ?? {}) as object).length > 0;

Deno.test("gemini profile: the AI SDK's Google converter and @google/genai send exactly what weir lists", async () => {
  const fields = await geminiSchemaFields();
  assert.ok(fields.has("nullable") && fields.has("pattern"), [...fields].join(","));
  const types = new Set(Object.values(Type).map((t) => String(t).toLowerCase()));
  let checked = 0;
  for (const [example, tools] of await allTools("gemini")) {
    const aiSdk = await viaAiSdk(tools);
    const genai = await viaGenai(tools);
    tools.forEach((tool, i) => {
      const where = `${example} ${tool.name}`;
      // The AI SDK's converter drops what Gemini's OpenAPI subset lacks; a
      // gemini-profile schema has nothing it drops (an argument-less tool: no parameters).
      assert.deepEqual(
        aiSdk[i],
        hasProperties(tool.inputSchema) ? tool.inputSchema : undefined,
        where,
      );
      for (const [path, sub] of walk(genai[i])) {
        for (const key of Object.keys(sub)) {
          assert.ok(
            fields.has(key),
            `${where} ${path}: "${key}" is not a field of Gemini's Schema`,
          );
        }
        if (sub.type !== undefined) {
          assert.equal(typeof sub.type, "string", `${where} ${path}: one type`);
          assert.ok(types.has(String(sub.type).toLowerCase()), `${where} ${path}: ${sub.type}`);
        }
        if (sub.enum) assert.equal(String(sub.type).toLowerCase(), "string", `${where} ${path}`);
      }
      for (const [path, sub] of walk(tool.inputSchema)) {
        assert.ok(!Array.isArray(sub.type), `${where} ${path}: no type unions`);
      }
      checked++;
    });
  }
  assert.equal(checked, 54, "every tool of the nine examples");
});

Deno.test("full profile: what the AI SDK's Google converter drops (why the gemini profile exists)", async () => {
  const tools = await listed("guardfiles/github-issues.mcp.kdl", "full");
  const gemini = await listed("guardfiles/github-issues.mcp.kdl", "gemini");
  const list = tools.find((t) => t.name === "list_issue")!;
  const [sent] = await viaAiSdk([list]) as Schema[];
  const perPage = (s: Schema) => (s.properties as Record<string, Schema>).per_page;
  assert.equal(perPage(list.inputSchema).maximum, 50);
  assert.equal(perPage(sent).maximum, undefined, "the converter drops maximum");
  const said = perPage(gemini.find((t) => t.name === "list_issue")!.inputSchema);
  assert.equal(said.type, "integer");
  assert.match(String(said.description), /1 to 50/, "so the gemini profile says it in words");
});

Deno.test("openai-strict profile: openai's toStrictJsonSchema accepts every listed schema unchanged", async () => {
  let checked = 0;
  for (const [example, tools] of await allTools("openai-strict")) {
    for (const tool of tools) {
      const where = `${example} ${tool.name}`;
      let strict: unknown;
      try {
        strict = toStrictJsonSchema(tool.inputSchema as never);
      } catch (error) {
        assert.fail(`${where}: ${(error as Error).message}`);
      }
      assert.deepEqual(strict, tool.inputSchema, `${where}: already strict`);
      for (const [path, sub] of walk(tool.inputSchema)) {
        if (sub.type === "object" || (Array.isArray(sub.type) && sub.type.includes("object"))) {
          assert.equal(sub.additionalProperties, false, `${where} ${path}`);
          assert.deepEqual(sub.required, Object.keys(sub.properties as object), `${where} ${path}`);
        }
        for (const key of ["minLength", "maxLength", "allOf", "not"]) {
          assert.ok(!(key in sub), `${where} ${path}: ${key}`);
        }
      }
      checked++;
    }
  }
  assert.equal(checked, 54);
});

/** Arguments for the github-issues example: each accepted or refused, whatever the profile. */
const CASES: [tool: string, args: unknown][] = [
  ["list_issue", { owner: "acme-x", repo: "app" }],
  ["list_issue", { owner: "acme-x", repo: "app", per_page: 50, page: null, state: null }],
  ["list_issue", { owner: "acme-x", repo: "app", per_page: 51 }],
  ["list_issue", { owner: "acme-x", repo: "app", per_page: 0 }],
  ["list_issue", { owner: "acme-x", repo: "app", per_page: "5" }],
  ["list_issue", { owner: "acme-x", repo: "app", state: "open;rm" }],
  ["list_issue", { owner: "other", repo: "app" }],
  ["list_issue", { owner: "acme-x" }],
  ["list_issue", { owner: "acme-x", repo: "app", extra: 1 }],
  ["list_issue", { owner: "acme-x", repo: "" }],
  ["list_issue", { owner: "acme-x", repo: "a/b" }],
  ["create_issue", { owner: "acme-x", repo: "app", title: "t", labels: ["bug"], body: null }],
  ["create_issue", { owner: "acme-x", repo: "app", title: "" }],
  ["create_issue", { owner: "acme-x", repo: "app", title: "t", labels: "bug" }],
  ["create_issue", { owner: "acme-x", repo: "app", title: "t", body: "$(x) & y" }],
  ["search_issue", { search_text: "is:open (label:bug)" }],
  ["search_issue", { search_text: "is:open label:bug", per_page: 10 }],
  ["search_issue", {}],
  ["close_issue", { owner: "acme-x", repo: "app", issue_number: "7" }],
  ["lock_issue", { owner: "acme-x" }],
];

Deno.test("enforcement is identical under every profile: same answers, same upstream requests", async () => {
  const text = await Deno.readTextFile("guardfiles/github-issues.mcp.kdl");
  const outcomes = new Map<string, string[]>();
  for (const profile of ["full", "gemini", "openai-strict"]) {
    const upstream = await startRecorder();
    const file = await tempGuardfile(
      text.replace(/base-url "[^"]*"/, `base-url "${upstream.url}"`),
    );
    const server = await serveHttp(file, {
      env: { GITHUB_TOKEN: "ghp_profile_1234" },
      extra: ["--schema-profile", profile],
    });
    const client = new Client({ name: "weir-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    const seen: string[] = [];
    try {
      for (const [tool, args] of CASES) {
        const before = upstream.requests.length;
        const api = await fetch(`${server.url}/api/${tool}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(args),
        });
        const apiText = await api.text();
        let mcp: string;
        try {
          const r = await client.callTool({
            name: tool,
            arguments: args as Record<string, unknown>,
          });
          mcp = r.isError ? `isError ${JSON.stringify(r.content)}` : "ok";
        } catch (error) {
          mcp = `error ${(error as Error).message}`;
        }
        const sent = upstream.requests.slice(before).map((r) =>
          `${r.method} ${r.path}?${r.query} ${r.body}`
        );
        seen.push(
          `${tool} ${JSON.stringify(args)}: api ${api.status} ${apiText} | mcp ${mcp} | ${sent}`,
        );
      }
    } finally {
      await client.close();
      await server.stop();
      await upstream.close();
    }
    outcomes.set(profile, seen);
  }
  const full = outcomes.get("full")!;
  assert.ok(full.some((l) => / api 200 /.test(l)) && full.some((l) => / api 400 /.test(l)));
  assert.ok(full.some((l) => / api 403 /.test(l)));
  for (const profile of ["gemini", "openai-strict"]) {
    assert.deepEqual(outcomes.get(profile), full, profile);
  }
});

Deno.test("a schema a profile cannot list stops serve at start, naming tool and keyword", async () => {
  const file = await tempGuardfile(`wrap ward mcp t {
    base-url "t.example"
    auth none
    can create note {
        path "/notes"
        body {
            field "meta" type="object" raw=#true
        }
    }
}
`);
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli.ts", "serve", file, "--stdio", "--schema-profile", "openai-strict"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(r.stderr);
  assert.equal(r.code, 1, stderr);
  assert.match(stderr, /create_note.*meta.*open to undeclared keys.*--schema-profile full/);
  const lint = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli.ts", "lint", file, "--schema-profile", "openai-strict"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(lint.code, 1, "lint is serve minus the listener");
  const bad = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli.ts", "lint", file, "--schema-profile", "claude"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(bad.code, 2);
  assert.match(new TextDecoder().decode(bad.stderr), /full, gemini, openai-strict/);
});

Deno.test("the guardfile's surface node chooses the profile; the flag wins", async () => {
  const text = `surface schema-profile="gemini"\n` +
    (await Deno.readTextFile("guardfiles/github-issues.mcp.kdl"));
  const file = await tempGuardfile(text);
  const fromFile = await listed(file, "gemini", { GITHUB_TOKEN: "x" });
  const owner = (
    tools: Tool[],
  ) => ((tools.find((t) => t.name === "list_issue")!.inputSchema.properties as Record<
    string,
    Schema
  >)
    .per_page);
  assert.equal(owner(fromFile).type, "integer");
  const flag = await listed(file, "full", { GITHUB_TOKEN: "x" });
  assert.deepEqual(owner(flag).type, ["integer", "null"]);
});
