/**
 * `weir diff` of AWS policies (serve-s3, serve-ssm) says a true narrowing
 * narrows: a key prefix under the old one, fewer content types or
 * parameters, a smaller max-bytes, a tool removed; their reverses widen, and
 * another bucket or region widens either way. Every edit below is applied to
 * the shipped policies and diffed both ways, through the model API and the
 * CLI (`--fail-on widen` exit codes).
 */
import assert from "node:assert/strict";
import { parseAwsPolicy } from "../../src/guardfile/aws.ts";
import { describeAws } from "../../src/modes/serve_aws.ts";
import { diffSurfaces } from "../../src/diff/surface_diff.ts";
import type { Effect } from "../../src/diff/declare.ts";
import { ROOT, runCli } from "../support/cli.ts";

const S3 = Deno.readTextFileSync(`${ROOT}guardfiles/s3-assets.mcp.kdl`);
const SSM = Deno.readTextFileSync(`${ROOT}guardfiles/ssm-forgejo-token.mcp.kdl`);
const SSM_TWO = SSM.replace(
  `    parameter "/forgejo/coilyco-ops/read-token"`,
  `    parameter "/forgejo/coilyco-ops/read-token" tool="forgejo-read-token"\n` +
    `    parameter "/forgejo/coilyco-ops/other-token"`,
);

function effects(oldText: string, newText: string): Set<Effect> {
  const surface = (text: string) => {
    const loaded = parseAwsPolicy(text, "policy.mcp.kdl");
    assert.ok(loaded?.policy, JSON.stringify(loaded?.diagnostics));
    return describeAws(loaded.policy);
  };
  return new Set(diffSurfaces(surface(oldText), surface(newText)).map((c) => c.effect));
}

/** [what, the old file, the edited file, whether the edit narrows (else it widens either way)]. */
const EDITS: [string, string, string, "narrows" | "widens both ways" | "words only"][] = [
  [
    "a prefix under the old one",
    S3,
    S3.replace(`prefix "charts"`, `prefix "charts/2026"`),
    "narrows",
  ],
  ["a content type removed", S3, S3.replace(`    content-type "image/webp"\n`, ""), "narrows"],
  ["a smaller max-bytes", S3, S3.replace(`max-bytes 2097152`, `max-bytes 1048576`), "narrows"],
  ["put_object removed", S3, S3.replace(`    can put object\n`, ""), "narrows"],
  [
    "all of them at once",
    S3,
    S3.replace(`prefix "charts"`, `prefix "charts/2026"`)
      .replace(`    content-type "image/webp"\n`, "")
      .replace(`max-bytes 2097152`, `max-bytes 1048576`),
    "narrows",
  ],
  ["a parameter removed", SSM_TWO, SSM, "narrows"],
  ["a sibling prefix", S3, S3.replace(`prefix "charts"`, `prefix "charts2"`), "widens both ways"],
  [
    "another bucket",
    S3,
    S3.replace(`bucket "example-public-assets"`, `bucket "example-private"`),
    "widens both ways",
  ],
  ["another region", SSM, SSM.replace(`us-east-1`, `eu-west-1`), "widens both ways"],
  [
    "the public base URL",
    S3,
    S3.replace(`https://files.example.com`, `https://cdn.example.com`),
    "words only",
  ],
];

for (const [what, before, after, kind] of EDITS) {
  Deno.test(`weir diff of an AWS policy: ${what} ${kind}`, () => {
    assert.notEqual(before, after, "the edit applies");
    const forward = effects(before, after);
    const back = effects(after, before);
    if (kind === "narrows") {
      assert.ok(forward.has("narrow") && !forward.has("widen"), [...forward].join());
      assert.ok(back.has("widen"), `the reverse widens: ${[...back].join()}`);
    } else if (kind === "widens both ways") {
      assert.ok(forward.has("widen") && back.has("widen"));
    } else {
      assert.ok(!forward.has("widen") && !back.has("widen") && forward.has("change"));
    }
  });
}

Deno.test("weir diff --fail-on widen: 0 on a narrowed S3 policy, 1 on its reverse", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-aws-diff-" });
  try {
    await Deno.writeTextFile(`${dir}/old.mcp.kdl`, S3);
    await Deno.writeTextFile(
      `${dir}/narrow.mcp.kdl`,
      S3.replace(`prefix "charts"`, `prefix "charts/2026"`).replace(
        `    content-type "image/webp"\n`,
        "",
      ),
    );
    const narrow = await runCli([
      "diff",
      "--fail-on",
      "widen",
      `${dir}/old.mcp.kdl`,
      `${dir}/narrow.mcp.kdl`,
    ]);
    assert.equal(narrow.code, 0, narrow.stdout + narrow.stderr);
    assert.match(
      narrow.stdout,
      /- narrows +\(server\): aws policy key prefix "charts\/" -> "charts\/2026\/"/,
    );
    assert.match(
      narrow.stdout,
      /- narrows +\(server\): aws policy content-type removed: "image\/webp"/,
    );
    assert.match(narrow.stdout, /- narrows +put_object: key prefix "charts\/" -> "charts\/2026\/"/);
    const back = await runCli([
      "diff",
      "--fail-on",
      "widen",
      `${dir}/narrow.mcp.kdl`,
      `${dir}/old.mcp.kdl`,
    ]);
    assert.equal(back.code, 1, back.stdout + back.stderr);
    assert.match(
      back.stdout,
      /\+ WIDENS +\(server\): aws policy content-type added: "image\/webp"/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
