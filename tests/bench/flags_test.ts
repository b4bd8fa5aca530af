/**
 * The benches' command lines: an unknown flag, or a flag without its value,
 * exits 2 (usage) with the parser's message and a usage line, before any work
 * (no uncaught error with a stack, no server started).
 */
import assert from "node:assert/strict";

const ROOT = new URL("../..", import.meta.url).pathname;
const BENCHES = [
  "chunked_body",
  "cold_start",
  "context",
  "guard",
  "held_bodies_floor",
  "replicas_soak",
  "run",
  "s3_put",
  "scaffold_coverage",
  "slow_clients",
  "upstream",
];

Deno.test("every bench with flags refuses an unknown flag with exit 2 and a usage line", async () => {
  for (const name of BENCHES) {
    for (const args of [["--no-such-flag"], ["--against"]]) {
      if (
        args[0] === "--against" && !["cold_start", "guard", "upstream", "context"].includes(name)
      ) {
        continue;
      }
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", "--allow-all", `${ROOT}bench/${name}.ts`, ...args],
        cwd: ROOT,
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 2, `${name} ${args.join(" ")}: ${stderr}`);
      assert.match(stderr, /no-such-flag|argument missing/, name);
      assert.match(stderr, /usage|flags: /, name);
      assert.doesNotMatch(stderr, /\n\s+at /, `${name}: no stack`);
    }
  }
});
