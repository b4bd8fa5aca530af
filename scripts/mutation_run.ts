/**
 * A mutation run over weir's security rules (issue 34 item 10): each
 * mutation of scripts/security_mutations.ts is applied, alone, to a copy of
 * the repository in a temporary git worktree (never to this checkout), and
 * the test files named for it are run against the mutant. A mutant the tests
 * fail on is killed; one they pass is a survivor: a weakened rule no test
 * holds. Every file is restored before the next mutation, and the worktree
 * is removed at the end.
 *
 *   nice -n 19 deno run -A scripts/mutation_run.ts              # every mutation, at HEAD
 *   deno run -A scripts/mutation_run.ts --only pin-1,secret-2   # some of them
 *   deno run -A scripts/mutation_run.ts --list                  # ids and rules
 *   deno run -A scripts/mutation_run.ts --check                 # only: does each still apply?
 *   deno run -A scripts/mutation_run.ts --rev main --out run.json
 *
 * First the named test files run once unmutated (a test that fails already
 * would "kill" every mutant); `--no-baseline` skips that. A mutation whose
 * text no longer occurs exactly once is reported `stale` (the code moved:
 * re-point it). Exits 1 on any survivor, stale mutation or failing baseline.
 * Tests run one file set at a time (`deno test -A --quiet`), each bounded by
 * `--timeout` seconds (a mutant that hangs the tests counts as killed).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Mutation, MUTATIONS } from "./security_mutations.ts";

const ROOT = new URL("../", import.meta.url).pathname;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    only: { type: "string" },
    list: { type: "boolean" },
    rev: { type: "string", default: "HEAD" },
    out: { type: "string" },
    timeout: { type: "string", default: "900" },
    "no-baseline": { type: "boolean" },
    check: { type: "boolean" },
  },
});

if (values.list) {
  for (const m of MUTATIONS) console.log(`${m.id}\t${m.file}\t${m.rule}`);
  Deno.exit(0);
}
const ids = new Set(MUTATIONS.map((m) => m.id));
if (ids.size !== MUTATIONS.length) throw new Error("two mutations share an id");
const only = values.only?.split(",").map((s) => s.trim()).filter(Boolean);
const unknown = only?.filter((id) => !ids.has(id)) ?? [];
if (unknown.length > 0) {
  console.error(`unknown mutation ids: ${unknown.join(", ")} (see --list)`);
  Deno.exit(2);
}
const chosen = only ? MUTATIONS.filter((m) => only.includes(m.id)) : MUTATIONS;
const timeoutMs = Number(values.timeout) * 1000;
if (!(timeoutMs > 0)) {
  console.error("--timeout takes a number of seconds");
  Deno.exit(2);
}

async function git(args: string[], cwd = ROOT): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text.trim();
}

/** Run test files in the copy; true when they all pass. */
async function testsPass(
  dir: string,
  tests: readonly string[],
): Promise<"pass" | "fail" | "timeout"> {
  const child = new Deno.Command("deno", {
    args: ["test", "-A", "--quiet", ...tests],
    cwd: dir,
    stdout: "null",
    stderr: "null",
    stdin: "null",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, timeoutMs);
  const status = await child.status;
  clearTimeout(timer);
  return timedOut ? "timeout" : status.success ? "pass" : "fail";
}

type Verdict = "killed" | "survived" | "stale";
interface Outcome {
  id: string;
  rule: string;
  file: string;
  verdict: Verdict;
  how: string;
  seconds: number;
}

const commit = await git(["rev-parse", values.rev]);
const dir = await Deno.makeTempDir({ prefix: "weir-mutants-" });
await Deno.remove(dir);
await git(["worktree", "add", "--detach", dir, commit]);
const outcomes: Outcome[] = [];
const baselineFailed: string[] = [];
try {
  // Stale mutations first (their code moved), before any test runs.
  for (const m of chosen) {
    const text = await Deno.readTextFile(`${dir}/${m.file}`).catch(() => "");
    const at = text.indexOf(m.from);
    if (at >= 0 && text.indexOf(m.from, at + 1) < 0) continue;
    const how = at < 0 ? "text not found" : "text found more than once";
    outcomes.push({ ...pick(m), verdict: "stale", how, seconds: 0 });
    console.error(`${m.id}\tstale\t${how}\t${m.file}`);
  }
  const stale = new Set(outcomes.map((o) => o.id));
  if (values.check) {
    console.log(`${chosen.length - stale.size} of ${chosen.length} mutations apply`);
  } else if (!values["no-baseline"]) {
    const files = [
      ...new Set(chosen.filter((m) => !stale.has(m.id)).flatMap((m) => m.tests)),
    ].sort();
    console.error(`baseline: ${files.length} test files at ${commit.slice(0, 10)}`);
    for (const file of files) {
      if ((await testsPass(dir, [file])) !== "pass") baselineFailed.push(file);
    }
    if (baselineFailed.length > 0) {
      console.error(`baseline fails: ${baselineFailed.join(", ")} (fix them first)`);
    }
  }
  for (const m of values.check ? [] : chosen) {
    if (stale.has(m.id)) continue;
    if (m.tests.some((t) => baselineFailed.includes(t))) {
      outcomes.push({ ...pick(m), verdict: "stale", how: "a test fails unmutated", seconds: 0 });
      continue;
    }
    outcomes.push(await run(m));
    const o = outcomes.at(-1)!;
    console.error(`${o.id}\t${o.verdict}\t${o.how}\t${o.seconds}s\t${o.rule}`);
  }
} finally {
  await git(["worktree", "remove", "--force", dir]).catch((e) => console.error(String(e)));
}

function pick(m: Mutation) {
  return { id: m.id, rule: m.rule, file: m.file };
}

async function run(m: Mutation): Promise<Outcome> {
  const path = `${dir}/${m.file}`;
  const original = await Deno.readTextFile(path);
  const at = original.indexOf(m.from);
  if (at < 0 || original.indexOf(m.from, at + 1) >= 0) {
    return {
      ...pick(m),
      verdict: "stale",
      how: at < 0 ? "text not found" : "text found more than once",
      seconds: 0,
    };
  }
  await Deno.writeTextFile(path, original.slice(0, at) + m.to + original.slice(at + m.from.length));
  const started = performance.now();
  try {
    const result = await testsPass(dir, m.tests);
    const seconds = Math.round((performance.now() - started) / 1000);
    return {
      ...pick(m),
      verdict: result === "pass" ? "survived" : "killed",
      how: result === "pass"
        ? "every test passes"
        : result === "timeout"
        ? "tests timed out"
        : "a test fails",
      seconds,
    };
  } finally {
    await Deno.writeTextFile(path, original);
  }
}

if (values.check) Deno.exit(outcomes.length > 0 ? 1 : 0);
const killed = outcomes.filter((o) => o.verdict === "killed").length;
const survived = outcomes.filter((o) => o.verdict === "survived");
const stale = outcomes.filter((o) => o.verdict === "stale");
const tried = killed + survived.length;
const summary = {
  commit,
  mutations: outcomes.length,
  killed,
  survived: survived.map((o) => o.id),
  stale: stale.map((o) => `${o.id} (${o.how})`),
  killRate: tried === 0
    ? null
    : `${killed}/${tried} (${Math.round((killed / tried) * 1000) / 10}%)`,
  baselineFailed,
  outcomes,
};
if (values.out) await Deno.writeTextFile(values.out, JSON.stringify(summary, null, 2) + "\n");
console.log(
  `kill rate ${summary.killRate}; survivors: ${summary.survived.join(", ") || "none"}` +
    (stale.length ? `; stale: ${summary.stale.join(", ")}` : ""),
);
Deno.exit(survived.length > 0 || stale.length > 0 || baselineFailed.length > 0 ? 1 : 0);
