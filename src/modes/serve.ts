/**
 * Spec mode: a guardfile on disk becomes a guarded MCP server, served over
 * stdio or HTTP (MCP at `POST /mcp`, the tool API at `POST /api/<tool>`,
 * liveness at `GET /healthz`, everything else 404).
 *
 * This is the edge where `Deno.*` is allowed: reading the file, the
 * environment, signals and the listener.
 *
 * @module
 */
import { type Logger, McpServer, stderrLogger } from "../mcp/server.ts";
import { CatalogError } from "../mcp/catalog.ts";
import type { Diagnostic } from "../guardfile/diagnostics.ts";
import type { Guardfile } from "../guardfile/model.ts";
import { type LoadResult, parseGuardfile } from "../guardfile/parse.ts";
import { type AwsPolicy, parseAwsPolicy } from "../guardfile/aws.ts";
import { isRedisUrl } from "../guardfile/siblings.ts";
import { createGuard, type GuardOptions } from "../guard/host.ts";
import type { UpstreamLimits } from "../guard/upstream.ts";
import type { ValueResolver } from "../guard/values.ts";
import { readAtMost } from "../transport/bytes.ts";
import { runOn, type RunOnOptions } from "./listen.ts";
import { lintWarnings, servedTools } from "./lint.ts";
import { describeGuardfile } from "./describe.ts";
import { formatDiagnostic } from "../guardfile/diagnostics.ts";
import { type LoadOutcome, Reloader, type Surface } from "../ops/reload.ts";

export {
  guardedHttpApp,
  type HttpAppOptions,
  listenHttp,
  type Listening,
  runOn,
  type RunOnOptions,
} from "./listen.ts";

/** The process environment and file system, read at call time. */
export const denoResolver: ValueResolver = {
  env: (name) => Deno.env.get(name),
  readFile: (path) => Deno.readTextFile(path),
};

/** A guardfile read from disk: the text (when readable) and the load result. */
export interface LoadedFile extends LoadResult {
  file: string;
  /** Set when the file could not be read at all. */
  readError?: string;
  /** An AWS policy (`wrap ward mcp aws ssm|s3`), loaded instead of a guardfile. */
  policy?: AwsPolicy;
}

/**
 * Read and load a guardfile.
 * @returns never throws: a read failure is reported in `readError`
 */
export async function loadGuardfileFile(file: string): Promise<LoadedFile> {
  let text: string;
  try {
    text = await readGuardfileText(file);
  } catch (error) {
    const reason = error instanceof RangeError
      ? error.message
      : error instanceof TypeError
      ? "not UTF-8 text"
      : error instanceof Deno.errors.NotFound
      ? "no such file"
      : error instanceof Deno.errors.PermissionDenied
      ? "permission denied"
      : error instanceof Deno.errors.IsADirectory
      ? "is a directory"
      : (error as Error).message;
    return { file, diagnostics: [], readError: `read guardfile "${file}": ${reason}` };
  }
  const aws = parseAwsPolicy(text, file);
  if (aws) return { file, policy: aws.policy, diagnostics: aws.diagnostics };
  const loaded: LoadedFile = { file, ...parseGuardfile(text, file) };
  if (loaded.guardfile) checkStoreUrl(loaded);
  if (loaded.guardfile) {
    // lint is serve minus the listener: build the very server serve would run,
    // so a catalog the MCP core refuses is a lint error too.
    try {
      guardedServer(loaded.guardfile, { log: () => {} });
    } catch (error) {
      if (!(error instanceof CatalogError)) throw error;
      loaded.diagnostics.push({
        severity: "error",
        path: "",
        message: `the MCP server core refuses what this guardfile describes: ${error.message}`,
      });
      loaded.guardfile = undefined;
    }
  }
  return loaded;
}

/**
 * The one value read when the server is built rather than per call, as in the
 * reference: the URL of a shared rate-limit store (`store redis env "X"`), so
 * `lint` and `serve` fail at once when it is unset or not a redis URL. The
 * message names the variable, never its value.
 */
function checkStoreUrl(loaded: LoadedFile): void {
  const store = loaded.guardfile!.controls.rateLimit?.store;
  if (!store || store.url.provider !== "env") return;
  const name = store.url.address;
  const value = Deno.env.get(name);
  const problem = value === undefined || value === ""
    ? `the environment variable ${name} is unset; set it to the Redis URL (redis://host:port)`
    : !isRedisUrl(value)
    ? `the environment variable ${name} does not hold a redis URL; write redis://host:port ` +
      `(or rediss://)`
    : undefined;
  if (!problem) return;
  loaded.diagnostics.push({
    severity: "error",
    path: "rate-limit > store",
    position: store.position,
    message: problem,
  });
  loaded.guardfile = undefined;
}

/** Guardfiles larger than this are refused unread (a guardfile is a few KiB). */
export const MAX_GUARDFILE_BYTES = 1024 * 1024;

/**
 * Read a guardfile as UTF-8, at most {@link MAX_GUARDFILE_BYTES}.
 * @throws {RangeError} when the file is larger (or endless, like /dev/zero)
 * @throws {TypeError} when it is not valid UTF-8
 */
async function readGuardfileText(file: string): Promise<string> {
  using handle = await Deno.open(file, { read: true });
  const bytes = await readAtMost(handle.readable, MAX_GUARDFILE_BYTES);
  if (bytes === null) {
    throw new RangeError(`larger than ${MAX_GUARDFILE_BYTES} bytes; a guardfile is a few KiB`);
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}

/** Errors only. */
export function errorsOf(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity === "error");
}

/** Build the guarded MCP server for a loaded guardfile. */
export function guardedServer(
  guardfile: Guardfile,
  options: Partial<GuardOptions> & { log?: Logger } = {},
): McpServer {
  const log = options.log ?? stderrLogger;
  const guard = createGuard(guardfile, {
    resolver: options.resolver ?? denoResolver,
    limits: options.limits,
    log,
  });
  return new McpServer({ ...guard, log });
}

/** Options of {@link runServe}. */
export type ServeOptions = Omit<RunOnOptions, "mode" | "server" | "tools"> & {
  limits?: Partial<UpstreamLimits>;
  /**
   * The guardfile's path: when given, SIGHUP (and `POST /admin/reload` with
   * `adminTokens`) re-reads it, lints it as `weir lint` does, and swaps only
   * when it has no error (src/ops/reload.ts).
   */
  file?: string;
};

/** The surface of a loaded guardfile: its server, tool names and description. */
export function guardfileSurface(
  guardfile: Guardfile,
  options: { limits?: Partial<UpstreamLimits>; log?: Logger },
): Surface {
  return {
    server: guardedServer(guardfile, options),
    tools: servedTools(guardfile).map((t) => t.name),
    describe: () => describeGuardfile(guardfile),
  };
}

/**
 * Load a guardfile for a reload, exactly as `weir lint FILE` does: the same
 * loader, the same warnings, errors formatted `file:line:column: message`.
 */
export async function reloadGuardfile(
  file: string,
  options: { limits?: Partial<UpstreamLimits>; log?: Logger },
): Promise<LoadOutcome> {
  const loaded = await loadGuardfileFile(file);
  const warnings = loaded.guardfile ? lintWarnings(loaded.guardfile) : [];
  const all = [...loaded.diagnostics, ...warnings];
  const errors = [
    ...(loaded.readError ? [loaded.readError] : []),
    ...errorsOf(all).map((d) => formatDiagnostic(file, d)),
  ];
  const warningLines = all.filter((d) => d.severity === "warning").map((d) =>
    formatDiagnostic(file, d)
  );
  if (!loaded.guardfile || errors.length > 0) return { errors, warnings: warningLines };
  return { surface: guardfileSurface(loaded.guardfile, options), warnings: warningLines };
}

/** Serve a loaded guardfile until `signal` aborts (or, on stdio, input ends). */
export async function runServe(guardfile: Guardfile, options: ServeOptions): Promise<void> {
  const surface = guardfileSurface(guardfile, { limits: options.limits, log: options.log });
  const about = { mode: "spec", server: guardfile.name, tools: surface.tools.length };
  const file = options.file;
  const served = file === undefined ? surface.server : new Reloader(
    surface,
    () => reloadGuardfile(file, { limits: options.limits, log: options.log }),
    options.log ?? stderrLogger,
  );
  await runOn(served, { ...options, ...about });
}
