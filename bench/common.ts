/**
 * Pieces the benchmark scripts share: whole-number flags, a free loopback
 * port, the server processes still running (killed on Ctrl-C or abort), and
 * the median of a run's figures.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * The flag `name` of `flags` (from `node:util` `parseArgs`) as a whole number
 * of at least 1; anything else prints `--<name> must be a positive integer`
 * and exits 2 (usage).
 */
export function positiveFlag<F extends Record<string, unknown>>(
  flags: F,
  name: keyof F & string,
): number {
  const n = Number(flags[name]);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a positive integer, got ${flags[name]}`);
    Deno.exit(2);
  }
  return n;
}

/**
 * `parseArgs` (`node:util`) of a bench's command line: an unknown flag or a
 * flag without its value prints the error and `usage` (a `usage: ...` line),
 * then exits 2, not an uncaught error.
 */
export function benchArgs<T extends ParseArgsConfig>(
  usage: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    Deno.exit(2);
  }
}

/** The options of a wrk-driven benchmark, as whole numbers. */
export interface WrkFlags {
  /** Seconds per measured run. */
  duration: number;
  /** Seconds of warm-up before each measured run. */
  warmup: number;
  /** wrk connections. */
  connections: number;
  /** Rounds (a fresh server process per run). */
  rounds: number;
  /** Cold-start spawns. */
  spawns: number;
  /** Other revisions of weir to measure in the same run (`--against REV`, repeatable). */
  against: string[];
}

/**
 * Read `--duration 5 --warmup 2 --connections 32 --rounds 3 --spawns N
 * [--against REV]...` from `args` (each number a whole number of at least 1;
 * anything else, or an unknown flag, exits 2).
 * @param spawns the default number of cold-start spawns
 * @param defaults other defaults (`connections`: 32 unless given)
 */
export function wrkFlags(
  args: string[],
  spawns: number,
  defaults: { connections?: number } = {},
): WrkFlags {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        duration: { type: "string", default: "5" },
        warmup: { type: "string", default: "2" },
        connections: { type: "string", default: String(defaults.connections ?? 32) },
        rounds: { type: "string", default: "3" },
        spawns: { type: "string", default: String(spawns) },
        against: { type: "string", multiple: true, default: [] },
      },
    }));
  } catch (error) {
    console.error(
      `${(error as Error).message} (flags: --duration --warmup --connections ` +
        `--rounds --spawns --against REV)`,
    );
    Deno.exit(2);
  }
  return {
    against: values.against,
    duration: positiveFlag(values, "duration"),
    warmup: positiveFlag(values, "warmup"),
    connections: positiveFlag(values, "connections"),
    rounds: positiveFlag(values, "rounds"),
    spawns: positiveFlag(values, "spawns"),
  };
}

/** A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Every server process still running, so an abort or Ctrl-C leaves none behind. */
export const live = new Set<Deno.ChildProcess>();

/** Count `child` in {@link live} until it exits. */
export function track(child: Deno.ChildProcess): void {
  live.add(child);
  child.status.then(() => live.delete(child));
}

/**
 * Spawn `deno DENO_ARGS` (under `taskset -c PIN` when `pin` is given) with
 * stdout and stderr piped, counted in {@link live}.
 */
export function spawnDeno(
  denoArgs: string[],
  pin: string | undefined,
  options: { cwd?: string; env?: Record<string, string> } = {},
): Deno.ChildProcess {
  const deno = Deno.execPath();
  const [cmd, ...args] = pin ? ["taskset", "-c", pin, deno, ...denoArgs] : [deno, ...denoArgs];
  const child = new Deno.Command(cmd, {
    args,
    ...options,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  track(child);
  return child;
}

/** Drain a stream to nowhere, keeping its last 4,000 characters. */
export function drain(stream: ReadableStream<Uint8Array>): () => string {
  let tail = "";
  (async () => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      tail = (tail + chunk).slice(-4000);
    }
  })().catch(() => {});
  return () => tail;
}

/** Process groups of the set-up commands still running ({@link outputOfGroup}). */
const groups = new Set<number>();

/**
 * `new Deno.Command(command, { args, cwd }).output()` with stdout and stderr
 * piped, run in a process group of its own (`setsid` on Linux) that
 * {@link killAll} ends whole: a `deno task` or `deno cache` left running after
 * Ctrl-C or SIGTERM would go on writing into removed directories.
 */
export async function outputOfGroup(
  command: string,
  args: string[],
  cwd: string,
): Promise<Deno.CommandOutput> {
  const grouped = Deno.build.os === "linux";
  const child = new Deno.Command(grouped ? "setsid" : command, {
    args: grouped ? [command, ...args] : args,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (grouped) groups.add(child.pid);
  try {
    return await child.output();
  } finally {
    groups.delete(child.pid);
  }
}

/** SIGKILL every process in {@link live} and every group of {@link outputOfGroup}. */
export function killAll(): void {
  for (const child of live) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const group of groups) {
    try {
      Deno.kill(-group, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * On Ctrl-C (SIGINT, exit 130) or SIGTERM (exit 143): {@link killAll}, then
 * exit, which runs the {@link atExit} clean-ups (the `--against` worktrees,
 * the {@link scratchDir}s). Without it Deno ends at the signal and leaves them
 * behind.
 */
export function killAllOnInterrupt(): void {
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    Deno.addSignalListener(signal, () => {
      killAll();
      Deno.exit(code);
    });
  }
}

/**
 * Run `cleanup` once when the bench ends, however it ends: normally, through
 * `Deno.exit` (an abort, or a signal with {@link killAllOnInterrupt}), or on
 * an uncaught error or rejection (which skip the `unload` event; the error is
 * still printed and the exit code is still 1).
 */
export function atExit(cleanup: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    cleanup();
  };
  for (const event of ["unload", "error", "unhandledrejection"]) addEventListener(event, once);
}

const scratch: string[] = [];
atExit(() => {
  killAll();
  for (const dir of scratch.splice(0)) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // already gone
    }
  }
});

/**
 * A new temporary directory (`Deno.makeTempDir({ prefix })`), removed with
 * everything in it when the bench exits, however it exits ({@link atExit};
 * on Ctrl-C or SIGTERM only with {@link killAllOnInterrupt}).
 */
export async function scratchDir(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  scratch.push(dir);
  return dir;
}

/** {@link killAll}, print `ABORTED: <message>` to stderr and exit 1. */
export function abort(message: string): never {
  killAll();
  console.error(`\nABORTED: ${message}`);
  Deno.exit(1);
}

/** SIGTERM a server and wait for it to exit. */
export async function stop(server: { child: Deno.ChildProcess }): Promise<void> {
  try {
    server.child.kill("SIGTERM");
  } catch {
    // already gone
  }
  await server.child.status;
}

/** The median of `xs` (the mean of the middle two for an even count); NaN when empty. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
