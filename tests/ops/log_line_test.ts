/**
 * One log line (src/ops/log.ts `formatLogLine`) is written without copying
 * the event behind its time stamp: over generated events it is, byte for
 * byte, the line the copy `{time, ...event}` gave (kept here as the
 * reference), awkward keys (`time`, `toJSON`, `__proto__`), lone surrogates,
 * C1 controls and unserializable values included.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { formatLogLine } from "../../src/ops/log.ts";
import type { LogEvent } from "../../src/mcp/server.ts";

const UNSAFE = /[\u007f-\u009f\u2028\u2029]/;
const UNSAFE_ALL = /[\u007f-\u009f\u2028\u2029]/g;
const LONE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

function wellFormed(v: unknown): unknown {
  if (typeof v === "string") return v.toWellFormed();
  if (Array.isArray(v)) return v.map(wellFormed);
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(v)) out[k.toWellFormed()] = wellFormed(child);
  return out;
}

/** The line as the copy `{time, ...event}` wrote it (before the event was written in place). */
function reference(event: LogEvent, time: number): string {
  let json: string;
  try {
    json = JSON.stringify({ time: new Date(time).toISOString(), ...event });
  } catch {
    json = JSON.stringify({
      time: new Date(time).toISOString(),
      level: event.level,
      event: String(event.event),
      unserializable: true,
    });
  }
  if (LONE.test(json)) json = JSON.stringify(wellFormed(JSON.parse(json)));
  return UNSAFE.test(json) ? json.replace(UNSAFE_ALL, escapeChar) : json;
}

/** A line, or what was thrown (a `level` that cannot be serialized throws either way). */
function outcome(write: () => string): string {
  try {
    return write();
  } catch (error) {
    return `thrown: ${error instanceof Error ? error.name : typeof error}`;
  }
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom("\ud800", "a\udc00b", "\u0085", "\u2028", "\x7f", '\n\t"\\'),
);
const key = fc.oneof(
  text,
  fc.constantFrom("time", "toJSON", "__proto__", "level", "event", "", "constructor"),
);
const value = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(1n),
  fc.array(text, { maxLength: 3 }),
  fc.dictionary(text, text, { maxKeys: 3 }),
);

Deno.test("a log line is the line the copied event gave, for any event", () => {
  fc.assert(
    fc.property(
      fc.option(fc.constantFrom("debug", "info", "warn", "error")),
      fc.option(text),
      fc.array(fc.tuple(key, value), { maxLength: 8 }),
      fc.integer({ min: 0, max: 4_102_444_800_000 }),
      (level, name, fields, time) => {
        const event: Record<string, unknown> = {};
        if (level !== null) event.level = level;
        if (name !== null) event.event = name;
        for (const [k, v] of fields) {
          Object.defineProperty(event, k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        const line = outcome(() => formatLogLine(event as unknown as LogEvent, time));
        assert.equal(line, outcome(() => reference(event as unknown as LogEvent, time)));
        assert.equal(
          outcome(() => formatLogLine(event as unknown as LogEvent, time)),
          line,
          "the same time again",
        );
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("an audit line of a call reads as before: time first, then the event's fields in order", () => {
  const event: LogEvent = {
    level: "info",
    event: "tool_call",
    decision: "allow",
    tool: "get_thing",
    outcome: "ok",
    status: 200,
    duration_ms: 3,
    upstream_status: 200,
  };
  assert.equal(
    formatLogLine(event, Date.UTC(2026, 11, 6, 9, 0, 0, 5)),
    '{"time":"2026-12-06T09:00:00.005Z","level":"info","event":"tool_call","decision":"allow",' +
      '"tool":"get_thing","outcome":"ok","status":200,"duration_ms":3,"upstream_status":200}',
  );
});

Deno.test("a line's time stamp is toISOString's, for any time (each second's text reused)", () => {
  const stamp = (time: number) => outcome(() => formatLogLine({ level: "info", event: "e" }, time));
  const expected = (time: number) =>
    outcome(() => `{"time":"${new Date(time).toISOString()}","level":"info","event":"e"}`);
  const LAST = 253402300799999; // 9999-12-31T23:59:59.999Z: past it toISOString writes a sign
  const time = fc.oneof(
    fc.integer({ min: 0, max: LAST }),
    fc.integer({ min: LAST - 2000, max: LAST + 2000 }),
    fc.integer({ min: -8.64e15, max: 8.64e15 }),
    fc.integer({ min: -2000, max: 2000 }),
    fc.double({ min: -1e13, max: 1e13 }),
    fc.constantFrom(NaN, Infinity, -Infinity, 8.64e15 + 1, -0, 0.5, 999.999, 1000, 999),
  );
  fc.assert(
    fc.property(fc.array(time, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(2500)), (
      starts,
      steps,
    ) => {
      // Runs of stamps inside one second and across its edges, as lines come.
      for (const start of starts) {
        let t = start;
        for (const step of [0, ...steps]) {
          t += step;
          assert.equal(stamp(t), expected(t), `time ${t}`);
        }
      }
    }),
    { numRuns: 2000 },
  );
});
