/**
 * src/diff/glob_cover.ts against brute force: for generated restrict nodes
 * (globs of characters, `?`, `*`, `**` and classes), "every value the nodes
 * all admit is admitted by the target" holds exactly when no string up to six
 * characters over the globs' alphabet (and `/`, and one character no glob
 * names) tells them apart, by the guard's own matcher (compileGlob).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { compileGlob } from "../../src/guardfile/glob.ts";
import { nodesWithin } from "../../src/diff/glob_cover.ts";

const ATOMS = ["a", "b", "/", "?", "*", "**", "[ab]", "[^a]", "\\*"];
/** What each element may widen to: a glob so widened admits at least as much. */
const WIDER: Record<string, string[]> = {
  "a": ["a", "[ab]", "?", "*", "**"],
  "b": ["b", "[ab]", "[^a]", "?", "*"],
  "/": ["/", "**"],
  "?": ["?", "*", "**"],
  "*": ["*", "**"],
  "**": ["**"],
  "[ab]": ["[ab]", "?", "*"],
  "[^a]": ["[^a]", "?", "**"],
  "\\*": ["\\*", "?", "*"],
};
const atoms = fc.array(fc.constantFrom(...ATOMS), { minLength: 0, maxLength: 3 });
const glob = atoms.map((a) => a.join(""));
const node = fc.array(glob, { minLength: 1, maxLength: 2 });
/** Nodes, and a target that is random or the first node's first glob widened. */
const pair = fc.tuple(
  fc.array(atoms, { minLength: 1, maxLength: 2 }),
  node,
  fc.infiniteStream(fc.nat()),
)
  .map(([parts, random, picks]) => {
    const nodes = parts.map((a) => [a.join("")]);
    const widened = parts[0].map((x) => {
      const options = WIDER[x];
      return options[picks.next().value % options.length];
    }).join("");
    return { nodes, target: picks.next().value % 2 === 0 ? random : [widened] };
  });

function strings(max: number): string[] {
  const out = [""];
  let layer = [""];
  for (let n = 0; n < max; n++) {
    layer = layer.flatMap((s) => ["a", "b", "/", "*", "z"].map((c) => s + c));
    out.push(...layer);
  }
  return out;
}
const VALUES = strings(6);

Deno.test("nodesWithin agrees with brute force on generated globs", () => {
  let held = 0;
  fc.assert(
    fc.property(pair, ({ nodes, target }) => {
      const all = nodes.map((n) => n.map(compileGlob));
      const outer = target.map(compileGlob);
      const witness = VALUES.find((v) =>
        all.every((n) => n.some((m) => m(v))) && !outer.some((m) => m(v))
      );
      const within = nodesWithin(nodes, target);
      if (within) held++;
      assert.equal(within, witness === undefined, `witness ${JSON.stringify(witness)}`);
    }),
    { numRuns: 400 },
  );
  assert.ok(held > 40 && held < 360, `${held} of 400 pairs within: the generator lost its mix`);
});

Deno.test("nodesWithin: ranges, escapes and characters past the BMP", () => {
  assert.ok(nodesWithin([["v[1-3]"]], ["v[0-9]"]));
  assert.ok(!nodesWithin([["v[0-9]"]], ["v[1-3]"]));
  assert.ok(nodesWithin([["\\*"]], ["?"]));
  assert.ok(!nodesWithin([["?"]], ["\\*"]));
  assert.ok(nodesWithin([["😀"]], ["?"]));
  assert.ok(nodesWithin([["[😀-😎]x"]], ["*x"]));
  assert.ok(!nodesWithin([["["]], ["*"]), "a malformed glob is never within");
});
