/**
 * checkParams() and tooDeepAt() (src/mcp/params.ts), the whole kind "a value
 * from the wire reaches code before it is bounded and typed":
 *
 * - every request field the official schemas of both revisions define (read
 *   from tests/fixtures/mcp-schema, not from weir's table), sent with each
 *   wrong JSON type, is `-32602` naming the field, never a `-32603`, on both
 *   revisions, straight to the core (stdio's path) and over HTTP;
 * - generated nesting depths (0 to 300, and 3,000 and 50,000) at every place
 *   a request carries a value (`_meta` keys, the log level, the progress
 *   token, the cursor, arguments, input responses, client info, a client's
 *   answer on stdio): within the bound they are served or refused for their
 *   type, past it `-32602` naming the path; never `-32603`, never a crash.
 */
import assert from "node:assert/strict";
import { createHttpHandler, createToolApiHandler, McpServer, Session } from "../../mod.ts";
import { MAX_PARAMS_DEPTH, tooDeepAt } from "../../src/mcp/params.ts";
import { LEGACY, MODERN, type Revision } from "../support/schemas.ts";
import { MODERN_META } from "../support/mcp.ts";

const schemas: Record<Revision, { $defs: Record<string, Schema> }> = {
  [LEGACY]: JSON.parse(
    await Deno.readTextFile(
      new URL("../fixtures/mcp-schema/2025-11-25/schema.json", import.meta.url),
    ),
  ),
  [MODERN]: JSON.parse(
    await Deno.readTextFile(
      new URL("../fixtures/mcp-schema/2026-07-28/schema.json", import.meta.url),
    ),
  ),
} as never;

interface Schema {
  type?: string | string[];
  $ref?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
}

/** The request methods weir serves, and their params definition in the schemas. */
const METHODS: Record<string, string> = {
  "initialize": "InitializeRequestParams",
  "tools/list": "PaginatedRequestParams",
  "resources/list": "PaginatedRequestParams",
  "resources/templates/list": "PaginatedRequestParams",
  "prompts/list": "PaginatedRequestParams",
  "tools/call": "CallToolRequestParams",
  "resources/read": "ReadResourceRequestParams",
  "prompts/get": "GetPromptRequestParams",
};

function resolve(revision: Revision, schema: Schema): Schema {
  return schema.$ref
    ? resolve(revision, schemas[revision].$defs[schema.$ref.split("/").pop()!])
    : schema;
}

/** The JSON types a schema admits at its top (a `$ref` followed). */
function typesOf(revision: Revision, schema: Schema): string[] {
  const s = resolve(revision, schema);
  if (s.enum) return ["enum"];
  if (s.type) return Array.isArray(s.type) ? s.type : [s.type];
  return s.properties ? ["object"] : [];
}

/** Values of every JSON type, each labelled with the types it is. */
const SAMPLES: [unknown, string[]][] = [
  ["a", ["string"]],
  [7, ["integer", "number"]],
  [1.5, ["number"]],
  [true, ["boolean"]],
  [null, ["null"]],
  [[], ["array"]],
  [[["x"]], ["array"]],
  [{}, ["object"]],
];

/** Every (field path, wrong value) the schemas say is wrong, for one revision and method. */
function wrongValues(revision: Revision, method: string): [string[], unknown][] {
  const params = resolve(revision, schemas[revision].$defs[METHODS[method]]);
  const out: [string[], unknown][] = [];
  for (const [name, field] of Object.entries(params.properties ?? {})) {
    if (name === "_meta") {
      const meta = resolve(revision, field);
      for (const [key, metaField] of Object.entries(meta.properties ?? {})) {
        for (const value of wrongFor(revision, metaField)) out.push([["_meta", key], value]);
      }
      continue;
    }
    for (const value of wrongFor(revision, field)) out.push([[name], value]);
  }
  return out;
}

function wrongFor(revision: Revision, field: Schema): unknown[] {
  const types = typesOf(revision, field);
  if (types.length === 0) return [];
  if (types[0] === "enum") {
    return SAMPLES.filter(([v]) => !resolve(revision, field).enum!.includes(v)).map(([v]) => v);
  }
  return SAMPLES.filter(([, is]) => !is.some((t) => types.includes(t))).map(([v]) => v);
}

function server(): McpServer {
  return new McpServer({
    name: "params",
    catalog: {
      tools: [{ name: "echo", inputSchema: { type: "object" } }],
      resources: [{ uri: "demo://a", name: "a" }],
      prompts: [{ name: "p" }],
    },
    dispatch: () => ({ content: [{ type: "text", text: "ok" }] }),
    readResource: (uri) => [{ uri, text: "a" }],
    getPrompt: () => ({ messages: [] }),
    log: () => {},
  });
}

/** A valid request of `method` under `revision`, before the field under test is set. */
function baseParams(revision: Revision, method: string): Record<string, unknown> {
  const meta = revision === MODERN ? { _meta: { ...MODERN_META } } : {};
  switch (method) {
    case "initialize":
      return {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      };
    case "tools/call":
      return { ...meta, name: "echo", arguments: {} };
    case "resources/read":
      return { ...meta, uri: "demo://a" };
    case "prompts/get":
      return { ...meta, name: "p" };
    default:
      return { ...meta };
  }
}

function setAt(params: Record<string, unknown>, path: string[], value: unknown) {
  const copy = structuredClone(params);
  if (path.length === 2) {
    copy._meta = { ...(copy._meta as object ?? {}), [path[1]]: value };
  } else copy[path[0]] = value;
  return copy;
}

/** Send one request both ways: to the core (as stdio does) and through the HTTP handler. */
async function ask(
  srv: McpServer,
  revision: Revision,
  method: string,
  params: Record<string, unknown>,
): Promise<{ code?: number; message?: string }[]> {
  const message = { jsonrpc: "2.0", id: 1, method, params };
  const direct = await srv.handle(message);
  const http = createHttpHandler(srv, { authorize: () => true, allowedOrigins: [] });
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (revision === LEGACY && method !== "initialize") headers["mcp-protocol-version"] = LEGACY;
  if (revision === MODERN) {
    headers["mcp-protocol-version"] = MODERN;
    headers["mcp-method"] = method;
    const name = params.name ?? params.uri;
    if (typeof name === "string") headers["mcp-name"] = name;
  }
  const response = await http(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers,
      body: JSON.stringify(message),
    }),
  );
  return [JSON.parse(direct.body!).error ?? {}, (await response.json()).error ?? {}];
}

Deno.test("checkParams(): every field the official schemas define, sent with a wrong type, is -32602 naming it", async () => {
  const srv = server();
  let cases = 0;
  for (const revision of [LEGACY, MODERN]) {
    for (const method of Object.keys(METHODS)) {
      if (revision === MODERN && method === "initialize") continue; // not a 2026-07-28 method
      for (const [path, value] of wrongValues(revision, method)) {
        // These two say which revision a request is: wrong, they are refused as such.
        if (path[1] === "io.modelcontextprotocol/protocolVersion" && revision === LEGACY) continue;
        const params = setAt(baseParams(revision, method), path, value);
        for (const [i, error] of (await ask(srv, revision, method, params)).entries()) {
          const what = `${revision} ${method} ${path.join(".")}=${JSON.stringify(value)} ` +
            `(${i === 0 ? "core" : "HTTP"})`;
          assert.equal(error.code, -32602, `${what}: ${JSON.stringify(error)}`);
          const field = path.at(-1)!;
          assert.ok(error.message?.includes(field), `${what} names ${field}: ${error.message}`);
          cases++;
        }
      }
    }
  }
  assert.ok(cases > 300, `only ${cases} cases`);
});

/** A value nested `depth` levels: arrays and objects in turn. */
function nested(depth: number): unknown {
  let v: unknown = "x";
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

/** Where a request can carry a value of any shape, and how deep that place already is. */
const PLACES: [string, Revision, string, (v: unknown) => Record<string, unknown>, number][] = [
  ["a _meta key", MODERN, "tools/list", (v) => ({ _meta: { ...MODERN_META, "x/y": v } }), 2],
  [
    "the log level",
    MODERN,
    "tools/list",
    (v) => ({ _meta: { ...MODERN_META, "io.modelcontextprotocol/logLevel": v } }),
    2,
  ],
  ["the progress token", LEGACY, "tools/list", (v) => ({ _meta: { progressToken: v } }), 2],
  ["the cursor", MODERN, "prompts/list", (v) => ({ _meta: MODERN_META, cursor: v }), 1],
  [
    "the arguments",
    MODERN,
    "tools/call",
    (v) => ({ _meta: MODERN_META, name: "echo", arguments: { a: v } }),
    2,
  ],
  [
    "the input responses",
    MODERN,
    "tools/call",
    (v) => ({ _meta: MODERN_META, name: "echo", inputResponses: { a: { b: v } } }),
    3,
  ],
  [
    "the client capabilities",
    MODERN,
    "tools/list",
    (v) => ({ _meta: { ...MODERN_META, "io.modelcontextprotocol/clientCapabilities": { x: v } } }),
    3,
  ],
  [
    "the client info",
    LEGACY,
    "initialize",
    (v) => ({
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "c", version: "1", icons: v },
    }),
    2,
  ],
];

Deno.test("generated nesting depths at every place a request carries a value: bounded, -32602 naming the path", async () => {
  const srv = server();
  let x = 0x3000;
  const random = (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  const depths = [
    0,
    1,
    MAX_PARAMS_DEPTH - 3,
    MAX_PARAMS_DEPTH - 2,
    MAX_PARAMS_DEPTH - 1,
    MAX_PARAMS_DEPTH,
    3000,
    50_000,
  ];
  for (let i = 0; i < 20; i++) depths.push(random(300));
  for (const [where, revision, method, make, at] of PLACES) {
    for (const depth of depths) {
      const params = make(nested(depth));
      const tooDeep = at + depth > MAX_PARAMS_DEPTH;
      for (const [i, error] of (await ask(srv, revision, method, params)).entries()) {
        const what = `${where} at depth ${depth} (${i === 0 ? "core" : "HTTP"})`;
        assert.notEqual(error.code, -32603, `${what}: ${JSON.stringify(error)}`);
        if (tooDeep) {
          assert.equal(error.code, -32602, `${what}: ${JSON.stringify(error)}`);
          assert.match(
            error.message!,
            /^params[.[].* nests deeper than \d+ levels below params/,
            what,
          );
          assert.ok(error.message!.length < 600, `${what}: the path is shown bounded`);
        } else {
          assert.doesNotMatch(error.message ?? "", /nests deeper/, what);
        }
      }
    }
  }
});

Deno.test("tooDeepAt() names the first path past the limit, and nothing within it", () => {
  assert.equal(tooDeepAt({}, 1, "params"), null);
  assert.equal(tooDeepAt({ a: {} }, 1, "params"), "params.a");
  assert.equal(tooDeepAt({ a: 1, "b c": [[]] }, 2, "params"), 'params["b c"][0]');
  assert.equal(tooDeepAt([{ x: [] }], 3, "v"), null);
  const long = tooDeepAt(nested(5000), 100, "params")!;
  // 100 segments deep: the first 8, then the last 2.
  assert.equal(long, "params[0].k[0].k[0].k[0].k...[0].k");
  for (let depth = 0; depth < 40; depth++) {
    for (const limit of [1, 5, 20, 39]) {
      assert.equal(
        tooDeepAt(nested(depth), limit, "p") !== null,
        depth > limit,
        `${depth} ${limit}`,
      );
    }
  }
});

Deno.test("a client's answer on stdio nested past the bound is settled as an error, never handed on", async () => {
  const srv = server();
  for (
    const [depth, delivered] of [[MAX_PARAMS_DEPTH, true], [MAX_PARAMS_DEPTH + 1, false], [
      5000,
      false,
    ]] as const
  ) {
    const session = new Session();
    const sent: string[] = [];
    session.send = (line) => sent.push(line);
    const asked = session.request("elicitation/create", {}, new AbortController().signal);
    const id = JSON.parse(sent[0]).id;
    // `result` is level 0: a value `depth` levels below it.
    const reply = await srv.handle({ jsonrpc: "2.0", id, result: { a: nested(depth - 1) } }, {
      session,
    });
    assert.equal(reply.body, null);
    if (delivered) assert.ok(await asked);
    else await assert.rejects(asked, /nests deeper than \d+ levels/);
  }
});

Deno.test("a deep value holding a number spelled unlike JSON.stringify would write it: bounded before the exact re-read", async () => {
  const srv = server();
  const http = createHttpHandler(srv, { authorize: () => true, allowedOrigins: [] });
  const api = createToolApiHandler(srv, { authorize: () => true, allowedOrigins: [] });
  for (const depth of [MAX_PARAMS_DEPTH + 5, 3000, 100_000]) {
    // 1.0, 1e21 and 12345678901234567890 are each re-read from the source text (exact numbers).
    for (const number of ["1.0", "1e21", "12345678901234567890"]) {
      const deep = "[".repeat(depth) + number + "]".repeat(depth);
      const message = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":${
        JSON.stringify(MODERN_META)
      },"name":"echo","arguments":{"a":${deep}}}}`;
      const response = await http(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json",
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "echo",
          },
          body: message,
        }),
      );
      const body = await response.json();
      assert.equal(body.id, 5, `${depth} ${number}`);
      assert.equal(body.error?.code, -32602, `${depth} ${number}: ${JSON.stringify(body)}`);
      assert.match(body.error.message, /nests deeper than/);
      const viaApi = await api(
        new Request("http://127.0.0.1/api/echo", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: `{"a":${deep}}`,
        }),
      );
      const apiBody = await viaApi.json();
      assert.equal(viaApi.status, 400, `${depth} ${number}`);
      assert.equal(apiBody.error.code, "invalid_arguments", JSON.stringify(apiBody));
    }
  }
});
