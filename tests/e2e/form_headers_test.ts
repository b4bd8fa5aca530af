/**
 * Form-encoded bodies and caller-supplied headers (a grant's `form` and
 * `header` nodes) through the shipped CLI, with generated values, read back by
 * the parsers real servers use: `qs` (Express's `urlencoded({ extended: true })`
 * and many Node servers: `a[b]=c`, `a[]=x`, `a[0]=x`) and the WHATWG form
 * parser (`URLSearchParams`, `Request.formData()`: repeated keys). Every value
 * arrives exactly as the agent wrote it, each in its own field; what a form or
 * a header cannot carry exactly is refused before anything is sent.
 */
import assert from "node:assert/strict";
import qs from "qs";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import fc from "../support/property.ts";
import { callApi, serveHttp, tempGuardfile, weirCommand } from "../support/cli.ts";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type Recorded, startRecorder } from "../support/upstream.ts";

const upstream = await startRecorder(() => Response.json({ ok: true }));
const file = await tempGuardfile(`wrap ward mcp payments {
    base-url "${upstream.url}"
    auth bearer { value env "FORM_TEST_TOKEN" }
    can create charge {
        path "/v1/charges"
        form arrays="brackets"
        header "Idempotency-Key" max-length=255
        header "Stripe-Version" { enum "2024-06-20" "2025-01-27"; }
        body {
            field "amount" type="integer" required=#true
            field "currency" type="string" required=#true
            field "capture" type="boolean"
            field "rate" type="number"
            object "metadata" raw=#true
            array "expand" items="string"
        }
    }
    can create message {
        path "/Messages.json"
        form
        header "X-Request-Id" input="request_id" required=#true pattern="^[A-Za-z0-9-]{8,64}$"
        body {
            field "To" type="string" required=#true
            array "MediaUrl" items="string"
        }
    }
    can create order {
        path "/orders"
        form arrays="indexed"
        header "If-Match" metacharacters="allow"
        body { array "lines" raw=#true; }
    }
}
`);
const server = await serveHttp(file, { env: { FORM_TEST_TOKEN: "a-long-enough-test-token" } });

/** The last request the upstream received. */
function last(): Recorded {
  const seen = upstream.requests.at(-1);
  assert.ok(seen, "the upstream received a request");
  return seen;
}

/** A form value as the upstream reads it back: every scalar is text. */
function asText(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asText);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asText(v)]));
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Text any Unicode scalar values make (no unpaired surrogate), never empty. */
const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 });
/**
 * An object key a form can name: no brackets, not a member of Object.prototype,
 * not an array index (qs reads `a[7]=x` as an array); digits that are no index do.
 */
const key = fc.oneof(
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
  fc.stringMatching(/^0[0-9]{1,3}$/),
).filter((k) =>
  !/[[\]]/.test(k) && !(k in Object.prototype) && k !== "prototype" &&
  !/^(?:0|[1-9][0-9]*)$/.test(k)
);
/** A header value weir sends as is: printable ASCII, no space at either end, no gated character. */
const headerValue = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 255,
})
  .filter((v) => !/[`$;&|<>(){}\\]/.test(v));

Deno.test("form arrays=brackets: generated charges reach a qs parser exactly, headers as given", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        amount: fc.integer({ min: -1e9, max: 1e9 }),
        currency: text,
        capture: fc.option(fc.boolean(), { nil: undefined }),
        rate: fc.option(fc.double({ min: -1e12, max: 1e12, noNaN: true }), { nil: undefined }),
        metadata: fc.option(fc.dictionary(key, text, { minKeys: 1, maxKeys: 5 }), {
          nil: undefined,
        }),
        expand: fc.option(fc.array(text, { minLength: 1, maxLength: 20 }), { nil: undefined }),
      }, { requiredKeys: ["amount", "currency"] }),
      fc.option(headerValue, { nil: undefined }),
      async (args, idempotency) => {
        const given = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
        const call = idempotency === undefined ? given : { ...given, idempotency_key: idempotency };
        const r = await callApi(server.url, "create_charge", call);
        assert.equal(r.status, 200, r.text);
        const seen = last();
        assert.equal(seen.headers.get("content-type"), "application/x-www-form-urlencoded");
        assert.equal(seen.headers.get("idempotency-key"), idempotency ?? null);
        assert.deepEqual(qs.parse(seen.body), asText(given));
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("form (repeat): a WHATWG form parser reads each value in its own field", async () => {
  await fc.assert(
    fc.asyncProperty(
      text,
      fc.option(fc.array(text, { minLength: 1, maxLength: 20 }), { nil: undefined }),
      fc.stringMatching(/^[A-Za-z0-9-]{8,64}$/),
      async (to, media, requestId) => {
        const args: Record<string, unknown> = { To: to, request_id: requestId };
        if (media) args.MediaUrl = media;
        const r = await callApi(server.url, "create_message", args);
        assert.equal(r.status, 200, r.text);
        const form = new URLSearchParams(last().body);
        assert.deepEqual([...new Set(form.keys())], media ? ["To", "MediaUrl"] : ["To"]);
        assert.deepEqual(form.getAll("To"), [to]);
        assert.deepEqual(form.getAll("MediaUrl"), media ?? []);
        assert.equal(last().headers.get("x-request-id"), requestId);
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("form arrays=indexed: arrays of objects round-trip through qs", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({ sku: text, qty: fc.integer({ min: 0, max: 1000 }) }),
        { minLength: 1, maxLength: 20 },
      ),
      async (lines) => {
        const r = await callApi(server.url, "create_order", {
          lines,
          if_match: `W/"${lines.length}"`,
        });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(qs.parse(last().body), { lines: asText(lines) });
        assert.equal(last().headers.get("if-match"), `W/"${lines.length}"`);
      },
    ),
    { numRuns: 30 },
  );
});

Deno.test("what a form or a header cannot carry exactly is refused by name, nothing sent", async () => {
  const before = upstream.requests.length;
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      "create_charge",
      { amount: 1, currency: "eur", metadata: { a: null } },
      /metadata\.a" is null/,
    ],
    ["create_charge", { amount: 1, currency: "eur", expand: [] }, /"expand" is an empty array/],
    [
      "create_charge",
      { amount: 1, currency: "eur", metadata: {} },
      /"metadata" is an empty object/,
    ],
    [
      "create_charge",
      { amount: 1, currency: "eur", expand: Array.from({ length: 21 }, (_, i) => `e${i}`) },
      /has 21 items; a form body carries at most 20/,
    ],
    [
      "create_charge",
      { amount: 1, currency: "eur", metadata: { "a][b": "x" } },
      /holds "\[" or "\]"/,
    ],
    [
      "create_charge",
      { amount: 1, currency: "eur", metadata: { hasOwnProperty: "x" } },
      /a name form parsers drop/,
    ],
    // qs would read {"7": "x"} as ["x"]: an object turned array, its index lost.
    [
      "create_charge",
      { amount: 1, currency: "eur", metadata: { "7": "x" } },
      /"metadata\.7": the key "7" is a number, which form parsers \(qs, behind Express\) read as an array index/,
    ],
    [
      "create_order",
      { lines: [{ "0": "x" }], if_match: "1" },
      /"lines\[0\]\.0": the key "0" is a number/,
    ],
    [
      "create_charge",
      { amount: 1, currency: "eur", metadata: { a: { b: { c: { d: { e: { f: "deep" } } } } } } },
      /nested deeper than 5 levels/,
    ],
    ["create_order", { lines: [[["x"]]], if_match: "1" }, /^/],
    [
      "create_charge",
      { amount: 1, currency: "eur", idempotency_key: "a\r\nX-Evil: 1" },
      /header "Idempotency-Key" contains a control character/,
    ],
    [
      "create_charge",
      { amount: 1, currency: "eur", idempotency_key: "clé" },
      /outside printable ASCII/,
    ],
    [
      "create_charge",
      { amount: 1, currency: "eur", idempotency_key: " padded" },
      /starts or ends with a space/,
    ],
    [
      "create_charge",
      { amount: 1, currency: "eur", idempotency_key: "$(reboot)" },
      /header "Idempotency-Key" contains a character this server refuses/,
    ],
    [
      "create_charge",
      { amount: 1, currency: "eur", stripe_version: "2099-01-01" },
      /stripe_version/,
    ],
    ["create_message", { To: "+1", request_id: "short" }, /pattern|request_id/],
    ["create_message", { To: "+1" }, /request_id/],
  ];
  for (const [tool, args, message] of cases) {
    const r = await callApi(server.url, tool, args);
    if (tool === "create_order" && Array.isArray((args.lines as unknown[])[0])) {
      // Three levels: within the depth, so an array of arrays is written indexed and sent.
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(qs.parse(last().body), { lines: [[["x"]]] });
      continue;
    }
    assert.notEqual(r.status, 200, `${JSON.stringify(args)} was refused`);
    assert.match(r.text + JSON.stringify(r.body), message, JSON.stringify(args));
  }
  assert.equal(upstream.requests.length, before + 1, "only the indexed array of arrays was sent");
});

Deno.test("both MCP revisions: the header and the form body arrive as the tool API sends them", async () => {
  const args = {
    amount: 2000,
    currency: "usd",
    metadata: { order_id: "6735", "note with space": "a&b=c+d%" },
    expand: ["customer", "invoice"],
    idempotency_key: "KG5LxwFBepaKHyUD",
    stripe_version: "2024-06-20",
  };
  const expected = {
    amount: "2000",
    currency: "usd",
    metadata: { order_id: "6735", "note with space": "a&b=c+d%" },
    expand: ["customer", "invoice"],
  };
  const v1 = new ClientV1({ name: "weir-test", version: "1.0.0" });
  await v1.connect(new HttpV1(new URL(`${server.url}/mcp`)));
  const v2 = new ClientV2(
    { name: "weir-test", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await v2.connect(new HttpV2(new URL(`${server.url}/mcp`)));
  try {
    type AnyClient = {
      listTools(): Promise<{ tools: { name: string; inputSchema: { properties?: unknown } }[] }>;
      callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
    };
    for (const client of [v1, v2] as unknown as AnyClient[]) {
      const { tools } = await client.listTools();
      const charge = tools.find((t) => t.name === "create_charge")!;
      const props = charge.inputSchema.properties as Record<string, { description?: string }>;
      assert.match(
        props.idempotency_key.description ?? "",
        /Sent as the Idempotency-Key header; printable ASCII/,
      );
      const result = await client.callTool({ name: "create_charge", arguments: args });
      assert.notEqual((result as { isError?: boolean }).isError, true, JSON.stringify(result));
      assert.equal(last().headers.get("idempotency-key"), args.idempotency_key);
      assert.equal(last().headers.get("stripe-version"), "2024-06-20");
      assert.equal(last().headers.get("authorization"), "Bearer a-long-enough-test-token");
      assert.deepEqual(qs.parse(last().body), expected);
    }
  } finally {
    await v1.close();
    await v2.close();
  }
});

Deno.test("over stdio (2025-11-25): the same form body and header reach the upstream", async () => {
  const { command, args } = weirCommand();
  const client = new ClientV1({ name: "weir-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command,
      args: [...args, "serve", file, "--stdio"],
      env: { ...Deno.env.toObject(), FORM_TEST_TOKEN: "a-long-enough-test-token" },
      stderr: "ignore",
    }),
  );
  try {
    const result = await client.callTool({
      name: "create_order",
      arguments: { lines: [{ sku: "a b&c", qty: 2 }], if_match: `W/"7"` },
    });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(qs.parse(last().body), { lines: [{ sku: "a b&c", qty: "2" }] });
    assert.equal(last().headers.get("if-match"), `W/"7"`);
    const refused = await client.callTool({
      name: "create_order",
      arguments: { lines: [], if_match: "x" },
    });
    assert.equal(refused.isError, true, "an empty array is refused over stdio too");
  } finally {
    await client.close();
  }
});

Deno.test("a conditional request's 304 Not Modified is an answer, not a refused redirect", async () => {
  const etagged = await startRecorder((req) =>
    req.headers.get("if-none-match") === `"v1"`
      ? new Response(null, { status: 304, headers: { etag: `"v1"` } })
      : Response.json({ v: 1 }, { headers: { etag: `"v1"` } })
  );
  const conditional = await serveHttp(
    await tempGuardfile(
      `wrap ward mcp c {\n    base-url "${etagged.url}"\n    auth none\n` +
        `    can get doc {\n        path "/doc"\n        header "If-None-Match"\n    }\n}\n`,
    ),
  );
  try {
    const fresh = await callApi(conditional.url, "get_doc", {});
    assert.equal(fresh.status, 200, fresh.text);
    const same = await callApi(conditional.url, "get_doc", { if_none_match: `"v1"` });
    assert.equal(same.status, 200, JSON.stringify(same.body));
    assert.match(JSON.stringify(same.body), /304 Not Modified/);
    assert.equal(etagged.requests.at(-1)?.headers.get("if-none-match"), `"v1"`);
  } finally {
    await conditional.stop();
    await etagged.close();
  }
  assert.doesNotMatch(conditional.stderr(), /upstream_redirect/);
});

Deno.test("the servers stop", async () => {
  await server.stop();
  await upstream.close();
});
