/**
 * fast-check as weir's property tests import it (`import fc from
 * "../support/property.ts"`), so a failure seen once (in CI, on a busy
 * machine) can be replayed exactly.
 *
 * Each run draws a fresh seed, so the properties keep exploring; when one
 * fails, fast-check's error names it: `Property failed after N tests
 * { seed: S, path: "P", ... }`. Replay that run with the same test file:
 *
 *   WEIR_FC_SEED=S WEIR_FC_PATH=P deno test -A tests/x/y_test.ts
 *
 * (`WEIR_FC_PATH` is optional: it jumps straight to the shrunk
 * counterexample.) Tests that only sample values (`fc.sample`) pass their
 * own fixed `seed`.
 */
import fc from "fast-check";

const seed = Deno.env.get("WEIR_FC_SEED");
if (seed !== undefined && seed !== "") {
  if (!/^-?\d+$/.test(seed)) {
    throw new Error(
      `WEIR_FC_SEED must be the integer a failure printed ({ seed: N }), not ${seed}`,
    );
  }
  const path = Deno.env.get("WEIR_FC_PATH");
  fc.configureGlobal({
    ...fc.readConfigureGlobal(),
    seed: Number(seed),
    ...(path ? { path } : {}),
  });
}

export default fc;
