/**
 * `weir lint [--methods] [--format text|json] [--read-only] [--schema-profile NAME]
 * [--max-tokens N] [--max-tool-tokens N] FILE...`: load each guardfile exactly
 * as serve would (same loader), without listening or reading secrets, and
 * measure the surface it would list (src/surface/size.ts).
 *
 * Text output: the tool names on stdout (one per line, as before), and the
 * surface's size on stderr (`weir: FILE: surface: ...`), beside the
 * diagnostics. JSON output: each file's `size` object. A budget (`surface
 * max-tokens=`/`max-tool-tokens=` in the guardfile, or the flags, which win)
 * that the surface exceeds is an error naming the largest tools: exit 1.
 *
 * @module
 */
import { guardedServer, type LoadedFile, loadGuardfileFile } from "../modes/serve.ts";
import { awsServedTools } from "../modes/serve_aws.ts";
import { lintWarnings, servedTools, wrapServedTools } from "../modes/lint.ts";
import {
  budgetProblems,
  LARGEST,
  listedSurface,
  measureSurface,
  type SurfaceSize,
} from "../surface/size.ts";
import type { SurfaceSettings } from "../guardfile/surface.ts";
import { parseFlags, printDiagnostics, surfaceFlags, UsageError } from "./args.ts";

/** How many of the largest tools a report names. */

/**
 * Run `weir lint`.
 * @param args the arguments after `lint`
 * @returns 0 when every file loads within its budget, 1 when any has an error,
 *   cannot be read, or is over budget
 * @throws {UsageError} on a bad command line
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    methods: { type: "boolean" },
    format: { type: "string", default: "text" },
    "read-only": { type: "boolean" },
    "schema-profile": { type: "string" },
    "max-tokens": { type: "string" },
    "max-tool-tokens": { type: "string" },
  });
  if (positionals.length === 0) throw new UsageError("lint needs at least one FILE");
  if (values.format !== "text" && values.format !== "json") {
    throw new UsageError(`--format must be text or json, not ${values.format}`);
  }
  const overrides = surfaceFlags(values);
  const results: { loaded: LoadedFile; size?: SurfaceSize; overBudget: string[] }[] = [];
  let failed = false;
  for (const file of positionals) {
    const loaded = await loadGuardfileFile(file, overrides, { lint: true });
    // All findings at once: a file with errors still gets the warnings of what could be read.
    loaded.diagnostics.push(...warningsOf(loaded));
    // Errors first, then warnings, each in file order.
    loaded.diagnostics.sort((a, b) => rank(a) - rank(b));
    // A budget asked for must be checked, or lint fails: exit 0 says it holds.
    const unmeasured = (why: string, fix: string): string[] =>
      overrides.maxTokens !== undefined || overrides.maxToolTokens !== undefined ||
        loaded.guardfile?.surface.maxTokens !== undefined ||
        loaded.guardfile?.surface.maxToolTokens !== undefined ||
        loaded.policy?.surface.maxTokens !== undefined ||
        loaded.policy?.surface.maxToolTokens !== undefined
        ? [`a token budget is set, but ${why}, so it is not checked: ${fix}`]
        : [];
    if (!loaded.guardfile && !loaded.policy) {
      // A wrap of an MCP server is checked as far as the file goes: its tools'
      // definitions are the server's. weir lint-upstream FILE lists them and
      // holds the list to the file's budget; a budget asked of lint on the
      // command line cannot be checked here, and fails.
      const wrap = loaded.mcpWrap;
      const flagged = overrides.maxTokens !== undefined || overrides.maxToolTokens !== undefined;
      const overBudget = wrap && flagged
        ? [
          `a token budget is set (--max-tokens, --max-tool-tokens), but the tools of a wrapped ` +
          `MCP server are known only from the server, so weir lint does not check it: put it ` +
          `in the file (surface max-tokens=N max-tool-tokens=N) and run weir lint-upstream ` +
          `FILE, which lists the server's tools and fails over the budget`,
        ]
        : [];
      if (
        wrap && !flagged &&
        (wrap.surface.maxTokens !== undefined || wrap.surface.maxToolTokens !== undefined)
      ) {
        loaded.diagnostics.push({
          severity: "warning",
          path: "surface",
          ...(wrap.surface.position ? { position: wrap.surface.position } : {}),
          message: `the token budget is checked by weir lint-upstream ${loaded.file}, not ` +
            `here: the tools of a wrapped MCP server are known only from the server ` +
            `(lint-upstream lists them as serve does and exits 1 over the budget)`,
        });
      }
      if (!wrap || overBudget.length > 0) failed = true;
      results.push({ loaded, overBudget });
      continue;
    }
    let size: SurfaceSize | undefined;
    try {
      size = await sizeOf(loaded);
    } catch (error) {
      // Only the AWS modes read anything here (an endpoint variable): say what, go on.
      loaded.diagnostics.push({
        severity: "warning",
        path: "",
        message: `surface not measured: ${(error as Error).message}`,
      });
      const overBudget = unmeasured(
        `the surface was not measured`,
        `fix what the warning above names, then run lint again`,
      );
      if (overBudget.length > 0) failed = true;
      results.push({ loaded, overBudget });
      continue;
    }
    const settings = (loaded.guardfile ?? loaded.policy)!.surface;
    const overBudget = budgetProblems(size, settings);
    if (overBudget.length > 0) failed = true;
    results.push({ loaded, size, overBudget });
  }
  if (values.format === "json") {
    const doc = {
      ok: !failed,
      files: results.map(({ loaded: r, size, overBudget }) => ({
        file: r.file,
        ok: Boolean(r.guardfile ?? r.policy ?? r.mcpWrap) && overBudget.length === 0,
        server: (r.guardfile ?? r.policy ?? r.mcpWrap)?.name,
        tools: servedToolsOf(r),
        ...(size ? { size: sizeJson(size, (r.guardfile ?? r.policy)!.surface) } : {}),
        diagnostics: [
          ...(r.readError ? [{ severity: "error", message: r.readError, path: "" }] : []),
          ...r.diagnostics.map((d) => ({
            severity: d.severity,
            message: d.message,
            path: d.path,
            line: d.position?.line,
            column: d.position?.column,
          })),
          ...overBudget.map((message) => ({ severity: "error", message, path: "surface" })),
        ],
      })),
    };
    console.log(JSON.stringify(doc, null, 2));
  } else {
    const lines: string[] = [];
    for (const { loaded: r, size, overBudget } of results) {
      printDiagnostics(r);
      if (size) console.error(`weir: ${r.file}: ${sizeLine(size)}`);
      for (const problem of overBudget) console.error(`weir: ${r.file}: error: ${problem}`);
      for (const t of servedToolsOf(r)) {
        const line = values.methods ? `${t.name}\t${t.method}` : t.name;
        lines.push(positionals.length > 1 ? `${r.file}\t${line}` : line);
      }
    }
    if (!failed && lines.length > 0) console.log(lines.join("\n"));
  }
  return failed ? 1 : 0;
}

/** Lint's own warnings for a loaded spec-mode file, clean or read only in part. */
function warningsOf(loaded: LoadedFile) {
  const model = loaded.guardfile ?? loaded.partial;
  if (!model) return [];
  try {
    return lintWarnings(model);
  } catch {
    // A model read only in part may lack what a warning looks at: its errors say enough.
    return loaded.guardfile ? lintWarnings(loaded.guardfile) : [];
  }
}

const rank = (d: { severity: string }) => (d.severity === "error" ? 0 : 1);

/** The size of what a loaded file would list: the very server serve builds, asked in process. */
async function sizeOf(loaded: LoadedFile): Promise<SurfaceSize> {
  const server = loaded.policy
    ? (await import("../modes/serve_aws.ts")).awsServer(loaded.policy, { log: () => {} })
    : guardedServer(loaded.guardfile!, { log: () => {} });
  return await measureSurface(await listedSurface(server));
}

/** `surface: 10 tools, 966 tokens (96.6 per tool; o200k); largest: ...; budget ...`. */
function sizeLine(size: SurfaceSize): string {
  const largest = size.perTool.slice(0, LARGEST).map((t) => `${t.name} ${t.tokens}`).join(", ");
  return `surface: ${size.tools} tools, ${size.tokens} tokens (${size.tokensPerTool} per tool, ` +
    `o200k); instructions ${size.instructionsTokens} tokens` +
    (largest ? `; largest: ${largest}` : "");
}

function sizeJson(size: SurfaceSize, settings: SurfaceSettings) {
  return {
    tokenizer: size.tokenizer,
    tools: size.tools,
    tokens: size.tokens,
    tokensPerTool: size.tokensPerTool,
    instructionsTokens: size.instructionsTokens,
    perTool: size.perTool,
    budget: {
      maxTokens: settings.maxTokens ?? null,
      maxToolTokens: settings.maxToolTokens ?? null,
    },
    schemaProfile: settings.schemaProfile ?? "full",
    readOnly: settings.readOnly ?? false,
  };
}

/** The tools a loaded file serves: a guardfile's, or an AWS policy's (none when it failed). */
function servedToolsOf(r: LoadedFile) {
  return r.policy
    ? awsServedTools(r.policy)
    : r.guardfile
    ? servedTools(r.guardfile)
    : r.mcpWrap
    ? wrapServedTools(r.mcpWrap)
    : [];
}
