/**
 * Small helpers shared by the command modules under `src/cli/`: strict flag
 * parsing that reports problems as {@linkcode UsageError},
 * whole-number and `[HOST:]PORT` flag values, and guardfile diagnostics on stderr.
 *
 * @module
 */
import { formatDiagnostic } from "../guardfile/diagnostics.ts";
import type { LoadedFile } from "../modes/serve.ts";
import { parseListenAddress } from "../serving/listen.ts";
import { UsageError } from "./usage_error.ts";
import { MAX_TIMEOUT_MS } from "../guardfile/duration.ts";
import type { SurfaceOverrides } from "../guardfile/surface.ts";
import { isSchemaProfile, SCHEMA_PROFILES } from "../mcp/schema_profile.ts";

export { UsageError };

/** One flag: `--name` (boolean) or `--name VALUE` / `--name=VALUE` (string). */
export interface FlagSpec {
  type: "boolean" | "string";
  /** Repeatable: the values are collected in order into an array. */
  multiple?: boolean;
  /** The value when the flag is absent. */
  default?: string | boolean | string[];
}

/** The flags a command takes, by long name (without `--`). */
export type FlagSpecs = Readonly<Record<string, Readonly<FlagSpec>>>;

type ValueOf<S> = S extends { type: "boolean" }
  ? (S extends { multiple: true } ? boolean[] : boolean)
  : (S extends { multiple: true } ? string[] : string);

/** What {@linkcode parseFlags} returns for `T`: a flag without a default may be absent. */
export type FlagValues<T extends FlagSpecs> = {
  -readonly [K in keyof T]: T[K] extends { default: unknown } ? ValueOf<T[K]>
    : ValueOf<T[K]> | undefined;
};

/**
 * Parse a command's arguments strictly, the way Node's `util.parseArgs` does
 * with `strict: true` and `allowPositionals: true`, for long flags only:
 * `--flag`, `--name VALUE`, `--name=VALUE`; `--` ends the flags (everything
 * after it is positional); `-` alone is positional. Written here rather than
 * imported from `node:util` because loading Node's util module costs every
 * `weir` start about 30 ms (see bench/cold_start.ts).
 * @throws {UsageError} on an unknown flag, a string flag missing its value (or
 *   followed by something starting with `-`: write `--name=-x`), or a value given
 *   to a boolean flag
 */
export function parseFlags<const T extends FlagSpecs>(
  args: string[],
  options: T,
): { values: FlagValues<T>; positionals: string[] } {
  const values: Record<string, unknown> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") ? arg.slice(2, eq < 0 ? undefined : eq) : "";
    const spec = name && Object.hasOwn(options, name) ? options[name] : undefined;
    if (!spec) {
      throw new UsageError(`unknown option ${eq < 0 ? arg : arg.slice(0, eq)}`);
    }
    let value: string | boolean;
    if (spec.type === "boolean") {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      value = true;
    } else if (eq >= 0) {
      value = arg.slice(eq + 1);
    } else if (i + 1 < args.length && !args[i + 1].startsWith("-")) {
      value = args[++i];
    } else if (i + 1 < args.length && args[i + 1] !== "--") {
      throw new UsageError(
        `--${name} ${args[i + 1]}: a value starting with "-" is ambiguous; ` +
          `write --${name}=${args[i + 1]}`,
      );
    } else {
      throw new UsageError(`--${name} needs a value: --${name} <value>`);
    }
    if (spec.multiple) ((values[name] ??= []) as unknown[]).push(value);
    else values[name] = value; // as util.parseArgs: the last one wins
  }
  for (const [name, spec] of Object.entries(options)) {
    if (!Object.hasOwn(values, name) && spec.default !== undefined) values[name] = spec.default;
  }
  return { values: values as FlagValues<T>, positionals };
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
 * A timeout flag in milliseconds: a whole number up to {@link MAX_TIMEOUT_MS}
 * (a longer timer would fire at once).
 * @throws {UsageError} on anything else
 */
export function timeoutMs(name: string, value: string | undefined, fallback: number): number {
  const ms = wholeNumber(name, value, fallback);
  if (ms > MAX_TIMEOUT_MS) {
    throw new UsageError(
      `${name} takes at most ${MAX_TIMEOUT_MS} milliseconds (about 23 days), got ${value}`,
    );
  }
  return ms;
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

/**
 * The surface flags serve and lint share: `--read-only`, `--schema-profile
 * NAME`, and (lint) `--max-tokens N`, `--max-tool-tokens N`; each wins over
 * the guardfile's `surface` node (src/guardfile/surface.ts).
 * @throws {UsageError} on a profile that does not exist or a budget that is not a whole number >= 1
 */
export function surfaceFlags(values: Record<string, unknown>): SurfaceOverrides {
  const out: SurfaceOverrides = {};
  if (values["read-only"] === true) out.readOnly = true;
  const profile = values["schema-profile"];
  if (profile !== undefined) {
    if (!isSchemaProfile(profile)) {
      throw new UsageError(
        `--schema-profile must be one of ${SCHEMA_PROFILES.join(", ")}, not ${profile}`,
      );
    }
    out.schemaProfile = profile;
  }
  for (const [flag, field] of [["max-tokens", "maxTokens"], ["max-tool-tokens", "maxToolTokens"]]) {
    const value = values[flag];
    if (value === undefined) continue;
    const n = wholeNumber(`--${flag}`, value as string, 0);
    if (n < 1) throw new UsageError(`--${flag} takes a whole number of tokens, at least 1`);
    out[field as "maxTokens" | "maxToolTokens"] = n;
  }
  return out;
}
