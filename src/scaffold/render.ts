/**
 * A scaffold plan as guardfile text, formatted like the examples in
 * `guardfiles/`: withheld suggestions beside `wrap`, then `base-url`, `auth`
 * and the grants grouped by tag, reads first. A grant that is not chosen is
 * written with KDL's slashdash (`/-can ...`): the parser drops it, and deleting
 * the two characters grants it. An operation the grammar cannot express is a
 * `//` comment that says why.
 *
 * @module
 */
import type { BodyField, HeaderInput, PathParam, QueryInput } from "../guardfile/model.ts";
import { headerInputName } from "../guardfile/header_inputs.ts";
import type { Derivation, ScaffoldGrant } from "./derive.ts";
import type { AuthPlan, BaseUrlPlan } from "./upstream.ts";
import { oneLine, str } from "./kdl_text.ts";

/** What the text is made from. */
export interface RenderInput {
  /** The header comment lines (without `// `). */
  header: string[];
  server: string;
  baseUrl: BaseUrlPlan;
  auth: AuthPlan;
  derivations: Derivation[];
  /** `key`s of the chosen operations. */
  selected: Set<string>;
  /** Write every expressible grant active (for checking each one); no withholds. */
  allActive?: boolean;
  /**
   * How unchosen operations are written, to stay under weir's guardfile size
   * cap: `full` (each grant in full, off), `lines` (one comment line each), or
   * `none` (not listed; nor are withhold suggestions or inexpressible ones).
   */
  listing?: "full" | "lines" | "none";
}

/** The text, and the lines (1-based, inclusive) each grant occupies. */
export interface Rendered {
  text: string;
  spans: Map<string, { from: number; to: number }>;
}

const IND = "    ";

/** Render the guardfile. */
export function renderScaffold(input: RenderInput): Rendered {
  // Every header line is one comment line whatever the document's title holds.
  const lines: string[] = input.header.map((h) => (h === "" ? "//" : `// ${oneLine(h)}`));
  const spans = new Map<string, { from: number; to: number }>();
  const active = (d: Derivation) => input.allActive || input.selected.has(d.key);
  const listing = input.listing ?? "full";
  if (!input.allActive && listing !== "none") {
    const withholds = input.derivations.filter((d) =>
      d.grant && !active(d) && d.grant.method === "DELETE"
    );
    if (withholds.length > 0) {
      lines.push(
        "",
        "// Destructive operations not granted. To list one as a stub that refuses and says",
        `// why, delete its "/-"; a withhold and a grant of the same tool cannot both be on.`,
      );
      for (const d of withholds) {
        lines.push(
          `/-withhold ${str(d.name.tool)} { reason ${
            str(`${d.op.method} ${d.op.path} is not granted to agents.`)
          }; }`,
        );
      }
    }
  }
  lines.push("", `wrap ward mcp ${ident(input.server)} {`);
  const b = input.baseUrl;
  if (b.kind === "literal") {
    if (b.note) lines.push(`${IND}// ${oneLine(b.note)}`);
    lines.push(`${IND}base-url ${str(b.url)}`);
  } else {
    lines.push(`${IND}// ${oneLine(b.note)}`, `${IND}base-url { value env ${str(b.env)}; }`);
  }
  lines.push(...authLines(input.auth));
  const groups = new Map<string, Derivation[]>();
  for (const d of input.derivations) {
    const list = groups.get(d.op.tag) ?? [];
    list.push(d);
    groups.set(d.op.tag, list);
  }
  const reads = (d: Derivation) => (d.op.method === "GET" || d.op.method === "HEAD" ? 0 : 1);
  for (const [tag, list] of groups) {
    const shown = listing === "none" ? list.filter(active) : list;
    if (shown.length === 0) continue;
    lines.push("", `${IND}// ---- ${tag === "" ? "(no tag)" : `tag ${oneLine(tag)}`} ----`);
    for (const d of [...shown].sort((x, y) => reads(x) - reads(y))) {
      const title = `${d.op.method} ${d.op.path}${
        d.op.operationId ? ` (${d.op.operationId})` : ""
      }`;
      if (!d.grant) {
        lines.push(`${IND}// not expressible: ${oneLine(title)}: ${oneLine(d.reason ?? "")}`);
        continue;
      }
      if (listing === "lines" && !active(d)) {
        lines.push(
          `${IND}// off: ${oneLine(title)} -> ${d.name.tool} (weir scaffold --select ${
            oneLine(d.op.operationId ?? d.key)
          })`,
        );
        continue;
      }
      lines.push(`${IND}// ${oneLine(title)}${d.op.deprecated ? " (deprecated)" : ""}`);
      if (d.otherAuth) lines.push(`${IND}// ${oneLine(d.otherAuth)}`);
      for (const note of d.grant.notes) lines.push(`${IND}// ${oneLine(note)}`);
      const from = lines.length + 1;
      lines.push(...grantLines(d.grant, active(d)));
      spans.set(d.key, { from, to: lines.length });
    }
  }
  lines.push("}", "");
  return { text: lines.join("\n"), spans };
}

function authLines(auth: AuthPlan): string[] {
  const note = auth.note ? [`${IND}// ${oneLine(auth.note)}`] : [];
  switch (auth.kind) {
    case "none":
      return [...note, `${IND}auth none`];
    case "bearer":
      return [...note, `${IND}auth bearer {`, `${IND}${IND}value env ${str(auth.env)}`, `${IND}}`];
    case "header":
      return [
        ...note,
        `${IND}auth header-token {`,
        `${IND}${IND}header ${str(auth.header)}`,
        ...(auth.prefix ? [`${IND}${IND}prefix ${str(auth.prefix)}`] : []),
        `${IND}${IND}value env ${str(auth.env)}`,
        `${IND}}`,
      ];
    case "query":
      return [
        ...note,
        `${IND}auth query-param {`,
        `${IND}${IND}param ${str(auth.param)} {`,
        `${IND}${IND}${IND}value env ${str(auth.env)}`,
        `${IND}${IND}}`,
        `${IND}}`,
      ];
  }
}

function grantLines(g: ScaffoldGrant, on: boolean): string[] {
  const a = IND + IND;
  const out = [`${IND}${on ? "" : "/-"}can ${ident(g.name.verb)} ${ident(g.name.resource)} {`];
  out.push(`${a}path ${str(g.path)}`);
  if (g.name.statesMethod) out.push(`${a}method ${str(g.method)}`);
  if (g.describe) out.push(`${a}describe ${str(g.describe)}`);
  for (const p of g.params) {
    const line = paramLine(p);
    if (line) out.push(a + line);
  }
  if (g.query.length > 0) {
    out.push(`${a}query {`);
    for (const q of g.query) out.push(a + IND + queryLine(q));
    out.push(`${a}}`);
  }
  for (const h of g.headers) out.push(a + headerLine(h));
  if (g.form) {
    out.push(`${a}form${g.form.arrays === "repeat" ? "" : ` arrays=${str(g.form.arrays)}`}`);
  }
  if (g.bodyMap.length > 0) {
    out.push(`${a}body {`);
    for (const m of g.bodyMap) {
      out.push(`${a}${IND}map ${str(m.source.join("."))} to=${str(m.target)}`);
    }
    out.push(`${a}}`);
  } else if (g.body.length > 0) {
    out.push(`${a}body {`);
    for (const f of g.body) out.push(...bodyLines(f, a + IND));
    out.push(`${a}}`);
  }
  out.push(`${IND}}`);
  return out;
}

function paramLine(p: PathParam): string | undefined {
  const props: string[] = [];
  if (p.type === "integer") props.push(`type="integer"`);
  if (p.minimum !== undefined) props.push(`minimum=${num(p.minimum)}`);
  if (p.maximum !== undefined) props.push(`maximum=${num(p.maximum)}`);
  props.push(...ruleProps(p));
  const block = enumBlock(p.enum);
  if (props.length === 0 && !block) return undefined;
  return `param ${str(p.name)}${props.map((x) => " " + x).join("")}${block}`;
}

function queryLine(q: QueryInput): string {
  const props: string[] = q.kind === "array" ? [`items=${str(q.type)}`] : [`type=${str(q.type)}`];
  if (q.required) props.push("required=#true");
  if (q.minimum !== undefined) props.push(`minimum=${num(q.minimum)}`);
  if (q.maximum !== undefined) props.push(`maximum=${num(q.maximum)}`);
  if (q.minItems !== undefined) props.push(`min-items=${num(q.minItems)}`);
  if (q.maxItems !== undefined) props.push(`max-items=${num(q.maxItems)}`);
  props.push(...ruleProps(q));
  if (q.wire !== q.name) props.push(`upstream=${str(q.wire)}`);
  return `${q.kind} ${str(q.name)} ${props.join(" ")}${enumBlock(q.enum)}`;
}

function headerLine(h: HeaderInput): string {
  const props: string[] = [];
  if (h.name !== headerInputName(h.wire)) props.push(`input=${str(h.name)}`);
  if (h.type !== "string") props.push(`type=${str(h.type)}`);
  if (h.required) props.push("required=#true");
  if (h.minimum !== undefined) props.push(`minimum=${num(h.minimum)}`);
  if (h.maximum !== undefined) props.push(`maximum=${num(h.maximum)}`);
  props.push(...ruleProps(h));
  return `header ${str(h.wire)}${props.map((x) => " " + x).join("")}${enumBlock(h.enum)}`;
}

function bodyLines(f: BodyField, indent: string): string[] {
  const req = f.required ? " required=#true" : "";
  if (f.type === "object") {
    if (f.raw || !f.fields) return [`${indent}object ${str(f.name)}${req} raw=#true`];
    return [
      `${indent}object ${str(f.name)}${req} {`,
      ...f.fields.flatMap((x) => bodyLines(x, indent + IND)),
      `${indent}}`,
    ];
  }
  if (f.type === "array") {
    if (f.raw) return [`${indent}array ${str(f.name)}${req} raw=#true`];
    const rules = ruleProps(f).map((x) => " " + x).join("");
    return [
      `${indent}array ${str(f.name)} items=${str(f.items ?? "string")}${req}${rules}${
        enumBlock(f.enum)
      }`,
    ];
  }
  const rules = ruleProps(f).map((x) => " " + x).join("");
  return [`${indent}field ${str(f.name)} type=${str(f.type)}${req}${rules}${enumBlock(f.enum)}`];
}

function ruleProps(r: { pattern?: string; minLength?: number; maxLength?: number }): string[] {
  const out: string[] = [];
  if (r.pattern !== undefined) out.push(`pattern=${str(r.pattern)}`);
  if (r.minLength !== undefined) out.push(`min-length=${num(r.minLength)}`);
  if (r.maxLength !== undefined) out.push(`max-length=${num(r.maxLength)}`);
  return out;
}

function enumBlock(values: (string | number)[] | undefined): string {
  if (!values || values.length === 0) return "";
  return ` { enum ${values.map((v) => (typeof v === "string" ? str(v) : num(v))).join(" ")}; }`;
}

/** A KDL v2 number: decimal, no exponent for integers weir reads exactly. */
function num(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  return String(n);
}

/** A bare KDL identifier when it is one, else a quoted string. */
function ident(text: string): string {
  return /^[a-z][a-z0-9-]*$/.test(text) && !["true", "false", "null", "inf", "nan"].includes(text)
    ? text
    : str(text);
}
