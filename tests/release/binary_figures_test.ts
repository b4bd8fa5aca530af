/**
 * The release notes carry the compiled binary's size and cold start (issue 30):
 * the release workflow's `figures` job runs scripts/binary_figures.ts on the
 * Linux x86-64 archive `binaries` made, and the `release` job appends its
 * output to the changelog's notes. The job's own script is run here, as the
 * runner would, on an archive made by scripts/archive.ts around a stand-in
 * binary (this checkout's CLI behind a shell script: no denort here to compile
 * one), so the tar layout, the paths and the script's output are the real ones;
 * the --no-lazy binary the job compiles to compare is another stand-in.
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

/**
 * A stand-in for a compiled binary named `weir` (this checkout's CLI behind a
 * shell script) that plays denort's code cache: it logs its TMPDIR and whether
 * `$TMPDIR/deno-compile-weir.cache` was there, then writes it.
 */
function standIn(name: string, log: string, v8Flags = ""): string {
  return `#!/bin/sh
cache="$TMPDIR/deno-compile-weir.cache"
if [ -e "$cache" ]; then state=warm; else state=first; fi
echo "${name} $TMPDIR $state" >> "${log}"
: > "$cache"
exec "${Deno.execPath()}" run --quiet --config "${CONFIG}" --lock="${LOCK}" ${v8Flags}\
--frozen --allow-net --allow-env --allow-read "${ROOT}cli.ts" "$@"
`;
}

Deno.test("the figures job compiles a --no-lazy binary only to compare it with the shipped one", () => {
  const runs = steps("figures").map((s) => s.run ?? s.uses ?? "");
  const compile = runs.findIndex((r) => /scripts\/compile\.ts/.test(r));
  const figures = runs.findIndex((r) => /binary_figures\.ts/.test(r));
  assert.ok(compile >= 0 && compile < figures);
  assert.match(
    runs[compile],
    /--target x86_64-unknown-linux-gnu[\s\\]+--v8-flags=--no-lazy --out-dir no-lazy/,
  );
  assert.match(runs[figures], /binary_figures\.ts bin\/weir\b[\s\S]*--compare no-lazy\/weir /);
  // Built from the same stamped sources as the shipped binary.
  const stamp = runs.findIndex((r) => /scripts\/stamp\.ts "\$GITHUB_SHA"/.test(r));
  assert.ok(stamp >= 0 && stamp < compile);
  // Only figures.md leaves the job: the compared binary is never released.
  const uploads = steps("figures").filter((s) => s.uses?.startsWith("actions/upload-artifact@"));
  assert.deepEqual(uploads.map((s) => s.with.path), ["figures.md"]);
});

Deno.test("the figures job's script, run on a release archive, prints the size and the cold start, warm and first, beside the compared binary", async () => {
  const run = steps("figures").find((s) => /binary_figures\.ts/.test(s.run ?? ""))!.run!;
  // Fewer rounds than the release's: each start here is a `deno run` of the sources.
  const quick = run.replace(/ > figures\.md/, " --rounds 3 > figures.md");
  assert.notEqual(quick, run);
  const rounds = 3;
  const work = await Deno.makeTempDir({ prefix: "weir-figures-" });
  try {
    // The runner's checkout (scripts, bench, guardfiles) and dist/ as download-artifact leaves it.
    for (const dir of ["scripts", "bench", "guardfiles", "src"]) {
      await Deno.symlink(`${ROOT}${dir}`, `${work}/${dir}`);
    }
    for (const file of ["deno.json", "deno.lock", "cli.ts"]) {
      await Deno.symlink(`${ROOT}${file}`, `${work}/${file}`);
    }
    const log = `${work}/starts.log`;
    const stand = `${work}/stand-in/weir`;
    await Deno.mkdir(`${work}/stand-in`);
    await Deno.writeTextFile(stand, standIn("shipped", log));
    await Deno.mkdir(`${work}/dist`);
    await writeArchive(stand, `${ROOT}LICENSE`, "x86_64-unknown-linux-gnu", `${work}/dist`);
    // What the job's compile step leaves: the compared binary.
    await Deno.mkdir(`${work}/no-lazy`);
    await Deno.writeTextFile(
      `${work}/no-lazy/weir`,
      standIn("compared", log, "--v8-flags=--no-lazy "),
    );
    await Deno.chmod(`${work}/no-lazy/weir`, 0o755);
    const out = await runCommand("bash", {
      args: ["-euo", "pipefail", "-c", quick],
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
    assert.match(
      figures,
      /^- first start \(no code cache yet, [^)]*\): \d+\.\d ms, \d+\.\d\dx bare Deno, \d+\.\d MiB$/m,
    );
    assert.match(figures, /The shipped binary is the first row\./);
    assert.match(figures, /not released: compiled with --v8-flags=--no-lazy\./);
    const cells =
      "\\d+\\.\\d MiB \\| \\d+\\.\\d ms, \\d+\\.\\d\\dx \\| \\d+\\.\\d ms, \\d+\\.\\d\\dx \\| \\d+\\.\\d MiB";
    assert.match(
      figures,
      new RegExp(`^\\| shipped \\| ${cells} \\|\\n\\| compared \\| ${cells} \\|$`, "m"),
    );
    assert.match(figures, /^Faster warm: .+\. Faster at the first start: .+\.$/m);

    // Each binary: one TMPDIR of its own for every warm start (the code cache written by the
    // first, read by the rest), and a new empty one for each first start, all removed after.
    const starts = (await Deno.readTextFile(log)).trim().split("\n").map((l) => l.split(" "));
    const warmDirs = new Set<string>();
    for (const name of ["shipped", "compared"]) {
      const byDir = Map.groupBy(starts.filter(([n]) => n === name), ([, dir]) => dir);
      assert.equal(byDir.size, 1 + (rounds + 1), `${name}: one warm TMPDIR, one per first start`);
      const [warm, ...first] = [...byDir].sort((a, b) => b[1].length - a[1].length);
      assert.deepEqual(warm[1].map(([, , state]) => state), [
        "first",
        ...Array(rounds).fill("warm"),
      ]);
      for (const [, entries] of first) assert.deepEqual(entries.map(([, , s]) => s), ["first"]);
      warmDirs.add(warm[0]);
      for (const dir of byDir.keys()) {
        assert.notEqual(dir, Deno.env.get("TMPDIR") ?? "/tmp");
        await assert.rejects(Deno.lstat(dir), Deno.errors.NotFound, `${dir} is left`);
      }
    }
    assert.equal(warmDirs.size, 2, "two binaries of one name share no code cache");
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("figuresText says a goal is met only within it", () => {
  const base = { bytes: 1 << 20, rounds: 3, target: "x86_64-unknown-linux-gnu", bareMs: 25 };
  const starts = (warmMs: number, warmRssMiB: number) => ({
    warmMs,
    warmRssMiB,
    firstMs: 100,
    firstRssMiB: 60,
  });
  assert.match(
    figuresText({ ...base, binary: starts(62.5, 50) }),
    /2\.50x bare Deno \(goal 2\.5x: met\)[\s\S]*50\.0 MiB \(goal 50 MiB: met\)/,
  );
  assert.match(
    figuresText({ ...base, binary: starts(62.6, 50.1) }),
    /2\.50x bare Deno \(goal 2\.5x: not met\)[\s\S]*50\.1 MiB \(goal 50 MiB: not met\)/,
  );
  // The first start has no goal of its own (issue 30's goals are for the warm start).
  assert.match(
    figuresText({ ...base, binary: starts(50, 40) }),
    /^- first start \(.*\): 100\.0 ms, 4\.00x bare Deno, 60\.0 MiB$/m,
  );
  assert.doesNotMatch(figuresText({ ...base, binary: starts(50, 40) }), /compared/);
});

Deno.test("figuresText names the faster form warm and at the first start, the shipped one first", () => {
  const base = { bytes: 1 << 20, rounds: 3, target: "x86_64-unknown-linux-gnu", bareMs: 20 };
  const starts = (warmMs: number, firstMs: number) => ({
    warmMs,
    warmRssMiB: 44,
    firstMs,
    firstRssMiB: 46,
  });
  const text = figuresText({
    ...base,
    binary: starts(52, 60),
    compare: {
      label: "compiled with --v8-flags=--no-lazy",
      bytes: 2 << 20,
      starts: starts(41, 70),
    },
  });
  assert.match(
    text,
    /^\| shipped \| 1\.0 MiB \| 52\.0 ms, 2\.60x \| 60\.0 ms, 3\.00x \| 44\.0 MiB \|$/m,
  );
  assert.match(
    text,
    /^\| compared \| 2\.0 MiB \| 41\.0 ms, 2\.05x \| 70\.0 ms, 3\.50x \| 44\.0 MiB \|$/m,
  );
  assert.ok(text.indexOf("| shipped |") < text.indexOf("| compared |"));
  assert.match(
    text,
    /^Faster warm: the compared one \(compiled with --v8-flags=--no-lazy\), 21% less time\. Faster at the first start: the shipped binary, 14% less time\.$/m,
  );
  const tie = figuresText({
    ...base,
    binary: starts(50, 60),
    compare: { label: "x", bytes: 1, starts: starts(50, 60) },
  });
  assert.match(tie, /^Faster warm: neither\. Faster at the first start: neither\.$/m);
});
