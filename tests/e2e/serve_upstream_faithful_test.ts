/**
 * Faithful arguments, as a property, through the shipped CLI: for generated
 * tool input schemas of every form that admits keys (`properties`,
 * `additionalProperties` schemas, `patternProperties`, `$ref`/`$defs` at the
 * root or nested, `allOf`/`anyOf`/`oneOf`, `if`/`then`/`else`,
 * `dependentSchemas`, `unevaluatedProperties`, nested objects and arrays) and
 * generated argument objects that validate (checked with Ajv as well), what
 * the upstream receives is what the caller sent: the same keys and values,
 * compared as JSON text with every number's spelling kept
 * (`tests/support/schema_cases.ts`).
 *
 * The upstreams are recording ones built on the official SDK: over HTTP for
 * both revisions with JSON and SSE answers, and over stdio; plus
 * server-everything over stdio, whose `echo` sends back the string it was
 * given. Each configuration is one running weir; the cases go through it
 * one after another, alternating MCP (`POST /mcp`) and the tool API.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import Ajv2020Import from "ajv/dist/2020.js";
import { ROOT } from "../support/cli.ts";
import { cleanText } from "../../src/mcp/text.ts";
import {
  cacheEverything,
  everythingCommand,
  startWrapper,
  type Wrapper,
} from "../support/upstream_cli.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { callToolText } from "../support/revision_http.ts";
import {
  canonicalExact,
  canonicalOf,
  parseExact,
  type SchemaCase,
  toolCase,
  writeJson,
} from "../support/schema_cases.ts";

interface AjvLike {
  compile(schema: unknown): ((data: unknown) => boolean) & { errors?: unknown };
}
const Ajv2020 = Ajv2020Import as unknown as new (o: Record<string, unknown>) => AjvLike;

/** Tools per configuration, and cases sent through each. */
const TOOLS = 40;
const RUNS = 700;
const SEED = 20261202;

/** The generated tools, each with its Ajv check. */
function generatedTools(seed: number) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  return fc.sample(toolCase(2), { numRuns: TOOLS, seed }).map((c: SchemaCase, i) => ({
    name: `t${i}`,
    schema: c.schema,
    values: c.values,
    valid: ajv.compile(c.schema),
  }));
}

/**
 * Whether the text holds a number weir refuses rather than forward (the MCP
 * core's rule, src/mcp/tools.ts): an integer beyond 2^53 whose shortest
 * spelling needs more than 15 significant digits (JSON.parse may have
 * rounded it), a number beyond the largest double, or one whose digits name
 * another value than the double they parse to.
 */
function inexact(text: string): boolean {
  let found = false;
  JSON.parse(text, (_key, value, context?: { source?: string }) => {
    if (typeof value !== "number") return value;
    const digits = (t: string) =>
      t.replace(/^-/, "").split(/[eE]/)[0].replace(".", "").replace(/^0+/, "").replace(/0+$/, "");
    const mantissa = String(Math.abs(value)).split("e")[0].replace(".", "").replace(/0+$/, "");
    if (!Number.isFinite(value)) found = true;
    else if (Number.isInteger(value) && !Number.isSafeInteger(value) && mantissa.length > 15) {
      found = true;
    } else if (digits(context!.source!).length > 17) found = true;
    return value;
  });
  return found;
}

/** Send `text` as tool `name`'s arguments, over MCP or the tool API; the result's text. */
async function send(weir: Wrapper, name: string, text: string, viaApi: boolean) {
  if (viaApi) {
    const r = await fetch(`${weir.url}/api/${name}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: text,
      signal: AbortSignal.timeout(30_000),
    });
    return { ok: r.status === 200, body: await r.text() };
  }
  const body = await callToolText(weir.url, "2025-11-25", name, text);
  const reply = JSON.parse(body);
  return { ok: reply.result !== undefined && reply.result.isError !== true, body };
}

/**
 * Run the property through one weir: `received()` returns the raw text of
 * every `tools/call` message the upstream has read so far.
 */
async function property(
  weir: Wrapper,
  tools: ReturnType<typeof generatedTools>,
  received: () => Promise<string[]> | string[],
  seed: number,
) {
  const arbitrary = fc.tuple(
    fc.integer({ min: 0, max: tools.length - 1 }).chain((i) =>
      tools[i].values.map((v) => ({ i, text: writeJson(v) }))
    ),
    fc.boolean(),
  );
  await fc.assert(
    fc.asyncProperty(arbitrary, async ([{ i, text }, viaApi]) => {
      const tool = tools[i];
      assert.ok(tool.valid(JSON.parse(text)), `the generator made an invalid case: ${text}`);
      const before = (await received()).length;
      const answer = await send(weir, tool.name, text, viaApi);
      if (inexact(text)) {
        // A number a double cannot carry exactly is refused by where it is, as in
        // spec mode, and nothing is sent: never a rounded copy.
        assert.ok(!answer.ok, answer.body);
        assert.match(answer.body, /cannot be passed on exactly/);
        assert.equal((await received()).length, before);
        return;
      }
      assert.ok(answer.ok, `${tool.name} ${JSON.stringify(tool.schema)} ${text}: ${answer.body}`);
      const after = await received();
      assert.equal(after.length, before + 1, "exactly one tools/call reached the upstream");
      const message = parseExact(after[before]) as { params: { arguments: unknown } };
      assert.equal(
        canonicalOf(message.params.arguments),
        canonicalExact(text),
        `${tool.name}: ${JSON.stringify(tool.schema)}`,
      );
    }),
    { numRuns: RUNS, seed },
  );
}

const CONFIGS = [
  ["2025-11-25", "json"],
  ["2025-11-25", "sse"],
  ["2026-07-28", "json"],
  ["2026-07-28", "sse"],
] as const;

for (const [index, [revision, framing]] of CONFIGS.entries()) {
  Deno.test(`faithful arguments: ${RUNS} generated cases, HTTP upstream (${revision}, ${framing})`, async () => {
    const tools = generatedTools(SEED + index);
    const up = await startSdkUpstream({
      revision,
      framing,
      tools: tools.map((t) => ({ name: t.name, inputSchema: t.schema })),
    });
    const weir = await startWrapper([
      ...tools.flatMap((t) => ["--tool", t.name]),
      "--upstream",
      up.url,
    ]);
    try {
      assert.doesNotMatch(weir.stderr(), /upstream_tool_stubbed/, "every generated tool is served");
      await property(weir, tools, () => up.calls(), SEED + index);
    } finally {
      await weir.stop();
      await up.stop();
    }
  });
}

Deno.test(`faithful arguments: ${RUNS} generated cases, stdio upstream on the official SDK`, async () => {
  const tools = generatedTools(SEED + 9);
  const dir = await Deno.makeTempDir({ prefix: "weir-faithful-" });
  const toolsFile = `${dir}/tools.json`;
  const record = `${dir}/record.jsonl`;
  await Deno.writeTextFile(
    toolsFile,
    JSON.stringify(tools.map((t) => ({ name: t.name, inputSchema: t.schema }))),
  );
  await Deno.writeTextFile(record, "");
  const weir = await startWrapper(
    [
      ...tools.flatMap((t) => ["--tool", t.name]),
      "--",
      Deno.execPath(),
      "run",
      "--quiet",
      "-A",
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}tests/fixtures/sdk_stdio_recorder.ts`,
    ],
    { env: { WEIR_TEST_TOOLS_FILE: toolsFile, WEIR_TEST_RECORD: record } },
  );
  try {
    assert.doesNotMatch(weir.stderr(), /upstream_tool_stubbed/, "every generated tool is served");
    const received = async () =>
      (await Deno.readTextFile(record)).split("\n").filter((l) => l !== "").map((l) =>
        JSON.parse(l) as string
      );
    await property(weir, tools, received, SEED + 9);
  } finally {
    await weir.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("faithful arguments: server-everything over stdio echoes every generated string as sent", async () => {
  await cacheEverything();
  const weir = await startWrapper(["--tool", "echo", "--", ...everythingCommand()]);
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.boolean(),
        async (s, viaApi) => {
          const answer = await send(weir, "echo", JSON.stringify({ message: s }), viaApi);
          assert.ok(answer.ok, answer.body);
          const result = JSON.parse(answer.body);
          const text = (viaApi ? result : result.result).content[0].text;
          // What comes back is clean text (docs/spec-mode.md, "Clean text out").
          assert.equal(text, cleanText(`Echo: ${s}`));
        },
      ),
      { numRuns: 300, seed: SEED },
    );
  } finally {
    await weir.stop();
  }
});
