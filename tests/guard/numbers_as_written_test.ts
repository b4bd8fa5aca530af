/**
 * A number reaches the upstream as the agent wrote it: generated numbers in
 * every JSON spelling (integers, fractions with trailing zeros, exponents in
 * `e`/`E` with `+`/`-` and leading zeros, `-0`, tiny and huge magnitudes)
 * sent over the tool API and MCP in both revisions to typed number query and
 * body inputs, raw objects and arrays, and integer path parameters: the
 * query text and the body's JSON text carry the very digits received, a path
 * integer its decimal text, and a number a double cannot hold exactly is
 * refused naming where it is, nothing sent. Also: the parsers' re-spelling
 * gates (jsonrpc.ts `RESPELLED`, text.ts `parseJsonExact`) miss no spelling
 * `JSON.stringify` would change.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { createToolApiHandler, McpServer } from "../../mod.ts";
import { createGuard, parseGuardfile } from "../../src/guard/mod.ts";
import { parseJsonExact } from "../../src/mcp/text.ts";
import { type Recorder, startRecorder } from "../support/upstream.ts";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { callToolText } from "../support/revision_http.ts";
import { integerText } from "../support/decimal.ts";

/** A JSON number literal: sign, digits, fraction (trailing zeros allowed), exponent. */
const spelling = fc.record({
  negative: fc.boolean(),
  int: fc.oneof(
    fc.constantFrom(
      "0",
      "1",
      "7",
      "42",
      "100",
      "123456789",
      "9007199254740991",
      "1000000000000000000000",
    ),
    fc.bigInt({ min: 1n, max: 10n ** 20n }).map(String),
  ),
  frac: fc.option(fc.stringMatching(/^[0-9]{1,8}$/), { nil: undefined }),
  exp: fc.option(
    fc.record({
      e: fc.constantFrom("e", "E"),
      sign: fc.constantFrom("", "+", "-"),
      digits: fc.oneof(
        fc.integer({ min: 0, max: 30 }).map(String),
        fc.constantFrom("021", "00", "7"),
      ),
    }),
    { nil: undefined },
  ),
}).map(({ negative, int, frac, exp }) =>
  `${negative ? "-" : ""}${int}${frac === undefined ? "" : `.${frac}`}${
    exp === undefined ? "" : `${exp.e}${exp.sign}${exp.digits}`
  }`
).filter((s) => Number.isFinite(JSON.parse(s)));

/** Whether a double holds the literal's value exactly (its shortest form names the same decimal). */
function exact(text: string): boolean {
  const value = JSON.parse(text) as number;
  return decimalOf(text) === decimalOf(String(value));
}

/**
 * Whether the core refuses the literal: its value is not the double's, or it
 * is an integer beyond 2^53 whose shortest form needs more than 15 digits
 * (src/mcp/tools.ts: such a double is what rounding makes of longer digits).
 */
function refused(text: string): boolean {
  const value = JSON.parse(text) as number;
  if (!exact(text)) return true;
  const mantissa = String(Math.abs(value)).split("e")[0].replace(".", "").replace(/0+$/, "");
  return Number.isInteger(value) && !Number.isSafeInteger(value) && mantissa.length > 15;
}

function decimalOf(text: string): string {
  const m = /^(-?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(text)!;
  let digits = (m[2] + (m[3] ?? "")).replace(/^0+/, "");
  let exponent = Number(m[4] ?? 0) - (m[3] ?? "").length;
  const trimmed = digits.replace(/0+$/, "");
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  if (digits === "") return "0";
  return `${m[1]}${digits}e${exponent}`;
}

Deno.test("parseJsonExact() keeps every spelling JSON.stringify would change", () => {
  fc.assert(
    fc.property(spelling, (s) => {
      const parsed = parseJsonExact(`{"n":${s}}`) as { n: unknown };
      assert.equal(JSON.stringify(parsed), `{"n":${s}}`, s);
    }),
    { numRuns: 2000 },
  );
  // Six zeros after the point: String() writes 1e-7 (the gate missed it).
  assert.equal(JSON.stringify(parseJsonExact('{"n":0.0000001}')), '{"n":0.0000001}');
});

const GUARDFILE = (url: string) =>
  `wrap ward mcp n {
    base-url "${url}"
    auth none
    can list item {
        path "/items"
        query { field "since" type="number"; }
    }
    can create item {
        path "/items"
        body { field "price" type="number"; field "meta" type="object" raw=#true; array "list" raw=#true; }
    }
    can get item {
        path "/items/{index}"
        param "index" type="integer"
    }
}
`;

function guardApi(upstream: Recorder) {
  const { guardfile, diagnostics } = parseGuardfile(GUARDFILE(upstream.url), "n.mcp.kdl");
  assert.ok(guardfile, JSON.stringify(diagnostics));
  const server = new McpServer({
    ...createGuard(guardfile, {
      resolver: { env: () => undefined, readFile: () => Promise.reject(new Error("none")) },
      log: () => {},
    }),
    log: () => {},
  });
  return createToolApiHandler(server, { authorize: () => true, allowedOrigins: [] });
}

Deno.test("a number reaches the upstream with the digits the agent wrote, or is refused by name", async () => {
  const upstream = await startRecorder();
  const api = guardApi(upstream);
  const call = async (tool: string, body: string) => {
    const before = upstream.requests.length;
    const r = await api(
      new Request(`http://127.0.0.1/api/${tool}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
    const text = await r.text();
    return { status: r.status, text, sent: upstream.requests.slice(before) };
  };
  try {
    await fc.assert(
      fc.asyncProperty(spelling, async (s) => {
        const q = await call("list_item", `{"since":${s}}`);
        const b = await call(
          "create_item",
          `{"price":${s},"meta":{"a":[${s}]},"list":[${s},{"x":${s}}]}`,
        );
        if (refused(s)) {
          // More digits than a double holds (or an integer past 2^53 the core cannot
          // tell from a rounded one): refused naming the input, nothing sent.
          for (const r of [q, b]) {
            assert.equal(r.status, 400, `${s}: ${r.text}`);
            assert.match(r.text, /the number at (since|price|meta\.a\[0\]|list\[0\]|list\[1\]\.x)/);
            assert.equal(r.sent.length, 0);
          }
          return;
        }
        assert.equal(q.status, 200, `${s}: ${q.text}`);
        assert.equal(q.sent[0].query, `since=${encodeURIComponent(s)}`, s);
        assert.equal(b.status, 200, `${s}: ${b.text}`);
        assert.equal(
          b.sent[0].body,
          `{"price":${s},"meta":{"a":[${s}]},"list":[${s},{"x":${s}}]}`,
          s,
        );
        const value = JSON.parse(s) as number;
        if (Number.isInteger(value)) {
          // Beyond 2^53 too: the integer the agent wrote, not the double's exact value.
          const p = await call("get_item", `{"index":${s}}`);
          assert.equal(p.status, 200, `${s}: ${p.text}`);
          assert.equal(p.sent[0].path, `/items/${integerText(s)}`, s);
        }
      }),
      { numRuns: 300 },
    );
  } finally {
    await upstream.close();
  }
});

Deno.test("weir serve: since=1e21 goes upstream as 1e21 over the tool API and MCP in both revisions", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(GUARDFILE(upstream.url));
  const server = await serveHttp(file);
  try {
    for (const s of ["1e21", "1.0", "-0", "1E+2", "0.0000001", "2.50"]) {
      const api = await fetch(`${server.url}/api/list_item`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: `{"since":${s}}`,
      });
      assert.equal(api.status, 200, await api.text());
      assert.equal(upstream.requests.at(-1)!.query, `since=${encodeURIComponent(s)}`);
      for (const modern of [false, true]) {
        const answer = JSON.parse(
          await callToolText(
            server.url,
            modern ? "2026-07-28" : "2025-11-25",
            "create_item",
            `{"price":${s}}`,
          ),
        );
        assert.equal(answer.result?.isError, undefined, JSON.stringify(answer));
        assert.equal(upstream.requests.at(-1)!.body, `{"price":${s}}`);
      }
    }
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("weir serve: an integer path parameter of 1e23 goes upstream as the integer written, over the tool API and MCP in both revisions", async () => {
  // The double nearest 1e23 is 99999999999999991611392: the path carried those
  // digits, an integer the agent never named.
  const upstream = await startRecorder();
  const file = await tempGuardfile(GUARDFILE(upstream.url));
  const server = await serveHttp(file);
  try {
    for (const s of ["1e23", "-1e23", "999999999999999e6", "1.5e300", "1e21"]) {
      const want = `/items/${integerText(s)}`;
      const api = await fetch(`${server.url}/api/get_item`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: `{"index":${s}}`,
      });
      assert.equal(api.status, 200, await api.text());
      assert.equal(upstream.requests.at(-1)!.path, want, `tool API ${s}`);
      for (const modern of [false, true]) {
        const answer = JSON.parse(
          await callToolText(
            server.url,
            modern ? "2026-07-28" : "2025-11-25",
            "get_item",
            `{"index":${s}}`,
          ),
        );
        assert.equal(answer.result?.isError, undefined, JSON.stringify(answer));
        assert.equal(upstream.requests.at(-1)!.path, want, `MCP ${modern ? "2026" : "2025"} ${s}`);
      }
    }
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});
