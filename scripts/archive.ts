/**
 * Release archives: a target's binary (as `weir` or `weir.exe`) with the
 * `LICENSE`, in `weir-<target>.tar.gz` (Linux, macOS) or `weir-<target>.zip`
 * (Windows), and a `SHA256SUMS` file over the archives in `sha256sum -c`
 * format. `scripts/compile.ts --release` writes them; `scripts/install.sh`
 * reads them; `tests/release/install_script_test.ts` builds a fake release
 * with the same functions.
 *
 * Uses GNU `tar` and Info-ZIP `zip` (both on Debian and on GitHub's Ubuntu
 * runners). Entries carry a fixed owner and time, so the same binary gives the
 * same archive.
 *
 * @module
 */
import { archiveName, binaryName, type Target } from "./build.ts";

/** 1980-01-01T00:00:00Z: the earliest time a zip entry can carry. */
const EPOCH = 315532800;

async function run(command: string, args: string[], cwd?: string): Promise<Uint8Array> {
  const out = await new Deno.Command(command, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`${command} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return out.stdout;
}

/**
 * Write `weir-<target>.<ext>` into `outDir`.
 * @param binary path of the compiled binary for `target`
 * @param license path of the LICENSE file to ship beside it
 * @returns the archive's file name
 */
export async function writeArchive(
  binary: string,
  license: string,
  target: Target,
  outDir: string,
): Promise<string> {
  const name = archiveName(target);
  const stage = await Deno.makeTempDir({ prefix: "weir-archive-" });
  try {
    const exe = binaryName(target);
    await Deno.copyFile(binary, `${stage}/${exe}`);
    await Deno.chmod(`${stage}/${exe}`, 0o755);
    await Deno.copyFile(license, `${stage}/LICENSE`);
    await Deno.chmod(`${stage}/LICENSE`, 0o644);
    for (const file of [exe, "LICENSE"]) await Deno.utime(`${stage}/${file}`, EPOCH, EPOCH);
    const path = `${outDir.replace(/\/$/, "")}/${name}`;
    if (name.endsWith(".zip")) {
      await Deno.remove(path).catch(() => {});
      await run("zip", ["-X", "-q", path, exe, "LICENSE"], stage);
    } else {
      const tar = await run("tar", [
        "--sort=name",
        "--owner=0",
        "--group=0",
        "--numeric-owner",
        `--mtime=@${EPOCH}`,
        "--format=ustar",
        "-C",
        stage,
        "-cf",
        "-",
        exe,
        "LICENSE",
      ]);
      const gz = new Blob([tar as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
        new CompressionStream("gzip"),
      );
      await Deno.writeFile(path, gz);
    }
    return name;
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
}

/** The SHA-256 of a file, as lowercase hex. */
export async function sha256File(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Write `SHA256SUMS` in `dir` over `names` (files in `dir`), one `<hex>  <name>` line each. */
export async function writeSums(dir: string, names: string[]): Promise<void> {
  const base = dir.replace(/\/$/, "");
  const lines = [];
  for (const name of [...names].sort()) {
    lines.push(`${await sha256File(`${base}/${name}`)}  ${name}`);
  }
  await Deno.writeTextFile(`${base}/SHA256SUMS`, lines.join("\n") + "\n");
}
