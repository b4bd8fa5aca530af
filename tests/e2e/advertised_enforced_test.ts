/**
 * Issue 35 item 5, "advertised = enforced", generated: guardfiles with random
 * `restrict` globs (every glob feature, several nodes, every `slashes` mode),
 * patterns, enums, lengths and bounds are served by the shipped CLI in front
 * of a recording upstream; values are drawn from each tool's advertised
 * input schema (a pattern's language, an enum, a bound) and near it (one
 * character more, a `/`, an encoding, a dot segment, a character past
 * U+FFFF) and sent through the tool API. An independent validator (Ajv,
 * JSON Schema 2020-12 with the `u` flag, as clients read a `pattern`) decides
 * what the advertised schema admits; then:
 *
 * - a value it admits that weir refuses as invalid arguments is a failure
 *   (the server held it to something the schema does not say);
 * - a value it admits that the guard refuses must be refused for what no
 *   schema states (docs/guardfile.md `restrict`: a decoded form, a dot
 *   segment, a separator, a control character, the metacharacter gate), never
 *   for the rule the schema states: a `restrict` refusal of a value the glob
 *   admits as sent must come from a form it decodes or normalizes to;
 * - a value it refuses is refused by weir, with nothing sent.
 *
 * Under the old translation (restrict said in words) the first generated file
 * fails: a value outside the globs is admitted by the schema and refused by
 * the guard.
 */
import assert from "node:assert/strict";
import Ajv2020Import from "ajv/dist/2020.js";
import fc from "../support/property.ts";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { compileGlob } from "../../src/guardfile/glob.ts";
import { rpcAs } from "../support/revision_http.ts";

interface AjvLike {
  compile(schema: unknown): ((data: unknown) => boolean) & { errors?: unknown };
}
const Ajv2020 = Ajv2020Import as unknown as new (o: Record<string, unknown>) => AjvLike;

type Schema = {
  type?: string | string[];
  pattern?: string;
  allOf?: { pattern: string }[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  properties?: Record<string, Schema>;
  required?: string[];
};

const GLOB_PIECES = [
  "a",
  "b",
  "-",
  ".",
  "x",
  "*",
  "*",
  "**",
  "?",
  "[a-c]",
  "[^b]",
  "\\*",
  "é",
  "/",
];
const glob = fc.array(fc.constantFrom(...GLOB_PIECES), { minLength: 1, maxLength: 4 })
  .map((p) => p.join(""))
  .filter((g) => !g.startsWith("/") && !g.endsWith("/") && !g.includes("//"));
const PATTERNS = ["^[a-z]+$", "^[a-z0-9-]{1,8}$", "^v[0-9]+$", "x"];

interface Param {
  name: string;
  slashes: "refuse" | "segments" | "encoded";
  typed: boolean;
  restricts: string[][];
  pattern?: string;
  maxLength?: number;
}

const param = (name: string) =>
  fc.record({
    name: fc.constant(name),
    slashes: fc.constantFrom("refuse", "segments", "encoded") as fc.Arbitrary<Param["slashes"]>,
    typed: fc.boolean(),
    restricts: fc.array(fc.array(glob, { minLength: 1, maxLength: 2 }), { maxLength: 2 }),
    pattern: fc.option(fc.constantFrom(...PATTERNS), { nil: undefined }),
    maxLength: fc.option(fc.integer({ min: 2, max: 12 }), { nil: undefined }),
  });

function kdl(params: Param[][], upstream: string): string {
  const restricts = params.flat().flatMap((p) =>
    p.restricts.map((globs) =>
      `    restrict ${p.name} matches ${globs.map((g) => JSON.stringify(g)).join(" ")}`
    )
  );
  const grants = params.map((ps, i) => {
    const path = ps.map((p) => `{${p.name}}`).join("/x/");
    const lines = ps.map((p) =>
      `        param "${p.name}"${p.typed ? ` type="string"` : ""} slashes="${p.slashes}"` +
      (p.pattern ? ` pattern=${JSON.stringify(p.pattern)}` : "") +
      (p.maxLength ? ` max-length=${p.maxLength}` : "")
    );
    return `    can get item${i} {\n        path "/t${i}/${path}"\n${lines.join("\n")}\n` +
      `        query {\n            field "kind" type="string" { enum "open" "closed"; }\n` +
      `            field "n" type="integer" minimum=1 maximum=20\n` +
      `            field "tag" type="string" pattern="^[a-z]{2,5}$"\n        }\n    }`;
  });
  // And one fixed grant whose globs the hostile fillings always reach.
  const fixed =
    `    restrict team matches "team-*"\n    restrict doc matches "docs/**" "README.md"\n` +
    `    can get item_fixed {\n        path "/f/{team}/{doc}"\n` +
    `        param "doc" slashes="segments"\n    }`;
  return `wrap ward mcp generated {\n    base-url "${upstream}"\n    auth none\n` +
    `${restricts.join("\n")}\n${grants.join("\n")}\n${fixed}\n}\n`;
}

/** Values from a property's advertised schema and near it. */
function valuesFor(p: Schema, seed: number): unknown[] {
  const out: unknown[] = [];
  if (p.enum) out.push(...p.enum, "other", null);
  const types = [p.type].flat();
  if (types.includes("integer")) {
    const lo = p.minimum ?? 0;
    const hi = p.maximum ?? 100;
    out.push(lo, hi, lo - 1, hi + 1, Math.floor((lo + hi) / 2), "7");
  }
  if (types.includes("string")) {
    const patterns = [p.pattern, ...(p.allOf ?? []).map((a) => a.pattern)].filter(
      (x): x is string => x !== undefined,
    );
    const base: string[] = [];
    for (const pattern of patterns) {
      base.push(...fc.sample(fc.stringMatching(new RegExp(pattern, "u")), { numRuns: 6, seed }));
    }
    base.push("a", "abc", "v1");
    for (const b of base.slice(0, 12)) {
      out.push(b);
      for (
        const near of ["/", "%2F", "/..", "%2e%2e", "\\", "é", "😀", "x", ";", "\u0007", "．．"]
      ) {
        out.push(b + near, near + b);
      }
      if (b.length > 1) out.push(b.slice(1), b.slice(0, -1));
    }
    out.push("", ".", "..");
  }
  return out;
}

/** Fillings of a glob's `*` that no schema refuses but the guard does (or does not). */
const HOSTILE = ["%2e%2e", "..", "%2F", "．．", "%252e", "a%2fb", "ok", "a\u0000b", "a;b", "%41"];

/** A refusal for what no schema states (docs/guardfile.md, `restrict`). */
const BEYOND =
  /dot segment|percent-encoded|percent-decodes|decodes to|normalizes|contains "\\"|contains "\/"|starts with "\/"|empty segment|control character|metacharacter|a path separator|one segment|may not contain|refused characters|encoded after/;

Deno.test("advertised = enforced: values the advertised schema admits are refused only for what no schema states", async () => {
  const upstream = await startRecorder();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const files = fc.sample(
    fc.array(fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 2 }), {
      minLength: 3,
      maxLength: 3,
    }).chain((shape) =>
      fc.tuple(...shape.map((ps, g) => fc.tuple(...ps.map((_, i) => param(`p${g}${i}`)))))
    ),
    { numRuns: 3 },
  );
  let admitted = 0;
  let beyond = 0;
  let refused = 0;
  try {
    for (const params of files) {
      const text = kdl(params as Param[][], upstream.url);
      const server = await serveHttp(await tempGuardfile(text));
      try {
        const listed = await rpcAs<{ result: { tools: { name: string; inputSchema: Schema }[] } }>(
          server.url,
          "2025-11-25",
          "tools/list",
          {},
        );
        const tools = (listed.result.tools as { name: string; inputSchema: Schema }[])
          .filter((t) => t.name.startsWith("get_item"));
        assert.equal(tools.length, 4, text);
        for (const tool of tools) {
          const schema = tool.inputSchema;
          const admits = ajv.compile(schema);
          const props = schema.properties!;
          const valid: Record<string, unknown> = {};
          const grantParams: Param[] = [
            ...(params as Param[][]).flat(),
            { name: "team", slashes: "refuse", typed: false, restricts: [["team-*"]] },
            {
              name: "doc",
              slashes: "segments",
              typed: false,
              restricts: [["docs/**", "README.md"]],
            },
          ];
          for (const name of schema.required ?? []) {
            const globs = grantParams.find((g) => g.name === name)?.restricts.flat() ?? [];
            const plain = globs.map((g) =>
              g.replaceAll("**", "a/b").replaceAll("\\*", "*").replaceAll("*", "ok")
                .replaceAll("?", "q").replaceAll("[a-c]", "a").replaceAll("[^b]", "a")
            );
            const alone = ajv.compile(props[name]);
            valid[name] = [...plain, ...valuesFor(props[name], 1)].find((v) => alone(v)) ??
              "unreachable";
          }
          for (const [name, property] of Object.entries(props)) {
            // A glob's runs filled with what only the guard refuses.
            const globs = grantParams.find((g) => g.name === name)?.restricts.flat() ?? [];
            const filled = globs.flatMap((g) =>
              HOSTILE.map((h) =>
                g.replaceAll("**", `a/${h}`).replaceAll("*", h).replaceAll("?", "q")
              )
            );
            for (const value of [...valuesFor(property, name.length), ...filled]) {
              const args = { ...valid, [name]: value };
              const ok = admits(args);
              const before = upstream.requests.length;
              const answer = await callApi(server.url, tool.name, args);
              const where = `${tool.name} ${JSON.stringify(args)} (${
                JSON.stringify(property)
              })\n${text}`;
              if (!ok) {
                refused++;
                assert.ok(answer.status >= 400, `the schema refuses it, weir took it: ${where}`);
                assert.equal(upstream.requests.length, before, `sent: ${where}`);
                continue;
              }
              if (answer.status === 200) {
                admitted++;
                continue;
              }
              assert.notEqual(
                answer.status,
                400,
                `admitted by the schema, refused as invalid: ${answer.text} ${where}`,
              );
              assert.equal(upstream.requests.length, before, `sent: ${where}`);
              beyond++;
              if (/outside this server's policy/.test(answer.text)) {
                // restrict: the schema's pattern admits the value as sent, so a form it
                // decodes or normalizes to must be what the globs refuse.
                const p = grantParams.find((g) => g.name === name)!;
                const raw = String(value);
                assert.ok(
                  p.restricts.every((globs) => globs.some((g) => compileGlob(g)(raw))),
                  `raw value outside the globs yet admitted: ${where}`,
                );
                assert.ok(
                  raw.includes("%") || raw.normalize("NFKC") !== raw,
                  `restrict refused a value that decodes to itself: ${answer.text} ${where}`,
                );
              } else {
                assert.match(answer.text, BEYOND, where);
              }
            }
          }
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    await upstream.close();
  }
  // The generation reaches each outcome (otherwise it proves little).
  console.log(
    `admitted ${admitted}, refused by the schema ${refused}, refused beyond it ${beyond}`,
  );
  assert.ok(admitted > 20 && refused > 20 && beyond > 5, `${admitted} ${refused} ${beyond}`);
});
