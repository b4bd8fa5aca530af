/**
 * Every file a user names, read through the shipped CLI: a guardfile, a
 * `value file` (read at every call), an `inbound-token` file, an
 * `--upstream-header` `{file:PATH}` span, `--state-keys-file`, lint-upstream's
 * `--fingerprints` (flags and the file form) and scaffold's OpenAPI document. Each is read only when it
 * is a regular file under its cap (src/ops/bounded_file.ts): /dev/zero, a
 * FIFO, a directory and an oversized file are refused unread with a message
 * naming the file and what to do. Every run is bounded by a kill signal, so a
 * reader that blocked on a FIFO or read /dev/zero forever fails the test
 * instead of hanging the suite.
 */
import assert from "node:assert/strict";
import { type CliResult, outputText, weirCommand } from "../support/cli.ts";

const dir = await Deno.makeTempDir({ prefix: "weir-user-files-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

const pipe = `${dir}/pipe`;
{
  const out = await new Deno.Command("mkfifo", { args: [pipe] }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}
/** One byte over the value-file cap (64 KiB). */
const oversized = `${dir}/oversized`;
await Deno.writeTextFile(oversized, "k".repeat(64 * 1024 + 1));

/** The hostile files, and the words their refusal must hold. */
const HOSTILE: [string, RegExp][] = [
  ["/dev/zero", /not a regular file but a character device; name a regular file/],
  [pipe, /not a regular file but a FIFO \(named pipe\); name a regular file/],
  [dir, /not a regular file but a directory; name a regular file/],
  [oversized, /larger than 65536 bytes, the most weir reads of a [a-z ]+file/],
];

/** Run `weir ARGS` with stdin, killed after 60 s (a hang is a failure, never a stuck suite). */
async function weir(args: string[], stdin = ""): Promise<CliResult & { killed: boolean }> {
  const { command, args: pre } = weirCommand();
  const signal = AbortSignal.timeout(60_000);
  const child = new Deno.Command(command, {
    args: [...pre, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal,
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(stdin));
  await w.close();
  const out = outputText(await child.output());
  return { ...out, killed: signal.aborted };
}

const label = (file: string) =>
  file === pipe
    ? "a FIFO"
    : file === dir
    ? "a directory"
    : file === oversized
    ? "64 KiB + 1"
    : file;

const quoted = (file: string) => file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

const CALL = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_thing", arguments: {} } },
].map((m) => JSON.stringify(m)).join("\n") + "\n";

for (const [file, words] of HOSTILE) {
  Deno.test(`serve: a credential \`value file "${file}"\` fails the call at once, naming it`, async () => {
    const guardfile = `${dir}/value-${file.replace(/\W/g, "_")}.mcp.kdl`;
    await Deno.writeTextFile(
      guardfile,
      `wrap ward mcp t {\n  base-url "http://127.0.0.1:9"\n  auth bearer { value file "${file}" }\n` +
        `  can get thing { path "/t" }\n}\n`,
    );
    const r = await weir(["serve", guardfile, "--stdio"], CALL);
    assert.equal(r.killed, false, "serve did not answer within 60 s");
    const answer = r.stdout.trim().split("\n").map((l) => JSON.parse(l)).find((m) => m.id === 2);
    assert.ok(answer, r.stdout + r.stderr);
    assert.equal(answer.result.isError, true);
    const text = answer.result.content[0].text as string;
    assert.match(text, /^credential_missing: the upstream credential is not available/);
    assert.match(text, new RegExp(`file ${quoted(file)} \\(`));
    assert.match(text, words);
  });

  Deno.test(`serve: an \`inbound-token\` file "${file}" stops start-up, naming it`, async () => {
    const guardfile = `${dir}/token-${file.replace(/\W/g, "_")}.mcp.kdl`;
    await Deno.writeTextFile(
      guardfile,
      `wrap ward mcp t {\n  base-url "http://127.0.0.1:9"\n  auth none\n  can get thing { path "/t" }\n}\n` +
        `inbound-token reporting {\n  value file "${file}"\n  tools "get_thing"\n}\n`,
    );
    const r = await weir(["serve", guardfile, "--http", "127.0.0.1:0"]);
    assert.equal(r.killed, false, "serve neither started nor stopped within 60 s");
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`inbound-token "reporting" \\(file ${quoted(file)} \\(`));
    assert.match(r.stderr, words);
  });

  Deno.test(`serve: --state-keys-file ${label(file)} stops start-up, naming it`, async () => {
    const r = await weir([
      "serve",
      "tests/fixtures/conformance.mcp.kdl",
      "--stdio",
      "--state-keys-file",
      file,
    ]);
    assert.equal(r.killed, false);
    // A start-up configuration refusal: exit 2, as every wrong setting (docs/cli.md "Exit codes").
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`--state-keys-file ${quoted(file)}: `));
    assert.match(r.stderr.replace("key file", "value file"), words);
  });

  Deno.test(`lint-upstream: --upstream-header {file:${label(file)}} and --fingerprints ${label(file)} are refused unread`, async () => {
    // Port 9 (discard) on loopback: nothing answers; the files are read before any connection.
    const header = await weir([
      "lint-upstream",
      "--upstream",
      "http://127.0.0.1:9/mcp",
      "--tool",
      "x",
      "--upstream-header",
      `X-Key={file:${file}}`,
    ]);
    assert.equal(header.killed, false);
    assert.equal(header.code, 1, header.stderr);
    assert.match(header.stderr, new RegExp(`--upstream-header X-Key: file ${quoted(file)}: `));
    assert.match(header.stderr.replace("header file", "value file"), words);
    if (file === oversized) return; // 64 KiB is well under the fingerprints cap
    const prints = await weir([
      "lint-upstream",
      "--upstream",
      "http://127.0.0.1:9/mcp",
      "--tool",
      "x",
      "--fingerprints",
      file,
    ]);
    assert.equal(prints.killed, false);
    assert.equal(prints.code, 1, prints.stderr);
    assert.match(prints.stderr, new RegExp(`--fingerprints ${quoted(file)}: `));
    assert.match(prints.stderr, words);
    // The file form (lint-upstream FILE) reads its fingerprints the same way.
    const wrap = `${dir}/wrap.mcp.kdl`;
    await Deno.writeTextFile(
      wrap,
      `wrap ward mcp t {\n    mcp-server http "http://127.0.0.1:9/mcp"\n    proxy x\n}\n`,
    );
    const filed = await weir(["lint-upstream", wrap, "--fingerprints", file]);
    assert.equal(filed.killed, false);
    assert.equal(filed.code, 1, filed.stderr);
    assert.match(filed.stderr, new RegExp(`--fingerprints ${quoted(file)}: `));
    assert.match(filed.stderr, words);
  });
}

for (const [file, words] of HOSTILE.slice(0, 3)) {
  for (const command of ["lint", "describe"]) {
    Deno.test(`${command}: a guardfile that is ${label(file)} is refused unread, naming it`, async () => {
      const r = await weir([command, file]);
      assert.equal(r.killed, false);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`read guardfile "${quoted(file)}": `));
      assert.match(r.stderr, words);
    });
  }

  Deno.test(`scaffold: an OpenAPI document that is ${label(file)} is refused unread, naming it`, async () => {
    const r = await weir(["scaffold", file]);
    assert.equal(r.killed, false);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`read ${quoted(file)}: `));
    assert.match(r.stderr, words);
  });
}
