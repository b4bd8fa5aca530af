/**
 * Issue 35 item 7, the Deno standard library's rule for a library's entry
 * point: every value `mod.ts` exports (function, class, constant) carries an
 * `@example` with a fenced `ts` block, which `deno test --doc` type-checks and
 * runs (`deno task test` passes `--doc src/ mod.ts`). Types and interfaces
 * have nothing to run and are held by `deno doc --lint` instead
 * (tests/release/jsr_package_test.ts). Read from `deno doc --json mod.ts`, so
 * a new export without an example fails here by name. And no doc example
 * under src/ or the entry points checks with `console.assert`, which only
 * prints: such an example passes `deno test --doc` whatever it computes.
 */
import assert from "node:assert/strict";
import { CONFIG, ROOT, runCommand } from "../support/cli.ts";

interface Declaration {
  kind: string;
  location: { filename: string; line: number };
  jsDoc?: { doc?: string; tags?: { kind: string; doc?: string }[] };
}

Deno.test("every value mod.ts exports has an @example that deno test --doc runs", async () => {
  const out = await runCommand(Deno.execPath(), {
    args: ["doc", "--json", "--config", CONFIG, "mod.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
  });
  assert.equal(out.code, 0, out.stderr);
  const nodes = JSON.parse(out.stdout).nodes as Record<
    string,
    { symbols: { name: string; declarations: Declaration[] }[] }
  >;
  const symbols = Object.values(nodes).flatMap((n) => n.symbols);
  const values = symbols.flatMap((s) =>
    s.declarations.filter((d) => ["function", "class", "variable", "enum"].includes(d.kind))
      .map((d) => ({ name: s.name, ...d }))
  );
  assert.ok(values.length >= 36, `mod.ts exports ${values.length} values: did deno doc change?`);
  const missing = values.filter((v) => {
    const examples = (v.jsDoc?.tags ?? []).filter((t) => t.kind === "example");
    return !examples.some((t) => /```(?:ts|typescript)\n[\s\S]*?\S[\s\S]*?```/.test(t.doc ?? ""));
  }).map((v) =>
    `${v.kind} ${v.name} (${v.location.filename.replace(/^.*?\/src\//, "src/")}:${v.location.line})`
  );
  assert.deepEqual(
    missing,
    [],
    `${missing.length} of ${values.length} values mod.ts exports have no @example with a \`\`\`ts block`,
  );
});

/** Every `.ts` file under src/, and the entry points, relative to the checkout. */
async function sourceFiles(): Promise<string[]> {
  const files = ["mod.ts", "cli.ts"];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts")) files.push(path);
    }
  };
  await walk("src");
  return files;
}

/**
 * The fenced code blocks of a file's doc comments, each with the line it
 * starts on: what `deno test --doc` runs.
 */
function docExamples(text: string): { line: number; code: string }[] {
  const out: { line: number; code: string }[] = [];
  for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const before = text.slice(0, comment.index).split("\n").length;
    const lines = comment[0].split("\n").map((l) => l.replace(/^\s*\*? ?/, ""));
    let start = -1;
    lines.forEach((l, i) => {
      if (start < 0 && /^```(?:ts|typescript|js|javascript)\b/.test(l)) start = i;
      else if (start >= 0 && l.startsWith("```")) {
        out.push({ line: before + start, code: lines.slice(start + 1, i).join("\n") });
        start = -1;
      }
    });
  }
  return out;
}

Deno.test("no doc example under src/ or the entry points checks with console.assert (it cannot fail a test)", async () => {
  // console.assert only prints when its condition is false: `deno test --doc`
  // passes such an example whatever it computes. node:assert/strict throws.
  const found: string[] = [];
  let examples = 0;
  for (const file of await sourceFiles()) {
    for (const { line, code } of docExamples(await Deno.readTextFile(`${ROOT}${file}`))) {
      examples++;
      if (/\bconsole\.assert\s*\(/.test(code)) found.push(`${file}:${line}`);
    }
  }
  assert.ok(examples >= 90, `only ${examples} doc examples found: did the reader break?`);
  assert.deepEqual(
    found,
    [],
    `doc examples using console.assert (write them with node:assert/strict, e.g. ` +
      `assert.equal(actual, expected)):\n${found.join("\n")}`,
  );
});

Deno.test("the doc-example reader finds a console.assert in a fenced block (the check above can fail)", () => {
  const text = [
    "/**",
    " * Doubles.",
    " * @example",
    " * ```ts",
    " * console.assert(double(2) === 4);",
    " * ```",
    " */",
    "export const double = (n: number) => 2 * n;",
  ].join("\n");
  const [example] = docExamples(text);
  assert.equal(example.line, 4);
  assert.match(example.code, /console\.assert/);
});
