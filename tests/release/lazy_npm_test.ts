/**
 * The npm packages that only one command needs are fetched only when that
 * command runs. Deno downloads every npm package in the module graph before a
 * program starts, and a string-literal `import()` is in the graph as much as a
 * static import; an `import()` of a constant is not, so src/ holds those
 * specifiers in constants ({@linkcode LAZY_NPM} in scripts/build.ts lists them,
 * and `deno compile` embeds them with `--include`). What is held here:
 *
 * - the list is exactly the `npm:` specifiers written in src/, each at the
 *   version deno.json pins for the product (its `"./"` scope), so the lock
 *   file and the lazy import agree;
 * - nothing in the graph of cli.ts, of a command's module (each loaded by URL
 *   when it runs) or of mod.ts imports one of those packages as
 *   code (a type-only import is not fetched by `deno run`);
 * - each specifier loads and has the export its caller uses.
 */
import assert from "node:assert/strict";
import { LAZY_NPM } from "../../scripts/build.ts";
import { COMMAND_MODULES } from "../../cli.ts";
import { CONFIG, ROOT, runCommand } from "../support/cli.ts";

const config = JSON.parse(await Deno.readTextFile(CONFIG)) as {
  scopes: Record<string, Record<string, string>>;
};

/** `npm:NAME@VERSION[/PATH]` -> `{name, version}`. */
function parseNpm(specifier: string): { name: string; version: string } {
  const m = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)@([^/]+)/.exec(specifier);
  assert.ok(m, `${specifier} is an npm specifier with a version`);
  return { name: m[1], version: m[2] };
}

const LAZY_NAMES = new Set(LAZY_NPM.map((s) => parseNpm(s).name));

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory) sourceFiles(`${path}/`, out);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) out.push(path);
  }
  return out;
}

Deno.test("LAZY_NPM is exactly the npm: specifiers in src/, each at deno.json's version", () => {
  const written = new Set<string>();
  for (const file of sourceFiles(`${ROOT}src/`)) {
    const text = Deno.readTextFileSync(file);
    for (const m of text.matchAll(/"(npm:[^"]+)"/g)) written.add(m[1]);
  }
  assert.deepEqual([...written].sort(), [...LAZY_NPM].sort());
  const pinned = new Map<string, string>();
  for (const target of Object.values(config.scopes["./"])) {
    if (!target.startsWith("npm:")) continue;
    const { name, version } = parseNpm(target);
    pinned.set(name, version);
  }
  for (const specifier of LAZY_NPM) {
    const { name, version } = parseNpm(specifier);
    assert.equal(pinned.get(name), version, `${specifier}: deno.json pins ${name}`);
  }
});

Deno.test("cli.ts, each command's module and mod.ts import none of the lazy packages as code", async () => {
  // cli.ts loads a command's module only when it runs, by URL: each is its own start-up graph.
  const commands = new Set(Object.values(COMMAND_MODULES).map((m) => m.replace(/^\.\/|#.*$/g, "")));
  let npmCode = 0;
  for (const entry of ["cli.ts", ...commands, "mod.ts"]) {
    const r = await runCommand(Deno.execPath(), {
      args: ["info", "--json", "--config", CONFIG, `${ROOT}${entry}`],
      cwd: ROOT,
    });
    assert.equal(r.code, 0, r.stderr);
    const graph = JSON.parse(r.stdout) as {
      modules: {
        specifier: string;
        dependencies?: { specifier: string; code?: { specifier: string } }[];
      }[];
    };
    const eager: string[] = [];
    for (const module of graph.modules) {
      for (const dep of module.dependencies ?? []) {
        const target = dep.code?.specifier;
        if (target === undefined || !target.startsWith("npm:")) continue;
        npmCode++;
        if (LAZY_NAMES.has(parseNpm(target).name)) {
          eager.push(`${module.specifier.slice(`file://${ROOT}`.length)} imports ${target}`);
        }
      }
    }
    assert.deepEqual(eager, [], `${entry}: packages fetched before the command runs`);
  }
  assert.ok(npmCode > 5, `the commands' graphs were read (${npmCode} npm imports)`);
});

Deno.test("each lazy specifier loads, with the export its caller uses", async () => {
  const uses: Record<string, string> = {
    "gpt-tokenizer": "countTokens",
    "@opentelemetry/api": "trace",
    "@opentelemetry/context-async-hooks": "AsyncLocalStorageContextManager",
    "@opentelemetry/core": "W3CTraceContextPropagator",
    "@opentelemetry/resources": "resourceFromAttributes",
    "@opentelemetry/sdk-trace": "TracerProvider",
    "@opentelemetry/sdk-metrics": "MeterProvider",
    "@opentelemetry/exporter-trace-otlp-http": "OTLPTraceExporter",
    "@opentelemetry/exporter-metrics-otlp-http": "OTLPMetricExporter",
    "ioredis": "Redis",
    "postgres": "default",
    "@scalar/openapi-parser": "dereference",
    "yaml": "parse",
    "fast-check": "sample",
  };
  assert.deepEqual(Object.keys(uses).sort(), [...LAZY_NAMES].sort());
  for (const specifier of LAZY_NPM) {
    const module = await import(specifier);
    const name = uses[parseNpm(specifier).name];
    assert.ok(module[name] !== undefined, `${specifier} exports ${name}`);
  }
});
