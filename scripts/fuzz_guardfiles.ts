/**
 * A long fuzz campaign for "what lint accepts, serve can build" (issue 34
 * item 9): mutated guardfiles (tests/support/kdl_fuzz.ts: the repository's
 * guardfiles, changed node by node) are loaded and, when the loader finds no
 * error, built and listed as `serve` builds them
 * (tests/support/build_fuzz.ts). Every crash is grouped by kind; the first
 * file of each kind is written to the output directory.
 *
 *   nice -n 19 deno run -A scripts/fuzz_guardfiles.ts [--runs 200000] [--seed N] [--out DIR]
 *   deno run -A scripts/fuzz_guardfiles.ts --replay FILE...   (what became of each file)
 *
 * Exits 1 when any file crashed. The test tests/guardfile/build_fuzz_test.ts
 * runs a bounded number of the same property on every CI run.
 *
 * @module
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { mutatedGuardfile, seedDocuments } from "../tests/support/kdl_fuzz.ts";
import { buildOutcome, crashKind, startWrapStandIn } from "../tests/support/build_fuzz.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    replay: { type: "boolean" },
    runs: { type: "string", default: "200000" },
    seed: { type: "string" },
    out: { type: "string", default: "/tmp/weir-fuzz" },
  },
});
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(seed)) {
  console.error("usage: --runs N (a positive integer) --seed N (an integer) --out DIR");
  Deno.exit(2);
}
if (values.replay) {
  const standIn = startWrapStandIn();
  let crashed = false;
  try {
    for (const file of positionals) {
      const outcome = await buildOutcome(await Deno.readTextFile(file), standIn);
      crashed ||= outcome.kind === "crash";
      console.log(
        `${file}: ${outcome.kind}` +
          (outcome.kind === "crash" ? `\n${(outcome.error as Error)?.stack ?? outcome.error}` : ""),
      );
    }
  } finally {
    await standIn.stop();
  }
  Deno.exit(crashed ? 1 : 0);
}
await Deno.mkdir(values.out, { recursive: true });

const seeds = seedDocuments();
// Half as the fuzzer mutated (one to four changes of any kind), half
// one or two changes that may set a hostile value (HOSTILE_STRINGS).
const generated = fc.oneof(
  mutatedGuardfile(seeds),
  mutatedGuardfile(seeds, { hostile: true, maxMutations: 2 }),
);
const standIn = startWrapStandIn();
const counts: Record<string, number> = {
  diagnosed: 0,
  placed: 0,
  unreachable: 0,
  built: 0,
  crash: 0,
};
const placed: Record<string, number> = {};
const built: Record<string, number> = {};
const kinds = new Map<string, { count: number; file: string }>();
const batch = 1000;
let done = 0;
try {
  for (let at = 0; done < runs; at++) {
    const texts = fc.sample(generated, {
      numRuns: Math.min(batch, runs - done),
      seed: seed + at,
    });
    for (const text of texts) {
      const outcome = await buildOutcome(text, standIn);
      counts[outcome.kind]++;
      if (outcome.kind === "built") built[outcome.mode] = (built[outcome.mode] ?? 0) + 1;
      if (outcome.kind === "placed") {
        const kind = crashKind(new Error(outcome.message)).replace(/^Error: /, "");
        placed[kind] = (placed[kind] ?? 0) + 1;
      }
      if (outcome.kind === "crash") {
        const kind = `[${outcome.mode}] ${crashKind(outcome.error)}`;
        const seen = kinds.get(kind);
        if (seen) seen.count++;
        else {
          const file = `${values.out}/crash-${kinds.size + 1}.mcp.kdl`;
          await Deno.writeTextFile(file, text);
          kinds.set(kind, { count: 1, file });
          console.error(`new crash kind: ${kind}\n  ${file}\n  ${(outcome.error as Error)?.stack}`);
        }
      }
    }
    done += texts.length;
    console.error(
      `${done}/${runs} (seed ${seed}): ${JSON.stringify(counts)} built ${JSON.stringify(built)}`,
    );
  }
} finally {
  await standIn.stop();
}
console.log(JSON.stringify(
  {
    seed,
    runs: done,
    ...counts,
    builtByMode: built,
    placedKinds: placed,
    kinds: Object.fromEntries(kinds),
  },
  null,
  2,
));
Deno.exit(kinds.size > 0 ? 1 : 0);
