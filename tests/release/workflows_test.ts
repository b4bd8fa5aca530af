/**
 * The GitHub Actions workflows (`.github/workflows/*.yml`) are valid before a
 * tag ever runs them: the workflow schema validator from npm
 * (`@action-validator/cli`, pinned here and in `.ci/run`) accepts each file and
 * rejects a broken one (so it really runs), `yamllint` with the repository's
 * settings passes, every `run:` script passes shellcheck (with `${{ … }}`
 * expressions stood in for), and every action is pinned to a release tag.
 * Each check says it is skipped, and why, where its tool is missing.
 */
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { ROOT, runCommand } from "../support/cli.ts";

/** The validator, pinned; .ci/run runs the same version. */
export const ACTION_VALIDATOR = "@action-validator/cli@0.6.0";

const DIR = `${ROOT}.github/workflows`;
const FILES = [...Deno.readDirSync(DIR)].map((e) => `${DIR}/${e.name}`)
  .filter((f) => /\.ya?ml$/.test(f)).sort();

async function works(command: string, args: string[]): Promise<boolean> {
  try {
    return (await runCommand(command, { args })).code === 0;
  } catch {
    return false;
  }
}

const NPX = await works("npx", ["--version"]);
const YAMLLINT = await works("yamllint", ["--version"]);
const SHELLCHECK = await works("shellcheck", ["--version"]);

Deno.test("the workflows are ci.yml and release.yml", () => {
  assert.deepEqual(FILES.map((f) => f.slice(DIR.length + 1)), ["ci.yml", "release.yml"]);
});

Deno.test({
  name: `${ACTION_VALIDATOR} accepts every workflow and rejects a broken one${
    NPX ? "" : " (skipped: no npx)"
  }`,
  ignore: !NPX,
  fn: async () => {
    for (const file of FILES) {
      // The validator's schema predates the `attestations` permission (GitHub added it in 2024
      // for artifact attestations; actions/attest-build-provenance needs `attestations: write`),
      // so it checks a copy without those lines, and this test checks them itself.
      const text = await Deno.readTextFile(file);
      const lines = text.split("\n").filter((l) => /^\s+attestations:/.test(l));
      for (const line of lines) assert.match(line, /^ {6}attestations: (write|read|none)$/, file);
      const copy = await Deno.makeTempFile({ suffix: ".yml" });
      try {
        await Deno.writeTextFile(copy, text.replace(/^\s+attestations: \w+\n/gm, ""));
        const r = await runCommand("npx", { args: ["-y", ACTION_VALIDATOR, copy], cwd: ROOT });
        assert.equal(r.code, 0, `${file}:\n${r.stdout}${r.stderr}`);
      } finally {
        await Deno.remove(copy);
      }
    }
    const broken = await Deno.makeTempFile({ suffix: ".yml" });
    try {
      const text = await Deno.readTextFile(`${DIR}/release.yml`);
      await Deno.writeTextFile(
        broken,
        text.replace(/^\s+attestations: \w+\n/gm, "")
          .replace("runs-on: ubuntu-24.04", "runs-onn: ubuntu-24.04"),
      );
      const r = await runCommand("npx", { args: ["-y", ACTION_VALIDATOR, broken], cwd: ROOT });
      assert.equal(r.code, 1, "the validator rejects a job with a misspelt key");
      assert.match(r.stdout + r.stderr, /runs-onn/);
    } finally {
      await Deno.remove(broken);
    }
  },
});

Deno.test({
  name: `yamllint passes the workflows${YAMLLINT ? "" : " (skipped: no yamllint)"}`,
  ignore: !YAMLLINT,
  fn: async () => {
    const r = await runCommand("yamllint", {
      args: ["--strict", "-c", `${ROOT}.yamllint.yaml`, ...FILES],
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
  },
});

interface Step {
  run?: string;
  uses?: string;
  shell?: string;
}

function allSteps(): { file: string; job: string; step: Step; os: string }[] {
  const out = [];
  for (const file of FILES) {
    const workflow = parseYaml(Deno.readTextFileSync(file));
    for (
      const [job, spec] of Object.entries(workflow.jobs as Record<string, Record<string, unknown>>)
    ) {
      for (const step of (spec.steps as Step[]) ?? []) {
        out.push({ file: file.slice(ROOT.length), job, step, os: String(spec["runs-on"]) });
      }
    }
  }
  return out;
}

Deno.test({
  name: `every run: script passes shellcheck${SHELLCHECK ? "" : " (skipped: no shellcheck)"}`,
  ignore: !SHELLCHECK,
  fn: async () => {
    // PowerShell steps (Windows) are not shell scripts.
    const scripts = allSteps().filter((s) => s.step.run !== undefined && s.step.shell !== "pwsh");
    assert.ok(scripts.length > 10);
    for (const { file, job, step } of scripts) {
      // GitHub substitutes ${{ … }} before the shell runs: stand in a plain word.
      const body = step.run!.replace(/\$\{\{[^}]*\}\}/g, "EXPRESSION");
      const child = new Deno.Command("shellcheck", {
        args: ["--shell=bash", "--severity=style", "-"],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(body));
      await writer.close();
      const out = await child.output();
      assert.equal(
        out.code,
        0,
        `${file} job ${job}:\n${body}\n${new TextDecoder().decode(out.stdout)}`,
      );
    }
  },
});

Deno.test("every action is pinned to a release tag", () => {
  for (const { file, job, step } of allSteps()) {
    if (step.uses === undefined) continue;
    assert.match(step.uses, /^[\w.-]+\/[\w.-]+(\/[\w.-]+)*@v\d+(\.\d+){0,2}$/, `${file} ${job}`);
  }
});
