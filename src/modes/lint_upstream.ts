/**
 * `weir lint-upstream`: the CI gate for an allowlist, `serve-upstream` minus
 * the listener. It checks the allowlist's shape with the same rules, and:
 *
 * - `--read-only heuristic` (offline): refuses allowlisted names with a
 *   mutation segment (the reference's word list, whole segments split on
 *   `_ - . /`, space and camelCase);
 * - with an upstream (`--upstream URL` or `-- CMD`): decides each
 *   allowlisted tool exactly as `serve-upstream` does at start-up
 *   (`src/mcp_upstream/decision.ts`, with the same `--pin` values) and prints
 *   that decision: `present` (served), `missing` (with the nearest names), or
 *   the kind of stub serve-upstream would list in its place (`unservable`,
 *   `drifted`, `withheld`) with the stub's own words. With `--fingerprints
 *   FILE`, a tool whose SHA-256 fingerprint differs from the one a previous
 *   `--write-fingerprints FILE` recorded is `drifted`; `--read-only strict`
 *   withholds a tool whose definition lacks `annotations.readOnlyHint: true`.
 *
 * Output: text (`name<TAB>status` per tool, sorted; problems on stderr) or
 * `--format json` (one document on stdout). Exit 0 clean, 1 problems found or
 * the upstream unreachable, 2 usage errors. The checks are src/wrap/lint.ts's.
 *
 * The fingerprints file is JSON: `{"tools": {"<name>": "sha256:<hex>"}, "definitions": [...]}`
 * (the definitions fingerprinted, as listed, credentials redacted; `weir diff --definitions`
 * reads them).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { usageLine } from "../errors/usage.ts";
import { cleanText } from "../mcp/text.ts";
import { AllowlistError, parsePins } from "../mcp_upstream/allowlist.ts";
import type { OwnToken } from "../mcp_upstream/connection.ts";
import {
  lintUpstream,
  type LintUpstreamConfig,
  type LintUpstreamReport,
  lintWrap,
} from "../wrap/lint.ts";
import {
  durationFlag,
  flagProblem,
  parseUpstreamArgs,
  sharedConfig,
  UpstreamUsageError,
} from "../wrap/flags.ts";
import { loadGuardfileFile } from "./serve.ts";
import { budgetProblems, type SurfaceSize } from "../surface/size.ts";

/** `weir lint-upstream FILE [--fingerprints F] [--write-fingerprints F] [--format text|json]`. */
async function lintWrapMain(file: string, args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        fingerprints: { type: "string" },
        "write-fingerprints": { type: "string" },
        format: { type: "string", default: "text" },
      },
      strict: true,
      allowPositionals: false,
    }));
    if (values.format !== "text" && values.format !== "json") {
      throw new UpstreamUsageError(`--format must be text or json, not ${values.format}`);
    }
  } catch (error) {
    const message = error instanceof UpstreamUsageError
      ? error.message
      : flagProblem(error as Error & { code?: string });
    console.error(usageLine(
      "lint-upstream",
      `${message} (with a FILE, the file names the MCP server and its tools: only ` +
        `--fingerprints, --write-fingerprints and --format apply)`,
    ));
    return 2;
  }
  const loaded = await loadGuardfileFile(file);
  // client-credentials: the MCP server is asked as serve asks it, with weir's own token.
  let ownToken: OwnToken | undefined;
  let tokenProblem: string | undefined;
  if (loaded.mcpWrap) {
    const { listingToken } = await import("./serve_mcp_wrap.ts");
    ownToken = await listingToken(loaded.mcpWrap).catch((error) => {
      tokenProblem = (error as Error).message;
      return undefined;
    });
  }
  const report: LintUpstreamReport & { size?: SurfaceSize } = await lintWrap(file, loaded, {
    fingerprints: values.fingerprints,
    writeFingerprints: values["write-fingerprints"],
    ...(ownToken ? { ownToken } : {}),
  });
  if (tokenProblem) {
    report.problems.unshift(tokenProblem);
    report.ok = false;
  }
  const budget = loaded.mcpWrap?.surface;
  if (budget && (budget.maxTokens !== undefined || budget.maxToolTokens !== undefined)) {
    // The budget holds the list serve would send: measured on the server serve builds.
    const { measureWrapFile } = await import("./serve_mcp_wrap.ts");
    const size = await measureWrapFile(loaded.mcpWrap!);
    if (typeof size === "string") {
      report.problems.push(`a token budget is set, but the surface was not measured: ${size}`);
    } else {
      report.size = size;
      report.problems.push(...budgetProblems(size, budget));
      if (values.format === "text") {
        console.error(
          `weir: lint-upstream: surface: ${size.tools} tools, ${size.tokens} tokens (o200k)` +
            `${budget.maxTokens !== undefined ? `, budget ${budget.maxTokens}` : ""}` +
            `${budget.maxToolTokens !== undefined ? `, per tool ${budget.maxToolTokens}` : ""}`,
        );
      }
    }
    report.ok = report.ok && report.problems.length === 0;
  }
  printReport(report, values.format);
  return report.ok ? 0 : 1;
}

/** The FILE form's flags that take a value. */
const FILE_FLAGS = ["--fingerprints", "--write-fingerprints", "--format"];

/**
 * Where FILE stands among the arguments when they are the FILE form (only
 * its own flags, before or after FILE, as other commands take them), or -1.
 */
function wrapFileAt(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("-")) return i;
    if (FILE_FLAGS.includes(arg)) i++;
    else if (!FILE_FLAGS.some((flag) => arg.startsWith(`${flag}=`))) return -1;
  }
  return -1;
}

/**
 * `weir lint-upstream ARGS`.
 * @returns the exit code (0, 1, 2)
 */
export async function lintUpstreamMain(args: string[]): Promise<number> {
  // A guardfile that wraps an MCP server: the file says which server and which tools.
  const at = wrapFileAt(args);
  if (at >= 0) return await lintWrapMain(args[at], args.toSpliced(at, 1));
  let config: LintUpstreamConfig;
  let format: string;
  try {
    const { values, command } = parseUpstreamArgs(args, {
      "read-only": { type: "string" },
      pin: { type: "string", multiple: true },
      fingerprints: { type: "string" },
      "write-fingerprints": { type: "string" },
      "request-timeout": { type: "string" },
      format: { type: "string", default: "text" },
    });
    format = values.format as string;
    if (format !== "text" && format !== "json") {
      throw new UpstreamUsageError(`--format must be text or json, not ${format}`);
    }
    const shared = sharedConfig(values, command);
    const readOnly = values["read-only"] as string | undefined;
    if (readOnly !== undefined && readOnly !== "heuristic" && readOnly !== "strict") {
      throw new UpstreamUsageError(
        `--read-only takes heuristic (offline, by name) or strict (by readOnlyHint), not ${readOnly}`,
      );
    }
    if (!shared.target) {
      for (const flag of ["fingerprints", "write-fingerprints"]) {
        if (values[flag] !== undefined) {
          throw new UpstreamUsageError(`--${flag} needs an upstream (--upstream URL or -- CMD)`);
        }
      }
      if (readOnly === "strict") {
        throw new UpstreamUsageError(
          "--read-only strict reads annotations from the upstream: give --upstream URL or -- CMD " +
            "(or use --read-only heuristic offline)",
        );
      }
    }
    const pins = (values.pin as string[] | undefined) ?? [];
    try {
      parsePins(pins, shared.allowlist);
    } catch (error) {
      if (error instanceof AllowlistError) throw new UpstreamUsageError(error.message);
      throw error;
    }
    config = {
      ...shared,
      pins,
      readOnly: readOnly as LintUpstreamConfig["readOnly"],
      fingerprints: values.fingerprints as string | undefined,
      writeFingerprints: values["write-fingerprints"] as string | undefined,
      requestTimeoutMs: durationFlag("--request-timeout", values["request-timeout"], 60_000),
    };
  } catch (error) {
    if (error instanceof UpstreamUsageError) {
      console.error(usageLine("lint-upstream", error.message));
      return 2;
    }
    throw error;
  }
  const report = await lintUpstream(config);
  printReport(report, format);
  return report.ok ? 0 : 1;
}

/**
 * The report on stdout and stderr: `--format json`, one document; text,
 * `name<TAB>status` per tool on stdout, each problem and warning on stderr.
 */
function printReport(report: LintUpstreamReport, format: string): void {
  if (format === "json") {
    console.log(JSON.stringify(report, null, 2));
    return;
  }
  // Problems quote the upstream (its names, its error text): clean text out.
  for (const p of report.problems) console.error(`weir: lint-upstream: ${cleanText(p)}`);
  for (const t of report.tools) {
    for (const p of t.problems) {
      console.error(cleanText(`weir: lint-upstream: tool "${t.name}": ${p}`));
    }
    for (const w of t.warnings) {
      console.error(cleanText(`weir: lint-upstream: warning: tool "${t.name}": ${w}`));
    }
  }
  if (report.tools.length > 0) {
    console.log(report.tools.map((t) => `${t.name}\t${t.status}`).join("\n"));
  }
}
