/**
 * `scripts/release_notes.ts TAG`, the release workflow's first step: the notes
 * are the changelog's section for the version plus the commands that install
 * exactly it; the tag, deno.json and the chart must agree and the changelog
 * must have the entry, or it stops with exit 1 and says what to change.
 */
import assert from "node:assert/strict";
import { changelogSection, releaseNotes } from "../../scripts/release_notes.ts";
import { CHART, IMAGE } from "../../scripts/build.ts";
import { CONFIG, ROOT, runCommand } from "../support/cli.ts";

const config = JSON.parse(await Deno.readTextFile(CONFIG));

async function notes(tag: string) {
  return await runCommand(Deno.execPath(), {
    args: ["run", "--allow-read", `${ROOT}scripts/release_notes.ts`, tag],
    cwd: ROOT,
  });
}

const made: string[] = [];
globalThis.addEventListener("unload", () => {
  for (const dir of made) Deno.removeSync(dir, { recursive: true });
});

/** A repository root in a temp dir: deno.json, the chart's Chart.yaml and a changelog. */
async function fakeRoot(version: string, chart: string, changelog: string): Promise<URL> {
  const dir = await Deno.makeTempDir({ prefix: "weir-notes-" });
  made.push(dir);
  await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ version }));
  await Deno.mkdir(`${dir}/${CHART.path}`, { recursive: true });
  await Deno.writeTextFile(`${dir}/${CHART.path}/Chart.yaml`, chart);
  await Deno.writeTextFile(`${dir}/CHANGELOG.md`, changelog);
  return new URL(`file://${dir}/`);
}

Deno.test("the notes for this version's tag: its changelog section and how to install it", async () => {
  const r = await notes(`v${config.version}`);
  assert.equal(r.code, 0, r.stderr);
  const changelog = await Deno.readTextFile(`${ROOT}CHANGELOG.md`);
  assert.ok(r.stdout.startsWith(changelogSection(changelog, config.version)!));
  assert.match(r.stdout, new RegExp(`WEIR_VERSION=${config.version} sh`));
  assert.match(r.stdout, new RegExp(`jsr:@weir/weir@${config.version}/cli`));
  assert.ok(r.stdout.includes(`docker pull ${IMAGE.repository}:${config.version}`));
  assert.ok(
    r.stdout.includes(`helm install weir ${CHART.repository}/weir --version ${config.version}`),
  );
});

Deno.test("a tag that is not this version, or not a version, stops the release", async () => {
  const other = await notes("v99.0.0");
  assert.equal(other.code, 1);
  assert.match(other.stderr, /tag v99\.0\.0 but deno\.json says version .*: bump deno\.json/);
  const junk = await notes("release-1");
  assert.equal(junk.code, 1);
  assert.match(junk.stderr, /tag release-1 is not v<semver>/);
  const usage = await notes("");
  assert.equal(usage.code, 1);
});

Deno.test("releaseNotes() names a chart or changelog that lags behind", async () => {
  const changelog = `# Changelog\n\n## [Unreleased]\n\n## [1.1.0] - 2026-12-01\n\n### Changed\n\n` +
    `- A break. Affects you if X; change Y.\n\n## [1.0.0]\n\n- First.\n`;
  const good = await releaseNotes(
    "v1.1.0",
    await fakeRoot("1.1.0", 'version: 1.1.0\nappVersion: "1.1.0"\n', changelog),
  );
  assert.ok(typeof good === "string", String(good));
  assert.ok(
    good.startsWith("### Changed\n\n- A break. Affects you if X; change Y.\n\n## Install 1.1.0"),
  );
  const chart = await releaseNotes(
    "v1.1.0",
    await fakeRoot("1.1.0", 'version: 1.1.0\nappVersion: "1.0.0"\n', changelog),
  );
  assert.ok(chart instanceof Error);
  assert.match(chart.message, /Chart\.yaml has appVersion: 1\.0\.0: set it to 1\.1\.0/);
  const missing = await releaseNotes(
    "v1.2.0",
    await fakeRoot("1.2.0", "version: 1.2.0\nappVersion: 1.2.0\n", changelog),
  );
  assert.ok(missing instanceof Error);
  assert.match(
    missing.message,
    /CHANGELOG\.md has no entry for 1\.2\.0: rename "## \[Unreleased\]"/,
  );
  const empty = await releaseNotes(
    "v1.0.1",
    await fakeRoot(
      "1.0.1",
      "version: 1.0.1\nappVersion: 1.0.1\n",
      "## [1.0.1]\n\n## [1.0.0]\n- x\n",
    ),
  );
  assert.ok(empty instanceof Error, "an empty section is no entry");
});

Deno.test("changelogSection() takes one section, whole, and no other", () => {
  const text =
    "## [0.10.0]\nten\n## [0.1.0] - 2026-01-01\none\n### Fixed\n- a\n\n## [0.0.1]\nzero\n";
  assert.equal(changelogSection(text, "0.1.0"), "one\n### Fixed\n- a");
  assert.equal(changelogSection(text, "0.10.0"), "ten");
  assert.equal(changelogSection(text, "0.0.1"), "zero");
  assert.equal(changelogSection(text, "0.1"), undefined);
  assert.equal(changelogSection(text, "1.0.0"), undefined);
});
