/**
 * The single-file binary: `deno task compile` output lints and runs the demo
 * with no Deno and no node_modules beside it.
 *
 * `deno compile` needs the `denort` runtime. It is downloaded from dl.deno.land
 * unless `DENORT_BIN` names a local copy; on machines that can do neither the
 * test reports itself ignored, with the reason in its name.
 */
import assert from "node:assert/strict";
import { CONFIG, ROOT } from "./support/cli.ts";

const output = `${await Deno.makeTempDir()}/weir`;
const compile = await new Deno.Command(Deno.execPath(), {
  args: [
    "compile",
    "--quiet",
    "--config",
    CONFIG,
    "--allow-net",
    "--allow-env",
    "--allow-read",
    "--output",
    output,
    `${ROOT}cli.ts`,
  ],
  cwd: ROOT,
  stdout: "piped",
  stderr: "piped",
}).output();
// deno colours its errors; keep the last plain line that says what went wrong.
const plain = new TextDecoder().decode(compile.stderr).replace(/\x1b\[[0-9;]*m/g, "");
const why = compile.success ? "" : plain.split("\n").map((l) => l.trim())
  .filter((l) => /dns|lookup|download|denort|connect|network/i.test(l)).at(-1)
  ?.replace(/^\d+: /, "").slice(0, 120) ??
  "compile failed";

Deno.test({
  name: compile.success
    ? "compiled binary lints and runs the demo"
    : `compiled binary (skipped: deno compile could not get denort; set DENORT_BIN: ${why})`,
  ignore: !compile.success,
  fn: async () => {
    const run = (args: string[]) =>
      new Deno.Command(output, { args, cwd: ROOT, stdout: "piped", stderr: "piped" }).output();
    const lint = await run(["lint", "guardfiles/demo.mcp.kdl"]);
    assert.equal(lint.code, 0);
    assert.match(new TextDecoder().decode(lint.stdout), /delete_ticket/);
    const demo = await run(["demo"]);
    assert.equal(demo.code, 0, new TextDecoder().decode(demo.stdout));
  },
});
