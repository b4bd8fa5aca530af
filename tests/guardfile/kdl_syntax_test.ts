/**
 * KDL syntax errors a person makes while writing a guardfile point at the
 * mistake: a string whose closing quote is missing is reported where it opens,
 * not where the parser next trips (often a line or more further on, as
 * `Unexpected character "i", did you forget to quote an identifier?`).
 */
import assert from "node:assert/strict";
import { parseKdl } from "../../src/guardfile/kdl.ts";
import { ROOT, runCli } from "../support/cli.ts";

function errorsOf(text: string) {
  const parsed = parseKdl(text);
  assert.ok("errors" in parsed, "the text must not parse");
  return parsed.errors;
}

const MISSING_QUOTE = /this string runs past the end of its line: add its closing quote/;

Deno.test("a base-url missing its closing quote is reported on its own line, at the quote", () => {
  const text = `wrap ward mcp x {\n    base-url "https://api.example.com\n` +
    `    can get issue { path "/issues/{id}"; }\n}\n`;
  const [error, ...more] = errorsOf(text);
  assert.deepEqual(more, []);
  assert.match(error.message, MISSING_QUOTE);
  assert.deepEqual(error.position, { line: 2, column: 14 });
});

Deno.test("every shipped guardfile line with its last closing quote removed: the error is at that string", () => {
  let tried = 0;
  for (const entry of Deno.readDirSync(`${ROOT}guardfiles`)) {
    const lines = Deno.readTextFileSync(`${ROOT}guardfiles/${entry.name}`).split("\n");
    for (const [index, line] of lines.entries()) {
      // Plain lines only: quotes in pairs, no escape, raw string or comment to reason about.
      const quotes = [...line.matchAll(/"/g)].map((m) => m.index!);
      if (quotes.length < 2 || quotes.length % 2 !== 0 || /[\\#]|\/\/|\/\*/.test(line)) continue;
      const last = quotes.at(-1)!;
      if (!/^[\s{};]*$/.test(line.slice(last + 1))) continue;
      const broken = [...lines];
      broken[index] = line.slice(0, last) + line.slice(last + 1);
      const errors = errorsOf(broken.join("\n"));
      assert.deepEqual(
        errors.map((e) => [e.position, MISSING_QUOTE.test(e.message)]),
        [[{ line: index + 1, column: quotes.at(-2)! + 1 }, true]],
        `${entry.name}:${index + 1}: ${line.trim()}`,
      );
      tried++;
    }
  }
  assert.ok(tried > 100, `only ${tried} lines tried`);
});

Deno.test("strings that may hold line breaks are not mistaken for a missing quote", () => {
  for (
    const text of [
      `a "one \\\n   two"\nb "x" {\n`, // a whitespace escape crosses the line break
      `a """\n  two lines\n  """\nb "x" {\n`,
      `a #"raw"#\n// a "comment\nb "x" {\n`,
      `/* a "block\n comment */ b "x" {\n`,
    ]
  ) {
    const errors = errorsOf(text);
    assert.ok(errors.every((e) => !MISSING_QUOTE.test(e.message)), JSON.stringify(errors));
  }
});

Deno.test("lint: the missing quote's line and column, and nothing about the lines after it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-kdl-quote-" });
  const file = `${dir}/x.mcp.kdl`;
  try {
    await Deno.writeTextFile(
      file,
      `wrap ward mcp x {\n    base-url "https://api.example.com\n    auth none\n` +
        `    can get issue { path "/issues/{id}"; }\n}\n`,
    );
    const r = await runCli(["lint", file]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      `weir: ${file}:2:14: parse KDL: this string runs past the end of its line: add its ` +
        `closing quote (a string of several lines is written between """ and """)`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
