/**
 * The one guardfile loader (src/guardfile/load.ts): the mode is decided from
 * the parsed document, and what each mode's reader makes of a file is what the
 * loader hands on.
 */
import assert from "node:assert/strict";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import { parseAwsPolicy } from "../../src/guardfile/aws.ts";
import { ROOT } from "../support/cli.ts";

const FILES = [
  ...[...Deno.readDirSync(`${ROOT}guardfiles`)].map((e) => `guardfiles/${e.name}`),
  ...[...Deno.readDirSync(`${ROOT}tests/fixtures`)].filter((e) => e.name.endsWith(".kdl"))
    .map((e) => `tests/fixtures/${e.name}`),
].sort();

Deno.test("load: every shipped guardfile and fixture loads as its mode's reader reads it", () => {
  const modes = new Set<string>();
  for (const file of FILES) {
    const text = Deno.readTextFileSync(`${ROOT}${file}`);
    const loaded = loadGuardfileText(text, file);
    const aws = parseAwsPolicy(text, file);
    if (aws) {
      assert.equal(loaded.mode, aws.mode, file);
      assert.deepEqual(loaded.policy, aws.policy, file);
      assert.deepEqual(loaded.diagnostics, aws.diagnostics, file);
      assert.equal(loaded.guardfile, undefined, file);
    } else {
      const spec = parseGuardfile(text, file);
      // parseGuardfile reads a wrap of an MCP server as the loader does (mcpWrap).
      assert.equal(loaded.mode, spec.mcpWrap ? "mcp" : "spec", file);
      assert.deepEqual(loaded.guardfile, spec.guardfile, file);
      assert.deepEqual(loaded.mcpWrap, spec.mcpWrap, file);
      assert.deepEqual(loaded.diagnostics, spec.diagnostics, file);
      assert.equal(loaded.policy, undefined, file);
    }
    modes.add(loaded.mode!);
  }
  assert.deepEqual([...modes].sort(), ["mcp", "s3", "spec", "ssm"], "all four modes are covered");
});

Deno.test("load: the mode comes from the first top-level wrap of the document", () => {
  const ssm = `wrap ward mcp aws ssm {\n    parameter "/a/b"\n    can get parameter\n}\n`;
  assert.equal(loadGuardfileText(ssm, "p.mcp.kdl").mode, "ssm");
  // The same words as KDL strings are the same document.
  const quoted = ssm.replace("wrap ward mcp aws ssm", `wrap "ward" "mcp" "aws" "ssm"`);
  assert.equal(loadGuardfileText(quoted, "p.mcp.kdl").mode, "ssm");
  assert.ok(loadGuardfileText(quoted, "p.mcp.kdl").policy);
  // Words in a comment are not the document.
  const commented =
    `// wrap ward mcp aws ssm\nwrap ward mcp tickets {\n    base-url "x.example"\n` +
    `    auth none\n    can get ticket { path "/t/{id}" }\n}\n`;
  const spec = loadGuardfileText(commented, "t.mcp.kdl");
  assert.equal(spec.mode, "spec");
  assert.equal(spec.guardfile?.name, "tickets");
  // A wrap path that is not one of the two AWS grammars is a spec guardfile (and its errors).
  const sqs = loadGuardfileText(`wrap ward mcp aws sqs { }`, "q.mcp.kdl");
  assert.equal(sqs.mode, "spec");
  assert.ok(sqs.diagnostics.some((d) => d.severity === "error"));
});

Deno.test("load: text that is not KDL has no mode, and its syntax errors are the diagnostics", () => {
  const loaded = loadGuardfileText(`wrap ward mcp aws ssm {`, "broken.mcp.kdl");
  assert.equal(loaded.mode, undefined);
  assert.equal(loaded.guardfile, undefined);
  assert.equal(loaded.policy, undefined);
  assert.ok(loaded.diagnostics.length > 0);
  assert.ok(loaded.diagnostics.every((d) => d.message.startsWith("parse KDL: ")));
  assert.deepEqual(
    loaded.diagnostics,
    parseGuardfile(`wrap ward mcp aws ssm {`, "broken.mcp.kdl").diagnostics,
  );
});
