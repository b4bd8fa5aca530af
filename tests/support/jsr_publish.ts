/**
 * Publish the checkout to a local JSR registry (tests/support/jsr_registry.ts)
 * the way the release workflow publishes it to jsr.io: a copy of the checkout's
 * files as git sees them, stamped with a commit (`scripts/stamp.ts`), made the
 * JSR package (`scripts/jsr_package.ts`: the CLI entry a bundle of weir's own
 * modules) and uploaded by the real `deno publish`. Used by
 * tests/release/jsr_package_test.ts and bench/cold_start.ts.
 */
import { ROOT, runCommand } from "./cli.ts";
import type { Files, LocalJsr } from "./jsr_registry.ts";

/** The checkout's files as git sees them (tracked, or new and not ignored), copied to `dir`. */
export async function copyCheckout(dir: string): Promise<void> {
  const list = await runCommand("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: ROOT,
  });
  if (list.code !== 0) throw new Error(`git ls-files: ${list.stderr}`);
  for (const file of new Set(list.stdout.split("\0").filter(Boolean))) {
    const from = `${ROOT}${file}`;
    const info = await Deno.lstat(from).catch(() => undefined);
    if (!info?.isFile) continue; // deleted in the work tree, or a link
    await Deno.mkdir(`${dir}/${file}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.copyFile(from, `${dir}/${file}`);
  }
}

/**
 * Copy the checkout into `stage` (an empty directory), stamp `commit`, make it
 * the JSR package and publish it to `jsr`; the uploaded files, path -> bytes.
 * Throws, naming the step and its stderr, when a step fails.
 */
export async function publishCheckout(
  jsr: LocalJsr,
  stage: string,
  commit: string,
): Promise<Files> {
  await copyCheckout(stage);
  const config = JSON.parse(await Deno.readTextFile(`${stage}/deno.json`));
  const steps: [string, string[], Record<string, string>?][] = [
    ["stamp", ["run", "--allow-read", "--allow-write", "scripts/stamp.ts", commit]],
    ["jsr_package", ["run", "--allow-all", "scripts/jsr_package.ts"]],
    [
      "deno publish",
      ["publish", "--token", "local-test", "--no-provenance", "--allow-dirty"],
      { JSR_URL: jsr.url, NO_COLOR: "1", GITHUB_ACTIONS: "" },
    ],
  ];
  for (const [name, args, env] of steps) {
    const out = await runCommand(Deno.execPath(), { args, cwd: stage, env });
    if (out.code !== 0) throw new Error(`${name}: ${out.stderr}`);
  }
  const files = jsr.published.get(`${config.name}@${config.version}`);
  if (!files?.size) throw new Error(`deno publish uploaded no ${config.name}@${config.version}`);
  return files;
}
