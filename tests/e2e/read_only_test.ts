/**
 * `--read-only` (and `surface read-only=#true`) through the shipped CLI: every
 * tool of every example guardfile is driven with well-formed and hostile
 * arguments, over MCP `tools/call` and the tool API, against a recording
 * upstream, and the upstream must have received nothing but reads: GET for
 * spec mode (the examples' reads are all GET), GET/HEAD for S3, and only the
 * GetParameter action for SSM (a read that AWS's JSON protocol sends as POST).
 * Each write is listed as a withheld stub saying "read-only mode", and each
 * read still reaches the upstream (so the test cannot pass by sending nothing).
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { type Recorder, startRecorder } from "../support/upstream.ts";
import { awsEnv } from "../support/aws.ts";
import { until } from "../support/wait.ts";
import { rpcAs } from "../support/revision_http.ts";

interface Tool {
  name: string;
  description?: string;
  inputSchema: {
    properties?: Record<string, Prop>;
    required?: string[];
  };
  annotations?: { readOnlyHint?: boolean };
  _meta?: Record<string, unknown>;
}

interface Prop {
  type?: string | string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: Prop;
  description?: string;
  properties?: Record<string, Prop>;
  required?: string[];
}

/** Sample texts tried, in order, for a string input with a pattern or a glob. */
const SAMPLES = [
  "acme-x",
  "coilyco-x",
  "demo-x",
  "app",
  "up",
  "job",
  "1700000000",
  "5m",
  "docs/a.md",
  "README.md",
  "visitors",
  "30d",
  "event:page",
  "example.com",
  "charts/a.png",
  "/forgejo/coilyco-ops/read-token",
  "x",
];

function typeOf(p: Prop): string | undefined {
  return Array.isArray(p.type) ? p.type.find((t) => t !== "null") : p.type;
}

/** A value the listed schema (and its words) admits, when one of the samples fits. */
function validValue(p: Prop): unknown {
  if (p.enum) return p.enum.find((v) => v !== null);
  switch (typeOf(p)) {
    case "integer":
    case "number":
      return p.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return [validValue(p.items ?? { type: "string" })];
    case "object": {
      const out: Record<string, unknown> = {};
      for (const name of p.required ?? []) out[name] = validValue(p.properties![name]);
      return out;
    }
    default: {
      const glob = /Matches ([^;.]+)/.exec(p.description ?? "")?.[1].split(" or ")[0];
      const fromGlob = glob?.replaceAll("**", "docs/a.md").replaceAll("*", "x");
      const oneOf = /One of: "?([^",.]+)/.exec(p.description ?? "")?.[1];
      const candidates = [fromGlob, oneOf, ...SAMPLES].filter((s): s is string => Boolean(s));
      return candidates.find((s) =>
        (!p.pattern || new RegExp(p.pattern, "u").test(s)) &&
        s.length >= (p.minLength ?? 0) && s.length <= (p.maxLength ?? Infinity)
      );
    }
  }
}

function validArgs(tool: Tool): Record<string, unknown> {
  const props = tool.inputSchema.properties ?? {};
  const out: Record<string, unknown> = {};
  for (const name of tool.inputSchema.required ?? []) out[name] = validValue(props[name]);
  return out;
}

const HOSTILE_TEXT = [
  "../../admin",
  "..",
  "%2e%2e%2fadmin",
  "a/b",
  "x; curl evil",
  "$(reboot)",
  "x\r\nX-HTTP-Method-Override: DELETE",
  "x".repeat(5000),
  "",
];
const HOSTILE_NUMBERS = [-1, 0, 2 ** 53 + 2, 1e308, 1.5];
const METHOD_KEYS = {
  method: "DELETE",
  _method: "POST",
  "X-HTTP-Method-Override": "PUT",
  __proto__: { method: "DELETE" },
};

/** Argument objects for one tool: the valid one, then hostile variants of it. */
function argumentSets(tool: Tool): unknown[] {
  const valid = validArgs(tool);
  const sets: unknown[] = [valid, { ...valid, ...METHOD_KEYS }, {}, [], null, "DELETE"];
  for (const [name, p] of Object.entries(tool.inputSchema.properties ?? {})) {
    const kind = typeOf(p);
    const bad: unknown[] = kind === "integer" || kind === "number"
      ? [...HOSTILE_NUMBERS, "1", null]
      : kind === "array"
      ? [HOSTILE_TEXT, [], [null], "x"]
      : [...HOSTILE_TEXT, 1, { method: "DELETE" }, null];
    for (const value of bad) sets.push({ ...valid, [name]: value });
  }
  return sets;
}

interface Example {
  file: string;
  /** Rewrite a literal base-url to the recorder (else an env variable points there). */
  literal?: { prefix?: string };
  env: (url: string) => Record<string, string>;
  command?: string;
  /** Turn read-only on in the file (`surface read-only=#true`) instead of by flag. */
  inFile?: boolean;
}

const EXAMPLES: Example[] = [
  {
    file: "demo.mcp.kdl",
    env: (url) => ({ WEIR_DEMO_BASE_URL: url, WEIR_DEMO_TOKEN: "demo-token-1111" }),
  },
  {
    file: "forgejo-issues.mcp.kdl",
    literal: { prefix: "/api/v1" },
    env: () => ({ FORGEJO_TOKEN: "forgejo-token-2222" }),
  },
  { file: "github-contents.mcp.kdl", literal: {}, env: () => ({ GITHUB_TOKEN: "ghp_token_3333" }) },
  {
    file: "github-issues.mcp.kdl",
    literal: {},
    env: () => ({ GITHUB_TOKEN: "ghp_token_4444" }),
    inFile: true,
  },
  { file: "open-meteo.mcp.kdl", literal: {}, env: () => ({}) },
  {
    file: "plausible-stats.mcp.kdl",
    literal: {},
    env: () => ({ PLAUSIBLE_API_KEY: "plausible-5555", PLAUSIBLE_SITE: "example.com" }),
  },
  { file: "prometheus.mcp.kdl", env: (url) => ({ PROMETHEUS_URL: url }) },
  { file: "s3-assets.mcp.kdl", env: (url) => awsEnv({ AWS_ENDPOINT_URL_S3: url }) },
  {
    file: "ssm-forgejo-token.mcp.kdl",
    env: (url) => awsEnv({ AWS_ENDPOINT_URL_SSM: url }),
    inFile: true,
  },
];

async function served(example: Example, upstream: Recorder) {
  let text = await Deno.readTextFile(`guardfiles/${example.file}`);
  if (example.literal) {
    text = text.replace(
      /base-url "[^"]*"/,
      `base-url "${upstream.url}${example.literal.prefix ?? ""}"`,
    );
  }
  if (example.inFile) text = `surface read-only=#true\n${text}`;
  const file = await tempGuardfile(text);
  return await serveHttp(file, {
    env: example.env(upstream.url),
    extra: example.inFile ? [] : ["--read-only"],
  });
}

async function listTools(url: string): Promise<Tool[]> {
  const body = await rpcAs<{ result?: { tools: Tool[] } }>(url, "2026-07-28", "tools/list", {});
  assert.ok(body.result, JSON.stringify(body));
  return body.result.tools;
}

/** One call over MCP (2026-07-28 over HTTP) and one over the tool API; both statuses. */
async function callBoth(url: string, tool: string, args: unknown): Promise<[number, number]> {
  const mcp = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": tool,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: tool,
        arguments: args,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  await mcp.body?.cancel();
  const api = await fetch(`${url}/api/${tool}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(args),
  });
  await api.body?.cancel();
  return [mcp.status, api.status];
}

Deno.test("--read-only: every tool of every example, hostile arguments, only reads reach the upstream", async () => {
  const report: string[] = [];
  let totalRequests = 0;
  let nonGet = 0;
  let calls = 0;
  for (const example of EXAMPLES) {
    const upstream = await startRecorder();
    const server = await served(example, upstream);
    try {
      const tools = await listTools(server.url);
      const stubs = tools.filter((t) => t._meta?.["weir.dev/withheld"]);
      const reads = tools.filter((t) => !t._meta?.["weir.dev/withheld"] && t.name !== "weir_info");
      for (const t of reads) {
        assert.equal(t.annotations?.readOnlyHint, true, `${example.file}: ${t.name} is a read`);
      }
      let reached = 0;
      const missed: string[] = [];
      for (const tool of reads) {
        const before = upstream.requests.length;
        await callBoth(server.url, tool.name, validArgs(tool));
        if (upstream.requests.length > before) reached++;
        else missed.push(tool.name);
      }
      for (const tool of tools) {
        for (const args of argumentSets(tool)) {
          const before = upstream.requests.length;
          const [mcp, api] = await callBoth(server.url, tool.name, args);
          calls += 2;
          if (stubs.includes(tool)) {
            assert.equal(upstream.requests.length, before, `${tool.name} (withheld) sent nothing`);
            // Withheld (403), or arguments that are not an object at all (400).
            assert.ok(api === 403 || api === 400, `${example.file} ${tool.name}: withheld, ${api}`);
            assert.ok(mcp === 200 || mcp === 400, `${example.file} ${tool.name}: over MCP ${mcp}`);
          }
        }
      }
      const methods = upstream.requests.map((r) =>
        example.file.startsWith("ssm") ? `${r.method} ${r.headers.get("x-amz-target")}` : r.method
      );
      const allowed = example.file.startsWith("ssm")
        ? ["POST AmazonSSM.GetParameter"]
        : example.file.startsWith("s3")
        ? ["GET", "HEAD"]
        : ["GET"];
      const wrong = methods.filter((m) => !allowed.includes(m));
      if (!example.file.startsWith("s3") && !example.file.startsWith("ssm")) {
        nonGet += methods.filter((m) => m !== "GET").length;
      }
      totalRequests += methods.length;
      assert.deepEqual(
        wrong,
        [],
        `${example.file}: only ${allowed.join(", ")} reached the upstream`,
      );
      assert.deepEqual(missed, [], `${example.file}: every read still reaches the upstream`);
      assert.equal(reached, reads.length);
      for (const stub of stubs) {
        if (/read-only mode/.test(stub.description ?? "")) continue;
        assert.match(stub.description ?? "", /^NOT AVAILABLE/, `${stub.name} is a withheld stub`);
      }
      report.push(
        `${example.file}: ${tools.length} tools (${reads.length} reads, ${stubs.length} withheld), ` +
          `${upstream.requests.length} upstream requests: ${
            [...new Set(methods)].join(", ") || "none"
          }` +
          (missed.length ? `; reads not reached with sample arguments: ${missed.join(", ")}` : ""),
      );
    } finally {
      await server.stop();
      await upstream.close();
    }
  }
  console.error(
    `read-only: ${calls} hostile calls, ${totalRequests} upstream requests across ` +
      `${EXAMPLES.length} examples; ` +
      `spec mode: ${nonGet} non-GET\n  ${report.join("\n  ")}`,
  );
  assert.equal(nonGet, 0);
});

Deno.test("--read-only: the writes of a guardfile are withheld stubs that say read-only mode", async () => {
  const upstream = await startRecorder();
  const text = (await Deno.readTextFile("guardfiles/github-issues.mcp.kdl"))
    .replace(/base-url "[^"]*"/, `base-url "${upstream.url}"`);
  const server = await serveHttp(await tempGuardfile(text), {
    env: { GITHUB_TOKEN: "ghp_token_6666" },
    extra: ["--read-only"],
  });
  try {
    const tools = await listTools(server.url);
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const write of ["add_label", "close_issue", "comment_issue", "create_issue"]) {
      const stub = byName.get(write)!;
      assert.match(stub.description!, /^NOT AVAILABLE: read-only mode/);
      assert.equal(stub._meta?.["weir.dev/withheld"], true);
      const res = await fetch(`${server.url}/api/${write}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ owner: "acme-x", repo: "app", issue_number: "1", title: "t" }),
      });
      const body = await res.json();
      assert.equal(res.status, 403);
      assert.match(JSON.stringify(body), /read-only mode/);
    }
    assert.match(byName.get("lock_issue")!.description!, /Locking silences people/);
    assert.equal(byName.get("get_issue")!.annotations?.readOnlyHint, true);
    assert.equal(upstream.requests.length, 0);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("--read-only holds across a reload: a write added to the file arrives as a stub", async () => {
  const upstream = await startRecorder();
  const text = (await Deno.readTextFile("guardfiles/github-issues.mcp.kdl"))
    .replace(/base-url "[^"]*"/, `base-url "${upstream.url}"`);
  const file = await tempGuardfile(text);
  const server = await serveHttp(file, {
    env: { GITHUB_TOKEN: "ghp_token_7777" },
    extra: ["--read-only"],
  });
  try {
    await Deno.writeTextFile(
      file,
      text.replace(
        "    can close issue {",
        `    can edit issue {\n        path "/repos/{owner}/{repo}/issues/{issue_number}"\n        body "title"\n    }\n    can close issue {`,
      ),
    );
    server.kill("SIGHUP");
    let edit: Tool | undefined;
    await until(
      async () =>
        (edit = (await listTools(server.url)).find((t) => t.name === "edit_issue")) !==
          undefined,
      { stepMs: 100 },
    );
    assert.ok(edit, "the reload was served");
    assert.match(edit.description ?? "", /^NOT AVAILABLE: read-only mode/);
    const res = await fetch(`${server.url}/api/edit_issue`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ owner: "acme-x", repo: "app", issue_number: "1", title: "t" }),
    });
    await res.body?.cancel();
    assert.equal(res.status, 403);
    assert.equal(upstream.requests.length, 0);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("--read-only: a GET whose verb writes, or that sends a body, is withheld too (refuse rather than guess)", async () => {
  const upstream = await startRecorder();
  const text = `
wrap ward mcp t {
    base-url "${upstream.url}"
    auth none
    can get item { path "/items/{id}" }
    can delete item { path "/items/{id}/delete"; method "GET"; }
    can close item { path "/items/{id}/close"; method "GET"; }
    can get report { path "/reports"; method "GET"; body { field "filter" type="string"; } }
    can head item { path "/items/{id}"; method "HEAD"; }
}
`;
  const file = await tempGuardfile(text);
  const plain = await serveHttp(file);
  try {
    const tools = new Map((await listTools(plain.url)).map((t) => [t.name, t]));
    // Without --read-only they are served, and not advertised as reads.
    for (const name of ["delete_item", "close_item", "get_report"]) {
      assert.notEqual(tools.get(name)?.annotations?.readOnlyHint, true, name);
    }
    assert.equal(tools.get("get_item")?.annotations?.readOnlyHint, true);
  } finally {
    await plain.stop();
  }
  const server = await serveHttp(file, { extra: ["--read-only"] });
  try {
    const tools = new Map((await listTools(server.url)).map((t) => [t.name, t]));
    for (const name of ["delete_item", "close_item", "get_report"]) {
      assert.match(tools.get(name)!.description!, /^NOT AVAILABLE: read-only mode/, name);
      const [, api] = await callBoth(server.url, name, { id: "1", filter: "x" });
      assert.equal(api, 403, name);
    }
    const [, api] = await callBoth(server.url, "get_item", { id: "1" });
    assert.equal(api, 200);
    assert.deepEqual(
      [...new Set(upstream.requests.map((r) => `${r.method} ${r.path}`))],
      ["GET /items/1"],
    );
  } finally {
    await server.stop();
    await upstream.close();
  }
});
