/**
 * bench/first_list.ts (bench:cold's and the release figures' cold start): a
 * start that fails says why, with the server's stderr, so a revision under
 * `--against` that cannot serve the bench's guardfile names its own error.
 */
import assert from "node:assert/strict";
import { firstList } from "../../bench/first_list.ts";

const deno = Deno.execPath();

Deno.test("firstList: a server that exits without an answer is reported with its exit code and stderr", async () => {
  await assert.rejects(
    firstList(deno, ["eval", "console.error('guardfile line 3: unknown node'); Deno.exit(3)"], "x"),
    /no tools\/list answer \(exit code 3\); its stderr ends:\nguardfile line 3: unknown node/,
  );
});

Deno.test("firstList: an answer without the expected tool is reported with the server's stderr", async () => {
  const answer = JSON.stringify({ jsonrpc: "2.0", id: 2, result: { tools: [{ name: "other" }] } });
  await assert.rejects(
    firstList(deno, [
      "eval",
      `console.error("old grammar"); console.log(${JSON.stringify(answer)})`,
    ], "x"),
    /tools\/list without x: .*"other".*; its stderr ends:\nold grammar/,
  );
});

Deno.test("firstList: a server that answers with the tool resolves with its time", async () => {
  const answer = JSON.stringify({ jsonrpc: "2.0", id: 2, result: { tools: [{ name: "x" }] } });
  const { ms, rssMiB } = await firstList(
    deno,
    ["eval", `console.error("noise on stderr"); console.log(${JSON.stringify(answer)})`],
    "x",
  );
  assert.ok(Number.isFinite(ms) && ms > 0, `${ms}`);
  assert.ok(Number.isNaN(rssMiB) || rssMiB > 0, `${rssMiB}`);
});
