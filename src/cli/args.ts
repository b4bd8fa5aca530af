/**
 * Small helpers shared by the command modules under `src/cli/`: strict flag
 * parsing (Node's `util.parseArgs`) that reports problems as {@linkcode UsageError},
 * whole-number and `[HOST:]PORT` flag values, and guardfile diagnostics on stderr.
 *
 * @module
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { formatDiagnostic } from "../guardfile/diagnostics.ts";
import type { LoadedFile } from "../modes/serve.ts";
import { parseListenAddress } from "../modes/listen.ts";
import { UsageError } from "./usage_error.ts";

export { UsageError };

/**
 * Parse a command's arguments strictly (unknown flags are usage errors).
 * @throws {UsageError} on an unknown flag or a flag missing its value
 */
export function parseFlags<T extends ParseArgsOptionsConfig>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true as const });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * A whole-number flag value, or `fallback` when the flag is absent.
 * @throws {UsageError} when the value is not made of digits only
 */
export function wholeNumber(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} takes a whole number, got ${value}`);
  return Number(value);
}

/**
 * `--http [HOST:]PORT` (see {@linkcode parseListenAddress}): HOST defaults to
 * 127.0.0.1; an IPv6 HOST is written in brackets, e.g. `[::1]:8080`.
 * @throws {UsageError} on anything else or a port above 65535
 */
export function parseHttpAddress(text: string): { hostname: string; port: number } {
  const parsed = parseListenAddress(text);
  if (typeof parsed === "string") throw new UsageError(parsed);
  return parsed;
}

/** Print a loaded guardfile's read error and diagnostics to stderr, each `file:line:col`. */
export function printDiagnostics(loaded: LoadedFile): void {
  if (loaded.readError) console.error(`weir: ${loaded.readError}`);
  for (const d of loaded.diagnostics) console.error(`weir: ${formatDiagnostic(loaded.file, d)}`);
}
