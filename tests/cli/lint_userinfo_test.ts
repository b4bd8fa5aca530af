/**
 * A password written into a URL of a guardfile (which lint refuses) is never
 * repeated: not by `lint` in text or JSON, not by `serve` refusing to start,
 * whatever form the URL takes (with or without a scheme, an unsupported
 * scheme, an AWS publisher's base-url).
 */
import assert from "node:assert/strict";
import { runCli, tempGuardfile } from "../support/cli.ts";

const PASSWORD = "hunter2-not-for-logs";

const spec = (url: string) =>
  `wrap ward mcp x {\n    base-url "${url}"\n    auth none\n    can get a { path "/a" }\n}\n`;

const CASES: [string, string][] = [
  ["https with userinfo", spec(`https://admin:${PASSWORD}@api.example`)],
  ["no scheme (read as https)", spec(`admin:${PASSWORD}@api.example/v1`)],
  ["a space in the password", spec(`https://admin:${PASSWORD} x@api.example`)],
  ["an unsupported scheme", spec(`ftp://admin:${PASSWORD}@api.example`)],
  [
    "an S3 publisher's base-url",
    `wrap ward mcp aws s3 {\n    bucket "assets-bucket"\n    base-url "https://admin:${PASSWORD}@files.example"\n` +
    `    content-type "image/png"\n    can put object\n}\n`,
  ],
];

Deno.test("lint and serve never repeat a password written into a guardfile URL", async (t) => {
  for (const [label, text] of CASES) {
    await t.step(label, async () => {
      const file = await tempGuardfile(text);
      try {
        const lint = await runCli(["lint", file]);
        assert.equal(lint.code, 1, lint.stderr);
        assert.match(lint.stderr, /:[23]:5: wrap > base-url .*\[redacted\]@/);
        assert.ok(!lint.stderr.includes(PASSWORD), lint.stderr);
        const json = await runCli(["lint", "--format", "json", file]);
        assert.equal(json.code, 1);
        assert.ok(json.stdout.includes("[redacted]@"), json.stdout);
        assert.ok(!(json.stdout + json.stderr).includes(PASSWORD), json.stdout);
        const serve = await runCli(["serve", file, "--stdio"], { stdin: "" });
        assert.equal(serve.code, 1);
        assert.ok(!(serve.stdout + serve.stderr).includes(PASSWORD), serve.stderr);
      } finally {
        await Deno.remove(file);
      }
    });
  }
});

Deno.test("a guardfile path holding a terminal escape is printed escaped by lint, serve and describe", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-path-" });
  const missing = `${dir}/missing\u001b[2J\u001b]0;t\u0007.mcp.kdl`;
  try {
    for (const args of [["lint", missing], ["serve", missing, "--stdio"], ["describe", missing]]) {
      const out = await runCli(args, { stdin: "" });
      assert.equal(out.code, 1, `${args[0]}: ${out.stderr}`);
      assert.match(
        out.stderr,
        /read guardfile ".*missing\\u001b\[2J\\u001b\]0;t\\u0007\.mcp\.kdl": no such file/,
      );
      assert.ok(!/[\u001b\u0007]/.test(out.stderr), `${args[0]}: ${JSON.stringify(out.stderr)}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
