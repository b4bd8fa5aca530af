/**
 * src/ops/lazy.ts `importModule`: callers asking for the same module share one
 * `import()` (128 first calls at a start paid Deno's dynamic-import preparation
 * 128 times), and a failed import is not kept: the next caller tries again.
 */
import assert from "node:assert/strict";
import { importModule, loadModulesBeside } from "../../src/ops/lazy.ts";

const SOURCES = new URL("../../cli.ts", import.meta.url).href;

Deno.test("concurrent callers of importModule share one import per module", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-lazy-" });
  try {
    await Deno.writeTextFile(
      `${dir}/counted.js`,
      "globalThis.weirLazyLoads = (globalThis.weirLazyLoads ?? 0) + 1;\nexport const n = 7;\n",
    );
    loadModulesBeside(`file://${dir}/cli.js`);
    const first = importModule<{ n: number }>("counted.ts");
    const callers = Array.from({ length: 16 }, () => importModule<{ n: number }>("counted.ts"));
    // One promise for every caller, not one import() each.
    for (const other of callers) assert.equal(other, first);
    const modules = await Promise.all([first, ...callers]);
    assert.ok(modules.every((module) => module.n === 7));
    assert.equal((globalThis as { weirLazyLoads?: number }).weirLazyLoads, 1);
    // Later callers get the same module.
    assert.equal(await importModule("counted.ts"), modules[0]);
  } finally {
    loadModulesBeside(SOURCES);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a failed import is not kept: the next caller makes its own import", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-lazy-" });
  try {
    loadModulesBeside(`file://${dir}/cli.js`);
    // Concurrent callers of a missing module share its failure, with Deno's words.
    const a = importModule("gone.ts");
    const b = importModule("gone.ts");
    assert.equal(a, b);
    await assert.rejects(a, /Module not found/);
    await assert.rejects(b, /Module not found/);
    // Once it failed, the next caller imports again (as every caller did before the sharing),
    // with the same error.
    const c = importModule("gone.ts");
    assert.notEqual(c, a);
    await assert.rejects(c, /Module not found.*gone\.js/);
  } finally {
    loadModulesBeside(SOURCES);
    await Deno.remove(dir, { recursive: true });
  }
});
