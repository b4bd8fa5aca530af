/**
 * One `weir verify` run: the target for the file's mode (a spec-mode
 * guardfile: src/modes/verify.ts; a guardfile that wraps an MCP server:
 * src/modes/verify_wrap.ts), then every tool's generated cases, one tool at a
 * time, into one report.
 *
 * @module
 */
import type fcModule from "fast-check";
import type { LoadedFile } from "./serve.ts";
import { type BuiltTarget, specTarget } from "./verify.ts";
import { casesFor } from "../verify/cases.ts";
import { runCases, type ToolReport } from "../verify/run.ts";
import type { VerifyReport } from "../verify/report.ts";

/**
 * The target for a loaded file.
 * @param definitions a saved `tools/list` answer of the wrapped MCP server (wrap files)
 * @throws {Error} when the wrapped server's definitions cannot be had (the message says how)
 */
export async function verifyTarget(loaded: LoadedFile, definitions?: string): Promise<BuiltTarget> {
  if (loaded.mcpWrap) {
    const { wrapTarget } = await import("./verify_wrap.ts");
    return await wrapTarget(loaded.mcpWrap, definitions);
  }
  return await specTarget(loaded.guardfile!);
}

/** Options of {@link runVerify}. */
export interface RunOptions {
  file: string;
  cases: number;
  seed: number;
  /** Only these tools (default: every tool listed). */
  only?: string[];
  toolSeed: (seed: number, tool: string) => number;
  /** `--definitions F`, said in the replay commands. */
  definitions?: string;
}

/** Generate and run every tool's cases. */
export async function runVerify(
  fc: typeof fcModule,
  built: BuiltTarget,
  options: RunOptions,
): Promise<VerifyReport> {
  const started = performance.now();
  const names = built.target.tools.map((t) => t.name);
  const tools: ToolReport[] = [];
  for (const tool of built.target.tools) {
    if (options.only && options.only.length > 0 && !options.only.includes(tool.name)) continue;
    const cases = casesFor(
      fc,
      {
        name: tool.name,
        inputSchema: tool.inputSchema,
        restricts: built.restricts[tool.name],
        alsoTwin: built.alsoTwin?.[tool.name],
      },
      names,
      options.cases,
      options.toolSeed(options.seed, tool.name),
    );
    tools.push(await runCases(built.target, tool.name, cases));
  }
  return {
    file: options.file,
    mode: built.mode,
    seed: options.seed,
    cases: options.cases,
    ...(options.definitions ? { definitions: options.definitions } : {}),
    tools,
    notes: built.notes,
    durationMs: performance.now() - started,
  };
}
