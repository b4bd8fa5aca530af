/**
 * Reading the guardfile, through the real CLI: what `lint` and `serve` say
 * about a file they cannot use as text (too large, endless, not UTF-8, a
 * directory, missing), and that a file of exactly the cap is still read.
 * The reader avoids web streams for start-up time (bench/README.md, "Cold
 * start"); these pin that it refuses exactly what the stream reader refused.
 */
import assert from "node:assert/strict";
import { runCli, tempGuardfile } from "../support/cli.ts";

const VALID = `wrap ward mcp t {
    base-url "t.example"
    auth none
    can get thing { path "/things/{id}" }
}
`;
const CAP = 1024 * 1024;

for (const command of [["lint"], ["serve", "--stdio"]]) {
  const run = (file: string) => runCli([command[0], file, ...command.slice(1)], { stdin: "" });

  Deno.test(`${command[0]}: a guardfile over 1 MiB is refused unread, naming the file`, async () => {
    const file = await tempGuardfile(VALID + "//" + "x".repeat(CAP));
    const r = await run(file);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /read guardfile ".*": larger than 1048576 bytes, the most weir reads of a guardfile \(a guardfile is a few KiB\)/,
    );
  });

  Deno.test(`${command[0]}: an endless file (/dev/zero) is refused, not read forever`, async () => {
    const r = await run("/dev/zero");
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /read guardfile "\/dev\/zero": not a regular file but a character device/,
    );
  });

  Deno.test(`${command[0]}: invalid UTF-8 is "not UTF-8 text", a directory "not a regular file"`, async () => {
    const bad = await tempGuardfile("");
    await Deno.writeFile(bad, new Uint8Array([0x2f, 0x2f, 0xff, 0xfe, 0x0a]));
    const r = await run(bad);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /: not UTF-8 text/);
    const dir = await Deno.makeTempDir();
    try {
      const d = await run(dir);
      assert.equal(d.code, 1, d.stderr);
      assert.match(d.stderr, /: not a regular file but a directory/);
    } finally {
      await Deno.remove(dir);
    }
    const missing = await run(`${dir}/nothing.mcp.kdl`);
    assert.equal(missing.code, 1, missing.stderr);
    assert.match(missing.stderr, /: no such file/);
  });
}

Deno.test("lint: a guardfile of exactly 1 MiB is read whole (the cap is inclusive)", async () => {
  const comment = "//" + "x".repeat(CAP - VALID.length - 3) + "\n";
  const file = await tempGuardfile(VALID + comment);
  assert.equal((await Deno.stat(file)).size, CAP);
  const r = await runCli(["lint", file]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "get_thing\nweir_info\n");
});
