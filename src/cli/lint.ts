/**
 * `weir lint [--methods] [--format text|json] FILE...`: load each guardfile
 * exactly as serve would (same loader), without listening or reading secrets.
 *
 * @module
 */
import { type LoadedFile, loadGuardfileFile } from "../modes/serve.ts";
import { awsServedTools } from "../modes/serve_aws.ts";
import { lintWarnings, servedTools } from "../modes/lint.ts";
import { parseFlags, printDiagnostics, UsageError } from "./args.ts";

/**
 * Run `weir lint`.
 * @param args the arguments after `lint`
 * @returns 0 when every file loads, 1 when any has an error or cannot be read
 * @throws {UsageError} on a bad command line
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    methods: { type: "boolean" },
    format: { type: "string", default: "text" },
  });
  if (positionals.length === 0) throw new UsageError("lint needs at least one FILE");
  if (values.format !== "text" && values.format !== "json") {
    throw new UsageError(`--format must be text or json, not ${values.format}`);
  }
  const results = [];
  let failed = false;
  for (const file of positionals) {
    const loaded = await loadGuardfileFile(file);
    const warnings = loaded.guardfile ? lintWarnings(loaded.guardfile) : [];
    loaded.diagnostics.push(...warnings);
    if (!loaded.guardfile && !loaded.policy) failed = true;
    results.push(loaded);
  }
  if (values.format === "json") {
    const doc = {
      ok: !failed,
      files: results.map((r) => ({
        file: r.file,
        ok: Boolean(r.guardfile ?? r.policy),
        server: (r.guardfile ?? r.policy)?.name,
        tools: servedToolsOf(r),
        diagnostics: [
          ...(r.readError ? [{ severity: "error", message: r.readError, path: "" }] : []),
          ...r.diagnostics.map((d) => ({
            severity: d.severity,
            message: d.message,
            path: d.path,
            line: d.position?.line,
            column: d.position?.column,
          })),
        ],
      })),
    };
    console.log(JSON.stringify(doc, null, 2));
  } else {
    const lines: string[] = [];
    for (const r of results) {
      printDiagnostics(r);
      for (const t of servedToolsOf(r)) {
        const line = values.methods ? `${t.name}\t${t.method}` : t.name;
        lines.push(positionals.length > 1 ? `${r.file}\t${line}` : line);
      }
    }
    if (!failed && lines.length > 0) console.log(lines.join("\n"));
  }
  return failed ? 1 : 0;
}

/** The tools a loaded file serves: a guardfile's, or an AWS policy's (none when it failed). */
function servedToolsOf(r: LoadedFile) {
  return r.policy ? awsServedTools(r.policy) : r.guardfile ? servedTools(r.guardfile) : [];
}
