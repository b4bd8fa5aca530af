/**
 * Why weir validates with `@cfworker/json-schema` rather than Ajv: in one run,
 * for 50 four-property object schemas, it prints each library's import time,
 * the time to compile all 50, and the time of one validation, with the ratios.
 * Import and compile are paid on every start of a stdio server; validation on
 * every call, next to an upstream round trip of milliseconds.
 *
 * Usage: `deno task bench:validator`. Import time is only meaningful in a
 * fresh process, so each library is measured in its own subprocess.
 *
 * @module
 */
import type { Schema } from "@cfworker/json-schema";

const SCHEMAS = Array.from({ length: 50 }, (_, i) => ({
  type: "object",
  properties: {
    owner: { type: "string", minLength: 1 },
    repo: { type: "string" },
    n: { type: "integer", minimum: 1 },
    [`x${i}`]: { type: "array", items: { type: "string" }, maxItems: 5 },
  },
  required: ["owner"],
  additionalProperties: false,
}));
const VALUE = { owner: "a", repo: "b", n: 3, x0: ["a"] };

interface Figures {
  importMs: number;
  compileMs: number;
  validateNs: number;
}

async function measure(library: string): Promise<Figures> {
  const t0 = performance.now();
  let validate: (v: unknown) => boolean;
  let t1: number;
  let t2: number;
  if (library === "cfworker") {
    const { Validator } = await import("@cfworker/json-schema");
    t1 = performance.now();
    const all = SCHEMAS.map((s) => new Validator(s as Schema, "2020-12", false));
    all.forEach((v) => v.validate(VALUE)); // the first validation finishes construction
    t2 = performance.now();
    validate = (v) => all[0].validate(v).valid;
  } else {
    // Ajv is CommonJS: its class is the module's default export under Deno.
    const Ajv2020 = (await import("ajv/dist/2020.js")).default as unknown as new (
      options: object,
    ) => { compile(schema: object): (value: unknown) => boolean };
    t1 = performance.now();
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    const all = SCHEMAS.map((s) => ajv.compile(s));
    t2 = performance.now();
    validate = (v) => all[0](v) as boolean;
  }
  const n = 200_000;
  for (let i = 0; i < n / 10; i++) validate(VALUE);
  const t3 = performance.now();
  for (let i = 0; i < n; i++) validate(VALUE);
  const t4 = performance.now();
  return { importMs: t1 - t0, compileMs: t2 - t1, validateNs: ((t4 - t3) / n) * 1e6 };
}

if (Deno.args[0]) {
  console.log(JSON.stringify(await measure(Deno.args[0])));
} else {
  const run = async (library: string): Promise<Figures> => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-env", new URL(import.meta.url).pathname, library],
      stdout: "piped",
    }).output();
    return JSON.parse(new TextDecoder().decode(out.stdout));
  };
  const cf = await run("cfworker");
  const ajv = await run("ajv");
  const row = (name: string, f: Figures) =>
    `${name.padEnd(10)} import ${f.importMs.toFixed(1).padStart(6)} ms   compile 50 ${
      f.compileMs.toFixed(1).padStart(6)
    } ms   validate ${f.validateNs.toFixed(0).padStart(6)} ns`;
  console.log(row("cfworker", cf));
  console.log(row("ajv", ajv));
  console.log(
    `start-up cost, ajv / cfworker: ${
      ((ajv.importMs + ajv.compileMs) / (cf.importMs + cf.compileMs)).toFixed(1)
    }x; per-call validation, cfworker / ajv: ${(cf.validateNs / ajv.validateNs).toFixed(0)}x`,
  );
}
