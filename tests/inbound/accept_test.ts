/**
 * Content negotiation (RFC 9110 section 12.5.1), the whole kind: `acceptsJson()`
 * against a model of the RFC over generated `Accept` headers (media ranges of
 * every specificity, weights valid and not, case, whitespace, parameters,
 * empty list elements), and every JSON endpoint of the library (the MCP
 * handler on both revisions, the tool API) answering 406 exactly when the
 * model says JSON is not acceptable, 2xx otherwise.
 */
import assert from "node:assert/strict";
import { acceptsJson } from "../../src/inbound/checks.ts";
import { createHttpHandler, createToolApiHandler } from "../../mod.ts";
import { initializeRequest, makeServer, modernHeaders, modernRequest } from "../support/mcp.ts";

/** RFC 9110 section 12.4.2 qvalue. */
const QVALUE = /^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$/;

/**
 * The model: parse into (range, weight) pairs, keep the ranges that match
 * application/json, order them most specific first and heaviest first, and
 * read the verdict off the first. Written from the RFC's text, apart from the
 * implementation under test.
 */
function modelAccepts(header: string | null): boolean {
  if (header === null) return true;
  const elements = header.split(",").map((e) => e.trim()).filter((e) => e !== "");
  if (elements.length === 0) return true;
  const matching: { specificity: number; q: number }[] = [];
  for (const element of elements) {
    const parts = element.split(";").map((p) => p.trim());
    const range = parts[0].toLowerCase();
    const specificity = range === "application/json"
      ? 3
      : range === "application/*"
      ? 2
      : range === "*/*"
      ? 1
      : 0;
    if (specificity === 0) continue;
    const weight = parts.slice(1).find((p) => /^q\s*=/i.test(p));
    const text = weight === undefined ? "1" : weight.slice(weight.indexOf("=") + 1).trim();
    if (!QVALUE.test(text)) continue; // not a valid weight: the range is not one the grammar allows
    matching.push({ specificity, q: Number(text) });
  }
  matching.sort((a, b) => b.specificity - a.specificity || b.q - a.q);
  return matching.length > 0 && matching[0].q > 0;
}

/** A small deterministic PRNG (xorshift32), so a failure can be replayed. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  return {
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
    int: (n: number) => Math.floor(next() * n),
  };
}

const RANGES = [
  "application/json",
  "application/*",
  "*/*",
  "text/event-stream",
  "text/html",
  "application/xml",
  "application/json-seq",
  "application/jsonx",
  "json",
  "*/json",
];
const WEIGHTS = [
  "",
  ";q=0",
  ";q=0.0",
  ";q=0.000",
  ";q=0.001",
  ";q=0.5",
  ";q=1",
  ";q=1.000",
  ";Q=0",
  " ; q=0 ",
  ";q=1.5",
  ";q=2",
  ";q=abc",
  ";q=0.0001",
  ";q=-1",
  ";q=",
  ";q=1.001",
];
const PARAMS = ["", ";charset=utf-8", ";profile=x"];

/** A generated Accept header: 0-5 elements, each a range, parameters and a weight. */
function generatedAccept(r: ReturnType<typeof rng>): string {
  const n = r.int(6);
  const elements: string[] = [];
  for (let i = 0; i < n; i++) {
    let range = r.pick(RANGES);
    if (r.int(4) === 0) range = range.toUpperCase();
    const element = `${r.pick(["", " ", "\t"])}${range}${r.pick(PARAMS)}${r.pick(WEIGHTS)}` +
      (r.int(6) === 0 ? ";level=1" : "");
    elements.push(r.int(10) === 0 ? "" : element);
  }
  return elements.join(r.pick([",", ", ", " ,"]));
}

Deno.test("acceptsJson() agrees with the RFC 9110 model on the cases the issue names", () => {
  const cases: [string | null, boolean][] = [
    [null, true],
    ["", true],
    ["application/json", true],
    ["application/json;q=0", false],
    ["*/*;q=0", false],
    ["application/json, text/event-stream", true],
    ["text/event-stream", false],
    ["application/json;q=0, */*", false], // the specific range decides
    ["*/*;q=0, application/json", true],
    ["application/*;q=0, application/json;q=0.1", true],
    ["application/*;q=0.5, */*;q=0", true],
    ["application/json;q=0.000", false],
    ["application/json;q=0.001", true],
    ["APPLICATION/JSON; Q=0", false],
    ["application/json;q=2", false], // an invalid weight: the range is ignored, none is left
    ["application/json;q=2, */*", true],
    [" , ,", true],
  ];
  for (const [header, expected] of cases) {
    assert.equal(modelAccepts(header), expected, `model: ${header}`);
    assert.equal(acceptsJson(header), expected, `acceptsJson: ${header}`);
  }
});

Deno.test("acceptsJson() agrees with the RFC 9110 model on 5,000 generated Accept headers", () => {
  const r = rng(0x9110);
  let refused = 0;
  for (let i = 0; i < 5000; i++) {
    const header = generatedAccept(r);
    const expected = modelAccepts(header);
    if (!expected) refused++;
    assert.equal(acceptsJson(header), expected, `Accept: ${JSON.stringify(header)}`);
    // The memo of the last value must not answer for another.
    assert.equal(acceptsJson(header), expected, `again: ${JSON.stringify(header)}`);
  }
  assert.ok(refused > 500 && refused < 4500, `both outcomes generated (${refused} refused)`);
});

Deno.test("every JSON endpoint answers 406 exactly when Accept refuses JSON (both revisions, the tool API)", async () => {
  const { server } = makeServer({
    catalog: { tools: [{ name: "echo" }], resources: [], prompts: [] },
    dispatch: () => ({ content: [{ type: "text", text: "hi" }] }),
  });
  const options = { authorize: () => true, allowedOrigins: [] as string[] };
  const mcp = createHttpHandler(server, options);
  const api = createToolApiHandler(server, options);
  const r = rng(12_5_1);
  for (let i = 0; i < 300; i++) {
    const accept = generatedAccept(r);
    const acceptable = modelAccepts(accept);
    const calls: [string, Promise<Response>][] = [
      [
        "2026-07-28",
        mcp(
          new Request("http://127.0.0.1/mcp", {
            method: "POST",
            headers: { ...modernHeaders("tools/list"), accept },
            body: JSON.stringify(modernRequest("tools/list")),
          }),
        ),
      ],
      [
        "2025-11-25",
        mcp(
          new Request("http://127.0.0.1/mcp", {
            method: "POST",
            headers: { "content-type": "application/json", accept },
            body: JSON.stringify(initializeRequest(i)),
          }),
        ),
      ],
      [
        "tool API",
        api(
          new Request("http://127.0.0.1/api/echo", {
            method: "POST",
            headers: { "content-type": "application/json", accept },
            body: "{}",
          }),
        ),
      ],
    ];
    for (const [what, call] of calls) {
      const response = await call;
      const text = await response.text();
      if (acceptable) {
        assert.equal(response.status, 200, `${what}, Accept: ${JSON.stringify(accept)}: ${text}`);
      } else {
        assert.equal(response.status, 406, `${what}, Accept: ${JSON.stringify(accept)}`);
        assert.match(text, /Not Acceptable: .*accept it/);
        assert.equal(response.headers.get("cache-control"), "no-store");
      }
    }
  }
});
