/**
 * Test files run again on a shipped form of weir: the bundle
 * (tests/bundle_test.ts) and the compiled binary (tests/compile_test.ts). Each
 * file starts weir only through tests/support/cli.ts's helpers, which run the
 * form `WEIR_TEST_BUNDLE` or `WEIR_TEST_BINARY` names.
 */
import assert from "node:assert/strict";
import { CONFIG, LOCK, ROOT, runCommand } from "./cli.ts";

/**
 * `serve --stdio` with the official v1 client, `serve --http` with real tool
 * calls through a local upstream (v1, v2, the tool API), the wrap mode and
 * `serve-upstream`, an AWS policy against s3rver, sql grants against
 * PostgreSQL, OAuth, the backtracking analysis, the extract worker (PDF, feeds).
 */
export const SHIPPED_FORM_TESTS: readonly string[] = [
  "tests/e2e/stdio_v1_test.ts",
  "tests/e2e/http_test.ts",
  "tests/e2e/extract_test.ts",
  "tests/e2e/mcp_wrap_test.ts",
  "tests/e2e/serve_upstream_stdio_test.ts",
  "tests/aws/s3rver_local_test.ts",
  "tests/e2e/sql_test.ts",
  "tests/e2e/oauth_test.ts",
  "tests/e2e/backtracking_pattern_test.ts",
];

/**
 * Run {@link SHIPPED_FORM_TESTS} with `env` (`WEIR_TEST_BUNDLE` or
 * `WEIR_TEST_BINARY`); asserts each file starts weir only through the helpers
 * (else it would test the sources) and that all pass.
 */
export async function runShippedFormTests(env: Record<string, string>): Promise<void> {
  for (const file of SHIPPED_FORM_TESTS) {
    const text = await Deno.readTextFile(`${ROOT}${file}`);
    assert.doesNotMatch(
      text,
      /import\s*\{[^}]*\bCLI\b[^}]*\}|(\.\.\/|\})cli\.ts/,
      `${file} must start weir through the helpers only (runCli, serveHttp, ...), or it tests the sources`,
    );
  }
  const run = await runCommand(Deno.execPath(), {
    args: [
      "test",
      "--quiet",
      "--config",
      CONFIG,
      `--lock=${LOCK}`,
      "--frozen",
      "--allow-all",
      ...SHIPPED_FORM_TESTS,
    ],
    cwd: ROOT,
    env: { ...env, NO_COLOR: "1" },
    stdin: "null",
  });
  assert.equal(run.code, 0, `${run.stdout.slice(-4000)}\n${run.stderr.slice(-2000)}`);
  assert.match(run.stdout, /ok \| \d+ passed .*\| 0 failed/);
}
