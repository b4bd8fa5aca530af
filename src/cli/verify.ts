/**
 * `weir verify FILE [--cases N] [--seed S] [--tool T]... [--format text|json|junit]
 * [--definitions F]`: prove a guardfile's surface by generated calls against a
 * recording stand-in of its upstream (src/modes/verify.ts, src/verify/).
 *
 * Exit codes: 0 every call held; 1 a violation, or the file does not load or
 * cannot be verified; 2 a bad command line.
 *
 * @module
 */
import { parseFlags, printDiagnostics, UsageError, wholeNumber } from "./args.ts";
import { loadGuardfileFile } from "../modes/serve.ts";
import type { BuiltTarget } from "../modes/verify.ts";
import { printable } from "../guardfile/diagnostics.ts";

/**
 * fast-check, loaded only when verify runs: an `import()` of a constant keeps
 * it out of the module graph of every other command (scripts/build.ts
 * `LAZY_NPM`).
 */
const FAST_CHECK = "npm:fast-check@4.11.0";

/** Calls per tool when `--cases` is not given. */
export const DEFAULT_CASES = 200;

/** A 32-bit seed for one tool, from the run's seed and the tool's name (FNV-1a). */
export function toolSeed(seed: number, tool: string): number {
  let h = 0x811c9dc5;
  for (const c of new TextEncoder().encode(tool)) h = Math.imul(h ^ c, 0x01000193);
  return (h ^ seed) | 0;
}

/**
 * Run `weir verify`.
 * @param args the arguments after `verify`
 * @returns the exit code (see the module doc)
 * @throws {UsageError} on a bad command line
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    cases: { type: "string" },
    seed: { type: "string" },
    tool: { type: "string", multiple: true },
    format: { type: "string", default: "text" },
    definitions: { type: "string" },
  });
  if (positionals.length !== 1) throw new UsageError("verify takes exactly one FILE");
  const format = values.format;
  if (format !== "text" && format !== "json" && format !== "junit") {
    throw new UsageError(`--format must be text, json or junit, not ${format}`);
  }
  const cases = wholeNumber("--cases", values.cases, DEFAULT_CASES);
  if (cases < 1 || cases > 100_000) throw new UsageError(`--cases takes 1 to 100000, got ${cases}`);
  if (values.seed !== undefined && !/^-?\d{1,10}$/.test(values.seed)) {
    throw new UsageError(`--seed takes the integer a report printed, got ${values.seed}`);
  }
  const seed = values.seed !== undefined
    ? Number(values.seed) | 0
    : crypto.getRandomValues(new Int32Array(1))[0];
  const file = positionals[0];
  // The rate limit is lifted for the run, so its store's URL is never read.
  const loaded = await loadGuardfileFile(file, {}, { storeUrl: false });
  printDiagnostics({
    ...loaded,
    diagnostics: loaded.diagnostics.filter((d) => d.severity === "error"),
  });
  if (loaded.policy) {
    console.error(
      `weir: verify: ${printable(file)} is an AWS policy (serve-ssm, serve-s3): verify proves ` +
        `spec-mode guardfiles and guardfiles that wrap an MCP server; an AWS policy's requests ` +
        `are fixed by weir itself (see docs/aws.md)`,
    );
    return 1;
  }
  if (!loaded.guardfile && !loaded.mcpWrap) return 1;
  if (values.definitions !== undefined && !loaded.mcpWrap) {
    throw new UsageError(`--definitions is for a guardfile that wraps an MCP server`);
  }
  const { verifyTarget, runVerify } = await import("../modes/verify_run.ts");
  let built: BuiltTarget | string;
  try {
    built = await verifyTarget(loaded, values.definitions);
  } catch (error) {
    built = (error as Error).message;
  }
  if (typeof built === "string") {
    console.error(`weir: verify: ${printable(file)}: ${printable(built)}`);
    return 1;
  }
  try {
    const names = built.target.tools.map((t) => t.name);
    const unknown = (values.tool ?? []).filter((t) => !names.includes(t));
    if (unknown.length > 0) {
      throw new UsageError(
        `--tool ${unknown.join(", ")}: not a tool of ${file} (its tools: ${names.join(", ")})`,
      );
    }
    const fc = (await import(FAST_CHECK)).default;
    const report = await runVerify(fc, built, {
      file,
      cases,
      seed,
      only: values.tool,
      toolSeed,
      definitions: values.definitions,
    });
    const { reportJson, reportJunit, reportText, violationCount } = await import(
      "../verify/report.ts"
    );
    console.log(
      format === "json"
        ? reportJson(report)
        : format === "junit"
        ? reportJunit(report)
        : reportText(report),
    );
    return violationCount(report) === 0 ? 0 : 1;
  } finally {
    await built.stop();
  }
}
