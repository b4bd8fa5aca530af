/**
 * Issue 35 item 7, the Deno standard library's rule for a library's entry
 * point: every value `mod.ts` exports (function, class, constant) carries an
 * `@example` with a fenced `ts` block, which `deno test --doc` type-checks and
 * runs (`deno task test` passes `--doc src/ mod.ts`). Types and interfaces
 * have nothing to run and are held by `deno doc --lint` instead
 * (tests/release/jsr_package_test.ts). Read from `deno doc --json mod.ts`, so
 * a new export without an example fails here by name.
 */
import assert from "node:assert/strict";
import { CONFIG, ROOT, runCommand } from "../support/cli.ts";

interface Declaration {
  kind: string;
  location: { filename: string; line: number };
  jsDoc?: { doc?: string; tags?: { kind: string; doc?: string }[] };
}

Deno.test("every value mod.ts exports has an @example that deno test --doc runs", async () => {
  const out = await runCommand(Deno.execPath(), {
    args: ["doc", "--json", "--config", CONFIG, "mod.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
  });
  assert.equal(out.code, 0, out.stderr);
  const nodes = JSON.parse(out.stdout).nodes as Record<
    string,
    { symbols: { name: string; declarations: Declaration[] }[] }
  >;
  const symbols = Object.values(nodes).flatMap((n) => n.symbols);
  const values = symbols.flatMap((s) =>
    s.declarations.filter((d) => ["function", "class", "variable", "enum"].includes(d.kind))
      .map((d) => ({ name: s.name, ...d }))
  );
  assert.ok(values.length >= 36, `mod.ts exports ${values.length} values: did deno doc change?`);
  const missing = values.filter((v) => {
    const examples = (v.jsDoc?.tags ?? []).filter((t) => t.kind === "example");
    return !examples.some((t) => /```(?:ts|typescript)\n[\s\S]*?\S[\s\S]*?```/.test(t.doc ?? ""));
  }).map((v) =>
    `${v.kind} ${v.name} (${v.location.filename.replace(/^.*?\/src\//, "src/")}:${v.location.line})`
  );
  assert.deepEqual(
    missing,
    [],
    `${missing.length} of ${values.length} values mod.ts exports have no @example with a \`\`\`ts block`,
  );
});
