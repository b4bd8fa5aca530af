/** `deno task demo` (= `weir demo`) runs on a fresh machine and every step behaves. */
import assert from "node:assert/strict";
import { runCli } from "./support/cli.ts";

Deno.test("weir demo: the scripted session passes and exits 0", async () => {
  const r = await runCli(["demo"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /tools\/list/);
  assert.match(r.stdout, /upstream received: GET \/boards\/demo-team\/tickets\?status=open/);
  assert.match(r.stdout, /verb_withheld/);
  assert.match(r.stdout, /argument "board": must match the pattern \^demo-/);
  assert.match(r.stdout, /all 5 checks passed/);
  assert.doesNotMatch(r.stdout, /FAILED/);
});
