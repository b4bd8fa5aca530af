/**
 * `scripts/install.sh`, run the way its first line says (`curl -fsSL
 * …/install.sh | sh`, with Debian's sh, dash) against a fake release served on
 * 127.0.0.1 in GitHub's layout (`/download/v<version>/<file>`, and
 * `/latest/download/<file>` redirecting there). The release's archives and
 * SHA256SUMS are made by `scripts/archive.ts`, as `deno task release` makes
 * them; the "binary" in them is a small script that answers `--version`.
 *
 * It installs the latest or a named version into WEIR_INSTALL_DIR and says
 * when that is not on PATH; it refuses an archive whose SHA-256 does not match
 * SHA256SUMS, one SHA256SUMS does not list, a version that does not exist, and
 * a binary that does not run, each with a message and exit 1, leaving an
 * installed weir as it was.
 */
import assert from "node:assert/strict";
import { archiveName, type Target, TARGETS } from "../../scripts/build.ts";
import { writeArchive, writeSums } from "../../scripts/archive.ts";
import { ROOT, runCommand } from "../support/cli.ts";

async function has(command: string): Promise<boolean> {
  return (await runCommand("sh", { args: ["-c", `command -v ${command}`] })).code === 0;
}

const target = Deno.build.target as Target;
const missing = [];
if (!Object.hasOwn(TARGETS, target) || target.includes("windows")) missing.push(`target ${target}`);
for (const tool of ["curl", "tar", "sha256sum"]) if (!(await has(tool))) missing.push(tool);
const skip = missing.length ? ` (skipped: no ${missing.join(", ")} here)` : "";

const work = await Deno.makeTempDir({ prefix: "weir-install-" });
const site = `${work}/site`;
globalThis.addEventListener("unload", () => Deno.removeSync(work, { recursive: true }));

/** Publish a fake release `version` whose binary prints `weir <version>` (or exits `exit`). */
async function release(
  version: string,
  options: { exit?: number; tamper?: boolean; unlisted?: boolean } = {},
): Promise<void> {
  const dir = `${site}/download/v${version}`;
  await Deno.mkdir(dir, { recursive: true });
  const binary = `${work}/weir-${version}`;
  await Deno.writeTextFile(
    binary,
    `#!/bin/sh\nif [ "$1" = --version ]; then echo "weir ${version}"; echo "commit fake"; fi\n` +
      `exit ${options.exit ?? 0}\n`,
  );
  const names = [];
  for (const t of Object.keys(TARGETS) as Target[]) {
    names.push(await writeArchive(binary, `${ROOT}LICENSE`, t, dir));
  }
  await writeSums(dir, options.unlisted ? names.filter((n) => n !== archiveName(target)) : names);
  if (options.tamper) {
    // One byte changed after the sums were written, as a corrupt or altered download would be.
    const bytes = await Deno.readFile(`${dir}/${archiveName(target)}`);
    bytes[bytes.length - 9] ^= 0xff;
    await Deno.writeFile(`${dir}/${archiveName(target)}`, bytes);
  }
  await Deno.copyFile(`${ROOT}scripts/install.sh`, `${dir}/install.sh`);
}

let latest = "";
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  const path = decodeURIComponent(new URL(req.url).pathname);
  const redirect = /^\/latest\/download\/([^/]+)$/.exec(path);
  if (redirect) {
    return Response.redirect(new URL(`/download/v${latest}/${redirect[1]}`, req.url), 302);
  }
  if (path.includes("..")) return new Response("no", { status: 400 });
  try {
    return new Response(await Deno.readFile(`${site}${path}`));
  } catch {
    return new Response("Not Found", { status: 404 });
  }
});
const BASE = `http://127.0.0.1:${server.addr.port}`;

/** `curl -fsSL <url> | sh` in a shell with `env` (and a PATH without the install dir). */
async function curlPipeSh(url: string, env: Record<string, string>) {
  return await runCommand("sh", {
    args: ["-c", 'curl -fsSL "$INSTALL_URL" | sh'],
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: work, INSTALL_URL: url, ...env },
    clearEnv: true,
    cwd: work,
  });
}

async function installedVersion(dir: string): Promise<string | undefined> {
  try {
    const r = await runCommand(`${dir}/weir`, { args: ["--version"] });
    return r.stdout.split("\n")[0];
  } catch {
    return undefined;
  }
}

Deno.test({
  name: `install.sh installs the latest release and a named version${skip}`,
  ignore: skip !== "",
  fn: async () => {
    await release("1.2.3");
    await release("1.3.0");
    latest = "1.3.0";
    const bin = `${work}/bin`;
    const r = await curlPipeSh(`${BASE}/latest/download/install.sh`, {
      WEIR_RELEASES_URL: BASE,
      WEIR_INSTALL_DIR: bin,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^weir 1\\.3\\.0 installed at ${bin}/weir$`, "m"));
    assert.match(r.stdout, new RegExp(`${bin} is not on your PATH; add it`));
    assert.match(r.stdout, new RegExp(`export PATH="${bin}:\\$PATH"`));
    assert.equal(await installedVersion(bin), "weir 1.3.0");
    assert.equal((await Deno.stat(`${bin}/weir`)).mode! & 0o777, 0o755);
    assert.deepEqual([...Deno.readDirSync(bin)].map((e) => e.name), ["weir"], "no leftovers");
    // Now `weir` is on the PATH of a shell that includes the directory.
    const onPath = await runCommand("sh", {
      args: ["-c", "weir --version"],
      env: { PATH: `${bin}:/usr/bin:/bin` },
    });
    assert.match(onPath.stdout, /^weir 1\.3\.0$/m);

    // A named version (with or without the v), into the default ~/.local/bin, already on PATH.
    const home = `${work}/.local/bin`;
    const named = await runCommand("sh", {
      args: ["-c", 'curl -fsSL "$INSTALL_URL" | sh'],
      env: {
        PATH: `${home}:/usr/local/bin:/usr/bin:/bin`,
        HOME: work,
        INSTALL_URL: `${BASE}/download/v1.2.3/install.sh`,
        WEIR_RELEASES_URL: `${BASE}/`,
        WEIR_VERSION: "v1.2.3",
      },
      clearEnv: true,
    });
    assert.equal(named.code, 0, named.stderr);
    assert.equal(await installedVersion(home), "weir 1.2.3");
    assert.doesNotMatch(named.stdout, /not on your PATH/);
  },
});

Deno.test({
  name:
    `install.sh refuses an archive whose SHA-256 does not match, and keeps the installed weir${skip}`,
  ignore: skip !== "",
  fn: async () => {
    await release("2.0.0");
    await release("2.0.1", { tamper: true });
    latest = "2.0.0";
    const bin = `${work}/keep`;
    const first = await curlPipeSh(`${BASE}/latest/download/install.sh`, {
      WEIR_RELEASES_URL: BASE,
      WEIR_INSTALL_DIR: bin,
    });
    assert.equal(first.code, 0, first.stderr);
    const before = await Deno.readFile(`${bin}/weir`);

    const bad = await curlPipeSh(`${BASE}/latest/download/install.sh`, {
      WEIR_RELEASES_URL: BASE,
      WEIR_INSTALL_DIR: bin,
      WEIR_VERSION: "2.0.1",
    });
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      new RegExp(
        `^weir install: ${archiveName(target).replaceAll(".", "\\.")} does not match SHA256SUMS ` +
          `\\(expected [0-9a-f]{64}, got [0-9a-f]{64}\\): the download is corrupt or was altered; ` +
          `nothing was installed$`,
        "m",
      ),
    );
    assert.deepEqual(await Deno.readFile(`${bin}/weir`), before, "the installed weir is untouched");
    assert.equal(await installedVersion(bin), "weir 2.0.0");
    assert.deepEqual([...Deno.readDirSync(bin)].map((e) => e.name), ["weir"]);
  },
});

Deno.test({
  name:
    `install.sh refuses an unlisted archive, a missing version and a binary that does not run${skip}`,
  ignore: skip !== "",
  fn: async () => {
    await release("3.0.0", { unlisted: true });
    await release("3.0.1", { exit: 3 });
    const bin = `${work}/refused`;
    const env = { WEIR_RELEASES_URL: BASE, WEIR_INSTALL_DIR: bin };
    const url = `${BASE}/download/v3.0.0/install.sh`;

    const unlisted = await curlPipeSh(url, { ...env, WEIR_VERSION: "3.0.0" });
    assert.equal(unlisted.code, 1);
    assert.match(unlisted.stderr, /SHA256SUMS from .* lists no weir-.*; nothing was installed/);

    const absent = await curlPipeSh(url, { ...env, WEIR_VERSION: "9.9.9" });
    assert.equal(absent.code, 1);
    assert.match(absent.stderr, /could not download .*\/download\/v9\.9\.9\/SHA256SUMS/);

    const broken = await curlPipeSh(url, { ...env, WEIR_VERSION: "3.0.1" });
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /does not run on this system .*nothing was installed/);

    assert.equal(await installedVersion(bin), undefined, "nothing was installed");
    const left = await Deno.readDir(bin)[Symbol.asyncIterator]().next().catch(() => undefined);
    assert.ok(!left || left.done, "no file left in the install directory");
  },
});

Deno.test({
  name:
    `release archives: weir and LICENSE (weir.exe in the zip), SHA256SUMS checks, reproducible${skip}`,
  ignore: skip !== "" || !(await has("unzip")),
  fn: async () => {
    await release("4.0.0");
    const dir = `${site}/download/v4.0.0`;
    const sums = await runCommand("sha256sum", { args: ["-c", "SHA256SUMS"], cwd: dir });
    assert.equal(sums.code, 0, sums.stdout + sums.stderr);
    assert.equal(sums.stdout.trim().split("\n").length, Object.keys(TARGETS).length);
    for (const t of Object.keys(TARGETS) as Target[]) {
      const name = archiveName(t);
      const list = name.endsWith(".zip")
        ? await runCommand("unzip", { args: ["-Z1", name], cwd: dir })
        : await runCommand("tar", { args: ["-tzf", name], cwd: dir });
      assert.equal(list.code, 0, list.stderr);
      assert.deepEqual(
        list.stdout.trim().split("\n").sort(),
        ["LICENSE", t.includes("windows") ? "weir.exe" : "weir"],
        name,
      );
    }
    const before = await Deno.readFile(`${dir}/${archiveName(target)}`);
    await release("4.0.0");
    assert.deepEqual(await Deno.readFile(`${dir}/${archiveName(target)}`), before);
  },
});

Deno.test({
  name: "install.sh passes shellcheck (POSIX sh)",
  ignore: !(await has("shellcheck")),
  fn: async () => {
    const r = await runCommand("shellcheck", { args: ["--shell=sh", `${ROOT}scripts/install.sh`] });
    assert.equal(r.code, 0, r.stdout);
  },
});

Deno.test({
  name: "the fake release server stops",
  sanitizeResources: false,
  fn: async () => await server.shutdown(),
});
