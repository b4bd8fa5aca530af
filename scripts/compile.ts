/**
 * Build weir's single-file binaries with `deno compile`.
 *
 *   deno task compile            dist/weir for this machine
 *   deno task release            dist/weir-<version>-<target>[.exe] for the five targets
 *                                 below, and dist/SHA256SUMS (sha256sum -c format)
 *   --out-dir DIR                write there instead of dist/
 *
 * `deno compile` needs `denort`, the runtime the binary is built on. Deno
 * downloads it from dl.deno.land for each target unless `DENORT_BIN` names a
 * local copy (only for the host's own target). When it cannot get one, this
 * script says so, removes what it half-wrote (never leaving an empty dist/),
 * and exits 1.
 *
 * The binary gets the permissions weir's commands need and no more: network,
 * environment, reading files (guardfiles, `value file` secrets), running the
 * one command a `serve-upstream -- CMD` names, and writing the file
 * `lint-upstream --write-fingerprints` names (see `PERMISSIONS`).
 *
 * @module
 */
import config from "../deno.json" with { type: "json" };

/** The release targets, as `deno compile --target` spells them. */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

const ROOT = new URL("../", import.meta.url);
/**
 * `--allow-run`: `serve-upstream -- CMD` starts a stdio upstream (no other command spawns).
 * `--allow-write`: `lint-upstream --write-fingerprints FILE` (nothing else writes a file).
 */
const PERMISSIONS = ["--allow-net", "--allow-env", "--allow-read", "--allow-run", "--allow-write"];

async function exists(url: URL): Promise<boolean> {
  try {
    await Deno.lstat(url);
    return true;
  } catch {
    return false;
  }
}

async function compile(output: URL, target?: string): Promise<string | undefined> {
  const args = [
    "compile",
    "--quiet",
    "--config",
    new URL("deno.json", ROOT).pathname,
    ...PERMISSIONS,
    ...(target ? ["--target", target] : []),
    // A Web Worker module is loaded by URL at run time: embed it explicitly.
    "--include",
    new URL("src/guard/extract_worker.ts", ROOT).pathname,
    "--output",
    output.pathname,
    new URL("cli.ts", ROOT).pathname,
  ];
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "inherit", stderr: "piped" })
    .output();
  if (out.success) return undefined;
  const text = new TextDecoder().decode(out.stderr).replace(/\x1b\[[0-9;]*m/g, "");
  return text.split("Stack backtrace")[0].split("\n").map((l) => l.trim()).filter(Boolean)
    .slice(-5).join("\n");
}

async function sha256(url: URL): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(url));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function main(args: string[]): Promise<number> {
  let release = false;
  let DIST = new URL("dist/", ROOT);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--release") release = true;
    else if (args[i] === "--out-dir" && args[i + 1]) {
      DIST = new URL(`file://${Deno.realPathSync(".")}/`);
      DIST = new URL(args[++i].replace(/\/?$/, "/"), DIST);
    } else {
      console.error(
        `compile: unknown argument ${args[i]}; usage: compile.ts [--release] [--out-dir DIR]`,
      );
      return 2;
    }
  }
  const distExisted = await exists(DIST);
  await Deno.mkdir(DIST, { recursive: true });
  const jobs = release
    ? TARGETS.map((t) => ({
      target: t as string | undefined,
      name: `weir-${config.version}-${t}${t.includes("windows") ? ".exe" : ""}`,
    }))
    : [{ target: undefined, name: Deno.build.os === "windows" ? "weir.exe" : "weir" }];
  const written: URL[] = [];
  for (const job of jobs) {
    const output = new URL(job.name, DIST);
    const error = await compile(output, job.target);
    if (error !== undefined) {
      for (const file of written) await Deno.remove(file).catch(() => {});
      await Deno.remove(output).catch(() => {});
      if (!distExisted) await Deno.remove(DIST).catch(() => {}); // only if empty
      console.error(`compile: deno compile${job.target ? ` --target ${job.target}` : ""} failed:`);
      console.error(error.split("\n").slice(-6).map((l) => `  ${l}`).join("\n"));
      console.error(
        `compile: deno compile builds on "denort", which it downloads from dl.deno.land.\n` +
          `  Without network access, point DENORT_BIN at a denort ${Deno.version.deno} binary ` +
          `for this machine\n  (from the denort-<target>.zip of the Deno release) and run ` +
          `"deno task compile" again:\n    DENORT_BIN=/path/to/denort deno task compile\n` +
          `  Release builds for other targets need each target's denort, so they need the network.`,
      );
      return 1;
    }
    written.push(output);
    console.log(`compile: wrote dist/${job.name}`);
  }
  if (release) {
    const lines = [];
    for (const [i, job] of jobs.entries()) lines.push(`${await sha256(written[i])}  ${job.name}`);
    await Deno.writeTextFile(new URL("SHA256SUMS", DIST), lines.join("\n") + "\n");
    console.log("compile: wrote dist/SHA256SUMS (check with: cd dist && sha256sum -c SHA256SUMS)");
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
