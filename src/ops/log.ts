/**
 * The process log: one JSON object per line on stderr, filtered by level,
 * written in batches off the request path.
 *
 * A {@link createLogger} logger is a core {@link Logger} (hand it to
 * `McpServer`, the guard, the transports, any mode) with `flush` for shutdown.
 * Calling it costs a level check and, when the level passes, one
 * `JSON.stringify` and an array push; the bytes are written once per batch
 * (at most 10 ms after its first line, or sooner past 64 KiB or for a lifecycle
 * line) with the asynchronous `Deno.stderr.write`, so a slow reader of
 * stderr never blocks a request.
 * While more than {@link MAX_PENDING_BYTES} wait, new lines are dropped and
 * counted; the next written batch starts with a `log_lines_dropped` line.
 *
 * Line shape: `{"time": ISO-8601 UTC, "level": "debug|info|warn|error",
 * "event": string, ...fields}`. Every string is well-formed Unicode (a lone
 * surrogate becomes U+FFFD). Control characters (C0, DEL, C1, U+2028,
 * U+2029) are escaped as `\uXXXX` so a line stays one line, and a terminal
 * reading the log interprets none of them (RFC 8259 section 7 allows any
 * character to be escaped). Nothing here knows about arguments or secrets:
 * callers never put them in an event (see `src/ops/audit.ts`).
 *
 * @module
 */
import type { LogEvent, Logger } from "../mcp/server.ts";

/** Log levels, least to most severe. */
export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** The level used when neither `--log-level` nor `WEIR_LOG_LEVEL` is given. */
export const DEFAULT_LOG_LEVEL: LogLevel = "info";

/** Lines waiting longer than this many bytes make new lines drop (4 MiB). */
export const MAX_PENDING_BYTES = 4 * 1024 * 1024;

/**
 * Lifecycle lines written whatever the level: where the server listens, a
 * reload, the shutdown summary. An operator at `--log-level error` still
 * learns the address and why the process stopped.
 */
export const LIFECYCLE_EVENTS: ReadonlySet<string> = new Set([
  "serving",
  "reloaded",
  "reload_refused",
  "shutdown",
]);

/**
 * Lines logged once while a server starts, before `serving`: written at once
 * like {@link LIFECYCLE_EVENTS} (so start-up arms no timer), but filtered by
 * level like any other line.
 */
const STARTUP_EVENTS: ReadonlySet<string> = new Set([
  "state_keys",
  "state_store_down",
  "scopes_unenforced",
]);

/** A batch is written as soon as it reaches this many bytes (64 KiB). */
const BATCH_BYTES = 64 * 1024;

/**
 * A line waits at most this many milliseconds for the lines after it (10 ms).
 * Each write of a batch to stderr costs about 20 µs of CPU (Deno hands it to
 * a blocking thread, which is what keeps a stalled log reader from stalling
 * the server); per line, that was the largest cost of a guarded call's audit
 * line when calls came one at a time (bench/README.md).
 */
const FLUSH_MS = 10;

/**
 * Parse a level name (case-insensitive; `warning` is accepted for `warn`).
 * @param where named in the error, e.g. `"--log-level"` or `"WEIR_LOG_LEVEL"`
 * @throws {RangeError} naming `where` and the accepted values
 */
export function parseLogLevel(text: string, where = "log level"): LogLevel {
  const level = text.trim().toLowerCase();
  if (level === "warning") return "warn";
  if (Object.hasOwn(RANK, level)) return level as LogLevel;
  throw new RangeError(
    `${where}: unknown level ${JSON.stringify(text.slice(0, 40))}; use debug, info, warn or error`,
  );
}

/**
 * The level from the flag, else the environment variable, else the default.
 * @param flag the `--log-level` value, if given
 * @param env the `WEIR_LOG_LEVEL` value, if set
 * @throws {RangeError} when the one that applies is not a level name
 */
export function resolveLogLevel(flag: string | undefined, env: string | undefined): LogLevel {
  if (flag !== undefined) return parseLogLevel(flag, "--log-level");
  if (env !== undefined && env !== "") return parseLogLevel(env, "WEIR_LOG_LEVEL");
  return DEFAULT_LOG_LEVEL;
}

/** Where batches go: `Deno.stderr` fits; tests pass a collector. */
export interface LogSink {
  write(bytes: Uint8Array): Promise<number>;
  writeSync?(bytes: Uint8Array): number;
}

/** A core {@link Logger} with a level and a way to flush before exit. */
export interface OpsLogger extends Logger {
  /** The least severe level written. */
  readonly level: LogLevel;
  /** Whether an event at `level` would be written (check before building a costly event). */
  enabled(level: LogLevel): boolean;
  /** Resolves once every line logged so far has been written. */
  flush(): Promise<void>;
  /** Write what is pending now, synchronously when the sink can (for the last lines). */
  flushSync(): void;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Least severe level written (default {@link DEFAULT_LOG_LEVEL}). */
  level?: LogLevel;
  /** Default `Deno.stderr`. */
  sink?: LogSink;
  /** Clock for `time` (default `Date.now`), in ms since the epoch. */
  now?: () => number;
}

const UNSAFE = /[\u007f-\u009f\u2028\u2029]/;
const UNSAFE_ALL = /[\u007f-\u009f\u2028\u2029]/g;
const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * One log line (without the newline): `time` and the event's fields as JSON,
 * control characters escaped. A field that cannot be serialized (a cycle, a
 * BigInt) is replaced by an `unserializable` marker rather than thrown.
 */
export function formatLogLine(event: LogEvent, time = Date.now()): string {
  let json: string;
  try {
    const stamp = isoTime(time);
    // `time` first, then the event's own fields in their order: the event is written
    // as it is behind the time (no copy of it), unless it has a `time` of its own, a
    // `toJSON`, or an integer key (which an object orders before `time`): then the
    // copy decides, as it always did.
    const fields = "time" in event || "toJSON" in event ? "" : JSON.stringify(event);
    if (fields === "{}") json = `{"time":"${stamp}"}`;
    else if (fields !== "" && !isDigit(fields.charCodeAt(2))) {
      json = `{"time":"${stamp}",${fields.slice(1)}`;
    } else json = JSON.stringify({ time: stamp, ...event });
  } catch {
    json = JSON.stringify({
      time: new Date(time).toISOString(),
      level: event.level,
      event: String(event.event),
      unserializable: true,
    });
  }
  // A lone UTF-16 surrogate (a client's tool name, a slice through a pair)
  // comes out of JSON.stringify as a `\udXXX` escape, which decodes to text
  // that is not well-formed: such lines are written again with U+FFFD in its place.
  if (LONE_SURROGATE_ESCAPE.test(json)) json = JSON.stringify(wellFormed(JSON.parse(json)));
  // JSON.stringify escapes C0 controls already; DEL, C1 and the JS line separators it leaves.
  return UNSAFE.test(json) ? json.replace(UNSAFE_ALL, escapeChar) : json;
}

/** Whether a UTF-16 code is an ASCII digit (an integer key's first character). */
const isDigit = (code: number) => code >= 0x30 && code <= 0x39;

/** The second of the last time stamp, and its ISO 8601 text up to the `.` (`2026-12-06T14:18:04.`). */
let lastSecond = NaN;
let lastPrefix = "";
/** The last ms-since-epoch ending in `Z` of year 10000 (`toISOString` writes a sign past it). */
const LAST_PLAIN_TIME = 253402300799999;

/**
 * `new Date(time).toISOString()` (digits, `-`, `:`, `.`, `T`, `Z`, a sign: no
 * JSON escape). A whole millisecond of years 1970-9999 is written from its
 * second's text, made once per second (lines come many to a second, each in
 * its own millisecond when calls come one at a time); any other time as
 * `toISOString` writes it (tests/ops/log_line_test.ts holds the two equal).
 */
function isoTime(time: number): string {
  if (!Number.isInteger(time) || time < 0 || time > LAST_PLAIN_TIME) {
    return new Date(time).toISOString();
  }
  const ms = time % 1000;
  const second = time - ms;
  if (second !== lastSecond) {
    lastPrefix = new Date(second).toISOString().slice(0, 20);
    lastSecond = second;
  }
  return lastPrefix + (ms < 10 ? "00" : ms < 100 ? "0" : "") + ms + "Z";
}

/** What JSON.stringify writes for a lone surrogate (a false alarm only costs a rewrite). */
const LONE_SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/** A decoded log line with every string and key made well-formed (U+FFFD for a lone surrogate). */
function wellFormed(v: unknown): unknown {
  if (typeof v === "string") return v.toWellFormed();
  if (Array.isArray(v)) return v.map(wellFormed);
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(v)) out[k.toWellFormed()] = wellFormed(child);
  return out;
}

/**
 * Build the process logger.
 *
 * @example
 * ```ts
 * import { createLogger } from "./log.ts";
 * const lines: string[] = [];
 * const log = createLogger({
 *   level: "warn",
 *   sink: { write: (b) => Promise.resolve(lines.push(new TextDecoder().decode(b))) },
 * });
 * log({ level: "info", event: "ignored" });
 * log({ level: "warn", event: "kept", note: "bell \u0007 here" });
 * await log.flush();
 * if (lines.join("").includes("ignored")) throw new Error("info passed a warn filter");
 * if (!lines.join("").includes("\\u0007")) throw new Error("control character not escaped");
 * ```
 */
export function createLogger(options: LoggerOptions = {}): OpsLogger {
  const level = options.level ?? DEFAULT_LOG_LEVEL;
  const min = RANK[level];
  const sink: LogSink = options.sink ?? Deno.stderr;
  const now = options.now ?? Date.now;
  const encoder = new TextEncoder();
  let pending: string[] = [];
  let pendingBytes = 0;
  let dropped = 0;
  let scheduled = false;
  /** The batch timer, made once and re-armed (`refresh`): a new timer per batch costs more. */
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> = Promise.resolve();

  const take = (): Uint8Array | null => {
    if (dropped > 0) {
      pending.unshift(
        formatLogLine({ level: "warn", event: "log_lines_dropped", count: dropped }, now()),
      );
      dropped = 0;
    }
    if (pending.length === 0) return null;
    const bytes = encoder.encode(pending.join("\n") + "\n");
    pending = [];
    pendingBytes = 0;
    return bytes;
  };

  const writeAll = async (bytes: Uint8Array) => {
    let offset = 0;
    while (offset < bytes.length) offset += await sink.write(bytes.subarray(offset));
  };

  const flushNow = () => {
    scheduled = false;
    const bytes = take();
    if (bytes === null) return;
    // One write at a time, in order; a failing sink (closed stderr) loses lines, not the process.
    writing = writing.then(() => writeAll(bytes)).catch(() => {});
  };

  const log = ((event: LogEvent) => {
    if ((RANK[event.level] ?? 3) < min && !LIFECYCLE_EVENTS.has(event.event)) return;
    const line = formatLogLine(event, now());
    if (pendingBytes > MAX_PENDING_BYTES) {
      dropped++;
      return;
    }
    pending.push(line);
    pendingBytes += line.length + 1;
    // A lifecycle line (rare: start, reload, stop) or a start-up line is written
    // at once, in order behind any batch: an operator sees "serving" as soon as
    // it is true, and start-up arms no timer (the first timer loads Deno's timer
    // module and Node's error and inspect modules with it, about 3 ms of a cold
    // start; bench/README.md, "Cold start").
    if (
      pendingBytes >= BATCH_BYTES || LIFECYCLE_EVENTS.has(event.event) ||
      STARTUP_EVENTS.has(event.event)
    ) flushNow();
    else if (!scheduled) {
      scheduled = true;
      if (timer === undefined) timer = setTimeout(flushNow, FLUSH_MS);
      else timer.refresh();
    }
  }) as OpsLogger;

  Object.defineProperty(log, "level", { value: level, enumerable: true });
  log.enabled = (l) => RANK[l] >= min;
  log.flush = () => {
    flushNow();
    return writing;
  };
  log.flushSync = () => {
    const bytes = take();
    if (bytes === null) return;
    if (sink.writeSync) {
      try {
        let offset = 0;
        while (offset < bytes.length) offset += sink.writeSync(bytes.subarray(offset));
      } catch {
        // stderr is gone: nothing more to do.
      }
    } else writing = writing.then(() => writeAll(bytes)).catch(() => {});
  };
  return log;
}
