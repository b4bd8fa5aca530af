/**
 * The command-line flags `serve-upstream` and `lint-upstream` share: the
 * allowlist, the upstream (a URL, or a command after `--`), upstream headers
 * and the connect timeout. Durations are Go durations as the reference writes
 * them (`500ms`, `30s`, `1m`); `0` means none.
 *
 * @module
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { MAX_TIMEOUT_MS, parseDuration } from "../guardfile/duration.ts";
import { AllowlistError, parseAllowlist } from "../mcp_upstream/allowlist.ts";
import { HeaderError, type HeaderTemplate, parseHeaderTemplates } from "../mcp_upstream/headers.ts";
import type { UpstreamTarget } from "../mcp_upstream/connection.ts";
import { proxySetting } from "../outbound/proxy.ts";
import { FINDING_ID_SHAPE } from "../guardfile/mcp_wrap_proxy.ts";

/** A command line that is wrong: exit 2, with this message. */
export class UpstreamUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamUsageError";
  }
}

/** Flags both commands take. */
export const SHARED_FLAGS = {
  tool: { type: "string", multiple: true },
  upstream: { type: "string" },
  "upstream-header": { type: "string", multiple: true },
  "connect-timeout": { type: "string" },
  "accept-finding": { type: "string", multiple: true },
} as const satisfies ParseArgsOptionsConfig;

/** What the shared flags mean. */
export interface SharedConfig {
  allowlist: string[];
  /** Absent when neither `--upstream` nor `-- CMD` was given. */
  target?: UpstreamTarget;
  headers: HeaderTemplate[];
  connectTimeoutMs: number;
  /**
   * `--accept-finding TOOL=ID`: findings of the tool-poisoning scan
   * (src/mcp_upstream/scan.ts) the operator accepts, by tool.
   */
  accept: Map<string, string[]>;
}

/**
 * Split at the first `--`, parse the flags before it.
 * @throws {UpstreamUsageError}
 */
export function parseUpstreamArgs<T extends ParseArgsOptionsConfig>(
  args: readonly string[],
  options: T,
) {
  const dash = args.indexOf("--");
  const flags = dash < 0 ? [...args] : args.slice(0, dash);
  const command = dash < 0 ? undefined : args.slice(dash + 1);
  let parsed;
  try {
    parsed = parseArgs({
      args: flags,
      options: { ...SHARED_FLAGS, ...options },
      allowPositionals: true,
      strict: true as const,
    });
  } catch (error) {
    throw new UpstreamUsageError(flagProblem(error as Error & { code?: string }));
  }
  if (parsed.positionals.length > 0) {
    throw new UpstreamUsageError(
      `unexpected argument ${JSON.stringify(parsed.positionals[0])}: ` +
        `a stdio upstream's command goes after --`,
    );
  }
  // An HTTP upstream is reached with fetch, which goes direct past a proxy
  // variable it cannot parse: refuse to start instead (src/outbound/proxy.ts).
  const values = parsed.values as Record<string, unknown>;
  const proxyProblem = values.upstream === undefined ? undefined : proxySetting().problem;
  if (proxyProblem) throw new UpstreamUsageError(proxyProblem);
  return { values, command };
}

/**
 * `util.parseArgs`'s complaint in the words every other command uses (src/cli/args.ts):
 * its own text advises putting an unknown option after `--`, which here would hand it
 * to the upstream's command.
 * @param error what `parseArgs` threw (its `code` says which complaint)
 * @returns e.g. "unknown option --read-only"
 */
export function flagProblem(error: Error & { code?: string }): string {
  const option = /'(-[^' ]*)/.exec(error.message)?.[1] ?? "";
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${option}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return /does not take an argument/.test(error.message)
        ? `${option} takes no value`
        : `${option} needs a value: ${option} <value> (a value starting with "-": ${option}=-x)`;
    default:
      return error.message;
  }
}

/**
 * Read a Go duration flag.
 * @throws {UpstreamUsageError} when it is not a duration or is negative
 */
export function durationFlag(name: string, value: unknown, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  const ms = parseDuration(String(value));
  if (ms === null) {
    throw new UpstreamUsageError(`${name} takes a duration such as 500ms, 30s or 2m; got ${value}`);
  }
  if (ms < 0) throw new UpstreamUsageError(`${name} must not be negative`);
  if (ms > MAX_TIMEOUT_MS) {
    throw new UpstreamUsageError(`${name} takes at most 555h (a longer timer would fire at once)`);
  }
  return ms;
}

/**
 * Interpret the shared flags.
 * @param values parsed flag values
 * @param command the words after `--`, if any
 * @throws {UpstreamUsageError}
 */
export function sharedConfig(
  values: Record<string, unknown>,
  command: string[] | undefined,
): SharedConfig {
  let allowlist: string[];
  let headers: HeaderTemplate[];
  try {
    allowlist = parseAllowlist((values.tool as string[] | undefined) ?? []);
    headers = parseHeaderTemplates((values["upstream-header"] as string[] | undefined) ?? []);
  } catch (error) {
    if (error instanceof AllowlistError || error instanceof HeaderError) {
      throw new UpstreamUsageError(error.message);
    }
    throw error;
  }
  const url = values.upstream as string | undefined;
  if (url !== undefined && command !== undefined) {
    throw new UpstreamUsageError(
      "give the upstream either as --upstream URL or as -- CMD, not both",
    );
  }
  let target: UpstreamTarget | undefined;
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UpstreamUsageError(`--upstream ${JSON.stringify(url)} is not a URL`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new UpstreamUsageError(`--upstream must be an http:// or https:// URL`);
    }
    if (parsed.username || parsed.password) {
      throw new UpstreamUsageError(
        `--upstream must not carry credentials in the URL; use --upstream-header with {env:VAR}`,
      );
    }
    target = { kind: "http", url: parsed };
  } else if (command !== undefined) {
    if (command.length === 0 || command[0] === "") {
      throw new UpstreamUsageError("-- must be followed by the upstream's command");
    }
    target = { kind: "stdio", command: command[0], args: command.slice(1) };
  }
  if (headers.length > 0 && target?.kind === "stdio") {
    throw new UpstreamUsageError(
      "--upstream-header applies to an HTTP upstream; a stdio upstream reads its " +
        "credentials from the environment weir passes on",
    );
  }
  return {
    allowlist,
    target,
    headers,
    connectTimeoutMs: durationFlag("--connect-timeout", values["connect-timeout"], 0),
    accept: acceptedFindings((values["accept-finding"] as string[] | undefined) ?? [], allowlist),
  };
}

/**
 * `--accept-finding TOOL=ID` values by tool.
 * @throws {UpstreamUsageError} a value not of that shape, a tool not on the
 *   allowlist, an id not of the scan's shape, the same one twice
 */
export function acceptedFindings(
  values: readonly string[],
  allowlist: readonly string[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const value of values) {
    const eq = value.lastIndexOf("=");
    const tool = value.slice(0, Math.max(eq, 0));
    const id = value.slice(eq + 1);
    if (eq <= 0 || !FINDING_ID_SHAPE.test(id)) {
      throw new UpstreamUsageError(
        `--accept-finding takes TOOL=ID, the id as lint-upstream prints it ` +
          `(e.g. --accept-finding fetch=address:0123456789abcdef); got ${JSON.stringify(value)}`,
      );
    }
    if (!allowlist.includes(tool)) {
      throw new UpstreamUsageError(
        `--accept-finding ${value}: "${tool}" is not on the allowlist (add --tool ${tool})`,
      );
    }
    const ids = out.get(tool) ?? [];
    if (ids.includes(id)) {
      throw new UpstreamUsageError(`--accept-finding ${value} is given twice: keep one`);
    }
    ids.push(id);
    out.set(tool, ids);
  }
  return out;
}
