/**
 * The readers only some guardfiles need are loaded when a file needs them
 * (src/guardfile/readers.ts): the asynchronous loader (`loadGuardfile`,
 * what every CLI command uses) reads every file as the synchronous one
 * (`loadGuardfileText`, src/guardfile/load.ts, every reader loaded up front),
 * and a program that reads with the core without preparing gets an error that
 * says what to call, not a wrong answer.
 *
 * This file imports src/guardfile/load.ts only after the first test: until
 * then no reader is registered in this module graph.
 */
import assert from "node:assert/strict";
import {
  type LoadedDocument,
  loadGuardfile,
  modeOf,
  readLoaded,
} from "../../src/guardfile/document.ts";
import { parseKdl } from "../../src/guardfile/kdl.ts";
import { ReaderNotLoadedError, readersNeeded } from "../../src/guardfile/readers.ts";
import { loadReader } from "../../src/ops/load_reader.ts";

const FAIL_WHEN = `wrap ward mcp x {
    base-url "https://x.example"
    auth none
    can get a { path "/a"; fail-when "error == 'x'"; }
}`;
const SQL = `wrap ward mcp shop {
    database pgx { value env "DSN"; }
    can list rows { sql { statement "SELECT id FROM items WHERE id = $1"; param id type="integer"; }; }
    can delete row { sql { statement "DELETE FROM items WHERE id = $1"; param id type="integer"; }; }
}`;
const SQL_WRITES_AS_READ = `wrap ward mcp shop {
    database pgx { value env "DSN"; }
    can list rows { sql { statement "DELETE FROM items"; }; }
}`;
const BAD_FAIL_WHEN = FAIL_WHEN.replace(`"error == 'x'"`, `"[[["`);
const MCP_WRAP = `wrap ward mcp up {
    mcp-server stdio "upstream-server"
    allow "echo"
}`;
const MCP_WRAP_BAD = `wrap ward mcp up {
    mcp-server { command "x" }
    bogus 1
}`;
const S3_BAD = `wrap ward mcp aws s3 {
    bucket "b"
    can put objectz
}`;

function parsed(text: string) {
  const result = parseKdl(text);
  if ("errors" in result) throw new Error("not KDL");
  return result.nodes;
}

Deno.test("readers: the core without a preparation names what to call, for each reader", () => {
  for (
    const [text, reader] of [[FAIL_WHEN, "jmespath"], [SQL, "sql"], [MCP_WRAP, "mcp_wrap"], [
      S3_BAD,
      "aws",
    ]]
  ) {
    const nodes = parsed(text);
    assert.throws(
      () => readLoaded(nodes, modeOf(nodes), "x.mcp.kdl"),
      (error: unknown) =>
        error instanceof ReaderNotLoadedError && error.message.includes(`"${reader}"`) &&
        error.message.includes("await loadGuardfile(text, file, load)") &&
        error.message.includes("loadGuardfileText"),
      reader,
    );
  }
  // A file that needs no reader reads without one.
  const plain = parsed(FAIL_WHEN.replace(` fail-when "error == 'x'";`, ""));
  assert.equal(readLoaded(plain, "spec", "x.mcp.kdl").guardfile?.grants.length, 1);
});

Deno.test("readers: what each file needs, from its node names", () => {
  assert.deepEqual(readersNeeded(parsed(FAIL_WHEN), "spec"), ["jmespath"]);
  assert.deepEqual(readersNeeded(parsed(SQL), "spec"), ["sql"]);
  assert.deepEqual(readersNeeded(parsed(MCP_WRAP), "mcp"), ["mcp_wrap"]);
  assert.deepEqual(readersNeeded(parsed(S3_BAD), "s3"), ["aws"]);
  assert.deepEqual(readersNeeded(parsed(FAIL_WHEN.replace("fail-when", "describe")), "spec"), []);
});

Deno.test("readers: loadGuardfile reads every example and edge file as loadGuardfileText does", async () => {
  const dir = new URL("../../guardfiles/", import.meta.url);
  const examples: [string, string][] = [...Deno.readDirSync(dir)]
    .filter((e) => e.name.endsWith(".mcp.kdl"))
    .map((e) => [e.name, Deno.readTextFileSync(new URL(e.name, dir))]);
  const edges: [string, string][] = Object.entries({
    FAIL_WHEN,
    SQL,
    SQL_WRITES_AS_READ,
    BAD_FAIL_WHEN,
    MCP_WRAP,
    MCP_WRAP_BAD,
    S3_BAD,
    NOT_KDL: `wrap ward mcp x { "`,
  });
  const lazily: [string, LoadedDocument][] = [];
  for (const [file, text] of [...examples, ...edges]) {
    lazily.push([file, await loadGuardfile(text, file, loadReader)]);
  }
  const { loadGuardfileText } = await import("../../src/guardfile/load.ts");
  const texts = new Map<string, string>([...examples, ...edges]);
  for (const [file, loaded] of lazily) {
    assert.deepEqual(loaded, loadGuardfileText(texts.get(file)!, file), file);
  }
  const modes = new Set(lazily.map(([, loaded]) => loaded.mode));
  assert.deepEqual([...modes].sort(), ["mcp", "s3", "spec", "ssm", undefined].sort());
  const errors = (name: string) =>
    lazily.find(([file]) => file === name)![1].diagnostics.filter((d) => d.severity === "error");
  assert.match(errors("BAD_FAIL_WHEN")[0].message, /does not compile/);
  assert.match(errors("SQL_WRITES_AS_READ")[0].message, /this statement writes/);
  assert.equal(
    lazily.find(([file]) => file === "FAIL_WHEN")![1].guardfile?.grants[0].failWhen,
    "error == 'x'",
  );
});
