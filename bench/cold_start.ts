/**
 * Cold start of the `weir` command line, against bare Deno, in one run:
 *
 * - `weir serve FILE --stdio`: spawn to the first correct `tools/list` answer
 *   (initialize and tools/list are written at spawn; the clock stops at the
 *   answer that lists the guardfile's tools), from the sources (`deno run
 *   cli.ts`, a checkout's developer route: informative, no goal);
 * - the same from the JSR package, the route the README gives MCP hosts: this
 *   tree published with the real `deno publish` to a JSR registry on 127.0.0.1
 *   as the release workflow publishes it (tests/support/jsr_publish.ts:
 *   stamped, then scripts/jsr_package.ts, whose CLI entry is a bundle of
 *   weir's own modules with npm packages as `npm:` imports), run by `deno run
 *   -A jsr:@weir/weir/cli` from a directory without deno.json, its DENO_DIR
 *   filled by the first starts as a returning user's is; with issue 30's goals
 *   (no row, and why, when publishing fails);
 * - the same for a bare Deno script that answers both requests by hand
 *   (`bench/servers/bare_stdio.ts`, no imports): the baseline;
 * - `weir --version` and `weir help`: spawn to exit;
 * - where `weir serve`'s time goes, from the same spawns: Deno itself (an
 *   empty file, same config), the command line's module graph (`--version`,
 *   which Deno walks whole at start, every command's modules included),
 *   loading serve's own modules (`weir serve` of a missing file: everything
 *   is imported, it stops at the read), and the rest (reading, parsing and
 *   linting the guardfile, building the server, stdio, the answers);
 * - what each npm package of the serve path costs to import, alone, in a
 *   fresh process.
 *
 * - the resident set of `weir serve --stdio` when it has answered its first
 *   `tools/list` (idle: nothing else asked), goal at most 50 MiB.
 * - the same serve from the bundle the release binaries and the image are
 *   compiled from, built by the same build step (`deno task bundle`,
 *   scripts/bundle.ts: the whole CLI, code-split, minified,
 *   npm packages inside) and run as the binary runs it (`deno run --no-config`
 *   with deno.json's runtime features, scripts/build.ts `bundleRunArgs`), with
 *   its goals too; no row when `deno bundle` fails.
 * - spawn to the answer of the first `tools/call` of a spec-mode serve
 *   (bench/guardfiles/things.mcp.kdl through a local upstream, the call sent at
 *   the tools/list answer), from that bundle as the binary runs it and from the
 *   JSR package: what a start defers to the first call (the HTTP/1.1 client,
 *   loaded by URL) is paid there;
 * - that bundle as the release binary and the image run it: without V8's
 *   `--no-lazy` (scripts/build.ts `compileArgs` leaves `V8_FLAGS` out), from a
 *   copy of its own so the two forms never share one code cache entry; the
 *   nearest figure to the binary's that a machine without `denort` can take
 *   (the binary's own: the release notes, docs/releasing.md).
 *
 * `--against REV` (repeatable) also spawns revision REV's `weir serve --stdio`
 * and `weir --version` (checked out into a temporary worktree,
 * `bench/against.ts`) and REV's bundle, built by REV's own `deno task bundle`
 * and run as REV's binary runs it (a row saying so when REV has no bundle
 * step), in the same rounds, and prints each against this tree.
 *
 * Spawns alternate between the commands (so load on the machine hits both),
 * the first round is discarded (it fills Deno's caches), figures are medians.
 *
 *   deno task bench:cold [ROUNDS] [--against REV]...     (default 15 rounds)
 *
 * Exit codes: 0 measured (PASS/FAIL lines are figures, not the exit code), 1 a
 * command under test failed or REV could not be set up, 2 usage (a bad flag,
 * an unknown or repeated REV), 130/143 interrupted (worktrees removed).
 *
 * @module
 */
import config from "../deno.json" with { type: "json" };
import {
  type Bundle,
  bundleOf,
  ratio,
  revisionHint,
  ROOT,
  weirArgs,
  weirsUnderTest,
} from "./against.ts";
import { benchArgs, killAllOnInterrupt, median, scratchDir } from "./common.ts";
import { firstList } from "./first_list.ts";
import { publishCheckout } from "../tests/support/jsr_publish.ts";
import { startJsr } from "../tests/support/jsr_registry.ts";

const USAGE = "usage: deno task bench:cold [ROUNDS] [--against REV]...";
const { values: flags, positionals } = benchArgs(USAGE, {
  args: Deno.args,
  allowPositionals: true,
  options: { against: { type: "string", multiple: true, default: [] } },
});
if (positionals.length > 1) {
  console.error(`one ROUNDS at most, got ${positionals.join(" ")}\n${USAGE}`);
  Deno.exit(2);
}
const ROUNDS = Number(positionals[0] ?? "15");
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`ROUNDS must be a positive integer, got ${positionals[0]}\n${USAGE}`);
  Deno.exit(2);
}
killAllOnInterrupt();
const GUARDFILE = `${ROOT}guardfiles/demo.mcp.kdl`;
const RUN = ["run", "--quiet", "--config", `${ROOT}deno.json`];
const PERMISSIONS = ["--quiet", "--allow-net", "--allow-env", "--allow-read"];
/** Goals of issue 30: spawn to the first tools/list at most this multiple of bare Deno's. */
const COLD_GOAL = 2.5;
/** ... and at most this resident set then, in MiB. */
const IDLE_RSS_GOAL_MIB = 50;

/** The resident set of each `serve --stdio` spawn at its first tools/list answer, by case. */
const rssAtList = new Map<string, number[]>();

/**
 * {@link firstList} of `deno ARGS` (in `where`'s directory and environment, if
 * given); the resident set goes to {@link rssAtList} under `name`.
 */
async function toFirstList(
  name: string,
  args: string[],
  expect: string,
  where?: { env: Record<string, string>; cwd: string },
): Promise<number> {
  const { ms, rssMiB } = await firstList(Deno.execPath(), args, expect, where?.env, where?.cwd);
  rssAtList.set(name, [...(rssAtList.get(name) ?? []), rssMiB]);
  return ms;
}

async function toExit(args: string[], code = 0): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "null", stderr: "null" })
    .output();
  if (out.code !== code) throw new Error(`${args.join(" ")} exited ${out.code}, not ${code}`);
  return performance.now() - start;
}

console.log(`cold start, median of ${ROUNDS} (Deno ${Deno.version.deno}, ${Deno.build.target})`);
const weirs = await weirsUnderTest(flags.against);
const tmp = await scratchDir("weir-bench-cold-");

// Each weir's bundle, built by its own build step (bench/against.ts bundleOf): this tree's is the
// bundle the binary and image are compiled from, run by `deno run` as scripts/build.ts
// bundleRunArgs says (with --no-lazy, which the binary does not take: its code cache differs,
// V8_FLAGS there); a revision's is what it would have shipped.
const bundles = new Map<string, Bundle>();
console.log(`  building the bundle${weirs.length > 1 ? "s" : ""} (deno task bundle)...`);
for (const w of weirs) {
  const built = await bundleOf(
    w,
    `${tmp}/bundle-${w.label}`,
    PERMISSIONS.filter((p) => p !== "--quiet"),
  );
  bundles.set(w.label, built);
  if ("none" in built) {
    console.log(`  (no bundle row for ${w.label}: ${built.none})`);
    if (built.detail) console.log(built.detail.replace(/^/gm, "    "));
  }
}
const runsBundle = (label: string) => {
  const b = bundles.get(label);
  return b && "args" in b ? b : undefined;
};
const BUNDLED = runsBundle("weir");
const bundleCase = (label: string) =>
  label === "weir" ? "weir serve --stdio, bundle (deno run)" : `${label} serve --stdio, bundle`;
const BUNDLED_CASE = bundleCase("weir");
const bundleRss = (label: string) => label === "weir" ? "bundled" : `${label} bundled`;

/** Copy the directory tree `from` to `to` (files and directories only). */
async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyTree(`${from}/${entry.name}`, `${to}/${entry.name}`);
    else if (entry.isFile) await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

// This tree's bundle as the binary and the image run it: no --v8-flags (alternating V8 flags on
// one copy would make each run rewrite the other's code cache entry).
const BINARY_FORM_CASE = "weir serve --stdio, bundle as the binary runs it";
const BINARY_FORM_RSS = "bundled, binary form";
let binaryForm: string[] | undefined;
if (BUNDLED) {
  const from = `${tmp}/bundle-weir`;
  const to = `${tmp}/bundle-weir-binary-form`;
  await copyTree(from, to);
  binaryForm = BUNDLED.args.filter((a) => !a.startsWith("--v8-flags="))
    .map((a) => a.startsWith(`${from}/`) ? `${to}${a.slice(from.length)}` : a);
}

// The JSR package as a user runs it (README): published from this tree to a local registry.
const JSR_CASE = "weir serve --stdio, the JSR package (deno run -A jsr:@weir/weir/cli)";
const JSR_RSS = "JSR package";
console.log("  publishing this tree to a local JSR registry (scripts/jsr_package.ts)...");
const jsr = startJsr();
let jsrUser: { env: Record<string, string>; cwd: string } | undefined;
try {
  await publishCheckout(jsr, `${tmp}/jsr-stage`, "0".repeat(40));
  jsrUser = {
    env: { JSR_URL: jsr.url, DENO_DIR: `${tmp}/jsr-deno-dir`, DENO_NO_UPDATE_CHECK: "1" },
    cwd: `${tmp}/jsr-user`,
  };
  await Deno.mkdir(jsrUser.cwd);
} catch (error) {
  console.log(`  (no JSR package row: ${(error as Error).message.split("\n")[0]})`);
}
// The first tools/call of a spec-mode serve, through a local upstream: what a start defers to the
// first call (the HTTP/1.1 client, src/ops/lazy.ts) is paid there, so spawn to that answer counts.
const upstream = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  (request) => Response.json({ id: new URL(request.url).pathname.split("/").pop() }),
);
const CALL_FILE = `${ROOT}bench/guardfiles/things.mcp.kdl`;
const CALL_ENV = { THINGS_URL: `http://127.0.0.1:${upstream.addr.port}` };
const FIRST_CALL = { name: "get_thing", arguments: { id: "1" } };
const BINARY_FORM_CALL = "weir serve --stdio, first tools/call, bundle as the binary runs it";
const JSR_CALL = "weir serve --stdio, first tools/call, the JSR package";
/** Spawn to the answer of the first tools/call (sent at the tools/list answer), in ms. */
async function toFirstCall(args: string[], where?: { env: Record<string, string>; cwd: string }) {
  const env = { ...where?.env, ...CALL_ENV };
  const { callMs } = await firstList(
    Deno.execPath(),
    args,
    "get_thing",
    env,
    where?.cwd,
    FIRST_CALL,
  );
  return callMs!;
}
const empty = `${tmp}/empty.ts`;
await Deno.writeTextFile(empty, "\n");
const MISSING = `${tmp}/missing.mcp.kdl`;

const [WEIR] = weirs.map((w) => weirArgs(w, PERMISSIONS));
const serveCase = (label: string) => `${label} serve --stdio, deno run cli.ts (informative)`;
const cases: Record<string, () => Promise<number>> = {
  "bare Deno, stdio tools/list": () =>
    toFirstList("bare", [...RUN, `${ROOT}bench/servers/bare_stdio.ts`], "echo"),
  ...Object.fromEntries(weirs.flatMap((w) => [
    [
      serveCase(w.label),
      () =>
        toFirstList(
          w.label,
          [...weirArgs(w, PERMISSIONS), "serve", GUARDFILE, "--stdio"],
          "list_ticket",
        ),
    ],
    [`${w.label} --version`, () => toExit([...weirArgs(w, PERMISSIONS), "--version"])],
  ])),
  ...Object.fromEntries(weirs.flatMap((w) => {
    const b = runsBundle(w.label);
    if (!b) return [];
    return [[
      bundleCase(w.label),
      () =>
        toFirstList(
          bundleRss(w.label),
          [...b.args, "serve", GUARDFILE, "--stdio"],
          "list_ticket",
        ),
    ]];
  })),
  ...(jsrUser
    ? {
      [JSR_CASE]: () =>
        toFirstList(
          JSR_RSS,
          ["run", "-A", "jsr:@weir/weir/cli", "serve", GUARDFILE, "--stdio"],
          "list_ticket",
          jsrUser,
        ),
    }
    : {}),
  ...(binaryForm
    ? {
      [BINARY_FORM_CASE]: () =>
        toFirstList(BINARY_FORM_RSS, [...binaryForm, "serve", GUARDFILE, "--stdio"], "list_ticket"),
      [BINARY_FORM_CALL]: () => toFirstCall([...binaryForm, "serve", CALL_FILE, "--stdio"]),
    }
    : {}),
  ...(jsrUser
    ? {
      [JSR_CALL]: () =>
        toFirstCall(["run", "-A", "jsr:@weir/weir/cli", "serve", CALL_FILE, "--stdio"], jsrUser),
    }
    : {}),
  "weir help": () => toExit([...WEIR, "help"]),
  "deno eval 0 (--no-config)": () => toExit(["eval", "--no-config", "0"]),
  "deno run of an empty file": () => toExit([...RUN, empty]),
  "weir serve of a missing file": () => toExit([...WEIR, "serve", MISSING, "--stdio"], 1),
};
const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, run] of Object.entries(cases)) {
    const t = await run().catch((error: Error) => {
      console.error(
        `\nABORTED: ${name}: ${error.message}` +
          (revisionHint(name) ||
            "\nthis tree cannot run what the bench asks of it; fix it, then run the bench again"),
      );
      Deno.exit(1);
    });
    if (round > 0) times[name].push(t);
  }
}
await jsr.close();
await upstream.shutdown();

// What each npm package the serve path may load costs to import, each in a fresh process. The
// scratch file names the package by its npm: specifier: deno.json maps the bare name for files
// in this checkout only (its "./" scope).
const packages = Object.entries(config.scopes["./"] as Record<string, string>)
  .filter(([name]) =>
    [
      "@bgotink/kdl",
      "@cfworker/json-schema",
      "@jmespath-community/jmespath",
      "ioredis",
      "postgres",
      "jose",
      "aws4fetch",
      "fast-xml-parser",
    ].includes(name)
  );
const importCost: [string, number][] = [];
for (const [name, specifier] of packages) {
  const file = `${tmp}/${name.replace(/\W/g, "_")}.ts`;
  await Deno.writeTextFile(file, `import ${JSON.stringify(specifier)};\n`);
  await toExit([...RUN, "-A", file]); // fills the caches
  const with_: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < 9; i++) {
    with_.push(await toExit([...RUN, "-A", file]));
    without.push(await toExit([...RUN, "-A", empty]));
  }
  importCost.push([name, median(with_) - median(without)]);
}

const rssRows = [
  ...weirs.map((w) => w.label),
  ...(jsrUser ? [JSR_RSS] : []),
  ...weirs.filter((w) => runsBundle(w.label)).map((w) => bundleRss(w.label)),
  ...(binaryForm ? [BINARY_FORM_RSS] : []),
];
const rssLabel = (label: string) => `${label} serve --stdio, RSS at that answer`;
const width = Math.max(
  34,
  ...[...Object.keys(times), ...rssRows.map(rssLabel)].map((k) => k.length),
);
console.log("");
for (const [name, xs] of Object.entries(times)) {
  console.log(`  ${name.padEnd(width)} ${median(xs).toFixed(1).padStart(7)} ms`);
}
for (const label of rssRows) {
  console.log(
    `  ${rssLabel(label).padEnd(width)} ` +
      `${median(rssAtList.get(label) ?? []).toFixed(1).padStart(7)} MiB`,
  );
}
const at = (name: string) => median(times[name]);
const bare = at("bare Deno, stdio tools/list");
const serve = at(serveCase("weir"));
const rss = median(rssAtList.get("weir") ?? []);
console.log(
  `\ninfo  deno run cli.ts (a checkout's route, no goal) / bare Deno, spawn to first ` +
    `tools/list  ${(serve / bare).toFixed(2)}x, RSS ${rss.toFixed(1)} MiB`,
);
if (jsrUser) {
  const fromJsr = at(JSR_CASE);
  const jsrRss = median(rssAtList.get(JSR_RSS) ?? []);
  console.log(
    `${
      fromJsr / bare <= COLD_GOAL && jsrRss <= IDLE_RSS_GOAL_MIB ? "PASS" : "FAIL"
    }  the JSR package (deno run -A jsr:@weir/weir/cli) / bare Deno, spawn to first tools/list  ` +
      `${(fromJsr / bare).toFixed(2)}x, RSS ${jsrRss.toFixed(1)} MiB  (goals <= ${COLD_GOAL}x, ` +
      `<= ${IDLE_RSS_GOAL_MIB} MiB; / deno run cli.ts ${ratio(fromJsr, serve)})`,
  );
}
if (BUNDLED) {
  const bundled = at(BUNDLED_CASE);
  const bundledRss = median(rssAtList.get("bundled") ?? []);
  console.log(
    `${bundled / bare <= COLD_GOAL ? "PASS" : "FAIL"}  bundle (deno run, --no-lazy) / ` +
      `bare Deno, spawn to first tools/list  ${(bundled / bare).toFixed(2)}x  (goal <= ` +
      `${COLD_GOAL}x; / deno run cli.ts ${ratio(bundled, serve)})`,
  );
  console.log(
    `${bundledRss <= IDLE_RSS_GOAL_MIB ? "PASS" : "FAIL"}  bundle serve --stdio RSS after the ` +
      `first tools/list  ${bundledRss.toFixed(1)} MiB  (goal <= ${IDLE_RSS_GOAL_MIB} MiB)`,
  );
  const binary = at(BINARY_FORM_CASE);
  const binaryRss = median(rssAtList.get(BINARY_FORM_RSS) ?? []);
  console.log(
    `${
      binary / bare <= COLD_GOAL && binaryRss <= IDLE_RSS_GOAL_MIB ? "PASS" : "FAIL"
    }  bundle as the binary runs it (no ` +
      `--no-lazy) / bare Deno  ${(binary / bare).toFixed(2)}x, RSS ${binaryRss.toFixed(1)} MiB  ` +
      `(goals <= ${COLD_GOAL}x, <= ${IDLE_RSS_GOAL_MIB} MiB; the binary's own figure: its release notes)`,
  );
}
for (const w of weirs.slice(1)) {
  console.log(
    `weir / ${w.label}: serve to first tools/list ` +
      `${ratio(serve, at(serveCase(w.label)))} (${w.label} / bare Deno ` +
      `${ratio(at(serveCase(w.label)), bare)}), --version ` +
      `${ratio(at("weir --version"), at(`${w.label} --version`))}, RSS ` +
      `${ratio(rss, median(rssAtList.get(w.label) ?? []))}`,
  );
  const theirs = bundles.get(w.label)!;
  console.log(
    "none" in theirs
      ? `  bundle: no row for ${w.label} (${theirs.none})`
      : !BUNDLED
      ? `  bundle: no row for this tree (its bundle failed, above)`
      : `  bundle / ${w.label}'s bundle: serve to first tools/list ` +
        `${ratio(at(BUNDLED_CASE), at(bundleCase(w.label)))} (${w.label}'s bundle / bare Deno ` +
        `${ratio(at(bundleCase(w.label)), bare)}), RSS ` +
        `${
          ratio(
            median(rssAtList.get("bundled") ?? []),
            median(rssAtList.get(bundleRss(w.label)) ?? []),
          )
        }`,
  );
}
const parts: [string, number][] = [
  ["Deno itself (deno run of an empty file, same config)", at("deno run of an empty file")],
  [
    "the command line's module graph (weir --version, minus the above)",
    at("weir --version") - at("deno run of an empty file"),
  ],
  [
    "serve's modules (serve of a missing file, minus --version)",
    at("weir serve of a missing file") - at("weir --version"),
  ],
  [
    "read, parse and lint the guardfile, the modes' modules, the server, answer (the rest)",
    serve - at("weir serve of a missing file"),
  ],
];
console.log("\nwhere weir serve --stdio's time goes (differences of the medians above):");
for (const [name, ms] of parts) {
  console.log(`  ${name.padEnd(86)} ${ms.toFixed(1).padStart(6)} ms`);
}
console.log(
  "\nimport cost of each npm package weir may load (median of 9 fresh processes importing it, minus an empty one, interleaved; noisy on a busy machine):",
);
for (const [name, ms] of importCost) {
  console.log(`  ${name.padEnd(30)} ${ms.toFixed(1).padStart(7)} ms`);
}
