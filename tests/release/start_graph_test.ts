/**
 * What `weir serve FILE --stdio` loads before its first answer: the static
 * graph of the serve command's module (cli.ts loads it by URL). Every module
 * `deno run` loads costs the start (docs/performance.md, "Cold start"), so
 * what only some files or only HTTP use stays out of it, behind src/ops/lazy.ts:
 *
 * - no module of {@link LAZY_MODULES} is imported as code (a type-only import is
 *   erased), else its lazy load saves nothing;
 * - the token table and its SHA-256 (`@noble/hashes`): a stdio server has no
 *   inbound token;
 * - the guardfile readers only some files need (src/guardfile/readers.ts: AWS,
 *   an MCP server wrap, `sql` and its statement scanner, `fail-when` and its
 *   npm JMESPath), nor the synchronous loader that imports them all
 *   (src/guardfile/load.ts);
 * - weir's HTTP/1.1 client (LAZY_MODULES `http1_client`): loaded at the first
 *   call that takes it.
 */
import assert from "node:assert/strict";
import { LAZY_MODULES } from "../../src/ops/lazy.ts";
import { CONFIG, LOCK, ROOT } from "../support/cli.ts";

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
}

/** The modules a program started at `entry` loads before it runs: static code imports, transitively. */
async function startGraph(entry: string): Promise<Set<string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", CONFIG, `--lock=${LOCK}`, entry],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    roots: string[];
    modules: InfoModule[];
  };
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const walk = (specifier: string) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const d of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (d.code && !d.isDynamic) walk(d.code.specifier);
    }
  };
  walk(info.roots[0]);
  return seen;
}

Deno.test("serve's start graph holds no lazily loaded module, nor the token table, SHA-256, JMESPath or the sync loader", async () => {
  const graph = await startGraph(`${ROOT}src/cli/serve.ts`);
  const local = [...graph].filter((s) => s.startsWith("file://"));
  assert.ok(
    local.some((s) => s.endsWith("/src/guardfile/document.ts")),
    "the walk reaches the guardfile loader",
  );
  const also = [
    "src/inbound/token_table.ts",
    "src/guardfile/load.ts",
    "src/guardfile/sql_reads.ts",
    "src/guardfile/sql_scan.ts",
    "src/guardfile/sql_functions.ts",
  ];
  for (const path of [...Object.values(LAZY_MODULES), ...also]) {
    assert.ok(!graph.has(`file://${ROOT}${path}`), `${path} is in serve's start graph`);
  }
  const noble = [...graph].filter((s) => s.includes("@noble/hashes"));
  assert.deepEqual(noble, [], "no SHA-256 module loads at start");
  const jmespath = [...graph].filter((s) => s.includes("jmespath"));
  assert.deepEqual(jmespath, [], "no JMESPath module loads at start");
});
