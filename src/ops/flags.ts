/**
 * The operations flags every serve mode shares, parsed in one place so each
 * mode's CLI only spreads {@link OPS_FLAGS} into its `parseArgs` options and
 * calls {@link opsSettings}: the log level, the drain deadline, and the stop
 * signals. (The help text stays in `cli.ts`, so `weir help` loads none of this.)
 *
 * @module
 */
import { createLogger, type OpsLogger, resolveLogLevel } from "./log.ts";
import { DEFAULT_DRAIN_MS } from "./shutdown.ts";

/** `node:util` `parseArgs` options of the shared flags. */
export const OPS_FLAGS = {
  "log-level": { type: "string" },
  "drain-timeout": { type: "string" },
} as const;

/** What the shared flags configure. */
export interface OpsSettings {
  log: OpsLogger;
  drainMs: number;
}

/**
 * Read the shared flags.
 * @param values the `parseArgs` values (only the {@link OPS_FLAGS} keys are read)
 * @param env the environment (`WEIR_LOG_LEVEL`)
 * @throws {RangeError} with a message for the user when a value is malformed (a usage error)
 */
export function opsSettings(
  values: Record<string, unknown>,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): OpsSettings {
  const level = resolveLogLevel(values["log-level"] as string | undefined, env("WEIR_LOG_LEVEL"));
  const drain = values["drain-timeout"] as string | undefined;
  if (drain !== undefined && !/^\d{1,9}$/.test(drain)) {
    throw new RangeError(`--drain-timeout takes a whole number of milliseconds, got ${drain}`);
  }
  return {
    log: createLogger({ level }),
    drainMs: drain === undefined ? DEFAULT_DRAIN_MS : Number(drain),
  };
}

/**
 * An `AbortSignal` that aborts on SIGTERM or SIGINT with the signal's name as
 * its reason (the `shutdown` line's `reason`); `dispose` removes the listeners.
 */
export function stopSignals(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const names = ["SIGTERM", "SIGINT"] as const;
  const listeners = names.map((name) => [name, () => controller.abort(name)] as const);
  for (const [name, fn] of listeners) Deno.addSignalListener(name, fn);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const [name, fn] of listeners) Deno.removeSignalListener(name, fn);
    },
  };
}
