/**
 * scripts/bundle_merge.ts on a small program bundled as `deno task bundle`
 * bundles weir (`deno bundle --code-splitting --minify`, several entries, a
 * literal `import()`): the merged bundle prints what the sources and the
 * unmerged bundle print (module order, live bindings, a dynamic import), each
 * start loads fewer files and no code it did not load before.
 */
import assert from "node:assert/strict";
import { mergeChunks } from "../../scripts/bundle_merge.ts";
import { denoFailure } from "../../scripts/bundle.ts";
import { runCommand } from "../support/cli.ts";

const SOURCES: Record<string, string> = {
  // a and b are starts; lazy.js is an entry a start loads by URL; late.js a literal import().
  "a.js": `import { bump, count } from "./shared.js";
import { twice } from "./util.js";
import { other } from "./other.js";
import { extra } from "./extra.js";
(globalThis.order ??= []).push("a");
bump();
bump();
const late = await import("./late.js");
import { heavy } from "./heavy.js";
const lazy = await import(new URL("./lazy.js", import.meta.url).href);
const lazy2 = await import(new URL("./lazy2.js", import.meta.url).href);
console.log(JSON.stringify({ order: globalThis.order, count, twice: twice(3), other, extra,
  late: late.value, lazy: lazy.seen(), lazy2: lazy2.weight, heavy }));
`,
  "b.js": `import { twice } from "./util.js";
import { later, other } from "./other.js";
(globalThis.order ??= []).push("b");
console.log(JSON.stringify({ order: globalThis.order, twice: twice(4), other, later: typeof later }));
`,
  "lazy.js": `import { count } from "./shared.js";
export const seen = () => count;
`,
  // Run by a, like shared.js, and by another lazy module: merged with shared.js by a alone, lazy.js
  // would load it.
  "heavy.js": `(globalThis.order ??= []).push("heavy");
export const heavy = "only-a-" + "and-lazy2";
`,
  "lazy2.js": `import { heavy } from "./heavy.js";
export const weight = heavy.length;
`,
  "late.js": `import { twice } from "./util.js";
import { extra } from "./extra.js";
(globalThis.order ??= []).push("late");
export const value = twice(extra.length);
`,
  "shared.js": `export let count = 0;
export function bump() { count++; }
(globalThis.order ??= []).push("shared");
`,
  "util.js": `(globalThis.order ??= []).push("util");
export const twice = (n) => n * 2;
`,
  "other.js": `import { twice } from "./util.js";
(globalThis.order ??= []).push("other");
export const other = "only-a-and-b:" + twice(5);
// Never taken by b, but Deno reads late.js and what it imports (extra.js) when b starts.
export const later = () => import("./late.js");
`,
  "extra.js": `(globalThis.order ??= []).push("extra");
export const extra = "only-a-" + "and-late";
`,
};

/**
 * The files Deno reads when a start loads: its static imports and the static graph of each
 * literal import(), itself included, from the bundle's root.
 */
async function staticFiles(dir: string, root: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const visit = async (file: string) => {
    if (found.has(file)) return;
    const body = await Deno.readTextFile(`${dir}/${file}`);
    found.set(file, body);
    for (const m of body.matchAll(/(?:from|import)\s*\(?"(\.\.?\/[^"]+)"/g)) {
      await visit(new URL(m[1], `file:///${file}`).pathname.slice(1));
    }
  };
  await visit(root);
  return found;
}

const run = async (file: string) => {
  const r = await runCommand(Deno.execPath(), {
    args: ["run", "--no-config", "--quiet", "--allow-read", file],
  });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
};

Deno.test("merged chunks: same output as the sources, fewer files per start, no code added", async () => {
  const work = await Deno.makeTempDir({ prefix: "weir-merge-test-" });
  try {
    for (const [name, body] of Object.entries(SOURCES)) {
      await Deno.writeTextFile(`${work}/${name}`, body);
    }
    const bundle = async (out: string) => {
      const failure = await denoFailure([
        "bundle",
        "--quiet",
        "--no-config",
        "--platform",
        "deno",
        "--code-splitting",
        "--minify",
        "--outdir",
        out,
        ...["a.js", "b.js", "lazy.js", "lazy2.js"].map((name) => `${work}/${name}`),
      ]);
      assert.equal(failure, undefined);
    };
    await bundle(`${work}/plain`);
    await bundle(`${work}/merged`);
    assert.equal(await mergeChunks(`${work}/merged`, ["a.js", "b.js"], denoFailure), undefined);

    for (const start of ["a.js", "b.js"]) {
      // The values the sources print; the module order the unmerged bundle has (esbuild's own
      // order of modules that do not import each other already differs from the sources').
      const values = (out: string) => ({ ...JSON.parse(out), order: undefined });
      const plain = await run(`${work}/plain/${start}`);
      assert.deepEqual(values(plain), values(await run(`${work}/${start}`)));
      assert.equal(await run(`${work}/merged/${start}`), plain);
      const before = await staticFiles(`${work}/plain`, start);
      const after = await staticFiles(`${work}/merged`, start);
      assert.ok(after.size < before.size, `${start}: ${after.size} files, ${before.size} before`);
      // No start reads code it did not read before (b reads extra's through late.js, never
      // shared's, which a alone runs).
      for (const marker of ['"shared"', '"extra"']) {
        assert.equal(
          [...after.values()].some((body) => body.includes(marker)),
          [...before.values()].some((body) => body.includes(marker)),
          `${start}: ${marker}`,
        );
      }
    }
    assert.match(await run(`${work}/merged/a.js`), /"count":2,.*"lazy":2,"lazy2":16,/);
    // A lazy module loads no code it did not load before (lazy.js never heavy's, which a runs
    // with shared's, nor lazy2.js shared's).
    for (const entry of ["lazy.js", "lazy2.js"]) {
      const before = await staticFiles(`${work}/plain`, entry);
      const after = await staticFiles(`${work}/merged`, entry);
      for (const marker of ['"shared"', '"heavy"', '"extra"']) {
        assert.equal(
          [...after.values()].some((body) => body.includes(marker)),
          [...before.values()].some((body) => body.includes(marker)),
          `${entry}: ${marker}`,
        );
      }
    }
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("merged chunks: a start that is not in the bundle is named", async () => {
  const work = await Deno.makeTempDir({ prefix: "weir-merge-test-" });
  try {
    await Deno.writeTextFile(`${work}/cli.js`, "");
    assert.equal(
      await mergeChunks(work, ["cli.js", "src/cli/gone.js"], denoFailure),
      "src/cli/gone.js is not in the bundle",
    );
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
