/**
 * `weir describe`: the surface model of a guardfile (src/surface/model.ts)
 * as a person reads it. `--format json` prints the model itself; both are
 * built from the same value the server lists and `weir diff` compares, so
 * what describe says is what is served. No value of a secret appears: the
 * model holds literals concealed, and sources are named, never read.
 *
 * @module
 */
import type { Argument, Surface, Tool } from "../surface/model.ts";
import { printable } from "../guardfile/diagnostics.ts";
import {
  authWords,
  oauthProfileWords,
  oneLine,
  operationWords,
  rateStateWords,
  rateWords,
  sentWords,
  sourceWords,
  sqlKindWords,
  upstreamWords,
} from "../surface/words.ts";
import { serverFacts, toolFacts } from "../surface/facts.ts";

/** An argument's constraints in words: `one segment`, `1..50`, `length 1..40`, `one of "a"`. */
export function constraintWords(a: Argument): string[] {
  const r = a.rules;
  const out: string[] = [];
  if (a.in === "path") {
    out.push(
      a.encoding?.slashes === "segments"
        ? "relative path of segments"
        : a.encoding?.slashes === "encoded"
        ? "one segment, / sent as %2F"
        : "one segment",
    );
  }
  if (r.minimum !== undefined || r.maximum !== undefined) {
    out.push(`${r.minimum ?? "-inf"}..${r.maximum ?? "inf"}`);
  }
  if (r.minItems !== undefined) out.push(`at least ${r.minItems} items`);
  if (r.maxItems !== undefined) out.push(`at most ${r.maxItems} items`);
  if (r.pattern !== undefined) out.push(`pattern ${r.pattern}`);
  // A path value is never empty: a least length of 1 alone says nothing new.
  const least = a.in === "path" && r.minLength === 1 && r.maxLength === undefined;
  if ((r.minLength !== undefined || r.maxLength !== undefined) && !least) {
    out.push(`length ${r.minLength ?? 0}..${r.maxLength ?? "inf"}`);
  }
  if (r.enum) out.push(`one of ${r.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  if (a.in === "argument" && a.restrict.length > 0) {
    out.push(`matches ${
      a.restrict.map((g) => g.map((x) => JSON.stringify(x)).join(" ")).join(
        " and ",
      )
    }`);
  }
  if (a.encoding?.metacharacters === "allow") out.push("metacharacters allowed");
  return out;
}

/** The surface as text. */
export function describeText(surface: Surface): string {
  const lines = [
    `server ${surface.server} (${surface.file})`,
    `upstream ${upstreamWords(surface.upstream)}${
      surface.upstream.kind === "none" ? " (every grant is sql)" : ""
    }`,
    `auth ${authWords(surface)}`,
    ...(surface.database
      ? [
        `database ${surface.database.driver} (PostgreSQL), DSN from ${
          sourceWords(surface.database.dsn)
        }`,
      ]
      : []),
    ...(surface.callers.oauth ? [oauthLine(surface.callers.oauth)] : []),
    ...surface.callers.inboundTokens.map((c) =>
      `inbound token ${c.name} (read from ${sourceWords(c.token)}) may call ${c.tools.join(", ")}`
    ),
    ...(surface.rateLimit
      ? [
        `rate-limit ${rateWords(surface.rateLimit)} (all ${
          surface.form === "mcp-wrap" ? "forwarded calls" : "grants"
        }), ${rateStateWords(surface.rateLimit.state)}`,
      ]
      : []),
    ...surface.readableResources.map((r) => `readable resource ${r}`),
    ...serverFacts(surface).map(([label, words]) => `${label} ${words}`),
    "",
  ];
  for (const t of surface.tools) {
    lines.push(...toolLines(t), "");
  }
  return lines.map(printable).join("\n").trimEnd();
}

function toolLines(t: Tool): string[] {
  if (t.kind === "withheld") {
    return [
      `${t.name}  WITHHELD`,
      `  reason: ${t.withheld?.reason ?? ""}`,
      ...(t.withheld?.alternative ? [`  instead: ${t.withheld.alternative}`] : []),
    ];
  }
  if (t.kind === "info") return [`${t.name}  (info tool)`, `  ${t.description}`];
  const op = t.operation;
  const what = op?.kind === "sql"
    ? sqlKindWords(op, t.access.reads)
    : operationWords(op).replace(/ \(graphql\)$/, "");
  const lines = [`${t.name}  ${what}${t.destructive ? "  [destructive]" : ""}`];
  const c = t.controls;
  if (c.confirm !== undefined) lines.push(`  confirm first: ${c.confirm}`);
  if (c.extract) {
    lines.push(
      `  extract: ${
        c.extract.as === "pdf-text"
          ? `PDF text, first ${c.extract.max} pages`
          : `feed entries, first ${c.extract.max}`
      }`,
    );
  }
  if (op?.kind === "sql") lines.push(`  statement: ${oneLine(op.statement)}`);
  if (op?.kind === "graphql") lines.push(`  graphql document: ${oneLine(op.document)}`);
  if (t.description) lines.push(`  ${oneLine(t.description)}`);
  if (t.scopes.length > 0) lines.push(`  needs scope ${t.scopes.join(" ")}`);
  for (const a of t.arguments) {
    const extra = [
      a.required ? "required" : "optional",
      ...constraintWords(a),
      ...(a.sentAs !== a.name && a.in !== "sql" ? [`sent as ${a.sentAs}`] : []),
    ];
    if (!a.served) lines.push(`  argument ${a.name}: hidden (never served)`);
    else if (a.in === "argument") {
      lines.push(`  argument ${a.name}: ${a.type} (${extra.join(", ")})`);
    } else {
      const place = a.in === "sql" ? `sql ${a.sentAs}` : a.in;
      lines.push(`  ${place.padEnd(8)} ${a.name}: ${a.type} (${extra.join(", ")})`);
    }
  }
  if (t.kind === "grant") {
    for (const a of t.arguments) {
      for (const globs of a.in === "path" ? a.restrict : []) {
        lines.push(`  restrict ${a.name} matches ${globs.map((g) => JSON.stringify(g)).join(" ")}`);
      }
    }
  }
  for (const g of t.exclusive) lines.push(`  at most one of: ${g.join(", ")}`);
  if (t.fixedBody) lines.push(`  body is always ${JSON.stringify(t.fixedBody)}`);
  for (const p of t.pins) {
    const from = "from" in p.value ? sourceWords(p.value.from) : sentWords(p.value);
    lines.push(
      `  pinned ${p.in} ${p.name} from ${from}${
        p.fromQuery ? ` (its query parameter ${p.fromQuery})` : ""
      }${p.secret ? ", secret (redacted from answers)" : ""}`,
    );
  }
  for (const f of t.acceptedFindings) {
    lines.push(
      `  accepted finding ${f.id}${f.pointer ? ` in ${f.pointer}` : ""}${
        f.reason ? `: ${f.reason}` : ""
      }`,
    );
  }
  if (t.interface) lines.push(`  interface ${t.interface}`);
  for (const [label, words] of toolFacts(t)) lines.push(`  ${label}: ${words}`);
  if (c.cacheTtlMs !== undefined) lines.push(`  cached for ${c.cacheTtlMs} ms`);
  if (c.rejectEmpty) lines.push(`  an empty answer is an error (reject-empty)`);
  if (c.rejectBlank.length > 0) lines.push(`  refused when blank: ${c.rejectBlank.join(", ")}`);
  lines.push(`  ${t.access.reads ? "reads" : "may write"}: ${t.access.why}`);
  return lines;
}

/** `oauth tokens from ISSUER for RESOURCE (profile P, audience A)`. */
function oauthLine(o: NonNullable<Surface["callers"]["oauth"]>): string {
  const profile = oauthProfileWords(o);
  return `oauth tokens from ${o.issuer} for ${o.resource}${profile ? ` (${profile})` : ""}`;
}
