/**
 * The release notes carry the compiled binary's size and cold start (issue 30):
 * the release workflow's `figures` job runs scripts/binary_figures.ts on the
 * Linux x86-64 archive `binaries` made, and the `release` job appends its
 * output to the changelog's notes. The job's own script is run here, as the
 * runner would, on an archive made by scripts/archive.ts around a stand-in
 * binary (this checkout's CLI behind a shell script: no denort here to compile
 * one), so the tar layout, the paths and the script's output are the real ones.
 */
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { writeArchive } from "../../scripts/archive.ts";
import { figuresText } from "../../scripts/binary_figures.ts";
import { CONFIG, LOCK, ROOT, runCommand } from "../support/cli.ts";

// deno-lint-ignore no-explicit-any
const WORKFLOW: any = parseYaml(await Deno.readTextFile(`${ROOT}.github/workflows/release.yml`));
// deno-lint-ignore no-explicit-any
const steps = (job: string): { run?: string; uses?: string; with?: any }[] =>
  WORKFLOW.jobs[job].steps;

Deno.test("the figures job measures the Linux binary and the release appends it to the notes", () => {
  assert.deepEqual([WORKFLOW.jobs.figures.needs].flat(), ["binaries"]);
  assert.ok(
    steps("figures").some((s) =>
      s.uses?.startsWith("actions/download-artifact@") &&
      s.with.name === "binaries"
    ),
  );
  assert.ok(
    steps("figures").some((s) =>
      s.uses?.startsWith("actions/upload-artifact@") &&
      s.with.name === "figures" && s.with.path === "figures.md"
    ),
  );
  assert.ok([WORKFLOW.jobs.release.needs].flat().includes("figures"));
  const release = steps("release").find((s) => /gh release create/.test(s.run ?? ""))!.run!;
  assert.match(
    release,
    /cat artifacts\/notes\/notes\.md artifacts\/figures\/figures\.md > release-notes\.md/,
  );
  assert.match(release, /--notes-file release-notes\.md/);
});

Deno.test("the figures job's script, run on a release archive, prints the size and the cold start", async () => {
  const run = steps("figures").find((s) => /binary_figures\.ts/.test(s.run ?? ""))!.run!;
  const work = await Deno.makeTempDir({ prefix: "weir-figures-" });
  try {
    // The runner's checkout (scripts, bench, guardfiles) and dist/ as download-artifact leaves it.
    for (const dir of ["scripts", "bench", "guardfiles", "src"]) {
      await Deno.symlink(`${ROOT}${dir}`, `${work}/${dir}`);
    }
    for (const file of ["deno.json", "deno.lock", "cli.ts"]) {
      await Deno.symlink(`${ROOT}${file}`, `${work}/${file}`);
    }
    const stand = `${work}/stand-in`;
    await Deno.writeTextFile(
      stand,
      `#!/bin/sh\nexec "${Deno.execPath()}" run --quiet --config "${CONFIG}" --lock="${LOCK}" ` +
        `--frozen --allow-net --allow-env --allow-read "${ROOT}cli.ts" "$@"\n`,
    );
    await Deno.mkdir(`${work}/dist`);
    await writeArchive(stand, `${ROOT}LICENSE`, "x86_64-unknown-linux-gnu", `${work}/dist`);
    const out = await runCommand("bash", {
      args: ["-euo", "pipefail", "-c", run],
      cwd: work,
      env: { PATH: `${Deno.execPath().replace(/\/[^/]*$/, "")}:${Deno.env.get("PATH")}` },
    });
    assert.equal(out.code, 0, out.stderr);
    const figures = await Deno.readTextFile(`${work}/figures.md`);
    assert.match(figures, /^## Binary size and cold start$/m);
    assert.match(figures, /^- size: \d+\.\d MiB \(`weir-x86_64-unknown-linux-gnu\.tar\.gz`: /m);
    assert.match(
      figures,
      /spawn to the first `tools\/list`: \d+\.\d ms, \d+\.\d\dx bare Deno \(goal 2\.5x: (not )?met\)/,
    );
    assert.match(figures, /^- resident set then: \d+\.\d MiB \(goal 50 MiB: (not )?met\)$/m);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("figuresText says a goal is met only within it", () => {
  const base = { bytes: 1 << 20, rounds: 3, target: "x86_64-unknown-linux-gnu" };
  assert.match(
    figuresText({ ...base, binaryMs: 62.5, bareMs: 25, rssMiB: 50 }),
    /2\.50x bare Deno \(goal 2\.5x: met\)[\s\S]*50\.0 MiB \(goal 50 MiB: met\)/,
  );
  assert.match(
    figuresText({ ...base, binaryMs: 62.6, bareMs: 25, rssMiB: 50.1 }),
    /2\.50x bare Deno \(goal 2\.5x: not met\)[\s\S]*50\.1 MiB \(goal 50 MiB: not met\)/,
  );
});
