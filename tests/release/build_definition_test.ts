/**
 * One build definition (`scripts/build.ts`) and everything that builds or
 * ships weir held to it, so they cannot drift apart:
 *
 * - the included modules are exactly the Web Worker modules the code loads by
 *   URL (a new worker that is not listed fails here, not in a user's binary);
 * - `scripts/compile.ts` passes the definition's flags, includes and targets
 *   in each of its modes (asked with `--print`, the exact `deno compile` argv);
 * - the `Dockerfile` compiles only through `scripts/compile.ts --image`, copies
 *   every file that needs (the build context admits them), and its
 *   `ENTRYPOINT`/`CMD` are the definition's;
 * - the release workflow compiles only through `deno task release`, pushes
 *   the image and chart where the definition says, verifies every target, and
 *   stamps the commit before each build; Deno and helm versions agree across
 *   the workflow, the Dockerfile, `.ci/run` and `scripts/get-helm.sh`;
 * - the chart's default image is the one the release pushes, at the version
 *   the release checks, also in the packaged chart as `helm` renders it.
 */
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import {
  bundled,
  bundleRunArgs,
  CHART,
  ENTRY,
  IMAGE,
  INCLUDE,
  LAZY_NPM,
  PERMISSIONS,
  type Target,
  TARGETS,
} from "../../scripts/build.ts";
import { CONFIG, ROOT, runCommand } from "../support/cli.ts";
import { COMMAND_MODULES } from "../../cli.ts";
import { LAZY_MODULES } from "../../src/ops/lazy.ts";

const config = JSON.parse(await Deno.readTextFile(CONFIG));
const read = (path: string) => Deno.readTextFile(`${ROOT}${path}`);
const DOCKERFILE = await read("Dockerfile");
// deno-lint-ignore no-explicit-any
const WORKFLOW: any = parseYaml(await read(".github/workflows/release.yml"));

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* sourceFiles(path);
    else if (/\.[jt]s$/.test(entry.name) && !/_test\.[jt]s$/.test(entry.name)) yield path;
  }
}

/** The `deno bundle` and `deno compile` argv lines that `scripts/compile.ts ARGS --print` would run. */
async function printed(args: string[]): Promise<string[][]> {
  const r = await runCommand(Deno.execPath(), {
    args: ["run", "--allow-all", `${ROOT}scripts/compile.ts`, ...args, "--print"],
    cwd: ROOT,
  });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim().split("\n").map((line) => JSON.parse(line));
}

/** Check the `deno bundle` argv: every module loaded by URL an entry of its own, into `bundle`. */
function assertBundle(argv: string[], bundle: string) {
  assert.deepEqual(argv.slice(0, 2), ["deno", "bundle"]);
  assert.equal(argv[argv.indexOf("--config") + 1], CONFIG);
  assert.equal(argv[argv.indexOf("--outdir") + 1], bundle);
  assert.equal(argv[argv.indexOf("--platform") + 1], "deno");
  for (const flag of ["--code-splitting", "--minify", "--frozen"]) assert.ok(argv.includes(flag));
  const entries = argv.slice(argv.indexOf("--outdir") + 2);
  assert.deepEqual(entries, [ENTRY, ...INCLUDE].map((p) => `${ROOT}${p}`));
}

/** Check one `deno compile` argv against the definition: it compiles the bundle in `bundle`. */
function assertCompile(
  argv: string[],
  permissions: readonly string[],
  target: Target | undefined,
  bundle: string,
) {
  assert.deepEqual(argv.slice(0, 2), ["deno", "compile"]);
  assert.equal(argv.at(-1), `${bundle}/${bundled(ENTRY)}`, "the bundle's entry comes last");
  assert.equal(argv[argv.indexOf("--config") + 1], CONFIG);
  assert.deepEqual(argv.filter((a) => a.startsWith("--allow-")), [...permissions]);
  assert.ok(!argv.includes("-A") && !argv.includes("--allow-all"));
  // `deno run` of the bundle starts with --no-lazy (its code cache then holds every function);
  // the binary not: its code cache holds no dynamically imported module (scripts/build.ts V8_FLAGS).
  assert.deepEqual(argv.filter((a) => a.startsWith("--v8-flags")), []);
  assert.ok(bundleRunArgs("b", []).includes("--v8-flags=--no-lazy"));
  const included = argv.flatMap((a, i) => argv[i - 1] === "--include" ? [a] : []);
  assert.deepEqual(included, [...INCLUDE.map((p) => `${bundle}/${bundled(p)}`), ...LAZY_NPM]);
  const targets = argv.flatMap((a, i) => argv[i - 1] === "--target" ? [a] : []);
  assert.deepEqual(targets, target ? [target] : []);
}

Deno.test("INCLUDE is exactly the Web Worker modules and the command and mode modules loaded by URL", async () => {
  const workers = new Set<string>();
  for await (const file of sourceFiles("src")) {
    const text = await read(file);
    for (const m of text.matchAll(/new\s+Worker\(\s*moduleUrl\(\s*"([^"]+)"\s*\)/g)) {
      workers.add(m[1]);
    }
    assert.doesNotMatch(
      text.replace(/new\s+Worker\(\s*moduleUrl\(\s*"[^"]+"\s*\)/g, ""),
      /new\s+Worker\(/,
      `${file}: a Worker whose module is not new Worker(moduleUrl("src/..."), ...) (src/ops/lazy.ts) ` +
        `cannot be listed in INCLUDE, nor found in the bundle`,
    );
  }
  assert.ok(workers.size > 0, "the extract worker is found");
  // A module found by its own URL is not where the bundle and the binary put it: every module
  // loaded by URL goes through moduleUrl (src/ops/lazy.ts). version.ts only reads the checkout's
  // .git beside the sources (the binary's commit is stamped).
  for await (const file of sourceFiles("src")) {
    if (file === "src/ops/lazy.ts" || file === "src/cli/version.ts") continue;
    assert.doesNotMatch(
      (await read(file)).replace(/^\s*(\*|\/\/).*$/gm, ""),
      /import\.meta\.(url|resolve|dirname|filename)/,
      `${file}: find a module by moduleUrl("src/...") (src/ops/lazy.ts), not by import.meta`,
    );
  }
  // cli.ts loads each command's module by a specifier Deno cannot follow: each is
  // there, exports the function named, and nothing in cli.ts imports around load().
  const commands = new Set<string>();
  for (const [name, spec] of Object.entries(COMMAND_MODULES)) {
    const [path, entry = "run"] = spec.split("#");
    const module = await import(new URL(path, `file://${ROOT}`).href);
    assert.equal(typeof module[entry], "function", `${name}: ${path} exports ${entry}`);
    commands.add(path.replace(/^\.\//, ""));
  }
  const cli = await read("cli.ts");
  assert.deepEqual(
    [...cli.matchAll(/await import\("([^"]+)"\)/g)].map((m) => m[1]),
    ["./src/cli/version.ts"],
    "cli.ts imports commands through load() only (--version by a literal: it needs no read)",
  );
  for (const m of cli.matchAll(/await load\("([^"]+)"\)/g)) {
    assert.ok(Object.hasOwn(COMMAND_MODULES, m[1]), `cli.ts loads ${m[1]}, not in COMMAND_MODULES`);
  }
  // A mode's modules loaded by URL (src/ops/lazy.ts): each is there and named at a lazy() call.
  const lazyNames = new Set<string>();
  for await (const file of sourceFiles("src")) {
    for (const m of (await read(file)).matchAll(/\blazy<[^;]*?>\(\s*"([a-z0-9_]+)",?\s*\)/gs)) {
      assert.ok(
        Object.hasOwn(LAZY_MODULES, m[1]),
        `${file}: lazy("${m[1]}") is not in LAZY_MODULES`,
      );
      lazyNames.add(m[1]);
    }
    // A family loaded by a name made at run time (loadReader: lazy(`guardfile_${name}`)):
    // every LAZY_MODULES name with that prefix counts as loaded there.
    for (const m of (await read(file)).matchAll(/\blazy\(\s*`([a-z0-9_]+)\$\{/g)) {
      const family = Object.keys(LAZY_MODULES).filter((name) => name.startsWith(m[1]));
      assert.ok(family.length > 0, `${file}: lazy(\`${m[1]}...\`) names no LAZY_MODULES entry`);
      for (const name of family) lazyNames.add(name);
    }
  }
  assert.deepEqual(
    [...lazyNames].sort(),
    Object.keys(LAZY_MODULES).sort(),
    "each is loaded somewhere",
  );
  assert.deepEqual(
    [...INCLUDE].sort(),
    [...new Set([...workers, ...commands, ...Object.values(LAZY_MODULES)])].sort(),
  );
  for (const path of INCLUDE) await Deno.stat(`${ROOT}${path}`);
});

Deno.test("deno task bundle and compile, run from a subdirectory, write a relative --out-dir there", async () => {
  for (const task of ["bundle", "compile"]) {
    // A user's shell has no INIT_CWD; `deno task test` (CI) sets one for the repository root,
    // and a nested `deno task` keeps an INIT_CWD it finds: clear it, as a user's shell has it.
    const env = Deno.env.toObject();
    delete env.INIT_CWD;
    const r = await runCommand(Deno.execPath(), {
      args: ["task", "--quiet", task, "--out-dir", "out", "--print"],
      cwd: `${ROOT}docs`,
      clearEnv: true,
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    const bundle: string[] = JSON.parse(r.stdout.split("\n")[0]);
    assertBundle(bundle, `${ROOT}docs/out${task === "compile" ? "/bundle" : ""}`);
  }
});

Deno.test("compile.ts bundles, then compiles the bundle with the definition's flags, includes and targets in every mode", async () => {
  const dist = `${ROOT}dist/bundle`;
  const [bundleHost, host] = await printed([]);
  assertBundle(bundleHost, dist);
  assertCompile(host, PERMISSIONS, undefined, dist);
  const [bundleRelease, ...release] = await printed(["--release"]);
  assertBundle(bundleRelease, dist);
  assert.equal(release.length, Object.keys(TARGETS).length);
  for (const [i, target] of (Object.keys(TARGETS) as Target[]).entries()) {
    assertCompile(release[i], PERMISSIONS, target, dist);
  }
  for (const [platform, target] of Object.entries(IMAGE.platforms)) {
    const [bundle, image] = await printed(["--image", platform, "--out-dir", "/out"]);
    assertBundle(bundle, "/out/bundle");
    assertCompile(image, IMAGE.permissions, target, "/out/bundle");
    assert.equal(image[image.indexOf("--output") + 1], "/out/weir");
  }
  // deno task bundle is scripts/bundle.ts, with the same command line.
  assert.match(config.tasks.bundle, /^deno run [^&|;]*scripts\/bundle\.ts$/);
  const bundle = await runCommand(Deno.execPath(), {
    args: ["run", "--allow-all", `${ROOT}scripts/bundle.ts`, "--print"],
    cwd: ROOT,
  });
  assertBundle(JSON.parse(bundle.stdout), dist);
  // deno task compile / release are this script.
  assert.match(config.tasks.compile, /^deno run [^&|;]*scripts\/compile\.ts$/);
  assert.match(config.tasks.release, /^deno run [^&|;]*scripts\/compile\.ts --release$/);
  // The image's permissions are the binary's, less some, never more.
  for (const p of IMAGE.permissions) assert.ok(PERMISSIONS.includes(p), p);
});

Deno.test("compile.ts --v8-flags=LIST gives the binary V8 flags only when asked, in every mode", async () => {
  // The default is none (assertCompile); the release workflow's figures job asks for --no-lazy
  // to compare (tests/release/binary_figures_test.ts), and its compile step is this command.
  const figures = WORKFLOW.jobs.figures.steps.map((s: { run?: string }) => s.run ?? "").join("\n");
  assert.match(
    figures,
    /scripts\/compile\.ts --target x86_64-unknown-linux-gnu[\s\\]+--v8-flags=--no-lazy/,
  );
  for (
    const mode of [[], ["--target", "x86_64-unknown-linux-gnu"], ["--release"], [
      "--image",
      "linux/amd64",
    ]]
  ) {
    const [, ...compiles] = await printed([...mode, "--v8-flags=--no-lazy,--max-lazy"]);
    assert.ok(compiles.length > 0);
    for (const argv of compiles) {
      assert.deepEqual(argv.filter((a) => a.startsWith("--v8-flags")), [
        "--v8-flags=--no-lazy,--max-lazy",
      ]);
    }
  }
  // Everything else as without it.
  const [, plain] = await printed(["--target", "x86_64-unknown-linux-gnu"]);
  const [, flagged] = await printed([
    "--target",
    "x86_64-unknown-linux-gnu",
    "--v8-flags=--no-lazy",
  ]);
  assert.deepEqual(flagged.filter((a) => a !== "--v8-flags=--no-lazy"), plain);
  for (
    const bad of ["--v8-flags=", "--v8-flags=no-lazy", "--v8-flags=--no-lazy,", "--v8-flags=--a b"]
  ) {
    const r = await runCommand(Deno.execPath(), {
      args: ["run", "--allow-all", `${ROOT}scripts/compile.ts`, bad, "--print"],
      cwd: ROOT,
    });
    assert.equal(r.code, 2, bad);
    assert.match(r.stderr, /V8 flags, comma-separated, e\.g\. --v8-flags=--no-lazy/);
    assert.equal(r.stdout, "");
  }
});

/** Dockerfile instructions, continuation lines joined. */
function instructions(text: string): { op: string; args: string }[] {
  return text.replace(/\\\n/g, " ").split("\n").filter((l) => l.trim() && !/^\s*#/.test(l))
    .map((l) => {
      const m = /^\s*(\w+)\s+(.*)$/.exec(l)!;
      return { op: m[1].toUpperCase(), args: m[2].trim() };
    });
}

Deno.test("the Dockerfile builds through compile.ts --image and runs the definition's command", async () => {
  const ops = instructions(DOCKERFILE);
  assert.doesNotMatch(DOCKERFILE.replace(/^\s*#.*$/gm, ""), /deno\s+compile/);
  const runs = ops.filter((o) => o.op === "RUN" && /scripts\/compile\.ts/.test(o.args));
  assert.equal(runs.length, 1, "one RUN compiles");
  assert.match(runs[0].args, /scripts\/compile\.ts --image "\$TARGETPLATFORM" --out-dir \/out$/);
  // The build stage runs natively and cross-compiles for each platform the release pushes.
  assert.match(DOCKERFILE, /^FROM --platform=\$BUILDPLATFORM denoland\/deno:(\S+) AS build$/m);
  assert.ok(ops.some((o) => o.op === "ARG" && /^TARGETPLATFORM\b/.test(o.args)));
  assert.ok(
    ops.some((o) => o.op === "COPY" && o.args === `--from=build /out/weir ${IMAGE.entrypoint}`),
  );
  assert.deepEqual(JSON.parse(ops.find((o) => o.op === "ENTRYPOINT")!.args), [IMAGE.entrypoint]);
  assert.deepEqual(JSON.parse(ops.find((o) => o.op === "CMD")!.args), IMAGE.command);

  // What the build stage copies holds every file compile.ts and the compiled graph need.
  const copied = ops.filter((o) => o.op === "COPY" && !o.args.startsWith("--from"))
    .flatMap((o) => o.args.split(/\s+/).slice(0, -1));
  const covered = (file: string) =>
    copied.some((c) => c === file || file.startsWith(`${c.replace(/\/$/, "")}/`));
  const ignore = (await read(".dockerignore")).split("\n").filter((l) => l && !l.startsWith("#"));
  assert.equal(ignore[0], "*", ".dockerignore admits only what it names");
  const admitted = (file: string) =>
    ignore.slice(1).some((l) => {
      const p = l.replace(/^!/, "").replace(/\/$/, "");
      return file === p || file.startsWith(`${p}/`);
    });
  const needed = new Set<string>(["deno.json", "deno.lock", "LICENSE", ...INCLUDE]);
  // The modules loaded by URL too: `deno info` of cli.ts does not follow them, the bundle does.
  for (const root of [`${ROOT}scripts/compile.ts`, ...[ENTRY, ...INCLUDE].map((p) => ROOT + p)]) {
    const info = await runCommand(Deno.execPath(), {
      args: ["info", "--json", "--config", CONFIG, root],
      cwd: ROOT,
    });
    assert.equal(info.code, 0, info.stderr);
    for (const m of JSON.parse(info.stdout).modules as { specifier: string }[]) {
      if (m.specifier.startsWith("file://")) {
        needed.add(new URL(m.specifier).pathname.slice(ROOT.length));
      }
    }
  }
  for (const file of needed) {
    assert.ok(covered(file), `the Dockerfile does not COPY ${file}`);
    assert.ok(admitted(file), `.dockerignore keeps ${file} out of the build context`);
  }
});

Deno.test("Deno and helm versions agree across the Dockerfile, the workflow, .ci/run and get-helm", async () => {
  const docker = /^FROM \S* ?denoland\/deno:(\S+)/m.exec(DOCKERFILE)?.[1];
  const ci = /npx -y deno@([0-9][^\s"]*)/.exec(await read(".ci/run"))?.[1];
  assert.equal(WORKFLOW.env.DENO_VERSION, docker);
  assert.equal(WORKFLOW.env.DENO_VERSION, ci);
  const ciWorkflow = parseYaml(await read(".github/workflows/ci.yml"));
  assert.ok(
    JSON.stringify(ciWorkflow).includes("bash .ci/run"),
    "CI runs .ci/run, which pins the same Deno",
  );
  // get-helm.sh's helm is what the chart tests use; the release packages with the same version.
  const helm = Deno.env.get("WEIR_HELM") ?? `${ROOT}.cache/tools/helm`;
  const version = await runCommand(helm, { args: ["version", "--short"] }).catch(() => undefined);
  if (version?.code === 0) {
    assert.equal(version.stdout.trim().replace(/\+.*$/, ""), WORKFLOW.env.HELM_VERSION);
  }
});

/** Every `run:` script and `uses:` of a workflow job, in order. */
// deno-lint-ignore no-explicit-any
function steps(job: string): { run?: string; uses?: string; with?: any; id?: string }[] {
  return WORKFLOW.jobs[job].steps;
}

Deno.test("the release workflow builds from the definition and publishes where it says", () => {
  assert.deepEqual(Object.keys(WORKFLOW.on), ["push"]);
  assert.ok(WORKFLOW.on.push.tags.every((t: string) => t.startsWith("v")));
  assert.equal(WORKFLOW.env.IMAGE, IMAGE.repository);
  assert.equal(WORKFLOW.env.IMAGE_PLATFORMS, Object.keys(IMAGE.platforms).join(","));
  assert.equal(WORKFLOW.env.CHART_REPOSITORY, CHART.repository);
  const all = JSON.stringify(WORKFLOW.jobs);
  assert.doesNotMatch(all, /deno compile/, "compiling goes through scripts/compile.ts only");
  assert.ok(steps("binaries").some((s) => s.run === "deno task release"));
  // Each job that builds or publishes stamps the commit first.
  for (const job of ["binaries", "jsr", "image", "figures"]) {
    const runs = steps(job).map((s) => s.run ?? s.uses ?? "");
    const stamp = runs.findIndex((r) => /scripts\/stamp\.ts "\$GITHUB_SHA"/.test(r));
    const build = runs.findIndex((r) =>
      /deno task release|deno publish|docker\/build-push-action|scripts\/compile\.ts/.test(r)
    );
    assert.ok(stamp >= 0 && stamp < build, `${job} stamps before it builds`);
  }
  // Every release target is run on its own OS before anything is published.
  const matrix = WORKFLOW.jobs["verify-binaries"].strategy.matrix.include;
  assert.deepEqual(
    matrix.map((m: { target: string }) => m.target).sort(),
    Object.keys(TARGETS).sort(),
  );
  for (const job of ["jsr", "image"]) {
    assert.ok([WORKFLOW.jobs[job].needs].flat().includes("verify-binaries"), `${job} waits`);
  }
  // The image is tested (scripts/image_smoke.sh) before the multi-platform push.
  const image = steps("image");
  const smoke = image.findIndex((s) => /scripts\/image_smoke\.sh/.test(s.run ?? ""));
  const push = image.findIndex((s) => s.id === "push");
  assert.ok(smoke >= 0 && smoke < push);
  assert.equal(image[push].with.platforms, "${{ env.IMAGE_PLATFORMS }}");
  assert.ok(WORKFLOW.jobs.jsr.permissions["id-token"] === "write", "JSR provenance needs OIDC");
  // The JSR package is made (its CLI bundle) after the stamp, which the bundle holds, and before
  // the upload; tests/support/jsr_publish.ts runs the same steps against a local registry.
  const jsr = steps("jsr").map((s) => s.run ?? "");
  const made = jsr.indexOf("deno run --allow-all scripts/jsr_package.ts");
  assert.ok(
    jsr.findIndex((r) => /scripts\/stamp\.ts/.test(r)) < made &&
      made < jsr.findIndex((r) => /deno publish/.test(r)) && made >= 0,
    "the jsr job stamps, then runs scripts/jsr_package.ts, then publishes",
  );
  // The release carries the archives, SHA256SUMS and install.sh, with the changelog's notes.
  assert.ok(steps("binaries").some((s) => s.run === "cp scripts/install.sh dist/install.sh"));
  assert.ok(
    steps("notes").some((s) => /scripts\/release_notes\.ts "\$GITHUB_REF_NAME"/.test(s.run ?? "")),
  );
});

Deno.test("the chart's default image is the one the release pushes, at the released version", async () => {
  const values = parseYaml(await read(`${CHART.path}/values.yaml`));
  const chart = parseYaml(await read(`${CHART.path}/Chart.yaml`));
  assert.equal(values.image.repository, IMAGE.repository);
  assert.equal(values.image.tag, "", "the tag follows the chart's appVersion");
  assert.equal(chart.appVersion, config.version);
  assert.equal(chart.version, config.version);
  const helm = Deno.env.get("WEIR_HELM") ?? `${ROOT}.cache/tools/helm`;
  const probe = await runCommand(helm, { args: ["version", "--short"] }).catch(() => undefined);
  if (probe?.code !== 0) {
    console.log("  (helm not found: the packaged chart is not rendered; run scripts/get-helm.sh)");
    return;
  }
  // What the release pushes: `helm package`, rendered with its defaults.
  const out = await Deno.makeTempDir();
  try {
    const pkg = await runCommand(helm, {
      args: ["package", `${ROOT}${CHART.path}`, "--destination", out],
    });
    assert.equal(pkg.code, 0, pkg.stderr);
    const rendered = await runCommand(helm, {
      args: [
        "template",
        "weir",
        `${out}/weir-${config.version}.tgz`,
        "--set-file",
        `guardfile=${ROOT}guardfiles/open-meteo.mcp.kdl`,
        "--set",
        "inboundAuth.existingSecret=weir-inbound",
      ],
    });
    assert.equal(rendered.code, 0, rendered.stderr);
    const images = [...rendered.stdout.matchAll(/^\s*image: "?([^"\s]+)"?$/gm)].map((m) => m[1]);
    assert.deepEqual(images, [`${IMAGE.repository}:${config.version}`]);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("the release workflow attests the chart as it attests the image", async () => {
  const attest = (job: string) =>
    steps(job).filter((s) => s.uses?.startsWith("actions/attest-build-provenance@"));
  assert.equal(WORKFLOW.env.CHART_IMAGE, `${CHART.repository.replace(/^oci:\/\//, "")}/weir`);
  assert.ok(attest("image").some((s) => s.with["push-to-registry"] === true));
  const chart = attest("chart");
  assert.ok(
    chart.some((s) =>
      s.with["subject-name"] === "${{ env.CHART_IMAGE }}" && s.with["push-to-registry"] === true &&
      /steps\.push\.outputs\.digest/.test(s.with["subject-digest"])
    ),
    "the OCI artifact in the registry",
  );
  assert.ok(
    chart.some((s) =>
      /^dist\/weir-\$\{\{ needs\.notes\.outputs\.version \}\}\.tgz$/.test(s.with["subject-path"])
    ),
    "the packaged .tgz",
  );
  const permissions = WORKFLOW.jobs.chart.permissions;
  assert.equal(permissions["id-token"], "write");
  assert.equal(permissions.attestations, "write");
  // The push step reads the digest helm push prints; run that line on helm's own output.
  const push = steps("chart").find((s) => s.id === "push");
  const line = push?.run?.split("\n").find((l) => l.startsWith("digest=$(sed"));
  assert.ok(line, push?.run);
  const dir = await Deno.makeTempDir();
  try {
    const digest = `sha256:${"0123456789abcdef".repeat(4)}`;
    await Deno.writeTextFile(
      `${dir}/push.log`,
      `Pushed: ghcr.io/weir-mcp/charts/weir:0.1.0\nDigest: ${digest}\n`,
    );
    const out = await new Deno.Command("bash", {
      args: ["-c", `${line}\necho "$digest"`],
      cwd: dir,
      stdout: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(out.stdout).trim(), digest);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  assert.ok(
    steps("release").some((s) => /artifacts\/chart\/\*/.test(s.run ?? "")),
    "the GitHub release carries the packaged chart",
  );
});
