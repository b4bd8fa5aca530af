/** Guardfile prompts: one pass of literal substitution. */
import assert from "node:assert/strict";
import { promptReader } from "../../src/guard/prompts_resources.ts";

const render = promptReader([{
  name: "triage",
  arguments: [{ name: "id", required: true }, { name: "tone", required: false }],
  text: "Triage {id} in a {tone} tone; {unknown} stays.",
}]);

async function text(args: Record<string, string>): Promise<string> {
  const r = await render("triage", args, {} as never);
  return (r.messages[0].content as { text: string }).text;
}

Deno.test("values are inserted literally, once", async () => {
  assert.equal(
    await text({ id: "$`$&$'", tone: "x" }),
    "Triage $`$&$' in a x tone; {unknown} stays.",
  );
  assert.equal(
    await text({ id: "{tone}", tone: "calm" }),
    "Triage {tone} in a calm tone; {unknown} stays.",
  );
});

Deno.test("a missing optional argument is empty", async () => {
  assert.equal(await text({ id: "7" }), "Triage 7 in a  tone; {unknown} stays.");
});
