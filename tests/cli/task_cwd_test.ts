/**
 * `deno task weir <command>` from outside the checkout (`--config` or `--cwd`
 * pointing at it): relative paths are the user's, read from the directory the
 * task was started in, as the install page's "is `weir <command>`" promises.
 * A task's own working directory is its deno.json's, so without the task
 * passing INIT_CWD on, `my.mcp.kdl` would be looked up in the checkout.
 */
import assert from "node:assert/strict";
import { CONFIG, ROOT, runCommand } from "../support/cli.ts";

const GUARDFILE = await Deno.readTextFile(`${ROOT}guardfiles/demo.mcp.kdl`);

/** The environment without INIT_CWD: an outer `deno task test` would otherwise lend its own. */
function cleanEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.INIT_CWD;
  delete env.WEIR_TASK_CWD;
  return env;
}

async function task(cwd: string, where: string[], args: string[]) {
  return await runCommand(Deno.execPath(), {
    args: ["task", "--quiet", ...where, "weir", ...args],
    cwd,
    env: cleanEnv(),
    clearEnv: true,
    stdin: "null",
  });
}

for (const [how, where] of [["--config", ["--config", CONFIG]], ["--cwd", ["--cwd", ROOT]]]) {
  Deno.test(`deno task ${how} CHECKOUT weir: a relative guardfile and --output are the user's`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "weir-task-cwd-" });
    try {
      await Deno.mkdir(`${dir}/sub`);
      await Deno.writeTextFile(`${dir}/sub/mine.mcp.kdl`, GUARDFILE);
      const lint = await task(dir, where as string[], ["lint", "sub/mine.mcp.kdl"]);
      assert.equal(lint.code, 0, lint.stderr);
      assert.match(lint.stdout, /^get_ticket$/m);

      // A file the command writes lands where the user is, not in the checkout.
      await Deno.writeTextFile(
        `${dir}/api.json`,
        JSON.stringify({
          openapi: "3.0.3",
          info: { title: "Tiny", version: "1" },
          servers: [{ url: "https://api.tiny.example" }],
          paths: { "/things": { get: { operationId: "listThings", responses: { 200: {} } } } },
        }),
      );
      const out = "tiny.mcp.kdl";
      const scaffold = await task(dir, where as string[], [
        "scaffold",
        "api.json",
        "--select-reads",
        "--output",
        out,
      ]);
      assert.equal(scaffold.code, 0, scaffold.stderr);
      assert.match(await Deno.readTextFile(`${dir}/${out}`), /can list thing/);
      assert.equal(await Deno.stat(`${ROOT}${out}`).then(() => true, () => false), false);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("deno task weir from the checkout: paths relative to it, as before", async () => {
  const lint = await task(ROOT, [], ["lint", "guardfiles/demo.mcp.kdl"]);
  assert.equal(lint.code, 0, lint.stderr);
  assert.match(lint.stdout, /^get_ticket$/m);
});
