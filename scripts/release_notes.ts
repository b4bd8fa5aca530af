/**
 * The release notes for a version tag, from `CHANGELOG.md`, after checking that
 * the tag, `deno.json` and the Helm chart agree on the version. The release
 * workflow runs it before it builds anything:
 *
 *   deno run --allow-read scripts/release_notes.ts v0.2.0 > notes.md
 *
 * Prints the changelog's `## [0.2.0]` section (without its heading) and the
 * commands that install exactly that version. Exits 1, naming what to fix,
 * when the tag is not `v` + the version in deno.json, when the chart's
 * `version` or `appVersion` differ from it, or when the changelog has no
 * (or an empty) section for it; 2 for a wrong command line.
 *
 * @module
 */
import { CHART, IMAGE } from "./build.ts";

const ROOT = new URL("../", import.meta.url);

/** The body of `## [version]` in a Keep a Changelog text, or undefined when absent. */
export function changelogSection(changelog: string, version: string): string | undefined {
  const lines = changelog.split("\n");
  const heading = new RegExp(`^## \\[${version.replaceAll(".", "\\.")}\\]( - .*)?\\s*$`);
  const start = lines.findIndex((line) => heading.test(line));
  if (start < 0) return undefined;
  const end = lines.findIndex((line, i) => i > start && /^## /.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n").trim();
}

/** What the notes say under "Install", for one version. */
export function installText(version: string): string {
  return `## Install ${version}

\`\`\`sh
# binary (Linux, macOS; checks SHA256SUMS)
curl -fsSL https://github.com/weir-mcp/weir/releases/download/v${version}/install.sh | WEIR_VERSION=${version} sh
# JSR
deno run -A jsr:@weir/weir@${version}/cli --version
# image (linux/amd64, linux/arm64)
docker pull ${IMAGE.repository}:${version}
# Helm chart (the Secret weir-inbound holds the bearer token callers send)
helm install weir ${CHART.repository}/weir --version ${version} \\
  --set-file guardfile=my.mcp.kdl --set inboundAuth.existingSecret=weir-inbound
\`\`\`

Windows: \`weir-x86_64-pc-windows-msvc.zip\` below. Every archive is listed in \`SHA256SUMS\` and has a
build provenance attestation (\`gh attestation verify weir-<target>.tar.gz --repo weir-mcp/weir\`).`;
}

/** Check the tag against the repository and return the notes, or a message saying what to fix. */
export async function releaseNotes(tag: string, root: URL = ROOT): Promise<string | Error> {
  const match = /^v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag);
  if (!match) return new Error(`tag ${tag} is not v<semver>, e.g. v0.2.0`);
  const version = match[1];
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  if (config.version !== version) {
    return new Error(`tag ${tag} but deno.json says version ${config.version}: bump deno.json`);
  }
  const chart = await Deno.readTextFile(new URL(`${CHART.path}/Chart.yaml`, root));
  for (const key of ["version", "appVersion"]) {
    const value = new RegExp(`^${key}:\\s*"?([^"\\s]+)"?\\s*$`, "m").exec(chart)?.[1];
    if (value !== version) {
      return new Error(
        `tag ${tag} but ${CHART.path}/Chart.yaml has ${key}: ${
          value ?? "(none)"
        }: set it to ${version}`,
      );
    }
  }
  const section = changelogSection(await Deno.readTextFile(new URL("CHANGELOG.md", root)), version);
  if (!section) {
    return new Error(
      `CHANGELOG.md has no entry for ${version}: rename "## [Unreleased]" to ` +
        `"## [${version}] - YYYY-MM-DD" (with a how-to-tell sentence for each break)`,
    );
  }
  return `${section}\n\n${installText(version)}\n`;
}

if (import.meta.main) {
  if (Deno.args.length !== 1) {
    console.error("usage: release_notes.ts TAG   (e.g. v0.2.0)");
    Deno.exit(2);
  }
  const notes = await releaseNotes(Deno.args[0]);
  if (notes instanceof Error) {
    console.error(`release_notes: ${notes.message}`);
    Deno.exit(1);
  }
  console.log(notes);
}
