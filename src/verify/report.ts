/**
 * What `weir verify` prints: per tool the cases, the upstream requests and
 * the violations, each with the seed and the command that replays it; as
 * text for people, as JSON, or as a JUnit XML report for CI (one test suite
 * per file, one test case per tool, a failure per violation).
 *
 * @module
 */
import type { ToolReport } from "./run.ts";

/** The whole run. */
export interface VerifyReport {
  file: string;
  /** `spec` or `mcp wrap`. */
  mode: string;
  /** The seed every tool's cases were drawn from. */
  seed: number;
  /** Cases per tool asked for. */
  cases: number;
  /** `--definitions F`, when the run was given one (the replay needs it too). */
  definitions?: string;
  tools: ToolReport[];
  /** What the run changed to be able to run, and what it did not check, in words. */
  notes: string[];
  /** Milliseconds the calls took. */
  durationMs: number;
}

/**
 * The command that replays one tool's cases (`--seed=S`: a negative seed is not taken for a flag).
 *
 * @example
 * ```ts
 * import { replayCommand } from "./report.ts";
 * const line = replayCommand(
 *   { file: "t.mcp.kdl", mode: "spec", seed: -5, cases: 50, tools: [], notes: [], durationMs: 0 },
 *   "get_ticket",
 * );
 * if (line !== "weir verify t.mcp.kdl --seed=-5 --cases 50 --tool get_ticket") throw new Error(line);
 * ```
 */
export function replayCommand(report: VerifyReport, tool: string): string {
  return `weir verify ${quote(report.file)} --seed=${report.seed} --cases ${report.cases} --tool ${
    quote(tool)
  }${report.definitions ? ` --definitions ${quote(report.definitions)}` : ""}`;
}

function quote(text: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Control, invisible and reordering characters shown as `\uXXXX`, so a report
 * line stays one line and shows every character of a name.
 */
function printable(text: string): string {
  return text.replace(
    /[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2064\u2066-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** The number of violations in the run. */
export function violationCount(report: VerifyReport): number {
  return report.tools.reduce((n, t) => n + t.violations.length, 0);
}

/** The report as text: one line per tool, then each violation with its replay. */
export function reportText(report: VerifyReport): string {
  const lines = [
    `weir verify ${report.file} (${report.mode}): seed ${report.seed}, ${report.cases} cases per tool`,
  ];
  const width = Math.max(4, ...report.tools.map((t) => t.tool.length));
  for (const t of report.tools) {
    lines.push(
      `  ${printable(t.tool).padEnd(width)}  ${String(t.cases).padStart(5)} cases  ${
        String(t.requests).padStart(5)
      } requests  ${String(t.refused).padStart(5)} refused  ${
        t.confirmed > 0 ? `${t.confirmed} asked a person  ` : ""
      }${
        t.violations.length > 0
          ? `${t.violations.length} VIOLATIONS`
          : t.unchecked
          ? `ok, NOT VERIFIED WHOLE (${t.unchecked})`
          : "ok"
      }`,
    );
  }
  for (const t of report.tools) {
    if (t.violations.length === 0) continue;
    lines.push(
      "",
      `${printable(t.tool)}: ${t.violations.length} violation(s); replay: ${
        replayCommand(report, t.tool)
      }`,
    );
    for (const v of t.violations.slice(0, 20)) {
      lines.push(
        `  case ${v.index} (${v.via}, ${printable(v.kind)}): ${printable(v.message)}`,
        `    tools/call ${printable(JSON.stringify(v.sent))} ${printable(v.args)}`,
      );
    }
    if (t.violations.length > 20) {
      lines.push(`  ... and ${t.violations.length - 20} more (--format json lists all)`);
    }
  }
  for (const note of report.notes) lines.push(`note: ${note}`);
  const n = violationCount(report);
  const calls = report.tools.reduce((s, t) => s + t.cases, 0);
  const partial = report.tools.filter((t) => t.unchecked).length;
  lines.push(
    n === 0
      ? `ok: ${calls} calls over ${report.tools.length} tools, no violation (${
        Math.round(report.durationMs)
      } ms)${partial > 0 ? `; ${partial} tool(s) not verified whole (see above)` : ""}`
      : `FAILED: ${n} violation(s) in ${calls} calls; each replays with the seed above`,
  );
  return lines.join("\n");
}

/** The report as one JSON document. */
export function reportJson(report: VerifyReport): string {
  return JSON.stringify(
    {
      file: report.file,
      mode: report.mode,
      seed: report.seed,
      cases: report.cases,
      ok: violationCount(report) === 0,
      violations: violationCount(report),
      durationMs: Math.round(report.durationMs),
      tools: report.tools.map((t) => ({ ...t, replay: replayCommand(report, t.tool) })),
      notes: report.notes,
    },
    null,
    2,
  );
}

function xml(text: string): string {
  return printable(text).replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&apos;");
}

/**
 * The report as JUnit XML (the `testsuites` > `testsuite` > `testcase` form
 * Jenkins, GitLab and GitHub reporters read): one test case per tool, a
 * `failure` per tool with violations listing each one.
 */
export function reportJunit(report: VerifyReport): string {
  const failures = report.tools.filter((t) => t.violations.length > 0).length;
  const seconds = (report.durationMs / 1000).toFixed(3);
  const cases = report.tools.map((t) => {
    const open =
      `    <testcase classname="${xml(`weir verify ${report.file}`)}" name="${xml(t.tool)}" ` +
      `assertions="${t.cases}">`;
    const props = `      <system-out>${
      xml(
        `${t.cases} cases, ${t.requests} requests, ${t.refused} refused, seed ${report.seed}` +
          (t.unchecked ? `; not verified whole: ${t.unchecked}` : ""),
      )
    }</system-out>`;
    if (t.violations.length === 0) return `${open}\n${props}\n    </testcase>`;
    const body = t.violations.map((v) =>
      `case ${v.index} (${v.via}, ${v.kind}): ${v.message}\n  tools/call ${
        JSON.stringify(v.sent)
      } ${v.args}`
    ).join("\n");
    return `${open}\n      <failure message="${
      xml(`${t.violations.length} violation(s); replay: ${replayCommand(report, t.tool)}`)
    }" type="violation">${
      xml(body).replaceAll("\\u000a", "\n")
    }</failure>\n${props}\n    </testcase>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="weir verify" tests="${report.tools.length}" failures="${failures}" time="${seconds}">
  <testsuite name="${
    xml(report.file)
  }" tests="${report.tools.length}" failures="${failures}" errors="0" skipped="0" time="${seconds}">
    <properties>
      <property name="seed" value="${report.seed}"/>
      <property name="cases" value="${report.cases}"/>
      <property name="mode" value="${xml(report.mode)}"/>
    </properties>
${cases.join("\n")}
  </testsuite>
</testsuites>`;
}
